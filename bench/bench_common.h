// bench_common.h - what the xnbench front end (xnbench.cpp) and its two
// runners (bench_cpu.cpp, bench_gpu.cu) share: one benchmark case, its
// result, the error statistics and the sample choice for the reference.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace xnb {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Dist { U01, Upm1 };
enum class CpuLeafKind { OpenBlas, Preload };

const char *dist_name(Dist d);

// One benchmark case: C = 1 * op(A) op(B) + 0 * C, column-major, lda/ldb/ldc
// equal to the stored rows (no padding).
struct CaseSpec {
  char prec = 'd';  // 'd' (double) or 's' (single)
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0;
  Dist dist = Dist::U01;
  std::uint64_t seed = 0;
  int reps = 0;                    // timed calls per routine; 0 = automatic
  int warmup = 1;                  // untimed calls per routine before timing
  double time_budget = 1.0;        // seconds of timed calls when reps is automatic
  int levels = -1;                 // XN_OPT_MAX_LEVELS; -1 = library default
  std::int64_t leaf = -1;          // XN_OPT_LEAF_SIZE_S/_D; -1 = library default
  std::int64_t min_size = -1;      // XN_OPT_MIN_SIZE_S/_D; -1 = library default
                                   // (0 whenever `leaf` is given)
  std::int64_t ref_samples = 512;  // sampled entries; <= 0 = all entries
  bool baseline = true;
  CpuLeafKind cpu_leaf = CpuLeafKind::OpenBlas;  // CPU runner only
};

// Errors of one result against the double-double reference.
struct ErrStats {
  double max_rel = kNaN;       // max |c - ref| / |ref| over checked entries, ref != 0
  double mean_rel = kNaN;      // mean of the same
  double max_abs = kNaN;       // max |c - ref| over checked entries
  std::int64_t checked = 0;    // finite entries compared
  std::int64_t zero_ref = 0;   // entries with ref == 0 (no relative error)
  std::int64_t nonfinite = 0;  // NaN/Inf entries in the whole of C
};

struct CaseResult {
  std::string status = "ok";  // "ok", "skipped" or "error"
  std::string message;        // why skipped / what failed / a note
  bool fatal = false;         // the device is unusable: stop the run
  int reps = 0, warmup = 0;
  double t_ours = kNaN, t_base = kNaN;  // median seconds per call
  double t_ours_min = kNaN, t_base_min = kNaN;
  ErrStats ours, base;
  int levels = -1;               // recursion levels our routine ran with
  std::int64_t leaf = -1;        // leaf size in effect for this precision
  std::int64_t max_levels = -1;  // XN_OPT_MAX_LEVELS in effect
  std::uint64_t ws_bytes = 0;    // workspace the call needs at `levels`
  std::uint64_t ws_held = 0;     // GPU: xnGetWorkspaceHeld after the case
  bool ref_full = false;         // reference on every entry (else sampled)
  std::int64_t ref_entries = 0;
  std::uint64_t seed = 0;
};

// A runner executes cases on one processor.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::string device_name() const = 0;  // e.g. "NVIDIA H200" or the CPU model
  virtual std::string describe() const = 0;     // multi-line header text
  // Names of the two routines a case compares.
  virtual std::string ours_name(const CaseSpec &c) const = 0;
  virtual std::string base_name(const CaseSpec &c) const = 0;
  virtual bool is_gpu() const = 0;
  // Whether the reference covers every entry of this case.
  virtual bool full_reference(const CaseSpec &c) const = 0;
  virtual CaseResult run(const CaseSpec &c) = 0;
};

// nullptr and a reason when no CUDA device can be used.
std::unique_ptr<Runner> make_gpu_runner(std::string *why);
std::unique_ptr<Runner> make_cpu_runner();
// Number of CUDA devices (0 if the runtime or driver reports an error).
int cuda_device_count();

// Entries (i, j) at which results are compared with the reference: all of
// them (column-major order) when `full`, else `count` distinct random ones
// including the four corners, drawn from a generator seeded with `seed`.
void choose_samples(std::int64_t m, std::int64_t n, bool full, std::int64_t count,
                    std::uint64_t seed, std::vector<std::int64_t> *rows,
                    std::vector<std::int64_t> *cols);

// Statistics of values[s] against ref_hi[s] + ref_lo[s]; `nonfinite` is the
// count of NaN/Inf entries in the whole result (stored as is).
ErrStats error_stats(const std::vector<double> &ref_hi, const std::vector<double> &ref_lo,
                     const std::vector<double> &values, std::int64_t nonfinite);

// Median and minimum of a non-empty vector.
double median_of(std::vector<double> v);
double min_of(const std::vector<double> &v);

// Timed repetitions when CaseSpec::reps == 0: enough to fill `budget`
// seconds given one call of each routine took `pair_seconds`, in [3, 25].
int auto_reps(double pair_seconds, double budget);

// Stream of 53-bit (double) or 24-bit (float) uniforms in [0,1), or [-1,1).
template <class T>
T draw(std::mt19937_64 &rng, Dist d);

}  // namespace xnb
