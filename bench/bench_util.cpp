// bench_util.cpp - the helpers shared by every xnbench routine (bench_util.h).
#include "bench_util.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <sstream>
#include <unordered_set>

#include "bench_random.h"
#include "xngemm.h"

namespace xnb {

// ------------------------------------------------------------ command line

void usage_error(const std::string &msg) {
  std::fprintf(stderr, "xnbench: %s\n(see xnbench --help)\n", msg.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

long long parse_int(const std::string &s, const char *what, long long lo, long long hi) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || !end || *end != '\0' || v < lo || v > hi)
    usage_error(std::string("bad ") + what + " '" + s + "' (expected an integer in [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return v;
}

namespace {

// A number that passes `ok`, else a usage error.
template <class Ok>
double parse_number(const std::string &s, const char *what, Ok &&ok) {
  char *end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end != '\0' || !ok(v) || !std::isfinite(v))
    usage_error(std::string("bad ") + what + " '" + s + "'");
  return v;
}

}  // namespace

double parse_double(const std::string &s, const char *what, bool allow_zero) {
  return parse_number(s, what, [&](double v) { return allow_zero ? v >= 0 : v > 0; });
}

double parse_finite(const std::string &s, const char *what) {
  return parse_number(s, what, [](double) { return true; });
}

long long parse_count_or_all(const std::string &s, const char *what) {
  return s == "all" ? 0 : parse_int(s, what, 1, LLONG_MAX);
}

long long parse_bytes(const std::string &s, const char *what) {
  std::string digits = s;
  int shift = 0;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift) digits.pop_back();
  }
  return parse_int(digits, what, 0, LLONG_MAX >> shift) << shift;
}

std::vector<long long> parse_sizes(const std::string &arg, long long default_step) {
  std::vector<long long> out;
  for (const std::string &item : split(arg, ',')) {
    const std::vector<std::string> p = split(item, ':');
    if (p.size() == 1) {
      out.push_back(parse_int(p[0], "size", 1, INT_MAX));
    } else if (p.size() == 2 || p.size() == 3) {
      const long long a = parse_int(p[0], "size", 1, INT_MAX);
      const long long b = parse_int(p[1], "size", 1, INT_MAX);
      const long long step = p.size() == 3      ? parse_int(p[2], "step", 1, INT_MAX)
                             : default_step > 0 ? default_step
                                                : a;
      if (b < a) usage_error("size range '" + item + "' is empty");
      for (long long n = a; n <= b; n += step) out.push_back(n);
    } else {
      usage_error("bad size item '" + item + "'");
    }
  }
  return out;
}

std::vector<char> parse_precs(const std::string &v) {
  return parse_choice<std::vector<char>>(
      v, {{"d", {'d'}}, {"s", {'s'}}, {"both", {'d', 's'}}},
      "--prec must be d, s or both");
}

bool ArgReader::next() {
  if (++i_ >= argc_) return false;
  key_ = argv_[i_];
  val_.clear();
  has_val_ = false;
  const auto eq = key_.find('=');
  if (key_.rfind("--", 0) == 0 && eq != std::string::npos) {
    val_ = key_.substr(eq + 1);
    key_ = key_.substr(0, eq);
    has_val_ = true;
  }
  return true;
}

std::string ArgReader::value() {
  if (has_val_) return val_;
  if (i_ + 1 >= argc_) usage_error("option " + key_ + " needs a value");
  return argv_[++i_];
}

void ArgReader::flag() const {
  if (has_val_) usage_error("option " + key_ + " takes no value");
}

bool parse_common_option(ArgReader &r, CommonOptions *o, const char *usage) {
  const std::string &key = r.key();
  if (key == "--help" || key == "-h") {
    std::fputs(usage, stdout);
    std::exit(0);
  } else if (key == "--seed") {
    o->seed = std::uint64_t(parse_int(r.value(), "seed", 0, LLONG_MAX));
    o->seed_given = true;
  } else if (key == "--csv") {
    o->csv = r.value();
  } else if (key == "--json") {
    o->json = r.value();
  } else if (key == "--quiet") {
    r.flag();
    o->quiet = true;
  } else {
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- formatting

std::string num(double v, const char *fmt) {
  if (!std::isfinite(v)) return std::isnan(v) ? "-" : (v > 0 ? "inf" : "-inf");
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string fmt_gib(double bytes) { return num(bytes / double(1ull << 30), "%.1f"); }

// --------------------------------------------------- seeds, clock, version

std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  return hash_at((std::uint64_t(rd()) << 32) ^ rd() ^ std::uint64_t(t), 0);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string version_str() {
  return std::to_string(XNGEMM_VERSION_MAJOR) + "." +
         std::to_string(XNGEMM_VERSION_MINOR) + "." +
         std::to_string(XNGEMM_VERSION_PATCH);
}

// ----------------------------------------------------------------- statistics

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double min_of(const std::vector<double> &v) {
  return v.empty() ? kNaN : *std::min_element(v.begin(), v.end());
}

void choose_samples(std::int64_t m, std::int64_t n, bool full, std::int64_t count,
                    std::uint64_t seed, std::vector<std::int64_t> *rows,
                    std::vector<std::int64_t> *cols) {
  rows->clear();
  cols->clear();
  const std::int64_t total = m * n;
  if (total <= 0) return;
  if (full || count >= total) {
    rows->reserve(std::size_t(total));
    cols->reserve(std::size_t(total));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        rows->push_back(i);
        cols->push_back(j);
      }
    return;
  }
  std::unordered_set<std::int64_t> seen;
  auto add = [&](std::int64_t i, std::int64_t j) {
    if (std::int64_t(rows->size()) >= count) return;
    if (!seen.insert(i + j * m).second) return;
    rows->push_back(i);
    cols->push_back(j);
  };
  // The corners: the last row and column are where peeled strips live.
  add(0, 0);
  add(m - 1, 0);
  add(0, n - 1);
  add(m - 1, n - 1);
  std::mt19937_64 rng(seed ^ 0x5eed5a3b1e5ull);
  std::uniform_int_distribution<std::int64_t> di(0, m - 1), dj(0, n - 1);
  while (std::int64_t(rows->size()) < count) add(di(rng), dj(rng));
}

}  // namespace xnb
