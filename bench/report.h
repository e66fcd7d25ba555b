// report.h - the one reporter of xnbench, used by every routine (gemm and
// exdgemm in bench_gemm.cpp, symv in bench_symv.cu): the printed table, the
// CSV and JSON records, the progress line on stderr, and the run's opening
// and closing lines. A routine describes its output as data: a list of
// table columns (TableLayout) with one string per cell, and a list of
// named record fields (Field) per row; this module does all the printing
// and quoting. Formats (docs/xnbench.md): missing values are empty in CSV
// and null in JSON; numbers in the files are %.9g.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.h"

namespace xnb {

// ------------------------------------------------------------------- records

// One value of a record, as CSV and as JSON text.
struct Cell {
  std::string csv, json;
};
Cell text(const std::string &s);  // quoted as each format needs
Cell missing();                   // empty / null
Cell number(double v);            // %.9g; NaN and Inf are missing
Cell integer(long long v);
Cell uinteger(std::uint64_t v);
Cell opt_int(bool have, long long v);            // missing unless `have`
Cell opt_text(bool have, const std::string &s);  // missing unless `have`
Cell tristate(int v);  // -1 missing; CSV 0 / 1, JSON false / true

// One named value of a record.
struct Field {
  const char *name;
  Cell value;
};

// The CSV file (a header line, then one line per record, flushed as each
// record comes) and the JSON file (a head and the records, rewritten whole
// after each record). Every record starts with date (UTC, when the record
// is written), device and xngemm_version, then the routine's fields.
class RecordFiles {
 public:
  // head_extra: JSON head keys after base_seed (e.g. symv's copy_tbs).
  RecordFiles(std::string command, std::string device, std::uint64_t base_seed,
              std::vector<Field> head_extra = {});
  // Creates the files given (an empty path: none): the CSV with its header
  // line (the names of `example`, the fields of any record of the routine),
  // the JSON with no records. False and *error ("cannot write PATH") when
  // one cannot be written.
  bool open(const std::string &csv, const std::string &json,
            const std::vector<Field> &example, std::string *error);
  // One record: the same fields as open's `example`, in the same order.
  void record(const std::vector<Field> &fields);

 private:
  bool write_json() const;

  std::string command_, device_;
  std::uint64_t base_seed_;
  std::vector<Field> head_extra_;
  std::string json_path_;
  std::ofstream csv_;
  std::vector<std::string> json_records_;
};

// --------------------------------------------------------------------- table

// The columns of a routine's table, as "label:width" items in order, the
// width as in printf (negative: left-aligned), separated by " ", or by
// " | " where a '|' stands between two columns; labels may hold spaces:
// "prec:-4 m x n x k:-18 lvl:3 | ours_ms:10 ...". The first `key` columns
// identify a row: they are all that a skipped or failed row prints before
// its message.
class TableLayout {
 public:
  TableLayout(const std::string &columns, std::size_t key);
  // The header line, on stdout.
  void print_header() const;
  // One row on stdout. Rows that `ran` print every cell, then `mark`, then
  // "  ERROR: message" when status is "error", else "  note: message" when
  // there is one. Other rows print their key cells then "skipped: message"
  // (status "skipped") or "ERROR: message".
  void print_row(const std::vector<std::string> &cells, bool ran,
                 const std::string &status, const std::string &message,
                 const std::string &mark = "") const;

 private:
  std::string line(const std::vector<std::string> &cells, std::size_t count) const;

  std::vector<int> widths_;        // < 0: left-aligned
  std::vector<std::string> seps_;  // before each column
  std::vector<std::string> labels_;
  std::size_t key_;
};

// ------------------------------------------------------- progress and frame

// "[i/total] what ... (N s elapsed)" on stderr, unless quiet; elapsed and
// the closing line count from construction.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet) {}
  void set_total(std::size_t total) { total_ = total; }
  void report(std::size_t index, const std::string &what) const;
  double seconds() const { return clock_.seconds(); }

 private:
  bool quiet_;
  std::size_t total_ = 0;
  Stopwatch clock_;
};

// "xnbench VERSION (xNGEMM VERSION), COMMAND, UTC-TIME".
void print_banner(const std::string &command);
// "\nCOUNT WHAT in N s", with the failure note.
void print_done(std::size_t count, const char *what, double seconds, bool failed);

}  // namespace xnb
