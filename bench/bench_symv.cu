// bench_symv.cu - `xnbench symv`: xnDsymv/xnSsymv against cublasDsymv/
// cublasSsymv in both atomics modes, on the same handle, stream and buffers,
// with the device's copy and ?gemv bandwidth measured in the same run
// (docs/xnbench.md, "symv").
//
// Inputs: A(i, j) = A(j, i) is a counter-based hash of (seed, max(i,j),
// min(i,j)), so the host regenerates any row of the symmetric matrix without
// copying it back; the unused triangle and the padding rows hold NaN, which a
// routine reading them would carry into y. The reference is a double-double
// dot product (tests/support/dd_reference.h) per sampled row, on the host.
//
// Error policy (bench_cuda.h): a failing CUDA runtime call ends the run
// (CudaFatal); a routine or cuBLAS status other than success marks the case
// (CaseFailure) and the run goes on if the device still synchronises.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_cuda.h"
#include "bench_random.h"
#include "bench_symv.h"
#include "bench_util.h"
#include "core/symv_variants.h"
#include "report.h"
#include "support/dd_reference.h"
#include "xngemm.h"

namespace xnb {

namespace {

// ------------------------------------------------------------------ inputs

// Entry (i, j) of the symmetric matrix: the hash of the unordered pair, so
// lower and upper storage of the same seed hold the same matrix.
template <class T>
XN_HD T sym_entry(std::uint64_t key, std::int64_t i, std::int64_t j) {
  const std::uint64_t hi = std::uint64_t(i > j ? i : j),
                      lo = std::uint64_t(i > j ? j : i);
  return uniform<T>(hash_at(key, (hi << 32) | lo), true);
}

constexpr int kBlock = 256;

// The stored triangle from the hash, NaN elsewhere (the other triangle and
// rows n .. lda-1). Columns stride over blockIdx.y, so no 64-bit division.
template <class T>
__global__ void __launch_bounds__(kBlock)
    fill_symmetric_kernel(T *a, long long lda, long long n, unsigned long long key,
                          int lower, T nan) {
  for (long long j = blockIdx.y; j < n; j += gridDim.y)
    for (long long i = (long long)blockIdx.x * kBlock + threadIdx.x; i < lda;
         i += (long long)gridDim.x * kBlock) {
      const bool stored = i < n && (lower ? i >= j : i <= j);
      a[i + j * lda] = stored ? sym_entry<T>(key, i, j) : nan;
    }
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    fill_vector_kernel(T *v, long long n, unsigned long long key) {
  for (long long i = (long long)blockIdx.x * kBlock + threadIdx.x; i < n;
       i += (long long)gridDim.x * kBlock)
    v[i] = uniform<T>(hash_at(key, std::uint64_t(i)), true);
}

// The read floor: one pass over `count` 16-byte words in chunks of 64 KiB
// per thread block, four loads in flight per thread, streamed past the L1;
// the sum is stored (into a sink of its own) only when it is -1, so the
// compiler keeps the loads. Its time for the stored triangle's bytes is
// what any SYMV of that size needs at least (one kernel's launch, ramp and
// tail included).
constexpr long long kReadFloorWordsPerBlock = 65536 / 16;
__global__ void __launch_bounds__(kBlock)
    read_floor_kernel(const float4 *a, long long count, float *sink) {
  const long long b0 = (long long)blockIdx.x * kReadFloorWordsPerBlock;
  const long long b1 =
      b0 + kReadFloorWordsPerBlock < count ? b0 + kReadFloorWordsPerBlock : count;
  float s = 0.f;
  for (long long i = b0 + threadIdx.x; i < b1; i += 4 * kBlock) {
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const long long j = i + k * kBlock;
      v[k] = j < b1 ? __ldcs(a + j) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) s += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  if (s == -1.f) sink[0] = s;
}

// --------------------------------------------------------------- reference

// y_ref = alpha A x + beta y0 at the sampled rows, in double-double, and the
// scale |alpha| |A| |x| + |beta| |y0| of each row's error.
struct Reference {
  std::vector<std::int64_t> rows;
  std::vector<double> hi, lo, scale;
  bool all = false;
};

template <class T>
void host_reference(std::uint64_t key_a, const std::vector<T> &x,
                    const std::vector<T> &y0, double alpha, double beta, Reference *ref) {
  const std::int64_t n = std::int64_t(x.size());
  const std::size_t count = ref->rows.size();
  ref->hi.assign(count, 0);
  ref->lo.assign(count, 0);
  ref->scale.assign(count, 0);
  auto work = [&](std::size_t first, std::size_t step) {
    std::vector<T> row(static_cast<std::size_t>(n));
    for (std::size_t s = first; s < count; s += step) {
      const std::int64_t i = ref->rows[s];
      double abs_sum = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        row[std::size_t(j)] = sym_entry<T>(key_a, i, j);
        abs_sum += std::fabs(double(row[std::size_t(j)]) * double(x[std::size_t(j)]));
      }
      const xn::DD dot = xn::dd_dot<T>(n, row.data(), 1, x.data(), 1);
      xn::DD ax = xn::two_prod(alpha, dot.hi);
      ax.lo += alpha * dot.lo;
      const xn::DD r = xn::dd_add(ax, xn::two_prod(beta, double(y0[std::size_t(i)])));
      ref->hi[s] = r.hi;
      ref->lo[s] = r.lo;
      ref->scale[s] =
          std::fabs(alpha) * abs_sum + std::fabs(beta * double(y0[std::size_t(i)]));
    }
  };
  // Rows are independent: spread them over the host's cores when it pays.
  const std::size_t want = double(count) * double(n) > 4e6 ? 16 : 1;
  const std::size_t threads = std::max<std::size_t>(
      1, std::min<std::size_t>({want, std::thread::hardware_concurrency(), count}));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (std::thread &t : pool) t.join();
}

// Max of |y - ref| / scale over the sampled rows (finite entries) and the
// NaN/Inf count over all of y.
struct YCheck {
  double max_err = kNaN;
  std::int64_t nonfinite = 0;
};

template <class T>
YCheck check_y(const std::vector<T> &y, const Reference &ref) {
  YCheck c;
  for (const T v : y) c.nonfinite += !std::isfinite(v);
  double worst = -1;
  for (std::size_t s = 0; s < ref.rows.size(); ++s) {
    const double v = double(y[std::size_t(ref.rows[s])]);
    if (!std::isfinite(v)) continue;
    const double err = std::fabs((v - ref.hi[s]) - ref.lo[s]);
    worst = std::max(worst, ref.scale[s] > 0 ? err / ref.scale[s] : err);
  }
  if (worst >= 0) c.max_err = worst;
  return c;
}

// ---------------------------------------------------------------- routines

xn::Fill fill_of(char uplo) { return uplo == 'L' ? xn::Fill::Lower : xn::Fill::Upper; }

// y = alpha A x + beta y by ours (xnDsymv / xnSsymv) or the baseline
// (cublasDsymv / cublasSsymv); y = alpha op(A) x + beta y by cublas?gemv on
// the full n x n array.
template <class T>
cublasStatus_t symv_call(bool ours, cublasHandle_t h, cublasFillMode_t u, int n,
                         const T *al, const T *A, int lda, const T *x, const T *be,
                         T *y) {
  if constexpr (std::is_same_v<T, double>)
    return ours ? xnDsymv(h, u, n, al, A, lda, x, 1, be, y, 1)
                : cublasDsymv(h, u, n, al, A, lda, x, 1, be, y, 1);
  else
    return ours ? xnSsymv(h, u, n, al, A, lda, x, 1, be, y, 1)
                : cublasSsymv(h, u, n, al, A, lda, x, 1, be, y, 1);
}
template <class T>
cublasStatus_t gemv_call(cublasHandle_t h, cublasOperation_t t, int n, const T *al,
                         const T *A, int lda, const T *x, const T *be, T *y) {
  if constexpr (std::is_same_v<T, double>)
    return cublasDgemv(h, t, n, n, al, A, lda, x, 1, be, y, 1);
  else
    return cublasSgemv(h, t, n, n, al, A, lda, x, 1, be, y, 1);
}
const char *symv_name(bool ours, bool is_d) {
  return ours ? (is_d ? "xnDsymv" : "xnSsymv") : (is_d ? "cublasDsymv" : "cublasSsymv");
}

// ------------------------------------------------------------------ records

// One table row / file record: one (precision, uplo, n, variant).
struct Row {
  char prec = 'd', uplo = 'L';
  long long n = 0, lda = 0;
  std::uint64_t seed = 0;
  int variant_opt = 0;  // XN_OPT_SYMV_VARIANT set on the handle (0 = default)
  xn::SymvVariant v{};  // the variant that ran
  bool is_default = false;
  std::string status = "ok", message;
  bool ran = false;  // timings present
  std::size_t ws_bytes = 0;
  int reps = 0, warmup = 0, batch = 0;
  double t_ours = kNaN, t_base = kNaN, t_atom = kNaN;
  double t_ours_min = kNaN, t_base_min = kNaN, t_atom_min = kNaN;
  YCheck ours, base, atom;
  int repro_ours = -1, repro_base = -1, repro_atom = -1;  // 1 yes, 0 no, -1 unknown
  double copy_tbs = kNaN, gemv_n_tbs = kNaN, gemv_t_tbs = kNaN;
  double read_tbs = kNaN;  // the read floor of the stored triangle's bytes
  long long ref_rows = 0;
  bool best = false;

  double bytes() const {
    return double(n) * double(n + 1) / 2 * (prec == 'd' ? 8.0 : 4.0);
  }
  double tbs(double t) const { return bytes() / t * 1e-12; }
  double gemv_tbs() const {
    if (std::isnan(gemv_n_tbs)) return gemv_t_tbs;
    if (std::isnan(gemv_t_tbs)) return gemv_n_tbs;
    return std::max(gemv_n_tbs, gemv_t_tbs);
  }
};

std::string config_str(const xn::SymvVariant &v) {
  return std::to_string(v.nb) + "/" + std::to_string(v.cols_per_warp) + "/" +
         std::to_string(v.stages) + "/" + std::to_string(v.min_blocks) + "/" +
         std::to_string(v.chunk) + "/" + std::to_string(v.pieces) + "/" +
         std::to_string(v.tensor) + (v.regs ? "/regs" : "");
}

// The table's columns; a skipped or failed row prints the first five.
const TableLayout kSymvTable(
    "prec:-4 uplo:-4 n:6 var:4 config:-12 ws_MiB:8 | ours_us:9 cub_us:9 cubA_us:9 | "
    "ours_GF:7 ours_TB:7 cub_TB:7 cubA_TB:7 gemv_TB:7 | %copy:5 %gemv:5 | spd:6 spdA:6 | "
    "ours_err:8 cub_err:8 cubA_err:8 | rep:3 repA:4",
    5);

// One row's cells, in kSymvTable's order (the key cells only when it did
// not run).
std::vector<std::string> symv_cells(const Row &r) {
  const std::string var =
      r.v.id > 0 ? std::to_string(r.v.id) + (r.is_default ? "*" : "") : "-";
  std::vector<std::string> c{std::string(1, r.prec), std::string(1, r.uplo),
                             std::to_string(r.n), var,
                             r.v.id > 0 ? config_str(r.v) : "-"};
  if (!r.ran) return c;
  const double to = r.tbs(r.t_ours);
  auto yn = [](int v) { return v < 0 ? "-" : (v ? "yes" : "NO"); };
  c.insert(
      c.end(),
      {num(double(r.ws_bytes) / double(1 << 20), "%.2f"), num(r.t_ours * 1e6, "%.2f"),
       num(r.t_base * 1e6, "%.2f"), num(r.t_atom * 1e6, "%.2f"),
       num(2.0 * double(r.n) * double(r.n) / r.t_ours * 1e-9, "%.0f"), num(to, "%.3f"),
       num(r.tbs(r.t_base), "%.3f"), num(r.tbs(r.t_atom), "%.3f"),
       num(r.gemv_tbs(), "%.3f"), num(100 * to / r.copy_tbs, "%.1f"),
       num(100 * to / r.gemv_tbs(), "%.1f"), num(r.t_base / r.t_ours, "%.2fx"),
       num(r.t_atom / r.t_ours, "%.2fx"), num(r.ours.max_err, "%.1e"),
       num(r.base.max_err, "%.1e"), num(r.atom.max_err, "%.1e"), yn(r.repro_ours),
       yn(r.repro_atom)});
  return c;
}

// One row's record fields, in file order (after date, device, version).
std::vector<Field> symv_fields(const Row &r, const SymvOptions &o) {
  const bool is_d = r.prec == 'd';
  const double to = r.tbs(r.t_ours), tb = r.tbs(r.t_base), ta = r.tbs(r.t_atom);
  const double gf = 2.0 * double(r.n) * double(r.n) / r.t_ours * 1e-9;
  const bool have_v = r.v.id > 0;
  return {
      {"routine", text("symv")},
      {"ours", text(symv_name(true, is_d))},
      {"baseline", text(symv_name(false, is_d))},
      {"prec", text(std::string(1, r.prec))},
      {"uplo", text(std::string(1, r.uplo))},
      {"n", integer(r.n)},
      {"lda", opt_int(r.lda > 0, r.lda)},
      {"alpha", number(o.alpha)},
      {"beta", number(o.beta)},
      {"seed", uinteger(r.seed)},
      {"variant", opt_int(have_v, r.variant_opt)},
      {"variant_id", opt_int(have_v, r.v.id)},
      {"is_default", tristate(have_v ? int(r.is_default) : -1)},
      {"nb", opt_int(have_v, r.v.nb)},
      {"cols_per_warp", opt_int(have_v, r.v.cols_per_warp)},
      {"stages", opt_int(have_v, r.v.stages)},
      {"min_blocks", opt_int(have_v, r.v.min_blocks)},
      {"chunk", opt_int(have_v, r.v.chunk)},
      {"pieces", opt_int(have_v, r.v.pieces)},
      {"tensor", opt_int(have_v, r.v.tensor)},
      {"regs", opt_int(have_v, r.v.regs)},
      {"status", text(r.status)},
      {"message", text(r.message)},
      {"ws_bytes", opt_int(have_v, (long long)r.ws_bytes)},
      {"reps", opt_int(r.ran, r.reps)},
      {"warmup", opt_int(r.ran, r.warmup)},
      {"batch", opt_int(r.ran, r.batch)},
      {"ours_us", number(r.t_ours * 1e6)},
      {"base_us", number(r.t_base * 1e6)},
      {"base_atomics_us", number(r.t_atom * 1e6)},
      {"ours_min_us", number(r.t_ours_min * 1e6)},
      {"base_min_us", number(r.t_base_min * 1e6)},
      {"base_atomics_min_us", number(r.t_atom_min * 1e6)},
      {"ours_gflops", number(gf)},
      {"ours_tbs", number(to)},
      {"base_tbs", number(tb)},
      {"base_atomics_tbs", number(ta)},
      {"copy_tbs", number(r.copy_tbs)},
      {"gemv_n_tbs", number(r.gemv_n_tbs)},
      {"gemv_t_tbs", number(r.gemv_t_tbs)},
      {"gemv_tbs", number(r.gemv_tbs())},
      {"ours_frac_copy", number(to / r.copy_tbs)},
      {"ours_frac_gemv", number(to / r.gemv_tbs())},
      {"read_tbs", number(r.read_tbs)},
      {"ours_frac_read", number(to / r.read_tbs)},
      {"speedup", number(r.t_base / r.t_ours)},
      {"speedup_atomics", number(r.t_atom / r.t_ours)},
      {"ours_max_err", number(r.ours.max_err)},
      {"base_max_err", number(r.base.max_err)},
      {"base_atomics_max_err", number(r.atom.max_err)},
      {"ours_nonfinite", opt_int(r.repro_ours >= 0, r.ours.nonfinite)},
      {"base_nonfinite", opt_int(r.repro_base >= 0, r.base.nonfinite)},
      {"base_atomics_nonfinite", opt_int(r.repro_atom >= 0, r.atom.nonfinite)},
      {"ours_repro", tristate(r.repro_ours)},
      {"base_repro", tristate(r.repro_base)},
      {"base_atomics_repro", tristate(r.repro_atom)},
      {"ref_rows", opt_int(r.ref_rows > 0, r.ref_rows)},
      {"best", tristate(r.ran ? int(r.best) : -1)},
  };
}

// The rows of the run: printed, recorded, and kept for the summary.
class SymvReport {
 public:
  SymvReport(const SymvOptions &o, std::string device, double copy_tbs)
      : o_(o),
        files_("symv", std::move(device), o.seed, {{"copy_tbs", number(copy_tbs)}}) {}

  // False (and a message) when a file cannot be written.
  bool open() {
    std::string error;
    if (files_.open(o_.csv, o_.json, symv_fields(Row{}, o_), &error)) return true;
    std::fprintf(stderr, "xnbench: %s\n", error.c_str());
    return false;
  }

  void row(const Row &r, bool mark_best) {
    rows_.push_back(r);
    kSymvTable.print_row(symv_cells(r), r.ran, r.status, r.message,
                         mark_best && r.best ? "  <- best" : "");
    files_.record(symv_fields(r, o_));
  }

  const std::vector<Row> &rows() const { return rows_; }

 private:
  const SymvOptions &o_;
  RecordFiles files_;
  std::vector<Row> rows_;
};

// ------------------------------------------------------------------- bench

// Device memory kept free beyond the case's buffers (cuBLAS, the library).
constexpr std::uint64_t kMarginBytes = 512ull << 20;
// Automatic batch: calls per event pair so that a batch of ours takes about
// this long (event resolution is ~0.5 us; SYMV at n = 1024 takes a few us).
constexpr double kBatchTargetSec = 1e-3;
constexpr int kMaxBatch = 1000;

// A routine timed in a group: ours at one variant, or cuBLAS in one atomics
// mode.
struct Contender {
  bool ours = true;
  int variant_opt = 0;   // ours: XN_OPT_SYMV_VARIANT to set
  bool atomics = false;  // cuBLAS: CUBLAS_ATOMICS_ALLOWED
  xn::SymvVariant v{};
  std::size_t ws_bytes = 0;
  bool failed = false;
  std::string message;
  YCheck check;
  int repro = -1;
  std::vector<double> times;
};

class SymvBench {
 public:
  explicit SymvBench(const SymvOptions &o) : o_(o) {}

  bool init(std::string *why) {
    if (!gpu_.init(why)) return false;
    handle_ = gpu_.handle();
    stream_ = gpu_.stream();
    return true;
  }

  std::string device_name() const { return gpu_.device_name(); }
  std::string describe() const { return gpu_.describe(true); }

  // Device-to-device copy bandwidth, (read + write) bytes / time, in TB/s;
  // NaN if the buffers do not fit. Buffers of 1 GiB: far beyond the L2.
  double measure_copy(std::size_t *bytes_out) {
    std::size_t free_b = 0, total_b = 0;
    XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    std::size_t bytes = std::size_t(1) << 30;
    while (bytes > (64u << 20) && 2 * bytes + kMarginBytes > free_b) bytes /= 2;
    *bytes_out = bytes;
    DevMem src, dst;
    if (cudaMalloc(&src.p, bytes) != cudaSuccess ||
        cudaMalloc(&dst.p, bytes) != cudaSuccess) {
      cudaGetLastError();
      return kNaN;
    }
    XNB_CUDA(cudaMemsetAsync(src.p, 0, bytes, stream_));
    auto copy = [&] {
      return cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, stream_) ==
                     cudaSuccess
                 ? CUBLAS_STATUS_SUCCESS
                 : CUBLAS_STATUS_EXECUTION_FAILED;
    };
    return 2.0 * double(bytes) /
           median_time(copy, 1, "cudaMemcpyAsync", 3, std::max(10, o_.reps)) * 1e-12;
  }

  // All uplo and variant rows of one (precision, n); `announce(u)` before
  // the rows of o.uplos[u]. False on a fatal error.
  template <class T>
  bool run_size(long long n, const std::vector<int> &variant_opts, double copy_tbs,
                SymvReport *rep, const std::function<void(std::size_t)> &announce);

 private:
  template <class Call>
  double time_batch(Call &&call, int batch, const std::string &name) {
    return gpu_.time_calls(call, batch, name);
  }

  // Median seconds per call of `reps` timed batches after `warmup` untimed.
  template <class Call>
  double median_time(Call &&call, int batch, const char *name, int warmup, int reps) {
    for (int w = 0; w < warmup; ++w) time_batch(call, batch, name);
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(time_batch(call, batch, name));
    return median_of(t);
  }

  // A case failed: still usable? A kernel fault shows as a sticky error.
  static void after_failure() {
    const std::string fault = device_fault();
    if (!fault.empty()) throw CudaFatal("device: " + fault);
  }

  template <class T>
  void run_group(char uplo, long long n, int lda, T *A, const T *x, const T *y0, T *y,
                 const Reference &ref, std::vector<Contender> *cs, int *batch_out);

  const SymvOptions &o_;
  GpuSession gpu_;
  cublasHandle_t handle_ = nullptr;  // gpu_'s
  cudaStream_t stream_ = nullptr;    // gpu_'s
};

// One (uplo, n): accuracy and reproducibility of every contender, then
// warm-up and timed batches of all of them, interleaved.
template <class T>
void SymvBench::run_group(char uplo, long long n, int lda, T *A, const T *x, const T *y0,
                          T *y, const Reference &ref, std::vector<Contender> *cs,
                          int *batch_out) {
  const cublasFillMode_t fill =
      uplo == 'L' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const T alpha = T(o_.alpha), beta = T(o_.beta);
  const int in = int(n);
  const std::size_t yb = std::size_t(n) * sizeof(T);
  const char prec = sizeof(T) == 8 ? 'd' : 's';

  auto prepare = [&](const Contender &c) {
    if (c.ours)
      check_status(xnSetOption(handle_, XN_OPT_SYMV_VARIANT, c.variant_opt),
                   "xnSetOption");
    else
      check_status(cublasSetAtomicsMode(handle_, c.atomics ? CUBLAS_ATOMICS_ALLOWED
                                                           : CUBLAS_ATOMICS_NOT_ALLOWED),
                   "cublasSetAtomicsMode");
  };
  auto call = [&](const Contender &c) {
    return symv_call<T>(c.ours, handle_, fill, in, &alpha, A, lda, x, &beta, y);
  };
  auto name = [&](const Contender &c) {
    const std::string who = symv_name(c.ours, prec == 'd');
    if (c.ours) return who + " variant " + std::to_string(c.v.id);
    return who + (c.atomics ? " (atomics)" : "");
  };
  // y before a checked call: y0, or NaN when beta = 0 (y must not be read,
  // and every entry must be written).
  auto reset_y = [&] {
    if (o_.beta == 0)
      XNB_CUDA(cudaMemsetAsync(y, 0xFF, yb, stream_));
    else
      XNB_CUDA(cudaMemcpyAsync(y, y0, yb, cudaMemcpyDeviceToDevice, stream_));
  };
  auto result = [&](std::vector<T> *h) {
    h->resize(std::size_t(n));
    XNB_CUDA(cudaMemcpyAsync(h->data(), y, yb, cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
  };

  // 1. Accuracy (never timed), then a second call for reproducibility.
  std::vector<T> h1, h2;
  for (Contender &c : *cs) {
    try {
      prepare(c);
      if (c.ours)
        check_status(xnGetSymvWorkspaceSize(handle_, prec, fill, in, &c.ws_bytes),
                     "xnGetSymvWorkspaceSize");
      reset_y();
      check_status(call(c), name(c));
      result(&h1);
      c.check = check_y(h1, ref);
      reset_y();
      check_status(call(c), name(c));
      result(&h2);
      c.repro = std::memcmp(h1.data(), h2.data(), yb) == 0 ? 1 : 0;
    } catch (const CaseFailure &e) {
      c.failed = true;
      c.message = e.what();
      after_failure();
    }
  }

  // 2. Calls per event pair: from ours' single-call time (the first that
  //    worked), the same for every contender so that all are comparable.
  int batch = o_.batch;
  if (batch <= 0) {
    double t = kNaN;
    for (Contender &c : *cs)
      if (!c.failed) {
        prepare(c);
        t = time_batch([&] { return call(c); }, 1, name(c));
        t = std::min(t, time_batch([&] { return call(c); }, 1, name(c)));
        break;
      }
    batch = std::isfinite(t) && t > 0
                ? int(std::clamp(std::ceil(kBatchTargetSec / t), 1.0, double(kMaxBatch)))
                : 1;
  }
  *batch_out = batch;

  // 3. Warm-up, then timed batches, all contenders in turn so that all see
  //    the same clocks and temperature.
  auto timed = [&](Contender &c) {
    if (c.failed) return kNaN;
    try {
      prepare(c);
      return time_batch([&] { return call(c); }, batch, name(c));
    } catch (const CaseFailure &e) {
      c.failed = true;
      c.message = e.what();
      after_failure();
      return kNaN;
    }
  };
  for (int w = 0; w < o_.warmup; ++w)
    for (Contender &c : *cs) timed(c);
  for (int r = 0; r < o_.reps; ++r)
    for (Contender &c : *cs) {
      const double t = timed(c);
      if (!c.failed) c.times.push_back(t);
    }
  check_status(cublasSetAtomicsMode(handle_, CUBLAS_ATOMICS_NOT_ALLOWED),
               "cublasSetAtomicsMode");
}

template <class T>
bool SymvBench::run_size(long long n, const std::vector<int> &variant_opts,
                         double copy_tbs, SymvReport *rep,
                         const std::function<void(std::size_t)> &announce) {
  const bool is_d = sizeof(T) == 8;
  const char prec = is_d ? 'd' : 's';
  const long long lda64 = (n + 31) / 32 * 32 + o_.lda_pad;
  const std::uint64_t seed =
      mix64(o_.seed + kGolden * std::uint64_t(2 * n + (is_d ? 0 : 1)));

  // Rows of this size, filled in as far as they get.
  auto make_row = [&](char uplo, int opt) {
    Row r;
    r.prec = prec;
    r.uplo = uplo;
    r.n = n;
    r.lda = lda64;
    r.seed = seed;
    r.variant_opt = opt;
    r.v = xn::symv_variant(opt, is_d, n, fill_of(uplo));
    r.is_default = r.v.id == xn::symv_default_variant(is_d, n, fill_of(uplo)).id;
    r.copy_tbs = copy_tbs;
    return r;
  };
  auto fail_all = [&](const char *status, const std::string &msg, std::size_t first) {
    for (std::size_t u = first; u < o_.uplos.size(); ++u) {
      announce(u);
      for (int opt : variant_opts) {
        Row r = make_row(o_.uplos[u], opt);
        r.status = status;
        r.message = msg;
        rep->row(r, false);
      }
    }
  };
  if (lda64 > INT_MAX) {
    fail_all("skipped", "lda exceeds INT_MAX", 0);
    return true;
  }
  const int lda = int(lda64);

  // Memory: A, x, y0, y and the largest workspace of the variants.
  std::size_t ws_max = 0;
  for (int opt : variant_opts)
    for (xn::Fill f : {xn::Fill::Lower, xn::Fill::Upper})
      ws_max = std::max(
          ws_max,
          xn::symv_workspace_elems(xn::symv_variant(opt, is_d, n, f), n, f) * sizeof(T));
  const std::uint64_t a_bytes = std::uint64_t(lda64) * std::uint64_t(n) * sizeof(T);
  const std::uint64_t need = a_bytes + 3 * std::uint64_t(n) * sizeof(T) + ws_max;
  std::size_t free_b = 0, total_b = 0;
  XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (need + kMarginBytes > free_b) {
    fail_all("skipped",
             "needs " + std::to_string((need + kMarginBytes) >> 20) +
                 " MiB (A, x, y, "
                 "workspace, margin), " +
                 std::to_string(free_b >> 20) + " MiB free on the device",
             0);
    return true;
  }
  DevMem A, x, y0, y;
  if (cudaMalloc(&A.p, a_bytes) != cudaSuccess ||
      cudaMalloc(&x.p, std::size_t(n) * sizeof(T)) != cudaSuccess ||
      cudaMalloc(&y0.p, std::size_t(n) * sizeof(T)) != cudaSuccess ||
      cudaMalloc(&y.p, std::size_t(n) * sizeof(T)) != cudaSuccess) {
    cudaGetLastError();
    fail_all("skipped", "cudaMalloc failed (out of memory)", 0);
    return true;
  }

  const std::uint64_t key_a = mix64(seed ^ 0xA0761D6478BD642Full);
  const std::uint64_t key_x = mix64(seed ^ 0xE7037ED1A0B428DBull);
  const std::uint64_t key_y = mix64(seed ^ 0x8EBC6AF09C88C6E3ull);
  fill_vector_kernel<T>
      <<<grid_for(n, kBlock, 1024), kBlock, 0, stream_>>>(x.as<T>(), n, key_x);
  XNB_CUDA(cudaGetLastError());
  fill_vector_kernel<T>
      <<<grid_for(n, kBlock, 1024), kBlock, 0, stream_>>>(y0.as<T>(), n, key_y);
  XNB_CUDA(cudaGetLastError());
  std::vector<T> hx(static_cast<std::size_t>(n)), hy0(static_cast<std::size_t>(n));
  XNB_CUDA(cudaMemcpyAsync(hx.data(), x.p, std::size_t(n) * sizeof(T),
                           cudaMemcpyDeviceToHost, stream_));
  XNB_CUDA(cudaMemcpyAsync(hy0.data(), y0.p, std::size_t(n) * sizeof(T),
                           cudaMemcpyDeviceToHost, stream_));
  XNB_CUDA(cudaStreamSynchronize(stream_));

  // The reference: the same matrix for both triangles, so computed once.
  Reference ref;
  ref.all = o_.ref_rows <= 0 || o_.ref_rows >= n;
  {
    std::vector<std::int64_t> cols;
    choose_samples(n, 1, ref.all, ref.all ? n : o_.ref_rows, seed, &ref.rows, &cols);
  }
  host_reference<T>(key_a, hx, hy0, double(T(o_.alpha)), double(T(o_.beta)), &ref);

  const T nan = std::numeric_limits<T>::quiet_NaN();
  double gemv_n = kNaN, gemv_t = kNaN, read_floor = kNaN;
  for (std::size_t u = 0; u < o_.uplos.size(); ++u) {
    const char uplo = o_.uplos[u];
    announce(u);
    std::vector<Row> rows;
    try {
      gpu_.release_library_state();
      std::vector<Contender> cs;
      for (int opt : variant_opts) {
        Contender c;
        c.variant_opt = opt;
        c.v = xn::symv_variant(c.variant_opt, is_d, n, fill_of(uplo));
        cs.push_back(c);
      }
      for (bool atomics : {false, true}) {
        Contender c;
        c.ours = false;
        c.atomics = atomics;
        cs.push_back(c);
      }

      // The stored triangle, NaN elsewhere; then a spot check that the host
      // regenerates what the device wrote (the reference relies on it).
      const dim3 grid(grid_for(lda64, kBlock, 64),
                      unsigned(std::min<long long>(n, 65535)));
      fill_symmetric_kernel<T>
          <<<grid, kBlock, 0, stream_>>>(A.as<T>(), lda64, n, key_a, uplo == 'L', nan);
      XNB_CUDA(cudaGetLastError());
      XNB_CUDA(cudaStreamSynchronize(stream_));
      for (std::size_t s = 0; s < std::min<std::size_t>(4, ref.rows.size()); ++s) {
        const long long i = ref.rows[s], j = (i * 7919 + 13) % n;
        const long long r = uplo == 'L' ? std::max(i, j) : std::min(i, j);
        const long long c = uplo == 'L' ? std::min(i, j) : std::max(i, j);
        T dv{};
        XNB_CUDA(cudaMemcpy(&dv, A.as<T>() + r + c * lda64, sizeof(T),
                            cudaMemcpyDeviceToHost));
        const T hv = sym_entry<T>(key_a, i, j);
        if (std::memcmp(&dv, &hv, sizeof(T)) != 0)
          throw CaseFailure(
              "inputs: the device's A differs from the host's regeneration");
      }
      if (n > 1) {  // and the guard is in place: a corner of the other triangle
        T dv{};
        XNB_CUDA(cudaMemcpy(&dv, A.as<T>() + (uplo == 'L' ? (n - 1) * lda64 : n - 1),
                            sizeof(T), cudaMemcpyDeviceToHost));
        if (!std::isnan(dv)) throw CaseFailure("inputs: the unused triangle is not NaN");
      }

      // gemv over the full n x n array: once per size.
      if (u == 0) {
        check_status(cublasSetAtomicsMode(handle_, CUBLAS_ATOMICS_NOT_ALLOWED),
                     "cublasSetAtomicsMode");
        const T one = T(1), zero = T(0);
        const char *gemv_name = is_d ? "cublasDgemv" : "cublasSgemv";
        auto gemv = [&](cublasOperation_t t) {
          return gemv_call<T>(handle_, t, int(n), &one, A.as<T>(), lda, x.as<T>(), &zero,
                              y.as<T>());
        };
        auto gn = [&] { return gemv(CUBLAS_OP_N); };
        auto gt = [&] { return gemv(CUBLAS_OP_T); };
        double t1 = time_batch(gt, 1, gemv_name);
        t1 = std::min(t1, time_batch(gt, 1, gemv_name));
        const int gb = o_.batch > 0 ? o_.batch
                                    : int(std::clamp(std::ceil(kBatchTargetSec / t1), 1.0,
                                                     double(kMaxBatch)));
        for (int w = 0; w < o_.warmup; ++w) {
          time_batch(gn, gb, gemv_name);
          time_batch(gt, gb, gemv_name);
        }
        std::vector<double> tn, tt;
        for (int r = 0; r < o_.reps; ++r) {
          tn.push_back(time_batch(gn, gb, gemv_name));
          tt.push_back(time_batch(gt, gb, gemv_name));
        }
        const double full = double(n) * double(n) * sizeof(T);
        gemv_n = full / median_of(tn) * 1e-12;
        gemv_t = full / median_of(tt) * 1e-12;
        // The read floor over the first n (n + 1) / 2 elements of A (the
        // stored triangle's byte count; what they hold does not matter).
        const double tri = double(n) * double(n + 1) / 2 * sizeof(T);
        const long long words = (long long)(tri / 16);
        const unsigned rgrid =
            unsigned((words + kReadFloorWordsPerBlock - 1) / kReadFloorWordsPerBlock);
        DevMem sink;
        XNB_CUDA(cudaMalloc(&sink.p, 16));
        auto rf = [&] {
          if (words > 0)
            read_floor_kernel<<<rgrid, kBlock, 0, stream_>>>(
                reinterpret_cast<const float4 *>(A.p), words, sink.as<float>());
          return cudaGetLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                   : CUBLAS_STATUS_EXECUTION_FAILED;
        };
        read_floor = double(words) * 16 /
                     median_time(rf, gb, "read_floor_kernel", o_.warmup, o_.reps) * 1e-12;
      }

      int batch = 0;
      run_group<T>(uplo, n, lda, A.as<T>(), x.as<T>(), y0.as<T>(), y.as<T>(), ref, &cs,
                   &batch);

      // Rows: one per variant, with the cuBLAS results of the group.
      const Contender &cb = cs[cs.size() - 2], &ca = cs[cs.size() - 1];
      for (std::size_t k = 0; k + 2 < cs.size(); ++k) {
        const Contender &c = cs[k];
        Row r = make_row(uplo, c.variant_opt);
        r.ws_bytes = c.ws_bytes;
        r.reps = o_.reps;
        r.warmup = o_.warmup;
        r.batch = batch;
        r.gemv_n_tbs = gemv_n;
        r.gemv_t_tbs = gemv_t;
        r.read_tbs = read_floor;
        r.ref_rows = (long long)ref.rows.size();
        r.ours = c.check;
        r.repro_ours = c.repro;
        if (!cb.failed) {
          r.base = cb.check;
          r.repro_base = cb.repro;
          r.t_base = median_of(cb.times);
          r.t_base_min = min_of(cb.times);
        }
        if (!ca.failed) {
          r.atom = ca.check;
          r.repro_atom = ca.repro;
          r.t_atom = median_of(ca.times);
          r.t_atom_min = min_of(ca.times);
        }
        std::vector<std::string> errs;
        if (c.failed) {
          errs.push_back(c.message);
        } else {
          r.ran = !c.times.empty();
          r.t_ours = median_of(c.times);
          r.t_ours_min = min_of(c.times);
          if (c.check.nonfinite > 0)
            errs.push_back("ours: " + std::to_string(c.check.nonfinite) +
                           " NaN/Inf entries in y");
          if (c.repro == 0)
            errs.push_back("ours: two calls differ (not bitwise reproducible)");
        }
        for (const Contender *b : {&cb, &ca}) {
          const std::string who = b->atomics ? "cuBLAS (atomics)" : "cuBLAS";
          if (b->failed)
            errs.push_back(who + ": " + b->message);
          else if (b->check.nonfinite > 0)
            errs.push_back(who + ": " + std::to_string(b->check.nonfinite) +
                           " NaN/Inf entries in y");
        }
        if (!errs.empty()) {
          r.status = "error";
          for (std::size_t e = 0; e < errs.size(); ++e)
            r.message += (e ? "; " : "") + errs[e];
        }
        rows.push_back(r);
      }
    } catch (const CaseFailure &e) {
      after_failure();
      rows.clear();
      for (int opt : variant_opts) {
        Row r = make_row(uplo, opt);
        r.status = "error";
        r.message = e.what();
        rows.push_back(r);
      }
    }
    // The best variant of the group: highest bandwidth among those that ran
    // without error.
    Row *best = nullptr;
    for (Row &r : rows)
      if (r.ran && r.status == "ok" && (!best || r.t_ours < best->t_ours)) best = &r;
    if (best) best->best = true;
    for (const Row &r : rows) rep->row(r, rows.size() > 1);
    if (rows.size() > 1) {
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return true;
}

// -------------------------------------------------------------- summaries

std::string range_str(const std::vector<double> &v, const char *fmt) {
  if (v.empty()) return "-";
  const auto mm = std::minmax_element(v.begin(), v.end());
  const std::string lo = num(*mm.first, fmt), hi = num(*mm.second, fmt);
  return lo == hi ? lo : lo + ".." + hi;
}

double max_or_nan(const std::vector<double> &v) {
  return v.empty() ? kNaN : *std::max_element(v.begin(), v.end());
}

// Per (precision, uplo) and variant: ranges of bandwidth, speedups, errors;
// the spread over n (the oscillation sweep); with several variants, the
// ranking by geometric mean of bandwidth.
void print_summary(const SymvOptions &o, const std::vector<Row> &rows) {
  std::printf(
      "\nsummary (TB = stored triangle bytes / time; spd = cuBLAS time / ours):\n");
  for (char p : o.precs)
    for (char u : o.uplos) {
      std::map<int, std::vector<const Row *>> by_variant;
      for (const Row &r : rows)
        if (r.prec == p && r.uplo == u && r.ran) by_variant[r.v.id].push_back(&r);
      for (const auto &kv : by_variant) {
        const std::vector<const Row *> &rs = kv.second;
        // With a variant sweep only the default variant gets the long lines.
        if (o.all_variants && !rs.front()->is_default) continue;
        std::vector<double> bw, fc, fg, sp, spa, eo, eb, ea, bwb, bwa;
        int rep_o = 0, rep_a = 0, n_rep_a = 0;
        for (const Row *r : rs) {
          bw.push_back(r->tbs(r->t_ours));
          if (std::isfinite(r->copy_tbs)) fc.push_back(100 * bw.back() / r->copy_tbs);
          if (std::isfinite(r->gemv_tbs())) fg.push_back(100 * bw.back() / r->gemv_tbs());
          if (std::isfinite(r->t_base)) {
            sp.push_back(r->t_base / r->t_ours);
            bwb.push_back(r->tbs(r->t_base));
          }
          if (std::isfinite(r->t_atom)) {
            spa.push_back(r->t_atom / r->t_ours);
            bwa.push_back(r->tbs(r->t_atom));
          }
          if (std::isfinite(r->ours.max_err)) eo.push_back(r->ours.max_err);
          if (std::isfinite(r->base.max_err)) eb.push_back(r->base.max_err);
          if (std::isfinite(r->atom.max_err)) ea.push_back(r->atom.max_err);
          rep_o += r->repro_ours == 1;
          if (r->repro_atom >= 0) {
            ++n_rep_a;
            rep_a += r->repro_atom == 1;
          }
        }
        const std::string sizes = rs.size() == 1
                                      ? "n=" + std::to_string(rs.front()->n)
                                      : std::to_string(rs.size()) +
                                            " sizes n=" + std::to_string(rs.front()->n) +
                                            ".." + std::to_string(rs.back()->n);
        std::printf(
            "  %c %c variant %d, %s: ours %s TB/s (%s%% of copy, %s%% of gemv); spd %s, "
            "spdA %s; max err ours %s, cuBLAS %s, atomics %s; bitwise reproducible: "
            "ours %d/%zu, cuBLAS atomics %d/%d\n",
            p, u, kv.first, sizes.c_str(), range_str(bw, "%.3f").c_str(),
            range_str(fc, "%.1f").c_str(), range_str(fg, "%.1f").c_str(),
            range_str(sp, "%.2fx").c_str(), range_str(spa, "%.2fx").c_str(),
            num(max_or_nan(eo), "%.1e").c_str(), num(max_or_nan(eb), "%.1e").c_str(),
            num(max_or_nan(ea), "%.1e").c_str(), rep_o, rs.size(), rep_a, n_rep_a);
        if (rs.size() >= 3) {
          // Spread over n: (max - min) / max, and where the minimum is.
          auto spread = [&](const std::vector<double> &v) {
            if (v.size() != rs.size()) return std::string("-");
            const std::size_t lo =
                std::size_t(std::min_element(v.begin(), v.end()) - v.begin());
            const double hi = *std::max_element(v.begin(), v.end());
            char b[96];
            std::snprintf(b, sizeof b, "%.3f..%.3f (%.1f%%, min at n=%lld)", v[lo], hi,
                          100 * (hi - v[lo]) / hi, rs[lo]->n);
            return std::string(b);
          };
          std::printf("        spread over n: ours %s; cuBLAS %s; atomics %s\n",
                      spread(bw).c_str(), spread(bwb).c_str(), spread(bwa).c_str());
        }
      }
    }
  if (!o.all_variants) return;

  // Geometric mean of ours' bandwidth over the groups (precision, uplo, n)
  // where any variant ran cleanly; a variant that failed in one of them is
  // not ranked. A row where the variant asked for fell back to the default
  // (it does not fit that precision) repeats the default's own row and is
  // left out: counted under the default's id it would unrank the default.
  // The built-in default may differ by n (symv_default_variant), so "the
  // default" compared with is the geometric mean of each group's default
  // row, and * marks a variant that is the default in any group.
  struct Rank {
    int id;
    double gmean;
    std::string config;
    bool is_default;
  };
  struct Ranking {
    std::vector<Rank> ranks;
    double default_gmean = 0;  // 0: no default row in some group
    std::string default_ids;   // e.g. "35/34"
  };
  auto rank = [&](auto &&want) {
    std::map<std::string, bool> groups;
    std::map<int, std::vector<const Row *>> by_variant;
    std::vector<const Row *> defaults;
    for (const Row &r : rows)
      if (want(r) && r.ran && r.status == "ok" && r.variant_opt == r.v.id) {
        groups[std::string(1, r.prec) + r.uplo + std::to_string(r.n)] = true;
        by_variant[r.v.id].push_back(&r);
        if (r.is_default) defaults.push_back(&r);
      }
    Ranking out;
    for (const auto &kv : by_variant) {
      if (kv.second.size() != groups.size()) continue;
      double s = 0;
      bool is_default = false;
      for (const Row *r : kv.second) {
        s += std::log(r->tbs(r->t_ours));
        is_default = is_default || r->is_default;
      }
      out.ranks.push_back({kv.first, std::exp(s / double(kv.second.size())),
                           config_str(kv.second.front()->v), is_default});
    }
    std::sort(out.ranks.begin(), out.ranks.end(),
              [](const Rank &a, const Rank &b) { return a.gmean > b.gmean; });
    if (!defaults.empty() && defaults.size() == groups.size()) {
      double s = 0;
      std::vector<int> ids;
      for (const Row *r : defaults) {
        s += std::log(r->tbs(r->t_ours));
        if (std::find(ids.begin(), ids.end(), r->v.id) == ids.end())
          ids.push_back(r->v.id);
      }
      out.default_gmean = std::exp(s / double(defaults.size()));
      for (std::size_t i = 0; i < ids.size(); ++i)
        out.default_ids += (i ? "/" : "") + std::to_string(ids[i]);
    }
    return out;
  };
  auto print_rank = [&](const std::string &what, const Ranking &r, bool list) {
    const std::vector<Rank> &rk = r.ranks;
    if (rk.empty()) {
      std::printf("  %s: no variant ran cleanly in every case\n", what.c_str());
      return;
    }
    std::printf("  %s: best variant %d (%s), %.3f TB/s geomean", what.c_str(), rk[0].id,
                rk[0].config.c_str(), rk[0].gmean);
    if (r.default_gmean > 0)
      std::printf(", %.3fx the default (variant %s)", rk[0].gmean / r.default_gmean,
                  r.default_ids.c_str());
    std::printf("\n");
    if (list) {
      std::printf("      ranking:");
      for (const Rank &x : rk)
        std::printf(" %d%s=%.3f", x.id, x.is_default ? "*" : "", x.gmean);
      std::printf("\n");
    }
  };
  std::printf(
      "\nvariants (config nb/cols_per_warp/stages/min_blocks/chunk/pieces/tensor; "
      "* = built-in default; geomean of ours TB/s over the sizes):\n");
  for (char p : o.precs) {
    for (char u : o.uplos)
      print_rank(std::string(1, p) + " " + u,
                 rank([&](const Row &r) { return r.prec == p && r.uplo == u; }), false);
    print_rank(std::string(1, p) + " (both uplo)",
               rank([&](const Row &r) { return r.prec == p; }), true);
  }
  print_rank("overall (all precisions, uplo, sizes)",
             rank([](const Row &) { return true; }), false);
  std::map<int, int> failures;
  for (const Row &r : rows)
    if (r.v.id > 0 && r.status == "error") ++failures[r.v.id];
  for (const auto &kv : failures)
    std::printf("  variant %d: %d ERROR row(s), not ranked where it failed\n", kv.first,
                kv.second);
}

// The ids of the variants compiled into this build, ascending.
std::vector<int> symv_variant_ids() {
  std::vector<int> ids;
  for (std::size_t i = 0; i < xn::symv_compiled_count(); ++i)
    ids.push_back(xn::symv_compiled_variant(i).id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Ascending ids as runs: "1..39", "33..35", "1..3,7".
std::string ids_str(const std::vector<int> &ids) {
  std::string s;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    s += (i ? "," : "") + std::to_string(ids[i]) +
         (j > i ? ".." + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return s;
}

}  // namespace

int run_symv(const SymvOptions &o) {
  Progress progress(o.quiet);
  print_banner("symv");

  std::string why;
  SymvBench bench(o);
  if (!bench.init(&why)) {
    // A GPU routine: nothing to measure. Empty files still get their header
    // so that scripts reading them do not break.
    std::printf(
        "symv: xnSsymv/xnDsymv are GPU routines and no CUDA device can be used (%s); "
        "nothing to run\n",
        why.c_str());
    SymvReport rep(o, "(no CUDA device)", kNaN);
    if (!rep.open()) return 2;
    if (o.device == "gpu") {
      std::fprintf(stderr, "xnbench: cannot use the GPU: %s\n", why.c_str());
      return 1;
    }
    return 0;
  }

  // The variants this build has, as the library reports them.
  const std::vector<int> ids = symv_variant_ids();
  for (int v : o.variants)
    if (v != 0 && std::find(ids.begin(), ids.end(), v) == ids.end()) {
      std::fprintf(stderr,
                   "xnbench: --variant %d: this build has variants %s (0 = default)\n", v,
                   ids_str(ids).c_str());
      return 2;
    }
  // Option values to set; without --variant, the process default (what a
  // fresh handle has: XN_SYMV_VARIANT, else 0).
  std::int64_t process_opt = 0;
  if (xnGetOption(nullptr, XN_OPT_SYMV_VARIANT, &process_opt) != CUBLAS_STATUS_SUCCESS)
    process_opt = 0;
  std::vector<int> variant_opts;
  if (o.all_variants)
    variant_opts = ids;
  else if (!o.variants.empty())
    variant_opts = o.variants;
  else
    variant_opts.push_back(int(process_opt));
  const std::vector<long long> sizes =
      o.sizes.empty() ? std::vector<long long>{8192, 16384, 32768} : o.sizes;

  std::printf("%s", bench.describe().c_str());
  int failed = 0;
  double copy_tbs = kNaN;
  std::size_t copy_bytes = 0;
  try {
    copy_tbs = bench.measure_copy(&copy_bytes);
  } catch (const std::exception &e) {
    std::printf("ERROR: copy bandwidth: %s\n", e.what());
    return 1;
  }
  SymvReport rep(o, bench.device_name(), copy_tbs);
  if (!rep.open()) return 2;

  const char *env = std::getenv("XN_SYMV_VARIANT");
  const xn::Fill lower = xn::Fill::Lower;
  std::string chosen = "the handle's default variant";
  if (o.all_variants) {
    chosen = "every variant (--variant all)";
  } else if (!o.variants.empty()) {
    chosen = "XN_OPT_SYMV_VARIANT";
    for (std::size_t i = 0; i < o.variants.size(); ++i)
      chosen += (i ? "," : " ") + std::to_string(o.variants[i]);
  }
  std::printf(
      "ours: xnDsymv / xnSsymv, %s; %zu variants compiled (config nb/cols_per_warp/"
      "stages/min_blocks/chunk/pieces/tensor), built-in default (per precision, order "
      "and triangle; * in var) e.g. lower n = 8192: d=%d s=%d, n = 32768: d=%d "
      "s=%d%s%s\n",
      chosen.c_str(), ids.size(), xn::symv_default_variant(true, 8192, lower).id,
      xn::symv_default_variant(false, 8192, lower).id,
      xn::symv_default_variant(true, 32768, lower).id,
      xn::symv_default_variant(false, 32768, lower).id, env ? "; XN_SYMV_VARIANT=" : "",
      env ? env : "");
  std::printf(
      "baselines: cublasDsymv / cublasSsymv with CUBLAS_ATOMICS_NOT_ALLOWED (cub, "
      "cuBLAS's default) and CUBLAS_ATOMICS_ALLOWED (cubA); same handle, stream, "
      "buffers\n");
  std::printf(
      "inputs: symmetric A uniform [-1,1) from a counter-based hash of (seed, i, j), NaN "
      "in the other triangle and in rows n..lda-1 (lda = n rounded up to 32 + %lld); x, "
      "y uniform [-1,1); incx = incy = 1; alpha = %g, beta = %g; base seed %llu "
      "(replay with --seed %llu)\n",
      o.lda_pad, o.alpha, o.beta, (unsigned long long)o.seed, (unsigned long long)o.seed);
  std::printf(
      "timing: CUDA events around a batch of calls (%s), %d warm-up and %d timed batches "
      "per routine, all routines interleaved; median time per call reported\n",
      o.batch > 0 ? ("--batch " + std::to_string(o.batch)).c_str()
                  : "automatic: about 1 ms of ours per batch",
      o.warmup, o.reps);
  std::printf(
      "reference: double-double (tests/support/dd_reference.h) on the host at %s rows of "
      "y "
      "(every row when n <= that); err = max |y - ref| / (|alpha| |A| |x| + |beta| "
      "|y0|); rep = two calls bitwise identical\n",
      o.ref_rows > 0 ? std::to_string(o.ref_rows).c_str() : "all");
  std::printf(
      "bandwidth: TB = n(n+1)/2 sizeof(T) / time; copy = cudaMemcpyAsync device to "
      "device of %s GiB, read + written bytes / time: %s TB/s; gemv = the faster of "
      "cublas?gemv N and T on the n x n array, n^2 sizeof(T) / time\n",
      fmt_gib(double(copy_bytes)).c_str(), num(copy_tbs, "%.3f").c_str());
  std::printf(
      "columns: us = median time per call; GF = 2 n^2 / time; %%copy, %%gemv = ours_TB "
      "as a percentage of copy, gemv; spd, spdA = cuBLAS time / ours (> 1: ours faster); "
      "var * = the built-in default\n\n");
  kSymvTable.print_header();

  progress.set_total(o.precs.size() * sizes.size() * o.uplos.size());
  std::size_t index = 0;
  bool fatal = false;
  for (char p : o.precs) {
    if (fatal) break;
    for (long long n : sizes) {
      // Progress lines [index + u + 1 / total] for the uplos of this size.
      const std::size_t first = index;
      index += o.uplos.size();
      auto announce = [&](std::size_t u) {
        progress.report(
            first + u + 1,
            std::string("symv ") + p + " " + o.uplos[u] + " n=" + std::to_string(n) +
                (o.all_variants ? " x " + std::to_string(ids.size()) + " variants" : ""));
      };
      try {
        if (p == 'd')
          bench.run_size<double>(n, variant_opts, copy_tbs, &rep, announce);
        else
          bench.run_size<float>(n, variant_opts, copy_tbs, &rep, announce);
      } catch (const CudaFatal &e) {
        std::printf("%c    n=%lld ERROR: %s\n", p, n, e.what());
        std::fprintf(stderr, "xnbench: the device is unusable, stopping: %s\n", e.what());
        fatal = true;
        break;
      } catch (const CaseFailure &e) {  // outside a group (library state)
        std::printf("%c    n=%lld ERROR: %s\n", p, n, e.what());
        failed = 1;
      } catch (const std::bad_alloc &) {
        std::printf("%c    n=%lld skipped: out of host memory\n", p, n);
      }
    }
  }
  for (const Row &r : rep.rows()) failed |= r.status == "error";
  print_summary(o, rep.rows());
  print_done(rep.rows().size(), "row(s)", progress.seconds(), fatal || failed);
  return fatal || failed ? 1 : 0;
}

}  // namespace xnb
