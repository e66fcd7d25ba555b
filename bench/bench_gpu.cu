// bench_gpu.cu - the GPU runner: xnDngemm/xnSngemm, or xn?gemmStrassen /
// xn?gemmWinograd, against cublasDgemm/cublasSgemm on the same handle, stream
// and device inputs; inputs generated on the device by a counter-based hash
// (the paper's test matrix on the host); reference by kernels calling the
// same dd_dot (tests/support/dd_reference.h) as the CPU runner. exdgemm cases:
// xnExdgemm against cublasDgemm, inputs and exact (MPFR) reference made on the
// host (bench_exdgemm.cpp), as on the CPU.
//
// Error policy (bench_cuda.h): a failing CUDA runtime call ends the whole
// run; a routine or cuBLAS status other than success makes the case an
// error row. cudaMalloc running out of memory skips the case.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_common.h"
#include "bench_cuda.h"
#include "bench_random.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/dd_reference.h"
#include "xngemm.h"

namespace xnb {

namespace {

// ------------------------------------------------------------------ kernels

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;

template <class T>
__global__ void __launch_bounds__(kBlock)
    generate_kernel(T *p, long long count, unsigned long long key, int pm1) {
  const long long stride = (long long)gridDim.x * kBlock;
  for (long long idx = (long long)blockIdx.x * kBlock + threadIdx.x; idx < count;
       idx += stride)
    p[idx] = uniform<T>(hash_at(key, std::uint64_t(idx)), pm1 != 0);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    count_nonfinite_kernel(const T *c, long long count, unsigned long long *out) {
  const long long stride = (long long)gridDim.x * kBlock;
  unsigned long long bad = 0;
  for (long long idx = (long long)blockIdx.x * kBlock + threadIdx.x; idx < count;
       idx += stride)
    bad += !isfinite(c[idx]);
  if (bad) atomicAdd(out, bad);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    gather_kernel(const T *c, long long ldc, const long long *si, const long long *sj,
                  long long count, double *out) {
  const long long stride = (long long)gridDim.x * kBlock;
  for (long long s = (long long)blockIdx.x * kBlock + threadIdx.x; s < count; s += stride)
    out[s] = double(c[si[s] + sj[s] * ldc]);
}

// Row i of op(A) and column j of op(B) as (pointer, increment) pairs:
// op(A)(i, p) = A[i + p*lda] (N) or A[p + i*lda] (T);
// op(B)(p, j) = B[p + j*ldb] (N) or B[j + p*ldb] (T).
struct Operands {
  const void *a;
  long long lda;
  int ta;
  const void *b;
  long long ldb;
  int tb;
  long long k;
};

template <class T>
__device__ inline void row_col(const Operands &o, long long i, long long j, const T **x,
                               long long *incx, const T **y, long long *incy) {
  const T *A = static_cast<const T *>(o.a);
  const T *B = static_cast<const T *>(o.b);
  *x = o.ta ? A + i * o.lda : A + i;
  *incx = o.ta ? 1 : o.lda;
  *y = o.tb ? B + j : B + j * o.ldb;
  *incy = o.tb ? o.ldb : 1;
}

// One thread per entry: for the full reference (consecutive threads take
// consecutive rows i of one column, so reads of A (N) coalesce and reads of
// B are broadcasts).
template <class T>
__global__ void __launch_bounds__(kBlock)
    reference_thread_kernel(Operands o, const long long *si, const long long *sj,
                            long long count, double *hi, double *lo) {
  const long long stride = (long long)gridDim.x * kBlock;
  for (long long s = (long long)blockIdx.x * kBlock + threadIdx.x; s < count;
       s += stride) {
    const T *x, *y;
    long long incx, incy;
    row_col<T>(o, si[s], sj[s], &x, &incx, &y, &incy);
    const xn::DD d = xn::dd_dot<T>(o.k, x, incx, y, incy);
    hi[s] = d.hi;
    lo[s] = d.lo;
  }
}

// One warp per sampled entry: lane l takes terms p = l, l + 32, ... through
// the same dd_dot, then the 32 partial double-double sums are added by
// shuffles.
template <class T>
__global__ void __launch_bounds__(kBlock)
    reference_warp_kernel(Operands o, const long long *si, const long long *sj,
                          long long count, double *hi, double *lo) {
  const int lane = threadIdx.x & 31;
  const long long warp = (long long)blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  const long long nwarps = (long long)gridDim.x * kWarpsPerBlock;
  for (long long s = warp; s < count; s += nwarps) {  // uniform per warp
    const T *x, *y;
    long long incx, incy;
    row_col<T>(o, si[s], sj[s], &x, &incx, &y, &incy);
    const long long terms = lane < o.k ? (o.k - lane + 31) / 32 : 0;
    xn::DD acc =
        xn::dd_dot<T>(terms, x + lane * incx, 32 * incx, y + lane * incy, 32 * incy);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      xn::DD other;
      other.hi = __shfl_down_sync(0xffffffffu, acc.hi, off);
      other.lo = __shfl_down_sync(0xffffffffu, acc.lo, off);
      acc = xn::dd_add(acc, other);
    }
    if (lane == 0) {
      hi[s] = acc.hi;
      lo[s] = acc.lo;
    }
  }
}

// ------------------------------------------------------------------ routines

// C = alpha op(A) op(B) + beta C: ours (xnDngemm / xnSngemm, or the
// routine's xn?gemmStrassen / xn?gemmWinograd) or the baseline (cublasDgemm /
// cublasSgemm).
template <class T>
cublasStatus_t gemm_call(Routine rt, bool ours, cublasHandle_t h, cublasOperation_t ta,
                         cublasOperation_t tb, int m, int n, int k, const T *al,
                         const T *A, int lda, const T *B, int ldb, const T *be, T *C,
                         int ldc) {
  if constexpr (std::is_same_v<T, double>) {
    if (!ours) return cublasDgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    if (rt == Routine::Strassen)
      return xnDgemmStrassen(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    if (rt == Routine::Winograd)
      return xnDgemmWinograd(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    return xnDngemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  } else {
    if (!ours) return cublasSgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    if (rt == Routine::Strassen)
      return xnSgemmStrassen(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    if (rt == Routine::Winograd)
      return xnSgemmWinograd(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
    return xnSngemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
}
const char *gemm_name(Routine rt, bool ours, bool is_d) {
  if (!ours) return is_d ? "cublasDgemm" : "cublasSgemm";
  if (rt == Routine::Strassen) return is_d ? "xnDgemmStrassen" : "xnSgemmStrassen";
  if (rt == Routine::Winograd) return is_d ? "xnDgemmWinograd" : "xnSgemmWinograd";
  return is_d ? "xnDngemm" : "xnSngemm";
}

// Allocates the buffers in order; false, and r "skipped", when the device is
// out of memory (try_alloc).
bool alloc_or_skip(std::initializer_list<std::pair<DevMem *, std::size_t>> buffers,
                   CaseResult *r) {
  std::string why;
  for (const auto &b : buffers)
    if (!try_alloc(*b.first, b.second, &why)) {
      r->status = "skipped";
      r->message = why;
      return false;
    }
  return true;
}

// The checked entries of a case on the device (indices, a buffer for the
// gathered values) and their reference on the host; with `hrows` and
// `hcols` (the same indices on the host), errors against I too.
struct Probe {
  const long long *rows, *cols;
  long long count;
  double *vals;
  const std::vector<double> *ref_hi, *ref_lo;
  const std::vector<std::int64_t> *hrows = nullptr, *hcols = nullptr;
};

// Leaf GEMMs of a --leaf-train at most (7^7): deeper trains would take
// seconds of tiny calls.
constexpr int kMaxTrainLevels = 7;

// Full reference while m * n is at most this (one thread per entry).
constexpr long long kGpuFullRefEntries = 1ll << 20;
// Device memory kept free beyond A, B, C and the reference arrays (cuBLAS's
// own workspace, the library's constants, fragmentation).
constexpr std::uint64_t kMarginBytes = 512ull << 20;

class GpuRunner final : public Runner {
 public:
  ~GpuRunner() override {
    if (counter_) cudaFree(counter_);
  }

  // False (and a reason) if the device cannot be set up.
  bool init(std::string *why) {
    if (!gpu_.init(why)) return false;
    const cudaError_t e = cudaMalloc(&counter_, sizeof(unsigned long long));
    if (e != cudaSuccess) {
      *why = std::string("CUDA setup: ") + cudaGetErrorString(e);
      cudaGetLastError();
      return false;
    }
    handle_ = gpu_.handle();
    stream_ = gpu_.stream();
    return true;
  }

  std::string device_name() const override { return gpu_.device_name(); }
  std::string describe() const override { return gpu_.describe(false); }
  std::string ours_name(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return "xnExdgemm";
    return gemm_name(c.routine, true, c.prec == 'd');
  }
  std::string base_name(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return "cublasDgemm";
    return gemm_name(c.routine, false, c.prec == 'd');
  }
  bool is_gpu() const override { return true; }
  bool full_reference(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return ex_full_reference(c);
    return c.ref_samples <= 0 || c.m * c.n <= kGpuFullRefEntries ||
           c.ref_samples >= c.m * c.n;
  }

  std::vector<CaseResult> run(const CaseSpec &c) override {
    std::vector<CaseResult> rows;
    auto failed = [&](const char *status, const std::string &message, bool fatal) {
      CaseResult r;
      r.seed = c.seed;
      r.level_forced = level_;
      r.status = status;
      r.message = message;
      r.fatal = fatal;
      rows.push_back(r);
    };
    level_ = -1;
    try {
      if (c.routine == Routine::Exdgemm)
        rows.push_back(run_ex(c));
      else if (c.prec == 'd')
        run_t<double>(c, &rows);
      else
        run_t<float>(c, &rows);
    } catch (const CaseFailure &e) {
      // Still usable? A fault in a kernel shows here as a sticky error.
      const std::string fault = device_fault();
      if (fault.empty())
        failed("error", e.what(), false);
      else
        failed("error", std::string(e.what()) + "; device: " + fault, true);
    } catch (const CudaFatal &e) {
      failed("error", e.what(), true);
    } catch (const std::bad_alloc &) {
      failed("skipped", "out of host memory", false);
    }
    return rows;
  }

 private:
  // Appends one result per row of the case (case_levels).
  template <class T>
  void run_t(const CaseSpec &c, std::vector<CaseResult> *rows);
  CaseResult run_ex(const CaseSpec &c);
  double int8_train(const CaseSpec &c, int count);
  // TOPS of a train of cuBLAS INT8 GEMMs of the shape that ran fastest on
  // an H100 (8192 x 8192 x 32768, op(A) = T: 1,576-1,640 TOPS), measured at
  // the first call of a run and kept; NaN when it cannot be allocated.
  double best_int8_tops();
  double best_int8_tops_ = -1;  // -1: not measured yet
  // Seconds of one back-to-back train of the 7^levels leaf GEMMs (see
  // CaseResult::t_leaf), median of 3; *calls = 7^levels.
  template <class T>
  double leaf_train(const CaseSpec &c, int levels, const T *A, long long a_elems, int lda,
                    const T *B, long long b_elems, int ldb, T *C, int ldc,
                    std::int64_t *calls);

  // Fresh library state on the handle (so the workspace held is this case's)
  // with the case's options: the routine's own leaf and crossover options
  // (XN_OPT_MAX_LEVELS is shared).
  void fresh_state(const CaseSpec &c) {
    gpu_.release_library_state();
    const Routine rt = c.routine;
    if (c.levels >= 0) XNB_CUBLAS(xnSetOption(handle_, XN_OPT_MAX_LEVELS, c.levels));
    if (c.leaf > 0) {
      XNB_CUBLAS(xnSetOption(handle_, leaf_option(rt, true), c.leaf));
      XNB_CUBLAS(xnSetOption(handle_, leaf_option(rt, false), c.leaf));
    }
    // An explicit leaf means "the leaf decides the depth": no crossover on
    // top unless one is given too.
    const std::int64_t min_size = c.min_size >= 0 ? c.min_size : (c.leaf > 0 ? 0 : -1);
    if (min_size >= 0) {
      XNB_CUBLAS(xnSetOption(handle_, min_size_option(rt, true), min_size));
      XNB_CUBLAS(xnSetOption(handle_, min_size_option(rt, false), min_size));
    }
    if (c.check_nonneg >= 0)
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_CHECK_NONNEG, c.check_nonneg));
    if (c.ex_budget >= 0)
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, c.ex_budget));
    if (c.ex_block >= 0)
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_EXDGEMM_BLOCK, c.ex_block));
  }

  // "skipped" (true) unless `bytes` plus the margin fit the free memory.
  bool skip_for_memory(std::uint64_t bytes, const char *what, CaseResult *r) {
    std::size_t free_b = 0, total_b = 0;
    XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + kMarginBytes <= free_b) return false;
    r->status = "skipped";
    r->message = "needs " + fmt_gib(double(bytes + kMarginBytes)) + " GiB for " + what +
                 ", " + fmt_gib(double(free_b)) + " GiB free on the device";
    return true;
  }

  // Calls `call` on C poisoned with NaN (all-ones bytes), so an entry left
  // unwritten shows up as non-finite; counts the non-finite entries of C and
  // compares the probe's entries with the reference.
  template <class T, class Call>
  ErrStats accuracy_of(Call &&call, const char *name, T *C, long long m, long long n,
                       int ldc, const Probe &p) {
    XNB_CUDA(cudaMemsetAsync(C, 0xFF, std::size_t(m * n) * sizeof(T), stream_));
    check_status(call(), name);
    XNB_CUDA(cudaMemsetAsync(counter_, 0, sizeof(unsigned long long), stream_));
    count_nonfinite_kernel<T>
        <<<grid_for(m * n, kBlock, 1 << 14), kBlock, 0, stream_>>>(C, m * n, counter_);
    XNB_CUDA(cudaGetLastError());
    gather_kernel<T><<<grid_for(p.count, kBlock, 1 << 16), kBlock, 0, stream_>>>(
        C, ldc, p.rows, p.cols, p.count, p.vals);
    XNB_CUDA(cudaGetLastError());
    unsigned long long bad = 0;
    std::vector<double> vals(static_cast<std::size_t>(p.count));
    XNB_CUDA(
        cudaMemcpyAsync(&bad, counter_, sizeof bad, cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaMemcpyAsync(vals.data(), p.vals, std::size_t(p.count) * 8,
                             cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
    return error_stats(*p.ref_hi, *p.ref_lo, vals, (long long)bad, p.hrows, p.hcols);
  }

  // Seconds per call of `count` back-to-back calls between two events on
  // the handle's stream.
  template <class Call>
  double timed(Call &&call, const char *name, int count) {
    return gpu_.time_calls(call, count, name);
  }

  // Fills `count` entries of p with generate_kernel's uniforms.
  template <class T>
  void generate(T *p, long long count, unsigned long long key, bool pm1) {
    generate_kernel<T><<<grid_for(count, kBlock, 1 << 16), kBlock, 0, stream_>>>(
        p, count, key, pm1 ? 1 : 0);
    XNB_CUDA(cudaGetLastError());
  }

  // The double-double reference of op(A) op(B) at the S entries (si, sj)
  // (already on the device) into ref_hi, ref_lo, through the device
  // buffers hi and lo.
  template <class T>
  void reference(const Operands &ops, bool full, const DevMem &si, const DevMem &sj,
                 long long S, const DevMem &hi, const DevMem &lo,
                 std::vector<double> *ref_hi, std::vector<double> *ref_lo) {
    if (full)
      reference_thread_kernel<T><<<grid_for(S, kBlock, 1 << 16), kBlock, 0, stream_>>>(
          ops, si.as<long long>(), sj.as<long long>(), S, hi.as<double>(),
          lo.as<double>());
    else
      reference_warp_kernel<T>
          <<<grid_for(S, kWarpsPerBlock, 1 << 16), kBlock, 0, stream_>>>(
              ops, si.as<long long>(), sj.as<long long>(), S, hi.as<double>(),
              lo.as<double>());
    XNB_CUDA(cudaGetLastError());
    ref_hi->resize(std::size_t(S));
    ref_lo->resize(std::size_t(S));
    XNB_CUDA(cudaMemcpyAsync(ref_hi->data(), hi.p, std::size_t(S) * 8,
                             cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaMemcpyAsync(ref_lo->data(), lo.p, std::size_t(S) * 8,
                             cudaMemcpyDeviceToHost, stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
  }

  GpuSession gpu_;
  cublasHandle_t handle_ = nullptr;  // gpu_'s
  cudaStream_t stream_ = nullptr;    // gpu_'s
  unsigned long long *counter_ = nullptr;
  int level_ = -1;  // the --per-level depth being run (for a failure's row)
};

template <class T>
void GpuRunner::run_t(const CaseSpec &c, std::vector<CaseResult> *rows) {
  const bool is_d = sizeof(T) == sizeof(double);
  const long long m = c.m, n = c.n, k = c.k;
  const cublasOperation_t opa = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const long long ra = c.ta ? k : m, ca = c.ta ? m : k;  // A as stored
  const long long rb = c.tb ? n : k, cb = c.tb ? k : n;  // B as stored
  const int lda = int(std::max(1ll, ra)), ldb = int(std::max(1ll, rb));
  const int ldc = int(std::max(1ll, m));
  const int im = int(m), in = int(n), ik = int(k);
  const Routine rt = c.routine;
  const bool fast = is_fast_gemm(rt);
  const bool paper = c.dist == Dist::Paper;
  const xn::GemmAlgorithm &algo = algorithm_of(rt);

  // 1. Per row: fresh library state, then the row's options on the handle;
  //    the workspace the library asks for at the depth it plans (the call's
  //    xnGetLastGemmInfo says that depth; fewer levels run only when the
  //    workspace cannot be had).
  int planned = 0;
  std::size_t ws_need = 0;
  auto plan_row = [&](const CaseSpec &s, CaseResult *r) {
    fresh_state(s);
    std::int64_t leaf = 0, max_levels = 0;
    XNB_CUBLAS(xnGetOption(handle_, leaf_option(rt, is_d), &leaf));
    XNB_CUBLAS(xnGetOption(handle_, XN_OPT_MAX_LEVELS, &max_levels));
    r->leaf = leaf;
    r->max_levels = max_levels;
    if (fast)
      XNB_CUBLAS(xnGetFastGemmWorkspaceSize(
          handle_,
          rt == Routine::Strassen ? XN_FAST_GEMM_STRASSEN : XN_FAST_GEMM_WINOGRAD, c.prec,
          opa, opb, im, in, ik, c.timed_beta == 0 ? 1 : 0, &ws_need));
    else
      XNB_CUBLAS(xnGetWorkspaceSize(handle_, c.prec, opa, opb, im, in, ik, &ws_need));
  };
  const std::vector<int> levels = case_levels(c);
  CaseResult first;
  first.seed = c.seed;
  level_ = levels.front();
  const CaseSpec s0 = level_spec(c, levels.front(), &first);
  if (first.status == "ok") plan_row(s0, &first);

  // 2. Memory: skip what cannot fit rather than fail.
  const bool ref_full = full_reference(c);
  const long long S = ref_full ? m * n : std::min<long long>(c.ref_samples, m * n);
  const std::uint64_t ab = std::uint64_t(ra * ca + rb * cb) * sizeof(T);
  const std::uint64_t abc = ab + std::uint64_t(m * n) * sizeof(T);
  const std::uint64_t ref_bytes = std::uint64_t(S) * (2 * 8 + 2 * 8 + 8);
  // --ngemm-u01: its own A and B and their reference.
  const std::uint64_t nn_bytes = c.ngemm_u01 ? ab + std::uint64_t(S) * 2 * 8 : 0;
  if (skip_for_memory(abc + ref_bytes + nn_bytes, "A, B, C and the reference", &first)) {
    rows->push_back(first);
    return;
  }
  std::size_t free_b = 0, total_b = 0;
  XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (abc + ref_bytes + nn_bytes + kMarginBytes + ws_need > free_b)
    first.message = "workspace of " + fmt_gib(double(ws_need)) +
                    " GiB may not fit: the library may run fewer levels";

  DevMem A, B, C, dsi, dsj, dhi, dlo, dvals, A2, B2, dhi2, dlo2;
  const std::size_t s8 = std::size_t(S) * 8;
  if (!alloc_or_skip({{&A, std::size_t(ra * ca) * sizeof(T)},
                      {&B, std::size_t(rb * cb) * sizeof(T)},
                      {&C, std::size_t(m * n) * sizeof(T)},
                      {&dsi, s8},
                      {&dsj, s8},
                      {&dhi, s8},
                      {&dlo, s8},
                      {&dvals, s8}},
                     &first) ||
      (c.ngemm_u01 && !alloc_or_skip({{&A2, std::size_t(ra * ca) * sizeof(T)},
                                      {&B2, std::size_t(rb * cb) * sizeof(T)},
                                      {&dhi2, s8},
                                      {&dlo2, s8}},
                                     &first))) {
    rows->push_back(first);
    return;
  }

  // 3. Inputs, fresh per case from the case's seed (the paper's matrix is
  //    made on the host, in double, and copied). The host keeps a copy for
  //    --cpu-baseline.
  std::vector<T> hA, hB;
  if (paper) {
    make_paper_matrix<T>('A', m, c.ta, &hA);
    make_paper_matrix<T>('B', m, c.tb, &hB);
    XNB_CUDA(cudaMemcpyAsync(A.p, hA.data(), hA.size() * sizeof(T),
                             cudaMemcpyHostToDevice, stream_));
    XNB_CUDA(cudaMemcpyAsync(B.p, hB.data(), hB.size() * sizeof(T),
                             cudaMemcpyHostToDevice, stream_));
    XNB_CUDA(cudaStreamSynchronize(stream_));
  } else {
    const bool pm1 = c.dist == Dist::Upm1;
    generate<T>(A.as<T>(), ra * ca, mix64(c.seed ^ 0xA0761D6478BD642Full), pm1);
    generate<T>(B.as<T>(), rb * cb, mix64(c.seed ^ 0xE7037ED1A0B428DBull), pm1);
    if (c.cpu_baseline) {
      hA.resize(std::size_t(ra * ca));
      hB.resize(std::size_t(rb * cb));
      XNB_CUDA(cudaMemcpyAsync(hA.data(), A.p, hA.size() * sizeof(T),
                               cudaMemcpyDeviceToHost, stream_));
      XNB_CUDA(cudaMemcpyAsync(hB.data(), B.p, hB.size() * sizeof(T),
                               cudaMemcpyDeviceToHost, stream_));
      XNB_CUDA(cudaStreamSynchronize(stream_));
    }
  }

  // 4. Reference at the chosen entries.
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, ref_full, S, c.seed, &si, &sj);
  static_assert(sizeof(std::int64_t) == sizeof(long long), "64-bit indices");
  XNB_CUDA(cudaMemcpyAsync(dsi.p, si.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaMemcpyAsync(dsj.p, sj.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  std::vector<double> ref_hi, ref_lo;
  reference<T>(Operands{A.p, lda, c.ta ? 1 : 0, B.p, ldb, c.tb ? 1 : 0, k}, ref_full, dsi,
               dsj, S, dhi, dlo, &ref_hi, &ref_lo);
  // --ngemm-u01: fresh uniform [0,1) inputs of the same shape and their
  // reference at the same entries.
  std::vector<double> ref2_hi, ref2_lo;
  if (c.ngemm_u01) {
    generate<T>(A2.as<T>(), ra * ca, mix64(c.seed ^ 0x8EBC6AF09C88C6E3ull), false);
    generate<T>(B2.as<T>(), rb * cb, mix64(c.seed ^ 0x589965CC75374CC3ull), false);
    reference<T>(Operands{A2.p, lda, c.ta ? 1 : 0, B2.p, ldb, c.tb ? 1 : 0, k}, ref_full,
                 dsi, dsj, S, dhi2, dlo2, &ref2_hi, &ref2_lo);
  }

  // The accuracy calls compute C = A B; the timed ones C = alpha A B + beta C
  // with --timed-alpha's alpha (default 1) and --timed-beta's beta (default 0).
  const T one = T(1), zero = T(0), timed_alpha = T(c.timed_alpha),
          timed_beta = T(c.timed_beta);
  auto call_with = [&](bool ours, const T *alpha, const T *beta) {
    return gemm_call<T>(rt, ours, handle_, opa, opb, im, in, ik, alpha, A.as<T>(), lda,
                        B.as<T>(), ldb, beta, C.as<T>(), ldc);
  };
  auto call_ours = [&] { return call_with(true, &one, &zero); };
  auto call_base = [&] { return call_with(false, &one, &zero); };
  auto timed_ours = [&] { return call_with(true, &timed_alpha, &timed_beta); };
  auto timed_base = [&] { return call_with(false, &timed_alpha, &timed_beta); };
  const char *ours_name = gemm_name(rt, true, is_d),
             *base_name = gemm_name(rt, false, is_d);
  const Probe probe{dsi.as<long long>(),
                    dsj.as<long long>(),
                    S,
                    dvals.as<double>(),
                    &ref_hi,
                    &ref_lo,
                    paper ? &si : nullptr,
                    paper ? &sj : nullptr};

  // One row per depth. The baseline (accuracy, timing, --cpu-baseline and
  // the vendor GEMM on the --ngemm-u01 inputs) runs once, with the first
  // row that runs, and its figures repeat on the others.
  bool base_done = false, nn_base_done = false;
  CaseResult base;
  for (std::size_t li = 0; li < levels.size(); ++li) {
    CaseResult r;
    CaseSpec s = s0;
    if (li == 0) {
      r = first;
    } else {
      r.seed = c.seed;
      level_ = levels[li];
      s = level_spec(c, levels[li], &r);
      if (r.status == "ok") {
        plan_row(s, &r);
        XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
        if (kMarginBytes + ws_need > free_b)
          r.message = "workspace of " + fmt_gib(double(ws_need)) +
                      " GiB may not fit: the library may run fewer levels";
      }
    }
    if (r.status != "ok") {
      rows->push_back(r);
      continue;
    }
    r.ref_full = ref_full;
    r.ref_entries = S;
    if (paper) reference_identity_errors(ref_hi, ref_lo, si, sj, &r);

    // 5. Accuracy, first and never timed.
    r.ours = accuracy_of(call_ours, ours_name, C.as<T>(), m, n, ldc, probe);
    const bool with_base = c.baseline && !base_done;
    if (with_base) {
      base.base = accuracy_of(call_base, base_name, C.as<T>(), m, n, ldc, probe);
      if (c.cpu_baseline) {
        base.cpu = host_blas_errors<T>(c, hA.data(), lda, hB.data(), ldb, si, sj, ref_hi,
                                       ref_lo);
        base.has_cpu = true;
      }
    }

    // 6. Timing: warm-up, then calls of the two routines interleaved, each
    //    (or each train, for short calls) between two events on the
    //    handle's stream, waited for one at a time (ours alone on the rows
    //    after the first).
    CaseSpec timing = s;
    timing.baseline = with_base;
    time_interleaved(
        timing, [&](int count) { return timed(timed_ours, ours_name, count); },
        [&](int count) { return timed(timed_base, base_name, count); }, &r);
    if (with_base) {
      base.t_base = r.t_base;
      base.t_base_min = r.t_base_min;
      base_done = true;
    }
    if (c.baseline) {
      r.base = base.base;
      r.t_base = base.t_base;
      r.t_base_min = base.t_base_min;
    }
    r.has_cpu = base.has_cpu;
    r.cpu = base.cpu;

    // 7. Depth actually run (the library drops levels whose workspace it
    //    cannot get) and the workspace it holds.
    std::size_t held = 0;
    XNB_CUBLAS(xnGetWorkspaceHeld(handle_, &held));
    r.ws_held = held;
    int used = 0;
    XNB_CUBLAS(xnGetLastLevels(handle_, &used));
    r.levels = used;
    xnGemmInfo_t info;
    XNB_CUBLAS(xnGetLastGemmInfo(handle_, &info));
    r.planned_levels = info.planned_levels;
    planned = info.planned_levels;
    r.depth_source = int(info.source);
    r.predicted_speedup = info.predicted_speedup;
    if (info.model[0]) depth_model_seen(info.model);
    // What the call used: plan.h's size of the whole call at that depth, with
    // the packed quadrant of op(B) when the workspace held covers it (the
    // library gives the packed quadrant up before a level: plan.h
    // choose_workspace). For strassen and winograd at the planned depth
    // that is xnGetFastGemmWorkspaceSize's answer for the timed calls' beta.
    std::int64_t normal_a_temps = -1, normal_b_temps = -1;
    XNB_CUBLAS(xnGetOption(handle_, XN_OPT_PACK_TRANS_A, &normal_a_temps));
    XNB_CUBLAS(xnGetOption(handle_, XN_OPT_PACK_TRANS_B, &normal_b_temps));
    const xn::TempOrientation o =
        xn::temp_orientation(normal_a_temps, normal_b_temps, is_d, c.ta, c.tb);
    // the tables the timed calls run (beta = 0: two temporaries)
    const bool bnz = !fast || c.timed_beta != 0;
    auto ws_at = [&](bool pack) {
      if (!fast)
        return std::uint64_t(xn::call_workspace_elems(m, n, k, used, o.a_layout, c.tb,
                                                      o.t_normal, pack)) *
               sizeof(T);
      return std::uint64_t(xn::call_workspace_elems(algo, bnz, m, n, k, used, o.a_layout,
                                                    c.tb, o.t_normal, pack)) *
             sizeof(T);
    };
    const std::uint64_t packed_bytes =
        fast && used == planned ? std::uint64_t(ws_need) : ws_at(true);
    r.ws_bytes = packed_bytes <= held ? packed_bytes : ws_at(false);
    if (used < planned)
      r.message += std::string(r.message.empty() ? "" : "; ") + "ran " +
                   std::to_string(used) + " of " + std::to_string(planned) +
                   " planned levels (workspace)";

    // 8. --leaf-train: the leaf GEMMs of that depth back to back.
    if (c.leaf_train && used > 0) {
      if (used <= kMaxTrainLevels)
        r.t_leaf = leaf_train<T>(c, used, A.as<T>(), ra * ca, lda, B.as<T>(), rb * cb,
                                 ldb, C.as<T>(), ldc, &r.leaf_calls);
      else
        r.message += std::string(r.message.empty() ? "" : "; ") +
                     "no leaf train beyond " + std::to_string(kMaxTrainLevels) +
                     " levels";
    }

    // 9. --ngemm-u01: xn?ngemm at the same depth on uniform [0,1) inputs
    //    (its own options on the handle, after this row's calls).
    if (c.ngemm_u01) {
      std::int64_t nleaf = 0;
      if (leaf_for_levels(m, n, k, used, &nleaf)) {
        const Probe probe2{dsi.as<long long>(),
                           dsj.as<long long>(),
                           S,
                           dvals.as<double>(),
                           &ref2_hi,
                           &ref2_lo};
        auto call_nn = [&](bool ours) {
          return gemm_call<T>(Routine::Ngemm, ours, handle_, opa, opb, im, in, ik, &one,
                              A2.as<T>(), lda, B2.as<T>(), ldb, &zero, C.as<T>(), ldc);
        };
        XNB_CUBLAS(xnSetOption(handle_, XN_OPT_MAX_LEVELS, used));
        XNB_CUBLAS(xnSetOption(handle_, leaf_option(Routine::Ngemm, is_d), nleaf));
        XNB_CUBLAS(xnSetOption(handle_, min_size_option(Routine::Ngemm, is_d), 0));
        r.nn = accuracy_of([&] { return call_nn(true); },
                           gemm_name(Routine::Ngemm, true, is_d), C.as<T>(), m, n, ldc,
                           probe2);
        XNB_CUBLAS(xnGetLastLevels(handle_, &r.nn_levels));
        if (c.baseline && !nn_base_done) {
          base.nn_base = accuracy_of([&] { return call_nn(false); }, base_name, C.as<T>(),
                                     m, n, ldc, probe2);
          nn_base_done = true;
        }
        r.nn_base = base.nn_base;
        r.has_nn = true;
      } else {
        r.message += std::string(r.message.empty() ? "" : "; ") +
                     "ngemm-u01: no leaf gives " + std::to_string(used) + " levels";
      }
    }

    if (r.ours.nonfinite > 0 || r.base.nonfinite > 0 || r.nn.nonfinite > 0) {
      r.status = "error";
      r.message += std::string(r.message.empty() ? "" : "; ") +
                   "non-finite entries in C (ours " + std::to_string(r.ours.nonfinite) +
                   ", baseline " + std::to_string(r.base.nonfinite) +
                   (r.has_nn ? ", ngemm-u01 " + std::to_string(r.nn.nonfinite) : "") +
                   ")";
    }
    rows->push_back(r);
  }
}

template <class T>
double GpuRunner::leaf_train(const CaseSpec &c, int levels, const T *A, long long a_elems,
                             int lda, const T *B, long long b_elems, int ldb, T *C,
                             int ldc, std::int64_t *calls) {
  const xn::CoreShape core = xn::core_shape(c.m, c.n, c.k, levels);
  const long long lm = core.m >> levels, ln = core.n >> levels, lk = core.k >> levels;
  // Each leaf reads its operands non-transposed from the top-left of the
  // buffers with their leading dimensions; where a leaf block does not fit
  // that way (transposed, rectangular cases), packed (ld = its rows).
  auto ld_for = [](long long rows, long long cols, long long ld, long long elems) {
    return int(rows <= ld && (cols - 1) * ld + rows <= elems ? ld : rows);
  };
  const int la = ld_for(lm, lk, lda, a_elems), lb = ld_for(lk, ln, ldb, b_elems);
  int count = 1;
  for (int l = 0; l < levels; ++l) count *= 7;
  *calls = count;
  const T one = T(1), zero = T(0);
  const bool is_d = sizeof(T) == sizeof(double);
  auto leaf = [&] {
    return gemm_call<T>(Routine::Ngemm, false, handle_, CUBLAS_OP_N, CUBLAS_OP_N, int(lm),
                        int(ln), int(lk), &one, A, la, B, lb, &zero, C, ldc);
  };
  std::vector<double> trains;
  for (int i = 0; i < 3; ++i)
    trains.push_back(
        gpu_.time_calls(leaf, count, gemm_name(Routine::Ngemm, false, is_d)) * count);
  return median_of(trains);
}

CaseResult GpuRunner::run_ex(const CaseSpec &c) {
  CaseResult r;
  r.seed = c.seed;
  const long long m = c.m, n = c.n, k = c.k;
  const cublasOperation_t opa = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldc = int(std::max(1ll, m));
  const int im = int(m), in = int(n), ik = int(k);

  // 1. Fresh library state, then the case's options on the handle.
  fresh_state(c);

  // 2. Memory: A, B, C and the probe (xnExdgemm's workspace comes on top:
  //    by default a quarter of the memory free at the call).
  r.ref_full = full_reference(c);
  const long long S = r.ref_full ? m * n : std::min<long long>(c.ref_samples, m * n);
  if (skip_for_memory(std::uint64_t(m * k + k * n + m * n) * 8 + std::uint64_t(S) * 24,
                      "A, B, C and the reference", &r))
    return r;

  // 3. Inputs and the exact reference on the host (bench_exdgemm.cpp).
  ExInputs inp;
  make_ex_inputs(c, &inp);
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, r.ref_full, S, c.seed, &si, &sj);
  r.ref_entries = S;
  std::vector<double> ref_hi, ref_lo;
  exact_reference(c, inp, si, sj, &ref_hi, &ref_lo);

  DevMem A, B, C, dsi, dsj, dvals;
  const std::size_t s8 = std::size_t(S) * 8;
  if (!alloc_or_skip({{&A, inp.a.size() * 8},
                      {&B, inp.b.size() * 8},
                      {&C, std::size_t(m * n) * 8},
                      {&dsi, s8},
                      {&dsj, s8},
                      {&dvals, s8}},
                     &r))
    return r;
  static_assert(sizeof(std::int64_t) == sizeof(long long), "64-bit indices");
  XNB_CUDA(cudaMemcpyAsync(A.p, inp.a.data(), inp.a.size() * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaMemcpyAsync(B.p, inp.b.data(), inp.b.size() * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaMemcpyAsync(dsi.p, si.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaMemcpyAsync(dsj.p, sj.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaStreamSynchronize(stream_));

  const int lda = int(inp.lda), ldb = int(inp.ldb);
  const double one = 1, zero = 0;
  auto call_ours = [&] {
    return xnExdgemm(handle_, opa, opb, im, in, ik, &one, A.as<double>(), lda,
                     B.as<double>(), ldb, &zero, C.as<double>(), ldc);
  };
  auto call_base = [&] {
    return cublasDgemm(handle_, opa, opb, im, in, ik, &one, A.as<double>(), lda,
                       B.as<double>(), ldb, &zero, C.as<double>(), ldc);
  };

  // 4. Accuracy, first and never timed; the report of the call (its
  //    wide-entry count waits for the call on the device).
  const Probe probe{
      dsi.as<long long>(), dsj.as<long long>(), S, dvals.as<double>(), &ref_hi, &ref_lo};
  r.ours = accuracy_of(call_ours, "xnExdgemm", C.as<double>(), m, n, ldc, probe);
  XNB_CUBLAS(xnGetLastExdgemmInfo(handle_, &r.ex));
  r.has_ex = true;
  r.ws_bytes = r.ex.workspace_bytes;
  if (c.baseline)
    r.base = accuracy_of(call_base, "cublasDgemm", C.as<double>(), m, n, ldc, probe);

  // 5. Timing, as for ngemm.
  time_interleaved(
      c, [&](int count) { return timed(call_ours, "xnExdgemm", count); },
      [&](int count) { return timed(call_base, "cublasDgemm", count); }, &r);
  // 6. The yardstick of the products: for the slice engine the baseline as
  //    a train as long as our slice products (see CaseResult::t_base_train;
  //    one isolated DGEMM of tens of ms runs at a higher clock than a long
  //    run of them); for the modular engine a train of its INT8 GEMMs.
  if (r.ex.engine == 2) {
    r.t_int8_train = int8_train(c, r.ex.moduli);
    r.best_int8_tops = best_int8_tops();
  } else if (c.baseline && r.ex.slice_products > 0) {
    const int count = int(std::max(1.0, std::round(r.ex.slice_products)));
    std::vector<double> trains;
    for (int i = 0; i < 3; ++i)
      trains.push_back(gpu_.time_calls(call_base, count, "cublasDgemm"));
    r.t_base_train = median_of(trains);
  }
  // 7. Where the time goes: one more call with its phases timed.
  XNB_CUBLAS(xnSetOption(handle_, XN_OPT_EXDGEMM_PHASE_TIMES, 1));
  check_status(call_ours(), "xnExdgemm");
  XNB_CUDA(cudaStreamSynchronize(stream_));
  xnExdgemmInfo_t phased{};
  XNB_CUBLAS(xnGetLastExdgemmInfo(handle_, &phased));
  XNB_CUBLAS(xnSetOption(handle_, XN_OPT_EXDGEMM_PHASE_TIMES, 0));
  for (int p = 0; p < 4; ++p) r.ex_phase_ms[p] = phased.phase_ms[p];
  ex_check_result(&r);
  return r;
}

// Seconds per train of `count` cuBLAS INT8 GEMMs as the modular engine runs
// them (op(A) = T, op(B) = N, k padded to 16, int32 out, COMPUTE_32I) on
// random int8 data, median of 3 trains.
double GpuRunner::int8_train(const CaseSpec &c, int count) {
  const long long m = c.m, n = c.n, k = (c.k + 15) / 16 * 16;
  DevMem A8, B8, C32;
  CaseResult unused;
  if (!alloc_or_skip({{&A8, std::size_t(m * k)},
                      {&B8, std::size_t(n * k)},
                      {&C32, std::size_t(m * n) * 4}},
                     &unused))
    return kNaN;
  std::mt19937_64 rng(c.seed ^ 0x1a8u);
  std::vector<std::int8_t> host(std::size_t(std::max(m, n) * k));
  for (std::int8_t &v : host) v = std::int8_t(int(rng() % 255) - 127);
  XNB_CUDA(cudaMemcpy(A8.p, host.data(), std::size_t(m * k), cudaMemcpyHostToDevice));
  XNB_CUDA(cudaMemcpy(B8.p, host.data(), std::size_t(n * k), cudaMemcpyHostToDevice));
  const int one = 1, zero = 0;
  auto gemm = [&] {
    return cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(k), &one,
                        A8.p, CUDA_R_8I, int(k), B8.p, CUDA_R_8I, int(k), &zero, C32.p,
                        CUDA_R_32I, int(m), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
  };
  check_status(gemm(), "cublasGemmEx int8");  // warm-up
  std::vector<double> trains;
  for (int i = 0; i < 3; ++i)
    trains.push_back(gpu_.time_calls(gemm, count, "cublasGemmEx int8") * count);
  return median_of(trains);
}

double GpuRunner::best_int8_tops() {
  if (best_int8_tops_ >= 0) return best_int8_tops_;
  // The shape that ran fastest on an H100 (issue 33): 8192 x 8192 x 32768.
  CaseSpec best;
  best.m = best.n = 8192;
  best.k = 32768;
  best.seed = 0x1a8b;
  constexpr int kTrain = 5;
  const double train_s = int8_train(best, kTrain);
  best_int8_tops_ =
      2.0 * double(best.m) * double(best.n) * double(best.k) * kTrain / train_s / 1e12;
  return best_int8_tops_;
}

}  // namespace

std::unique_ptr<Runner> make_gpu_runner(std::string *why) {
  auto r = std::make_unique<GpuRunner>();
  if (!r->init(why)) return nullptr;
  return r;
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace xnb
