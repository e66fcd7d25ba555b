// bench_util.h - the helpers every xnbench routine (gemm/exdgemm, symv)
// shares: the command-line reader and value parsers, table number
// formatting, seeds, the clock and the version, medians, and the choice of
// the entries compared with a reference. Host code; the GPU parts are in
// bench_cuda.h, the counter-based random numbers in bench_random.h, the
// table and record output in report.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace xnb {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ------------------------------------------------------------ command line

// "xnbench: MSG" and the --help hint on stderr, exit status 2.
[[noreturn]] void usage_error(const std::string &msg);

// The non-empty pieces of s between separators.
std::vector<std::string> split(const std::string &s, char sep);

// An integer in [lo, hi].
long long parse_int(const std::string &s, const char *what, long long lo, long long hi);
// A finite number > 0 (>= 0 with allow_zero).
double parse_double(const std::string &s, const char *what, bool allow_zero = false);
// Any finite number.
double parse_finite(const std::string &s, const char *what);
// A count >= 1, or "all" (0).
long long parse_count_or_all(const std::string &s, const char *what);
// A byte count: an integer >= 0 with an optional K, M or G (binary) suffix.
long long parse_bytes(const std::string &s, const char *what);
// A size list: comma-separated items N or FIRST:LAST[:STEP], LAST included;
// STEP defaults to FIRST, or to default_step when that is > 0.
std::vector<long long> parse_sizes(const std::string &arg, long long default_step = 0);
// d, s or both: the precisions, double first.
std::vector<char> parse_precs(const std::string &v);
// The value paired with the name `v`, else usage_error(error).
template <class T>
T parse_choice(const std::string &v,
               std::initializer_list<std::pair<const char *, T>> choices,
               const std::string &error) {
  for (const auto &c : choices)
    if (v == c.first) return c.second;
  usage_error(error);
}

// The options after the command, as `--opt value` or `--opt=value`.
class ArgReader {
 public:
  ArgReader(int argc, char **argv, int first) : argc_(argc), argv_(argv), i_(first - 1) {}
  // Moves to the next option; false after the last one.
  bool next();
  const std::string &key() const { return key_; }
  // The option's value: after '=', else the next argument.
  std::string value();
  // The option takes no value: an error if one came with '='.
  void flag() const;

 private:
  int argc_;
  char **argv_;
  int i_;
  std::string key_, val_;
  bool has_val_ = false;
};

// What every command takes: --seed, --csv, --json, --quiet (and --help).
struct CommonOptions {
  bool seed_given = false;
  std::uint64_t seed = 0;  // base seed; fresh_seed() unless --seed
  std::string csv, json;
  bool quiet = false;
};
// Handles r.key() if it is one of CommonOptions' options or --help (prints
// `usage`, exits 0); false for any other option.
bool parse_common_option(ArgReader &r, CommonOptions *o, const char *usage);

// ---------------------------------------------------------------- formatting

// printf(fmt) of a finite number; "-" for NaN, "inf" / "-inf".
std::string num(double v, const char *fmt);
// bytes in GiB, "%.1f".
std::string fmt_gib(double bytes);

// --------------------------------------------------- seeds, clock, version

// A base seed that differs from run to run.
std::uint64_t fresh_seed();
// The current UTC time, ISO 8601 ("2025-01-31T12:00:00Z").
std::string utc_now();
// XNGEMM_VERSION_MAJOR.MINOR.PATCH.
std::string version_str();

// Seconds since construction on the steady clock.
class Stopwatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// Seconds per call of `count` back-to-back calls on the steady clock.
template <class Call>
double wall_seconds(Call &&call, int count = 1) {
  const Stopwatch w;
  for (int i = 0; i < count; ++i) call();
  return w.seconds() / count;
}

// ----------------------------------------------------------------- statistics

// Median and minimum (NaN for an empty vector).
double median_of(std::vector<double> v);
double min_of(const std::vector<double> &v);

// Entries (i, j) at which results are compared with the reference: all of
// them (column-major order) when `full`, else `count` distinct random ones
// including the four corners, drawn from a generator seeded with `seed`.
void choose_samples(std::int64_t m, std::int64_t n, bool full, std::int64_t count,
                    std::uint64_t seed, std::vector<std::int64_t> *rows,
                    std::vector<std::int64_t> *cols);

}  // namespace xnb
