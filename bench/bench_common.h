// bench_common.h - what the gemm/exdgemm command (bench_gemm.cpp) and its
// two runners (bench_cpu.cpp, bench_gpu.cu) share: one benchmark case, its
// result, the error statistics, the timing loop, and (bench_exdgemm.cpp) the
// exdgemm inputs and exact reference. Helpers of every routine (sampling,
// medians, parsing, ...) are in bench_util.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "xngemm.h"

namespace xn {
struct GemmAlgorithm;
}

namespace xnb {

// ngemm: xnDngemm/xnSngemm (cblas_dngemm/_sngemm) against the vendor GEMM;
// exdgemm: the correctly rounded xnExdgemm (cblas_exdgemm) against the
// vendor DGEMM; strassen, winograd: the general-input recursive GEMMs
// xn?gemmStrassen / xn?gemmWinograd (cblas_?stgemm / cblas_?wigemm) against
// the vendor GEMM.
enum class Routine { Ngemm, Exdgemm, Strassen, Winograd };
// u01, upm1: uniform in [0,1) / [-1,1). phi: (u - 0.5) exp(phi randn) with
// 53-bit u (tests/support/exdgemm_inputs.h); illcond: ill-conditioned dot products
// (ex_fill_illcond). phi and illcond are exdgemm inputs only. paper: the
// test matrix of Li, Ranka, Sahni, ICPADS'11, section 8.1.2 (square only):
// A = I + u v^T, B = I - u v^T / (1 + v^T u), exact product I.
enum class Dist { U01, Upm1, Phi, Illcond, Paper };
enum class CpuLeafKind { OpenBlas, Preload };

const char *routine_name(Routine r);
const char *dist_name(Dist d);

// strassen and winograd: the recursive GEMMs for inputs of any sign.
inline bool is_fast_gemm(Routine r) {
  return r == Routine::Strassen || r == Routine::Winograd;
}
// The recursive GEMMs (ngemm, strassen, winograd): leaf, depth, workspace.
inline bool is_recursive(Routine r) { return r != Routine::Exdgemm; }
// The library's algorithm of a recursive GEMM (core/schedule.h).
const xn::GemmAlgorithm &algorithm_of(Routine r);
// The routine's own leaf-size and crossover options (XN_OPT_LEAF_SIZE_*,
// XN_OPT_STRASSEN_* or XN_OPT_WINOGRAD_*); XN_OPT_MAX_LEVELS is shared.
xnOption_t leaf_option(Routine r, bool is_double);
xnOption_t min_size_option(Routine r, bool is_double);
// A leaf size with which choose_levels(m, n, k, leaf, levels, 0) is exactly
// `levels`: ceil(min(m, n, k) / 2^levels), made smaller where that falls
// short (odd sizes). False when no leaf gives that depth.
// xnParameterSource_t as the table shows it ("o", "b", "s", "c"; "-" for
// -1) and as the records name it ("options", "built-in", ...).
std::string depth_source_letter(int source);
std::string depth_source_name(int source);
// Prints "depth model: <text>" the first time each model is seen.
void depth_model_seen(const char *text);

bool leaf_for_levels(std::int64_t m, std::int64_t n, std::int64_t k, int levels,
                     std::int64_t *leaf);

// One benchmark case: C = 1 * op(A) op(B) + 0 * C, column-major, lda/ldb/ldc
// equal to the stored rows (no padding).
struct CaseSpec {
  Routine routine = Routine::Ngemm;
  char prec = 'd';  // 'd' (double) or 's' (single); exdgemm: always 'd'
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0;
  Dist dist = Dist::U01;
  double phi = 0;  // Dist::Phi's phi
  std::uint64_t seed = 0;
  int reps = 0;                    // timed calls per routine; 0 = automatic
  int warmup = 1;                  // untimed calls per routine before timing
  double time_budget = 1.0;        // seconds of timed calls when reps is automatic
  // A call shorter than this (seconds) is timed in trains of back-to-back
  // calls at least this long (at most kMaxTrainCalls), so that the host's
  // time before a launch, which a stream of calls hides, is not counted;
  // 0: every timed call alone.
  double train_below = 0;
  int levels = -1;                 // XN_OPT_MAX_LEVELS; -1 = library default
  std::int64_t leaf = -1;          // XN_OPT_LEAF_SIZE_S/_D; -1 = library default
  std::int64_t min_size = -1;      // XN_OPT_MIN_SIZE_S/_D; -1 = library default
                                   // (0 whenever `leaf` is given)
  int check_nonneg = -1;           // ngemm: XN_OPT_CHECK_NONNEG; -1 = library default
  std::int64_t ref_samples = 512;  // sampled entries; <= 0 = all entries
  std::int64_t ex_budget = -1;     // XN_OPT_EXDGEMM_WORKSPACE_LIMIT; -1 = default
  std::int64_t ex_block = -1;      // XN_OPT_EXDGEMM_BLOCK; -1 = default
  bool baseline = true;
  CpuLeafKind cpu_leaf = CpuLeafKind::OpenBlas;  // CPU runner only
  // --per-level: one row per depth L = level_lo..level_hi, each run with
  // exactly L levels (leaf_for_levels); -1: one row with the options above.
  int level_lo = -1, level_hi = -1;
  // GPU runner only: the leaf-GEMM train (CaseResult::t_leaf), OpenBLAS on
  // the host from the same inputs (CaseResult::cpu), and xn?ngemm on fresh
  // uniform [0,1) inputs at the same depth (CaseResult::nn).
  bool leaf_train = false, cpu_baseline = false, ngemm_u01 = false;
  // GPU runner only: beta and alpha of the timed calls (the accuracy call is
  // C = AB).
  double timed_beta = 0;
  double timed_alpha = 1;
};

// Errors of one result against the double-double reference.
struct ErrStats {
  double max_rel = kNaN;   // max |c - ref| / |ref| over checked entries, ref != 0
  double mean_rel = kNaN;  // mean of the same
  double max_abs = kNaN;   // max |c - ref| over checked entries
  // max and mean of |c - ref| / mean |ref| over the checked entries: the
  // normalized error of Li, Ranka, Sahni, ICPADS'11, Figure 44, meaningful
  // for signed data where entries near zero make the relative error blow up.
  double max_norm = kNaN, mean_norm = kNaN;
  // --dist paper: max and mean of |c - I| over the checked entries (the
  // paper's metric, section 8.1.2: the exact product of its A and B is I).
  double max_id = kNaN, mean_id = kNaN;
  std::int64_t checked = 0;    // finite entries compared
  std::int64_t zero_ref = 0;   // entries with ref == 0 (no relative error)
  std::int64_t nonfinite = 0;  // NaN/Inf entries in the whole of C
  // Checked entries (NaN/Inf included) not equal to ref_hi: with the exact
  // (MPFR) reference of exdgemm cases, the entries not correctly rounded.
  std::int64_t wrong = 0;
};

struct CaseResult {
  std::string status = "ok";  // "ok", "skipped" or "error"
  std::string message;        // why skipped / what failed / a note
  bool fatal = false;         // the device is unusable: stop the run
  int reps = 0, warmup = 0;
  int train = 1;  // calls per timed sample (CaseSpec::train_below)
  double t_ours = kNaN, t_base = kNaN;  // median seconds per call
  double t_ours_min = kNaN, t_base_min = kNaN;
  // exdgemm on the GPU: seconds per baseline call in a train of back-to-back
  // calls as long as the slice products (round(prods) calls between one event
  // pair, median of 3 trains): the DGEMM rate sustained over as long as
  // exdgemm's own products run, a second yardstick for the cost model.
  double t_base_train = kNaN;
  ErrStats ours, base;
  int levels = -1;               // recursion levels our routine ran with
  // xnGetLastGemmInfo: the depth planned, where it came from
  // (xnParameterSource_t; -1: not known, e.g. on the CPU) and the model's
  // predicted speedup at it (0: no model).
  int planned_levels = -1;
  int depth_source = -1;
  double predicted_speedup = 0;
  std::int64_t leaf = -1;        // leaf size in effect for this precision
  std::int64_t max_levels = -1;  // XN_OPT_MAX_LEVELS in effect
  std::uint64_t ws_bytes = 0;    // workspace the call needs at `levels`
  std::uint64_t ws_held = 0;     // GPU: xnGetWorkspaceHeld after the case
  bool ref_full = false;         // reference on every entry (else sampled)
  std::int64_t ref_entries = 0;
  std::uint64_t seed = 0;
  bool has_ex = false;  // exdgemm: `ex` holds xnGetLastExdgemmInfo's report
  xnExdgemmInfo_t ex{};
  // exdgemm: milliseconds per phase of one more call with
  // XN_OPT_EXDGEMM_PHASE_TIMES (xnExdgemmInfo_t::phase_ms: exponents,
  // conversion, products, sums); NaN where not measured.
  double ex_phase_ms[4] = {kNaN, kNaN, kNaN, kNaN};
  // exdgemm on the GPU with the modular engine: seconds of a train of as
  // many cuBLAS INT8 GEMMs (int32 out) of the call's shape, k padded as
  // the engine pads it, as it has moduli, on random int8 data (median of
  // 3): the products' yardstick (the DGEMM train is not run then).
  double t_int8_train = kNaN;
  // ... and the best INT8 rate the card gave in this run (TOPS of a train of
  // cuBLAS INT8 GEMMs of kBestInt8Shape, measured once per run): the
  // products' other yardstick (issue 33 asks for their fraction of it).
  double best_int8_tops = kNaN;
  // --dist paper: max and mean of |ref - I| over the checked entries, what
  // rounding A and B to the precision alone does to the product.
  double ref_max_id = kNaN, ref_mean_id = kNaN;
  int level_forced = -1;  // --per-level: the depth this row asked for
  // --leaf-train: seconds of a back-to-back train of the leaf_calls = 7^L
  // leaf GEMMs of the recursion (median of 3 trains).
  double t_leaf = kNaN;
  std::int64_t leaf_calls = 0;
  bool has_cpu = false;  // --cpu-baseline: `cpu` holds OpenBLAS's errors
  ErrStats cpu;
  // --ngemm-u01: xn?ngemm (nn) and the vendor GEMM (nn_base) on fresh
  // uniform [0,1) inputs, ngemm at nn_levels levels.
  bool has_nn = false;
  ErrStats nn, nn_base;
  int nn_levels = -1;
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
  // One result per row: one, or one per depth with --per-level (a failure
  // ends the list with its error row).
  virtual std::vector<CaseResult> run(const CaseSpec &c) = 0;
};

// nullptr and a reason when no CUDA device can be used.
std::unique_ptr<Runner> make_gpu_runner(std::string *why);
std::unique_ptr<Runner> make_cpu_runner();
// Number of CUDA devices (0 if the runtime or driver reports an error).
int cuda_device_count();

// Statistics of values[s] against ref_hi[s] + ref_lo[s]; `nonfinite` is the
// count of NaN/Inf entries in the whole result (stored as is). With `rows`
// and `cols` (the entries' positions), also the errors against the identity
// (ErrStats::max_id, mean_id).
ErrStats error_stats(const std::vector<double> &ref_hi, const std::vector<double> &ref_lo,
                     const std::vector<double> &values, std::int64_t nonfinite,
                     const std::vector<std::int64_t> *rows = nullptr,
                     const std::vector<std::int64_t> *cols = nullptr);

// --dist paper: r's ref_max_id and ref_mean_id from the reference at the
// entries (rows[s], cols[s]).
void reference_identity_errors(const std::vector<double> &ref_hi,
                               const std::vector<double> &ref_lo,
                               const std::vector<std::int64_t> &rows,
                               const std::vector<std::int64_t> &cols, CaseResult *r);

// The depths a case's rows ask for: {-1} (the options decide), or
// level_lo..level_hi.
std::vector<int> case_levels(const CaseSpec &c);
// The options of a row asking for exactly `levels` levels: max levels =
// levels, the leaf of leaf_for_levels, crossover 0 (levels < 0: c as it
// is). When no leaf gives that depth, r becomes an error row.
CaseSpec level_spec(const CaseSpec &c, int levels, CaseResult *r);

// --dist paper: the n x n matrix A (which = 'A') or B ('B') of Li, Ranka,
// Sahni, ICPADS'11, section 8.1.2, with u_i = 1/(n+1-i), v_i = sqrt(i),
// computed in double and rounded once to T, stored with ld = n, transposed
// when `trans` (so that op(A) or op(B) is the paper's matrix).
template <class T>
void make_paper_matrix(char which, std::int64_t n, bool trans, std::vector<T> *out);

// The threads OpenBLAS uses (bench_cpu.cpp).
int host_blas_threads();

// OpenBLAS cblas_?gemm of the case's stored A and B (column-major, lda, ldb)
// on the host, checked at the entries (rows[s], cols[s]) against the
// reference; identity errors too for --dist paper (bench_cpu.cpp).
template <class T>
ErrStats host_blas_errors(const CaseSpec &c, const T *A, int lda, const T *B, int ldb,
                          const std::vector<std::int64_t> &rows,
                          const std::vector<std::int64_t> &cols,
                          const std::vector<double> &ref_hi,
                          const std::vector<double> &ref_lo);

// Timed repetitions when CaseSpec::reps == 0: enough to fill `budget`
// seconds given one call of each routine took `pair_seconds`, in [3, 25].
int auto_reps(double pair_seconds, double budget);

// The longest train of calls one timed sample holds (CaseSpec::train_below).
constexpr int kMaxTrainCalls = 100;

// Calls per timed sample for a call of `seconds` (CaseSpec::train_below).
int train_calls(double seconds, double train_below);

// The timing of one case: c.warmup untimed calls of each routine, then timed
// samples of ours and (with c.baseline) the baseline, interleaved so both see
// the same clocks and temperature; c.reps of them, or auto_reps after the
// first pair. A sample is one call, or a train of back-to-back calls when
// the first pair's calls are shorter than c.train_below (both routines get
// the same train). `timed_ours(count)` / `timed_base(count)` make `count`
// calls and return the seconds per call. Fills r's reps, warmup, train,
// t_ours(_min) and t_base(_min).
template <class TimedOurs, class TimedBase>
void time_interleaved(const CaseSpec &c, TimedOurs &&timed_ours, TimedBase &&timed_base,
                      CaseResult *r) {
  for (int w = 0; w < c.warmup; ++w) {
    timed_ours(1);
    if (c.baseline) timed_base(1);
  }
  std::vector<double> to, tb;
  to.push_back(timed_ours(1));
  if (c.baseline) tb.push_back(timed_base(1));
  const double pair = to[0] + (tb.empty() ? 0 : tb[0]);
  const int train =
      train_calls(tb.empty() ? to[0] : std::min(to[0], tb[0]), c.train_below);
  if (train > 1) {  // the single calls were a probe: every sample is a train
    to.clear();
    tb.clear();
  }
  const int reps = c.reps > 0 ? c.reps : auto_reps(pair * train, c.time_budget);
  while (int(to.size()) < reps) {
    to.push_back(timed_ours(train));
    if (c.baseline) tb.push_back(timed_base(train));
  }
  r->reps = reps;
  r->warmup = c.warmup;
  r->train = train;
  r->t_ours = median_of(to);
  r->t_ours_min = min_of(to);
  if (c.baseline) {
    r->t_base = median_of(tb);
    r->t_base_min = min_of(tb);
  }
}

// ------------------------------------------------- exdgemm (bench_exdgemm.cpp)

// Every entry is checked against the exact reference when m * n is at most
// this (or --ref-samples all / >= m * n); else c.ref_samples sampled ones.
constexpr std::int64_t kExFullRefEntries = 4096;
bool ex_full_reference(const CaseSpec &c);

// The stored A (lda = rows of A as stored) and B of an exdgemm case, drawn
// from c.seed by c.dist (with c.phi); transposes as c.ta, c.tb.
struct ExInputs {
  std::vector<double> a, b;
  std::int64_t lda = 1, ldb = 1;
};
void make_ex_inputs(const CaseSpec &c, ExInputs *in);

// The exact (MPFR, tests/support/mpfr_oracle.h) value of op(A) op(B) at the
// entries (rows[s], cols[s]): hi = the correctly rounded double, lo = the
// rest. OpenMP over the entries when MPFR is thread-safe.
void exact_reference(const CaseSpec &c, const ExInputs &in,
                     const std::vector<std::int64_t> &rows,
                     const std::vector<std::int64_t> &cols, std::vector<double> *hi,
                     std::vector<double> *lo);

// "error" with a message when exdgemm left entries not correctly rounded or
// either result has NaN/Inf (shared by the two runners' exdgemm cases).
void ex_check_result(CaseResult *r);

// Stream of 53-bit (double) or 24-bit (float) uniforms in [0,1), or [-1,1).
template <class T>
T draw(std::mt19937_64 &rng, Dist d);

}  // namespace xnb
