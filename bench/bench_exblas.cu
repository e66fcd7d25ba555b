// bench_exblas.cu - `xnbench exblas`: the correctly rounded xnExdgemv and
// xnExddot against cublasDgemv and cublasDdot, on the same handle, stream
// and buffers, with a streaming read of the same bytes measured alongside
// (docs/xnbench.md, "exblas").
//
// Inputs: the exdgemm suites' phi distribution, (u - 0.5) exp(phi randn)
// with 53-bit u (tests/support/exdgemm_inputs.h through make_ex_inputs, as
// `xnbench exdgemm` draws them), on the host from a per-case seed, then
// uploaded; padding rows of A and the gaps between strided vector elements
// hold NaN. The reference is the exact IEEE value of the contract
// (tests/support/ieee_oracle.h: a GEMV output i is entry (i, 0) of the
// m x 1 product op(A) x, a DOT the 1 x 1 x n product), computed on the host
// for sampled outputs and compared bit for bit.
//
// Error policy (bench_cuda.h): a failing CUDA runtime call ends the run
// (CudaFatal); a routine or cuBLAS status other than success marks the case
// (CaseFailure) and the run goes on if the device still synchronises.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "bench_cuda.h"
#include "bench_exblas.h"
#include "bench_random.h"
#include "bench_util.h"
#include "report.h"
#include "support/exdgemm_inputs.h"
#include "support/ieee_oracle.h"
#include "xngemm.h"

namespace xnb {

namespace {

// ------------------------------------------------------------------- cases

enum class Op { Gemv, Dot };

struct Case {
  Op op = Op::Gemv;
  char trans = '-';  // gemv: 'N' or 'T'
  long long n = 0;   // gemv: A is n x n; dot: the vectors' length
  double phi = 0;
};

const char *op_name(Op op) { return op == Op::Gemv ? "gemv" : "dot"; }

// The issue's cases and its targets for rate = cuBLAS time / ours: these
// are the default cases when no --sizes is given.
struct Target {
  Op op;
  char trans;
  long long n;
  double phi, min_rate;
};
const Target kTargets[] = {
    {Op::Gemv, 'N', 16384, 0, 0.85},   {Op::Gemv, 'T', 16384, 1, 0.80},
    {Op::Gemv, 'N', 8191, 0, 0.80},    {Op::Gemv, 'T', 8191, 0, 0.80},
    {Op::Dot, '-', 1LL << 24, 0, 0.80}, {Op::Dot, '-', 1LL << 20, 0, 0.80},
};

// The issue's target for one of its own cases in the layout it names (unit
// increments, no padding); NaN for any other case.
double target_of(const Case &c, const ExblasOptions &o) {
  if (o.inc != 1 || o.lda_pad != 0) return kNaN;
  for (const Target &t : kTargets)
    if (t.op == c.op && t.trans == c.trans && t.n == c.n && t.phi == c.phi)
      return t.min_rate;
  return kNaN;
}

std::vector<Case> make_cases(const ExblasOptions &o) {
  auto wanted = [&](char t) {
    return std::find(o.trans.begin(), o.trans.end(), t) != o.trans.end();
  };
  std::vector<Case> cases;
  if (o.sizes.empty()) {
    for (const Target &t : kTargets)
      if (t.op == Op::Gemv ? o.gemv && wanted(t.trans) : o.dot)
        cases.push_back({t.op, t.trans, t.n, o.phi_given ? o.phi : t.phi});
    return cases;
  }
  if (o.gemv)
    for (long long n : o.sizes)
      for (char t : o.trans) cases.push_back({Op::Gemv, t, n, o.phi});
  if (o.dot)
    for (long long n : o.sizes) cases.push_back({Op::Dot, '-', n, o.phi});
  return cases;
}

// The per-case seed: from the base seed, the routine, op and n (so
// --seed replays any one case on its own).
std::uint64_t case_seed(std::uint64_t base, const Case &c) {
  const std::uint64_t key = std::uint64_t(c.n) * 4 + (c.op == Op::Dot ? 2 : 0) +
                            (c.trans == 'T' ? 1 : 0);
  return mix64(base + kGolden * (key + 1));
}

// ------------------------------------------------------- vectors, numbers

// Stored elements of a vector of n entries with increment inc.
long long storage_len(long long n, long long inc) {
  return n <= 0 ? 1 : 1 + (n - 1) * std::llabs(inc);
}
// Where logical element i is stored (BLAS: a negative increment starts at
// the far end).
std::size_t at(long long i, long long n, long long inc) {
  return std::size_t(inc > 0 ? i * inc : (n - 1 - i) * -inc);
}
// v stored with increment inc, NaN in the gaps.
std::vector<double> strided(const std::vector<double> &v, long long inc) {
  const long long n = (long long)v.size();
  std::vector<double> s(std::size_t(storage_len(n, inc)),
                        std::numeric_limits<double>::quiet_NaN());
  for (long long i = 0; i < n; ++i) s[at(i, n, inc)] = v[std::size_t(i)];
  return s;
}

// count phi-distributed entries from their own generator.
std::vector<double> phi_vector(long long count, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double &x : v) x = xn_test::ex_value(xn_test::ExKind::Phi, phi, rng, 0);
  return v;
}

bool all_finite(const std::vector<double> &v) {
  for (const double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
// The contract's equality: the same bits (any NaN matches any NaN).
bool same_value(double got, double want) {
  return (std::isnan(got) && std::isnan(want)) || bits(got) == bits(want);
}
// |got - want| / |want|; Inf where got is not finite (or want is 0 and got
// is not), 0 where both are the same special value.
double rel_err(double got, double want) {
  if (same_value(got, want)) return 0;
  if (!std::isfinite(got) || !std::isfinite(want) || want == 0)
    return std::numeric_limits<double>::infinity();
  return std::fabs(got - want) / std::fabs(want);
}
std::string hex(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%a", x);
  return b;
}

// value_of(s) for s = 0 .. count-1 on worker threads: several only where
// MPFR keeps its exponent range per thread (a TLS build), which the oracle
// narrows while it rounds. Always off the main thread, so that the
// oracle's thread-local pools (gigabytes for a 2^24-term dot) go with the
// workers.
template <class ValueOf>
std::vector<double> exact_values(std::size_t count, ValueOf &&value_of) {
  std::vector<double> out(count);
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads =
      mpfr_buildopt_tls_p() ? std::max<std::size_t>(1, std::min({count, hw, std::size_t(16)}))
                            : 1;
  std::atomic<std::size_t> next{0};
  std::mutex error_lock;
  std::exception_ptr error;
  auto work = [&] {
    try {
      for (std::size_t s; (s = next.fetch_add(1)) < count;) out[s] = value_of(s);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_lock);
      if (!error) error = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread &t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

// ------------------------------------------------------------- read floor

constexpr int kFloorBlock = 256;

// Up to three stretches of device memory read in one pass.
struct ReadSpan {
  const double *p = nullptr;
  long long count = 0;  // doubles
};

// The sum of the span's entries this thread reads: 16-byte words in a
// grid-stride loop, four loads in flight, streamed past the L1; the odd
// last element by thread 0. (Spans start at cudaMalloc addresses, so the
// words are aligned.)
__device__ double read_span(ReadSpan r, long long tid, long long stride) {
  const double2 *w = reinterpret_cast<const double2 *>(r.p);
  const long long words = r.count / 2;
  double s = 0;
  long long i = tid;
  for (; i + 3 * stride < words; i += 4 * stride) {
    const double2 a = __ldcs(w + i), b = __ldcs(w + i + stride),
                  c = __ldcs(w + i + 2 * stride), d = __ldcs(w + i + 3 * stride);
    s += (a.x + a.y) + (b.x + b.y) + (c.x + c.y) + (d.x + d.y);
  }
  for (; i < words; i += stride) {
    const double2 a = __ldcs(w + i);
    s += a.x + a.y;
  }
  if ((r.count & 1) && tid == 0) s += __ldcs(r.p + r.count - 1);
  return s;
}

// The read floor: one pass over the bytes a routine must read. The sum is
// stored only when `store` (0 at run time, which the compiler cannot know:
// the loads stay).
__global__ void __launch_bounds__(kFloorBlock)
    read_floor_kernel(ReadSpan a, ReadSpan b, ReadSpan c, int store, double *sink) {
  const long long tid = (long long)blockIdx.x * kFloorBlock + threadIdx.x;
  const long long stride = (long long)gridDim.x * kFloorBlock;
  const double s =
      read_span(a, tid, stride) + read_span(b, tid, stride) + read_span(c, tid, stride);
  if (store) sink[0] = s;
}

// ------------------------------------------------------------------ records

// One table row / file record: one case.
struct Row {
  Case c;
  long long m = 0, n = 0, lda = 0;  // gemv: A is m x n; dot: n = the length
  long long inc = 1;
  std::uint64_t seed = 0;
  double target = kNaN;  // the issue's minimum rate, where it has one
  std::string status = "ok", message;
  bool ran = false;  // timings present
  int reps = 0, warmup = 0, train = 0;
  double t_ours = kNaN, t_base = kNaN, t_floor = kNaN;
  double t_ours_min = kNaN, t_base_min = kNaN, t_floor_min = kNaN;
  double bytes = 0;  // operand bytes
  bool in_l2 = false;
  long long checked = 0, wrong = 0;
  long long nan_outputs = -1;  // gemv: NaN entries of y from finite inputs; -1 unknown
  long long gaps_written = -1;  // gemv: y's gap entries changed; -1 unknown
  double base_err = kNaN;       // cuBLAS: max relative error at the checked outputs

  double tbs(double t) const { return bytes / t * 1e-12; }
  double rate() const { return t_base / t_ours; }
  // 1 met, 0 missed, -1 no target or no timing.
  int met() const {
    if (!std::isfinite(target) || !std::isfinite(rate())) return -1;
    return rate() >= target ? 1 : 0;
  }
  std::string op_str() const { return c.op == Op::Gemv ? std::string(1, c.trans) : "-"; }
  std::string label() const {
    return std::string(op_name(c.op)) + (c.op == Op::Gemv ? " " + op_str() : "") +
           " n=" + std::to_string(c.n) + " phi=" + num(c.phi, "%g");
  }
};

const char *ours_name(Op op) { return op == Op::Gemv ? "xnExdgemv" : "xnExddot"; }
const char *base_name(Op op) { return op == Op::Gemv ? "cublasDgemv" : "cublasDdot"; }

// The table's columns; a skipped or failed row prints the first five.
const TableLayout kExblasTable(
    "routine:-7 op:-2 n:9 phi:4 inc:4 | train:5 ours_us:9 cub_us:9 | ours_TB:7 cub_TB:7 "
    "floor_TB:8 %floor:6 | rate:5 target:6 met:3 | wrong:5 checked:7 cub_err:8",
    5);

std::vector<std::string> exblas_cells(const Row &r) {
  std::vector<std::string> c{op_name(r.c.op), r.op_str(), std::to_string(r.c.n),
                             num(r.c.phi, "%g"), std::to_string(r.inc)};
  if (!r.ran) return c;
  const int met = r.met();
  c.insert(c.end(),
           {std::to_string(r.train), num(r.t_ours * 1e6, "%.2f"),
            num(r.t_base * 1e6, "%.2f"), num(r.tbs(r.t_ours), "%.3f"),
            num(r.tbs(r.t_base), "%.3f"), num(r.tbs(r.t_floor), "%.3f"),
            num(100 * r.t_floor / r.t_ours, "%.1f"), num(r.rate(), "%.3f"),
            std::isfinite(r.target) ? num(r.target, ">=%.2f") : "-",
            met < 0 ? "-" : (met ? "yes" : "NO"), std::to_string(r.wrong),
            std::to_string(r.checked), num(r.base_err, "%.1e")});
  return c;
}

std::vector<Field> exblas_fields(const Row &r) {
  const bool gemv = r.c.op == Op::Gemv;
  return {
      {"routine", text(op_name(r.c.op))},
      {"ours", text(ours_name(r.c.op))},
      {"baseline", text(base_name(r.c.op))},
      {"trans", opt_text(gemv, r.op_str())},
      {"m", opt_int(gemv, r.m)},
      {"n", integer(r.n)},
      {"lda", opt_int(gemv, r.lda)},
      {"incx", integer(r.inc)},
      {"incy", integer(r.inc)},
      {"phi", number(r.c.phi)},
      {"seed", uinteger(r.seed)},
      {"status", text(r.status)},
      {"message", text(r.message)},
      {"reps", opt_int(r.ran, r.reps)},
      {"warmup", opt_int(r.ran, r.warmup)},
      {"train", opt_int(r.ran, r.train)},
      {"bytes", number(r.bytes)},
      {"in_l2", tristate(r.bytes > 0 ? int(r.in_l2) : -1)},
      {"ours_us", number(r.t_ours * 1e6)},
      {"base_us", number(r.t_base * 1e6)},
      {"floor_us", number(r.t_floor * 1e6)},
      {"ours_min_us", number(r.t_ours_min * 1e6)},
      {"base_min_us", number(r.t_base_min * 1e6)},
      {"floor_min_us", number(r.t_floor_min * 1e6)},
      {"ours_tbs", number(r.tbs(r.t_ours))},
      {"base_tbs", number(r.tbs(r.t_base))},
      {"floor_tbs", number(r.tbs(r.t_floor))},
      {"ours_frac_floor", number(r.t_floor / r.t_ours)},
      {"base_frac_floor", number(r.t_floor / r.t_base)},
      {"rate", number(r.rate())},
      {"target", number(r.target)},
      {"target_met", tristate(r.met())},
      {"checked", opt_int(r.checked > 0, r.checked)},
      {"wrong", opt_int(r.checked > 0, r.wrong)},
      {"ours_nan_outputs", opt_int(r.nan_outputs >= 0, r.nan_outputs)},
      {"ours_gaps_written", opt_int(r.gaps_written >= 0, r.gaps_written)},
      {"base_max_rel_err", number(r.base_err)},
  };
}

// The rows of the run: printed, recorded, and kept for the summary.
class ExblasReport {
 public:
  ExblasReport(const ExblasOptions &o, std::string device)
      : o_(o), files_("exblas", std::move(device), o.seed) {}

  // False (and a message) when a file cannot be written.
  bool open() {
    std::string error;
    if (files_.open(o_.csv, o_.json, exblas_fields(Row{}), &error)) return true;
    std::fprintf(stderr, "xnbench: %s\n", error.c_str());
    return false;
  }

  void row(const Row &r) {
    rows_.push_back(r);
    kExblasTable.print_row(exblas_cells(r), r.ran, r.status, r.message);
    files_.record(exblas_fields(r));
  }

  const std::vector<Row> &rows() const { return rows_; }

 private:
  const ExblasOptions &o_;
  RecordFiles files_;
  std::vector<Row> rows_;
};

// ------------------------------------------------------------------- bench

// Device memory kept free beyond the case's buffers (cuBLAS, the library).
constexpr double kMarginBytes = double(512ull << 20);
// The library's workspace allowance for xnExdgemv: "a few percent of A".
constexpr double kGemvWorkspaceShare = 0.10;
// Automatic train: calls per timed sample so that the faster routine's
// sample lasts about this long, at most kMaxAutoTrain calls.
constexpr double kTrainTargetSec = 2e-3;
constexpr int kMaxAutoTrain = 50;
// The second accuracy call of a GEMV: both scalings at work.
constexpr double kAlpha2 = 1.5, kBeta2 = -0.5;

class ExblasBench {
 public:
  explicit ExblasBench(const ExblasOptions &o) : o_(o) {}

  bool init(std::string *why) {
    if (!gpu_.init(why)) return false;
    handle_ = gpu_.handle();
    stream_ = gpu_.stream();
    return true;
  }

  std::string device_name() const { return gpu_.device_name(); }
  std::string describe() const { return gpu_.describe(true); }
  double l2_bytes() const { return double(gpu_.properties().l2CacheSize); }

  // One case: a row that ran, or a skipped or error row. A CudaFatal passes
  // through (the device is unusable).
  Row run(const Case &c);

 private:
  void run_gemv(Row *r);
  void run_dot(Row *r);
  template <class Ours, class Base>
  void time_case(Ours &&ours, Base &&base, ReadSpan a, ReadSpan b, ReadSpan c, Row *r);

  // False (and r skipped) when `need` bytes plus the margin are not free.
  bool fits(double need, Row *r) {
    std::size_t free_b = 0, total_b = 0;
    XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (need + kMarginBytes <= double(free_b)) return true;
    r->status = "skipped";
    r->message = "needs " + num((need + kMarginBytes) / double(1 << 20), "%.0f") +
                 " MiB (operands, workspace, margin), " +
                 std::to_string(free_b >> 20) + " MiB free on the device";
    return false;
  }

  const ExblasOptions &o_;
  GpuSession gpu_;
  cublasHandle_t handle_ = nullptr;  // gpu_'s
  cudaStream_t stream_ = nullptr;    // gpu_'s
};

Row ExblasBench::run(const Case &c) {
  Row r;
  r.c = c;
  r.inc = o_.inc;
  r.seed = case_seed(o_.seed, c);
  r.target = target_of(c, o_);
  r.n = c.n;
  if (c.op == Op::Gemv) {
    r.m = c.n;
    r.lda = r.m + o_.lda_pad;
    r.bytes = 8.0 * double(r.m) * double(r.n) + 8.0 * double(r.m + r.n);
  } else {
    r.bytes = 16.0 * double(r.n);
  }
  r.in_l2 = r.bytes <= l2_bytes();
  try {
    gpu_.release_library_state();  // the workspace held is this case's
    XNB_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
    if (c.op == Op::Gemv)
      run_gemv(&r);
    else
      run_dot(&r);
  } catch (const CaseFailure &e) {
    const std::string fault = device_fault();
    if (!fault.empty()) throw CudaFatal("device: " + fault);
    // Keep what the checks found before the failure.
    r.status = "error";
    r.message = r.message.empty() ? e.what() : r.message + "; " + e.what();
    r.ran = false;
  } catch (const std::bad_alloc &) {
    r.status = "skipped";
    r.message = "out of host memory";
    r.ran = false;
  }
  if (r.wrong > 0) {
    // Loud, on both streams: the routines' one promise is broken.
    const std::string loud = "!!! WRONG: " + std::string(ours_name(c.op)) + " " +
                             r.label() + ": " + r.message;
    std::printf("%s\n", loud.c_str());
    std::fprintf(stderr, "xnbench: %s\n", loud.c_str());
  }
  if (r.ran && r.in_l2 && r.status == "ok")
    r.message = "operands fit in the L2: a train re-reads them from there";
  return r;
}

void ExblasBench::run_gemv(Row *r) {
  const bool trans = r->c.trans == 'T';
  const cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const long long m = r->m, n = r->n, lda = r->lda, inc = r->inc;
  const long long len_x = trans ? m : n, len_y = trans ? n : m;
  const long long sx = storage_len(len_x, inc), sy = storage_len(len_y, inc);
  if (lda > INT_MAX || sx > INT_MAX || sy > INT_MAX) {
    r->status = "skipped";
    r->message = "lda or a vector's storage exceeds INT_MAX";
    return;
  }
  const double a_bytes = 8.0 * double(lda) * double(n);
  if (!fits(a_bytes * (1 + kGemvWorkspaceShare) + 8.0 * double(sx + sy), r)) return;

  // Inputs on the host: A (m x n, ld m) and x as op(A) and op(B) of the
  // m x 1 exdgemm case, drawn as `xnbench exdgemm` draws them; y0 for the
  // second check from a generator of its own.
  CaseSpec spec;
  spec.routine = Routine::Exdgemm;
  spec.dist = Dist::Phi;
  spec.phi = r->c.phi;
  spec.seed = r->seed;
  spec.m = len_y;
  spec.n = 1;
  spec.k = len_x;
  spec.ta = trans;
  ExInputs in;
  make_ex_inputs(spec, &in);
  const std::vector<double> &x = in.b;
  const std::vector<double> y0 = phi_vector(len_y, r->c.phi, mix64(r->seed ^ 0x79E1ull));
  const bool finite_inputs = all_finite(in.a) && all_finite(x) && all_finite(y0);
  const std::vector<double> hx = strided(x, inc), hy0 = strided(y0, inc);
  std::vector<double> poison(static_cast<std::size_t>(sy));
  std::memset(poison.data(), 0xFF, poison.size() * sizeof(double));  // NaN bits

  DevMem dA, dx, dy;
  std::string why;
  if (!try_alloc(dA, std::size_t(a_bytes), &why) ||
      !try_alloc(dx, std::size_t(sx) * 8, &why) || !try_alloc(dy, std::size_t(sy) * 8, &why)) {
    r->status = "skipped";
    r->message = why;
    return;
  }
  // Rows m .. lda-1 NaN: a routine reading them puts NaN into y.
  XNB_CUDA(cudaMemsetAsync(dA.p, 0xFF, std::size_t(a_bytes), stream_));
  XNB_CUDA(cudaMemcpy2DAsync(dA.p, std::size_t(lda) * 8, in.a.data(),
                             std::size_t(in.lda) * 8, std::size_t(m) * 8, std::size_t(n),
                             cudaMemcpyHostToDevice, stream_));
  XNB_CUDA(cudaMemcpyAsync(dx.p, hx.data(), hx.size() * 8, cudaMemcpyHostToDevice, stream_));
  XNB_CUDA(cudaStreamSynchronize(stream_));

  // The sampled outputs' exact values: (alpha 1, beta 0), then (kAlpha2,
  // kBeta2) with y0.
  std::vector<std::int64_t> rows, cols;
  const bool all = o_.ref_rows <= 0 || o_.ref_rows >= len_y;
  choose_samples(len_y, 1, all, all ? len_y : o_.ref_rows, r->seed, &rows, &cols);
  const std::size_t count = rows.size();
  const std::vector<double> ref = exact_values(2 * count, [&](std::size_t s) {
    const bool second = s >= count;
    return xn_test::exact_gemm_entry_ieee(
        trans, false, len_x, second ? kAlpha2 : 1.0, in.a.data(), in.lda, x.data(),
        len_x, second ? kBeta2 : 0.0, second ? y0.data() : nullptr, len_y,
        rows[s % count], 0);
  });

  const int im = int(m), in_ = int(n), ilda = int(lda), iinc = int(inc);
  auto ours = [&](const double *al, const double *be) {
    return xnExdgemv(handle_, op, im, in_, al, dA.as<double>(), ilda, dx.as<double>(), iinc,
                     be, dy.as<double>(), iinc);
  };
  auto base = [&](const double *al, const double *be) {
    return cublasDgemv(handle_, op, im, in_, al, dA.as<double>(), ilda, dx.as<double>(),
                       iinc, be, dy.as<double>(), iinc);
  };
  // One checked call: y = NaN (alpha 1, beta 0) or y0 (the second check),
  // then y's storage back.
  std::vector<double> got;
  auto checked_call = [&](bool ours_call, bool second) {
    const std::vector<double> &before = second ? hy0 : poison;
    XNB_CUDA(cudaMemcpyAsync(dy.p, before.data(), before.size() * 8,
                             cudaMemcpyHostToDevice, stream_));
    const double al = second ? kAlpha2 : 1.0, be = second ? kBeta2 : 0.0;
    check_status(ours_call ? ours(&al, &be) : base(&al, &be),
                 ours_call ? "xnExdgemv" : "cublasDgemv");
    got.resize(before.size());
    XNB_CUDA(cudaMemcpyAsync(got.data(), dy.p, got.size() * 8, cudaMemcpyDeviceToHost,
                             stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
  };

  // Ours: every sampled output bitwise; no NaN anywhere in y (finite
  // inputs have a finite or infinite exact value, never NaN: a NaN is an
  // entry left unwritten); the gaps between y's elements untouched.
  r->nan_outputs = finite_inputs ? 0 : -1;
  r->gaps_written = 0;
  std::string first_wrong;
  for (const bool second : {false, true}) {
    checked_call(true, second);
    for (std::size_t s = 0; s < count; ++s) {
      const double v = got[at(rows[s], len_y, inc)], want = ref[s + (second ? count : 0)];
      if (same_value(v, want)) continue;
      if (r->wrong++ == 0)
        first_wrong = std::string(second ? "alpha 1.5, beta -0.5" : "alpha 1, beta 0") +
                      ": y[" + std::to_string(rows[s]) + "] = " + hex(v) + ", exact " +
                      hex(want);
    }
    r->checked += (long long)count;
    if (finite_inputs)
      for (long long i = 0; i < len_y; ++i) r->nan_outputs += std::isnan(got[at(i, len_y, inc)]);
    const std::vector<double> &before = second ? hy0 : poison;
    if (std::llabs(inc) > 1)
      for (std::size_t q = 0; q < got.size(); ++q)
        if (q % std::size_t(std::llabs(inc)) != 0 && bits(got[q]) != bits(before[q]))
          ++r->gaps_written;
  }
  // cuBLAS: its error at the same outputs, for information.
  double worst = 0;
  for (const bool second : {false, true}) {
    checked_call(false, second);
    for (std::size_t s = 0; s < count; ++s)
      worst = std::max(worst, rel_err(got[at(rows[s], len_y, inc)],
                                      ref[s + (second ? count : 0)]));
  }
  r->base_err = worst;

  std::vector<std::string> errs;
  if (r->wrong > 0)
    errs.push_back(std::to_string(r->wrong) + " of " + std::to_string(r->checked) +
                   " checked outputs NOT correctly rounded (first: " + first_wrong + ")");
  if (r->nan_outputs > 0)
    errs.push_back(std::to_string(r->nan_outputs) +
                   " NaN entries of y from finite inputs (left unwritten?)");
  if (r->gaps_written > 0)
    errs.push_back(std::to_string(r->gaps_written) +
                   " entries between y's elements (incy) changed");

  if (!errs.empty()) {
    r->status = "error";
    for (std::size_t e = 0; e < errs.size(); ++e) r->message += (e ? "; " : "") + errs[e];
  }

  // Timed calls (also after an error: the row still shows the speed): y =
  // A x (alpha 1, beta 0), host pointer mode.
  const double one = 1, zero = 0;
  time_case([&] { return ours(&one, &zero); }, [&] { return base(&one, &zero); },
            {dA.as<double>(), m * n}, {dx.as<double>(), len_x}, {dy.as<double>(), len_y},
            r);
}

void ExblasBench::run_dot(Row *r) {
  const long long n = r->n, inc = r->inc;
  const long long sv = storage_len(n, inc);
  if (sv > INT_MAX) {
    r->status = "skipped";
    r->message = "a vector's storage exceeds INT_MAX elements";
    return;
  }
  if (!fits(2 * 8.0 * double(sv), r)) return;

  // x and y as op(A) (1 x n) and op(B) (n x 1) of the 1 x 1 x n exdgemm case.
  CaseSpec spec;
  spec.routine = Routine::Exdgemm;
  spec.dist = Dist::Phi;
  spec.phi = r->c.phi;
  spec.seed = r->seed;
  spec.m = 1;
  spec.n = 1;
  spec.k = n;
  ExInputs in;
  make_ex_inputs(spec, &in);
  const std::vector<double> &x = in.a, &y = in.b;
  const std::vector<double> hx = strided(x, inc), hy = strided(y, inc);

  DevMem dx, dy, dres;
  std::string why;
  if (!try_alloc(dx, hx.size() * 8, &why) || !try_alloc(dy, hy.size() * 8, &why) ||
      !try_alloc(dres, sizeof(double), &why)) {
    r->status = "skipped";
    r->message = why;
    return;
  }
  XNB_CUDA(cudaMemcpyAsync(dx.p, hx.data(), hx.size() * 8, cudaMemcpyHostToDevice, stream_));
  XNB_CUDA(cudaMemcpyAsync(dy.p, hy.data(), hy.size() * 8, cudaMemcpyHostToDevice, stream_));
  XNB_CUDA(cudaStreamSynchronize(stream_));

  const double want = exact_values(1, [&](std::size_t) {
    return xn_test::exact_gemm_entry_ieee(false, false, n, 1.0, x.data(), 1, y.data(), n,
                                          0.0, nullptr, 1, 0, 0);
  })[0];

  const int in_ = int(n), iinc = int(inc);
  double *res = dres.as<double>();
  auto ours = [&](double *result) {
    return xnExddot(handle_, in_, dx.as<double>(), iinc, dy.as<double>(), iinc, result);
  };
  auto base = [&](double *result) {
    return cublasDdot(handle_, in_, dx.as<double>(), iinc, dy.as<double>(), iinc, result);
  };
  // The result in device memory (NaN before the call), copied back.
  auto device_result = [&](bool ours_call) {
    XNB_CUDA(cudaMemsetAsync(res, 0xFF, sizeof(double), stream_));
    check_status(ours_call ? ours(res) : base(res),
                 std::string(ours_call ? "xnExddot" : "cublasDdot") +
                     " (device pointer mode)");
    double v = 0;
    XNB_CUDA(cudaMemcpyAsync(&v, res, sizeof v, cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
    return v;
  };

  // Ours in both pointer modes, bitwise; cuBLAS's error for information.
  XNB_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  const double on_device = device_result(true);
  r->base_err = rel_err(device_result(false), want);
  XNB_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
  double on_host = std::numeric_limits<double>::quiet_NaN();
  check_status(ours(&on_host), "xnExddot (host pointer mode)");
  r->checked = 2;
  std::string first_wrong;
  for (const auto &got : {std::make_pair("device", on_device), std::make_pair("host", on_host)})
    if (!same_value(got.second, want) && r->wrong++ == 0)
      first_wrong = std::string(got.first) + " pointer mode: " + hex(got.second) +
                    ", exact " + hex(want);

  if (r->wrong > 0) {
    r->status = "error";
    r->message = std::to_string(r->wrong) + " of 2 results NOT correctly rounded (first: " +
                 first_wrong + ")";
  }

  // Timed calls: the result in device memory for both routines.
  XNB_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  time_case([&] { return ours(res); }, [&] { return base(res); }, {dx.as<double>(), n},
            {dy.as<double>(), n}, {}, r);
  XNB_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
}

// Warm-up, then timed samples of ours, cuBLAS and the read floor in turn
// (the same clocks and temperature for all three); a sample is a train of
// r->train calls between two events.
template <class Ours, class Base>
void ExblasBench::time_case(Ours &&ours, Base &&base, ReadSpan a, ReadSpan b, ReadSpan c,
                            Row *r) {
  const char *on = ours_name(r->c.op), *bn = base_name(r->c.op);
  DevMem sink;
  XNB_CUDA(cudaMalloc(&sink.p, sizeof(double)));
  const cudaDeviceProp &prop = gpu_.properties();
  const unsigned grid = unsigned(std::max(1, prop.multiProcessorCount) *
                                 std::max(1, prop.maxThreadsPerMultiProcessor / kFloorBlock));
  auto read_floor = [&] {
    read_floor_kernel<<<grid, kFloorBlock, 0, stream_>>>(a, b, c, 0, sink.as<double>());
    XNB_CUDA(cudaGetLastError());
    return CUBLAS_STATUS_SUCCESS;
  };
  int train = o_.train;
  if (train <= 0) {
    double t = std::numeric_limits<double>::infinity();
    for (int probe = 0; probe < 2; ++probe)
      t = std::min({t, gpu_.time_calls(ours, 1, on), gpu_.time_calls(base, 1, bn)});
    train = std::isfinite(t) && t > 0
                ? int(std::clamp(std::ceil(kTrainTargetSec / t), 1.0, double(kMaxAutoTrain)))
                : 1;
  }
  for (int w = 0; w < o_.warmup; ++w) {
    gpu_.time_calls(ours, train, on);
    gpu_.time_calls(base, train, bn);
    gpu_.time_calls(read_floor, train, "read_floor_kernel");
  }
  std::vector<double> to, tb, tf;
  for (int rep = 0; rep < o_.reps; ++rep) {
    to.push_back(gpu_.time_calls(ours, train, on));
    tb.push_back(gpu_.time_calls(base, train, bn));
    tf.push_back(gpu_.time_calls(read_floor, train, "read_floor_kernel"));
  }
  r->ran = true;
  r->reps = o_.reps;
  r->warmup = o_.warmup;
  r->train = train;
  r->t_ours = median_of(to);
  r->t_base = median_of(tb);
  r->t_floor = median_of(tf);
  r->t_ours_min = min_of(to);
  r->t_base_min = min_of(tb);
  r->t_floor_min = min_of(tf);
}

// -------------------------------------------------------------- summaries

std::string range_of(const std::vector<double> &v, const char *fmt) {
  if (v.empty()) return "-";
  const auto mm = std::minmax_element(v.begin(), v.end());
  const std::string lo = num(*mm.first, fmt), hi = num(*mm.second, fmt);
  return lo == hi ? lo : lo + ".." + hi;
}

// One line per routine: rates, targets, fraction of the read floor,
// correctness, cuBLAS's errors.
void print_summary(const std::vector<Row> &rows) {
  std::printf(
      "\nsummary (rate = cuBLAS time / ours; %%floor = read floor time / ours; wrong = "
      "checked outputs not bitwise the correctly rounded value):\n");
  for (const Op op : {Op::Gemv, Op::Dot}) {
    std::vector<double> rate, floor_pct, berr;
    long long cases = 0, ran = 0, checked = 0, wrong = 0, targets = 0, met = 0, failed = 0;
    std::string missed;
    for (const Row &r : rows) {
      if (r.c.op != op) continue;
      ++cases;
      failed += r.status == "error";
      checked += r.checked;
      wrong += r.wrong;
      if (std::isfinite(r.base_err)) berr.push_back(r.base_err);
      if (!r.ran) continue;
      ++ran;
      rate.push_back(r.rate());
      floor_pct.push_back(100 * r.t_floor / r.t_ours);
      if (r.met() >= 0) {
        ++targets;
        met += r.met();
        if (!r.met())
          missed += std::string(missed.empty() ? "" : ", ") + r.label() + " " +
                    num(r.rate(), "%.3f") + " < " + num(r.target, "%.2f");
      }
    }
    if (cases == 0) continue;
    std::printf(
        "  %-4s %lld case(s), %lld timed: rate %s; targets met %lld/%lld%s; ours %s%% of "
        "the read floor; %s: wrong %lld of %lld checked%s; cuBLAS max rel err %s\n",
        op_name(op), cases, ran, range_of(rate, "%.3f").c_str(), met, targets,
        missed.empty() ? "" : (" (MISSED: " + missed + ")").c_str(),
        range_of(floor_pct, "%.1f").c_str(), ours_name(op), wrong, checked,
        wrong > 0 ? " !!! NOT CORRECTLY ROUNDED" : "",
        num(berr.empty() ? kNaN : *std::max_element(berr.begin(), berr.end()), "%.1e")
            .c_str());
    if (failed > 0) std::printf("       %lld ERROR row(s)\n", failed);
  }
}

}  // namespace

int run_exblas(const ExblasOptions &o) {
  Progress progress(o.quiet);
  print_banner("exblas");

  std::string why;
  ExblasBench bench(o);
  if (!bench.init(&why)) {
    // GPU routines: nothing to measure. Files still get their header.
    std::printf(
        "exblas: xnExdgemv/xnExddot are GPU routines and no CUDA device can be used (%s); "
        "nothing to run\n",
        why.c_str());
    ExblasReport rep(o, "(no CUDA device)");
    if (!rep.open()) return 2;
    if (o.device == "gpu") {
      std::fprintf(stderr, "xnbench: cannot use the GPU: %s\n", why.c_str());
      return 1;
    }
    return 0;
  }

  const std::vector<Case> cases = make_cases(o);
  std::printf("%s", bench.describe().c_str());
  ExblasReport rep(o, bench.device_name());
  if (!rep.open()) return 2;

  std::printf(
      "ours: xnExdgemv / xnExddot (correctly rounded); baselines: cublasDgemv / "
      "cublasDdot; same handle, stream and buffers\n");
  std::printf(
      "inputs: (u - 0.5) exp(phi randn), 53-bit u (the exdgemm suites' phi distribution, "
      "as xnbench exdgemm draws it), on the host, per-case seed from base seed %llu "
      "(replay with --seed %llu); gemv A n x n, lda = n + %lld (padding rows NaN); "
      "incx = incy = %lld (gaps NaN)\n",
      (unsigned long long)o.seed, (unsigned long long)o.seed, o.lda_pad, o.inc);
  std::printf(
      "accuracy (before timing): gemv y = A x with y = NaN (alpha 1, beta 0), then y = "
      "1.5 A x - 0.5 y0, y0 random, %s outputs each; dot in device and host pointer "
      "mode; compared bit for bit with the exact IEEE value (tests/support/"
      "ieee_oracle.h, MPFR and GMP cross-checked): wrong must be 0; cub_err = cuBLAS's "
      "max |y - exact| / |exact| at the same outputs\n",
      o.ref_rows > 0 ? std::to_string(o.ref_rows).c_str() : "all");
  std::printf(
      "timing: CUDA events on the handle's stream around a train of %s; %d warm-up and "
      "%d timed samples per routine, ours, cuBLAS and the read floor in turn; median "
      "time per call (min in the files); gemv alpha = 1, beta = 0 (host pointer mode); "
      "dot result in device memory (CUBLAS_POINTER_MODE_DEVICE) for both\n",
      o.train > 0 ? (std::to_string(o.train) + " calls").c_str()
                  : "calls (automatic: about 2 ms of the faster routine, at most 50)",
      o.warmup, o.reps);
  std::printf(
      "bandwidth: TB = operand bytes / time in TB/s (gemv 8 m n + 8 (m + n), dot 16 n); "
      "floor = one streaming-read kernel over the same byte count; %%floor = ours_TB / "
      "floor_TB; rate = cub_us / ours_us (> 1: ours faster); target = the issue's "
      "minimum rate (its cases only: gemv N 16384 phi 0 >= 0.85, T 16384 phi 1 and n = "
      "8191 >= 0.80, dot >= 0.80); operands under the L2 (%s MiB) stay there across a "
      "train\n\n",
      num(bench.l2_bytes() / double(1 << 20), "%.0f").c_str());
  kExblasTable.print_header();

  progress.set_total(cases.size());
  bool fatal = false;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    Row probe;
    probe.c = c;
    progress.report(i + 1, probe.label());
    try {
      rep.row(bench.run(c));
    } catch (const CudaFatal &e) {
      std::printf("%s ERROR: %s\n", probe.label().c_str(), e.what());
      std::fprintf(stderr, "xnbench: the device is unusable, stopping: %s\n", e.what());
      fatal = true;
      break;
    }
  }
  bool failed = fatal;
  for (const Row &r : rep.rows()) failed |= r.status == "error";
  print_summary(rep.rows());
  print_done(rep.rows().size(), "row(s)", progress.seconds(), failed);
  return failed ? 1 : 0;
}

}  // namespace xnb
