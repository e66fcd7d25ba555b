// report.cpp - the table, the CSV/JSON records and the progress line of
// every xnbench routine (report.h).
#include "report.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "xngemm.h"

namespace xnb {

namespace {

std::string csv_str(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (const char ch : s) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return o + "\"";
}

std::string json_str(const std::string &s) {
  std::string o = "\"";
  for (const char ch : s) {
    switch (ch) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", ch);
          o += b;
        } else {
          o += ch;
        }
    }
  }
  return o + "\"";
}

// s padded to |width|, on the right when width < 0 (printf's %-Ns).
std::string pad(const std::string &s, int width) {
  const std::size_t w = std::size_t(width < 0 ? -width : width);
  if (s.size() >= w) return s;
  const std::string fill(w - s.size(), ' ');
  return width < 0 ? s + fill : fill + s;
}

}  // namespace

// ------------------------------------------------------------------- records

Cell text(const std::string &s) { return {csv_str(s), json_str(s)}; }
Cell missing() { return {"", "null"}; }
Cell number(double v) {
  if (!std::isfinite(v)) return missing();
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return {b, b};
}
Cell integer(long long v) { return {std::to_string(v), std::to_string(v)}; }
Cell uinteger(std::uint64_t v) { return {std::to_string(v), std::to_string(v)}; }
Cell opt_int(bool have, long long v) { return have ? integer(v) : missing(); }
Cell opt_text(bool have, const std::string &s) { return have ? text(s) : missing(); }
Cell tristate(int v) {
  if (v < 0) return missing();
  return {std::to_string(v), v ? "true" : "false"};
}

RecordFiles::RecordFiles(std::string command, std::string device, std::uint64_t base_seed,
                         std::vector<Field> head_extra)
    : command_(std::move(command)),
      device_(std::move(device)),
      base_seed_(base_seed),
      head_extra_(std::move(head_extra)) {}

bool RecordFiles::open(const std::string &csv, const std::string &json,
                       const std::vector<Field> &example, std::string *error) {
  if (!csv.empty()) {
    csv_.open(csv);
    if (!csv_) {
      *error = "cannot write " + csv;
      return false;
    }
    std::string line = "date,device,xngemm_version";
    for (const Field &f : example) line += std::string(",") + f.name;
    csv_ << line << '\n';
    csv_.flush();
  }
  json_path_ = json;
  if (!json.empty() && !write_json()) {
    *error = "cannot write " + json;
    return false;
  }
  return true;
}

void RecordFiles::record(const std::vector<Field> &fields) {
  std::vector<Field> all{{"date", text(utc_now())},
                         {"device", text(device_)},
                         {"xngemm_version", text(version_str())}};
  all.insert(all.end(), fields.begin(), fields.end());
  if (csv_.is_open()) {
    std::string line;
    for (std::size_t k = 0; k < all.size(); ++k)
      line += (k ? "," : "") + all[k].value.csv;
    csv_ << line << '\n';
    csv_.flush();
  }
  if (!json_path_.empty()) {
    std::string j = "    {";
    for (std::size_t k = 0; k < all.size(); ++k)
      j += std::string(k ? ", " : "") + "\"" + all[k].name + "\": " + all[k].value.json;
    json_records_.push_back(j + "}");
    if (!write_json())
      std::fprintf(stderr, "xnbench: cannot write %s\n", json_path_.c_str());
  }
}

bool RecordFiles::write_json() const {
  const std::string tmp = json_path_ + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) return false;
    f << "{\n  \"tool\": \"xnbench\",\n  \"xngemm_version\": " << json_str(version_str())
      << ",\n  \"version_major\": " << XNGEMM_VERSION_MAJOR
      << ",\n  \"version_minor\": " << XNGEMM_VERSION_MINOR
      << ",\n  \"version_patch\": " << XNGEMM_VERSION_PATCH
      << ",\n  \"command\": " << json_str(command_)
      << ",\n  \"device\": " << json_str(device_) << ",\n  \"base_seed\": " << base_seed_;
    for (const Field &h : head_extra_) f << ",\n  \"" << h.name << "\": " << h.value.json;
    f << ",\n  \"records\": [\n";
    for (std::size_t i = 0; i < json_records_.size(); ++i)
      f << json_records_[i] << (i + 1 < json_records_.size() ? ",\n" : "\n");
    f << "  ]\n}\n";
  }
  return std::rename(tmp.c_str(), json_path_.c_str()) == 0;
}

// --------------------------------------------------------------------- table

TableLayout::TableLayout(const std::string &columns, std::size_t key) : key_(key) {
  std::string sep;
  for (std::size_t pos = 0; pos < columns.size();) {
    if (columns[pos] == ' ') {
      ++pos;
    } else if (columns[pos] == '|') {
      sep = " | ";
      ++pos;
    } else {
      const std::size_t colon = columns.find(':', pos);
      assert(colon != std::string::npos);
      char *end = nullptr;
      labels_.push_back(columns.substr(pos, colon - pos));
      widths_.push_back(int(std::strtol(columns.c_str() + colon + 1, &end, 10)));
      seps_.push_back(labels_.size() == 1 ? "" : sep.empty() ? " " : sep);
      sep.clear();
      pos = std::size_t(end - columns.c_str());
    }
  }
  assert(key_ <= widths_.size());
}

std::string TableLayout::line(const std::vector<std::string> &cells,
                              std::size_t count) const {
  assert(cells.size() >= count && widths_.size() >= count);
  std::string out;
  for (std::size_t k = 0; k < count; ++k) out += seps_[k] + pad(cells[k], widths_[k]);
  return out;
}

void TableLayout::print_header() const {
  std::printf("%s\n", line(labels_, labels_.size()).c_str());
  std::fflush(stdout);
}

void TableLayout::print_row(const std::vector<std::string> &cells, bool ran,
                            const std::string &status, const std::string &message,
                            const std::string &mark) const {
  if (!ran) {
    std::printf("%s %s: %s\n", line(cells, key_).c_str(),
                status == "skipped" ? "skipped" : "ERROR", message.c_str());
  } else {
    std::string tail = mark;
    if (status == "error")
      tail += "  ERROR: " + message;
    else if (!message.empty())
      tail += "  note: " + message;
    std::printf("%s%s\n", line(cells, widths_.size()).c_str(), tail.c_str());
  }
  std::fflush(stdout);
}

// ------------------------------------------------------- progress and frame

void Progress::report(std::size_t index, const std::string &what) const {
  if (quiet_) return;
  std::fprintf(stderr, "[%zu/%zu] %s ... (%.0f s elapsed)\n", index, total_, what.c_str(),
               seconds());
}

void print_banner(const std::string &command) {
  std::printf("xnbench %s (xNGEMM %s), %s, %s\n", version_str().c_str(),
              version_str().c_str(), command.c_str(), utc_now().c_str());
}

void print_done(std::size_t count, const char *what, double seconds, bool failed) {
  std::printf("\n%zu %s in %.1f s%s\n", count, what, seconds,
              failed ? "; SOME CASES FAILED (see ERROR rows)" : "");
}

}  // namespace xnb
