// bench_gpu.cu - the GPU runner: xnDngemm/xnSngemm against cublasDgemm/
// cublasSgemm on the same handle, stream and device inputs; inputs generated
// on the device by a counter-based hash; reference by kernels calling the
// same dd_dot (tests/support/dd_reference.h) as the CPU runner. exdgemm cases:
// xnExdgemm against cublasDgemm, inputs and exact (MPFR) reference made on the
// host (bench_exdgemm.cpp), as on the CPU.
//
// Error policy: every CUDA runtime call is checked; a failing one throws
// CudaFatal and ends the whole run (the context may be broken). A routine or
// cuBLAS call returning a status other than success throws CaseFailure: the
// case is reported as an error and the run goes on if the device still
// synchronises cleanly. cudaMalloc running out of memory skips the case.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "core/plan.h"
#include "support/dd_reference.h"
#include "xngemm.h"

namespace xnb {

namespace {

struct CudaFatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CaseFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string cuda_message(const char *expr, cudaError_t e, const char *file, int line) {
  std::ostringstream o;
  o << expr << ": " << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ") at "
    << file << ":" << line;
  return o.str();
}
std::string cublas_message(const char *expr, cublasStatus_t s, const char *file,
                           int line) {
  std::ostringstream o;
  o << expr << ": " << cublasGetStatusName(s) << " at " << file << ":" << line;
  return o.str();
}

#define XNB_CUDA(expr)                                                  \
  do {                                                                  \
    const cudaError_t xnb_e_ = (expr);                                  \
    if (xnb_e_ != cudaSuccess)                                          \
      throw CudaFatal(cuda_message(#expr, xnb_e_, __FILE__, __LINE__)); \
  } while (0)

#define XNB_CUBLAS(expr)                                                    \
  do {                                                                      \
    const cublasStatus_t xnb_s_ = (expr);                                   \
    if (xnb_s_ != CUBLAS_STATUS_SUCCESS)                                    \
      throw CaseFailure(cublas_message(#expr, xnb_s_, __FILE__, __LINE__)); \
  } while (0)

// Device memory freed on scope exit (errors ignored: the run is ending or
// the memory is already gone with the context).
struct DevMem {
  void *p = nullptr;
  DevMem() = default;
  DevMem(const DevMem &) = delete;
  DevMem &operator=(const DevMem &) = delete;
  ~DevMem() {
    if (p) cudaFree(p);
  }
  template <class U>
  U *as() const {
    return static_cast<U *>(p);
  }
};

// Skips the case (returns false) when the device is out of memory; any other
// error is fatal.
bool try_alloc(DevMem &d, std::size_t bytes, std::string *why) {
  const cudaError_t e = cudaMalloc(&d.p, bytes == 0 ? 1 : bytes);
  if (e == cudaSuccess) return true;
  d.p = nullptr;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    std::ostringstream o;
    o << "cudaMalloc of " << (bytes >> 20) << " MiB failed (out of memory)";
    *why = o.str();
    return false;
  }
  throw CudaFatal(cuda_message("cudaMalloc", e, __FILE__, __LINE__));
}

// ------------------------------------------------------------------ kernels

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;

__host__ __device__ inline unsigned long long mix64(unsigned long long x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// SplitMix64: output idx of the stream with seed `key` is
// mix64(key + (idx + 1) * golden), so every entry is computed independently.
__device__ inline double to_uniform(unsigned long long h, double *) {
  return double(h >> 11) * 0x1.0p-53;  // 53 random bits in [0, 1)
}
__device__ inline float to_uniform(unsigned long long h, float *) {
  return float(unsigned(h >> 40)) * 0x1.0p-24f;  // 24 random bits in [0, 1)
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    generate_kernel(T *p, long long count, unsigned long long key, int pm1) {
  const long long stride = (long long)gridDim.x * kBlock;
  for (long long idx = (long long)blockIdx.x * kBlock + threadIdx.x; idx < count;
       idx += stride) {
    const unsigned long long h =
        mix64(key + (unsigned long long)(idx + 1) * 0x9E3779B97F4A7C15ull);
    const T u = to_uniform(h, static_cast<T *>(nullptr));
    p[idx] = pm1 ? T(2) * u - T(1) : u;  // both exact
  }
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

unsigned grid_for(long long items, long long per_block, long long cap) {
  long long g = (items + per_block - 1) / per_block;
  return unsigned(std::max<long long>(1, std::min(g, cap)));
}

// ------------------------------------------------------------------ routines

template <class T>
struct Gemm;
template <>
struct Gemm<double> {
  static cublasStatus_t ours(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                             int m, int n, int k, const double *al, const double *A,
                             int lda, const double *B, int ldb, const double *be,
                             double *C, int ldc) {
    return xnDngemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
  static cublasStatus_t base(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                             int m, int n, int k, const double *al, const double *A,
                             int lda, const double *B, int ldb, const double *be,
                             double *C, int ldc) {
    return cublasDgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
  static constexpr const char *ours_name = "xnDngemm";
  static constexpr const char *base_name = "cublasDgemm";
};
template <>
struct Gemm<float> {
  static cublasStatus_t ours(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                             int m, int n, int k, const float *al, const float *A,
                             int lda, const float *B, int ldb, const float *be, float *C,
                             int ldc) {
    return xnSngemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
  static cublasStatus_t base(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                             int m, int n, int k, const float *al, const float *A,
                             int lda, const float *B, int ldb, const float *be, float *C,
                             int ldc) {
    return cublasSgemm(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
  static constexpr const char *ours_name = "xnSngemm";
  static constexpr const char *base_name = "cublasSgemm";
};

void check_status(cublasStatus_t s, const char *name) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CaseFailure(std::string(name) + " returned " + cublasGetStatusName(s));
}

// The checked entries of a case on the device (indices, a buffer for the
// gathered values) and their reference on the host.
struct Probe {
  const long long *rows, *cols;
  long long count;
  double *vals;
  const std::vector<double> *ref_hi, *ref_lo;
};

// Full reference while m * n is at most this (one thread per entry).
constexpr long long kGpuFullRefEntries = 1ll << 20;
// Device memory kept free beyond A, B, C and the reference arrays (cuBLAS's
// own workspace, the library's constants, fragmentation).
constexpr std::uint64_t kMarginBytes = 512ull << 20;

class GpuRunner final : public Runner {
 public:
  ~GpuRunner() override {
    if (handle_) {
      xnRelease(handle_);
      cublasDestroy(handle_);
    }
    if (ev0_) cudaEventDestroy(ev0_);
    if (ev1_) cudaEventDestroy(ev1_);
    if (stream_) cudaStreamDestroy(stream_);
    if (counter_) cudaFree(counter_);
  }

  // False (and a reason) if the device cannot be set up.
  bool init(std::string *why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      cudaGetLastError();
      *why = e != cudaSuccess
                 ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e)
                 : "no CUDA device";
      return false;
    }
    e = cudaGetDevice(&dev_);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop_, dev_);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreate(&ev0_);
    if (e == cudaSuccess) e = cudaEventCreate(&ev1_);
    if (e == cudaSuccess) e = cudaMalloc(&counter_, sizeof(unsigned long long));
    if (e == cudaSuccess) e = cudaRuntimeGetVersion(&runtime_version_);
    if (e == cudaSuccess) e = cudaDriverGetVersion(&driver_version_);
    if (e != cudaSuccess) {
      *why = std::string("CUDA setup: ") + cudaGetErrorString(e);
      cudaGetLastError();
      return false;
    }
    cublasStatus_t s = cublasCreate(&handle_);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetStream(handle_, stream_);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasGetVersion(handle_, &cublas_version_);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasGetMathMode(handle_, &math_mode_);
    if (s != CUBLAS_STATUS_SUCCESS) {
      *why = std::string("cuBLAS setup: ") + cublasGetStatusName(s);
      return false;
    }
    return true;
  }

  std::string device_name() const override { return prop_.name; }

  std::string describe() const override {
    std::ostringstream o;
    o << "device: GPU " << dev_ << " " << prop_.name << ", " << prop_.multiProcessorCount
      << " SMs, " << fmt_gib(double(prop_.totalGlobalMem)) << " GiB, compute capability "
      << prop_.major << "." << prop_.minor << "\n        CUDA runtime "
      << runtime_version_ / 1000 << "." << runtime_version_ % 1000 / 10 << ", driver "
      << driver_version_ / 1000 << "." << driver_version_ % 1000 / 10 << ", cuBLAS "
      << cublas_version_ / 10000 << "." << cublas_version_ % 10000 / 100 << "."
      << cublas_version_ % 100 << " (math mode " << int(math_mode_)
      << (math_mode_ == CUBLAS_DEFAULT_MATH ? " = default" : "") << ")\n";
    return o.str();
  }
  std::string ours_name(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return "xnExdgemm";
    return c.prec == 'd' ? Gemm<double>::ours_name : Gemm<float>::ours_name;
  }
  std::string base_name(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return "cublasDgemm";
    return c.prec == 'd' ? Gemm<double>::base_name : Gemm<float>::base_name;
  }
  bool is_gpu() const override { return true; }
  bool full_reference(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return ex_full_reference(c);
    return c.ref_samples <= 0 || c.m * c.n <= kGpuFullRefEntries ||
           c.ref_samples >= c.m * c.n;
  }

  CaseResult run(const CaseSpec &c) override {
    try {
      if (c.routine == Routine::Exdgemm) return run_ex(c);
      return c.prec == 'd' ? run_t<double>(c) : run_t<float>(c);
    } catch (const CaseFailure &e) {
      CaseResult r;
      r.seed = c.seed;
      r.status = "error";
      r.message = e.what();
      // Still usable? A fault in a kernel shows here as a sticky error.
      const cudaError_t s = cudaDeviceSynchronize();
      if (s != cudaSuccess) {
        r.fatal = true;
        r.message += std::string("; device: ") + cudaGetErrorString(s);
      }
      cudaGetLastError();
      return r;
    } catch (const CudaFatal &e) {
      CaseResult r;
      r.seed = c.seed;
      r.status = "error";
      r.message = e.what();
      r.fatal = true;
      return r;
    } catch (const std::bad_alloc &) {
      CaseResult r;
      r.seed = c.seed;
      r.status = "skipped";
      r.message = "out of host memory";
      return r;
    }
  }

 private:
  static std::string fmt_gib(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", bytes / double(1ull << 30));
    return b;
  }

  template <class T>
  CaseResult run_t(const CaseSpec &c);
  CaseResult run_ex(const CaseSpec &c);

  // Fresh library state on the handle (so the workspace held is this case's)
  // with the case's options.
  void fresh_state(const CaseSpec &c) {
    XNB_CUDA(cudaStreamSynchronize(stream_));
    XNB_CUBLAS(xnRelease(handle_));
    XNB_CUDA(cudaDeviceSynchronize());
    cudaMemPool_t pool = nullptr;
    XNB_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev_));
    XNB_CUDA(cudaMemPoolTrimTo(pool, 0));  // stream-ordered frees back to the device
    if (c.levels >= 0) XNB_CUBLAS(xnSetOption(handle_, XN_OPT_MAX_LEVELS, c.levels));
    if (c.leaf > 0) {
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_LEAF_SIZE_D, c.leaf));
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_LEAF_SIZE_S, c.leaf));
    }
    // An explicit leaf means "the leaf decides the depth": no crossover on
    // top unless one is given too.
    const std::int64_t min_size = c.min_size >= 0 ? c.min_size : (c.leaf > 0 ? 0 : -1);
    if (min_size >= 0) {
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_MIN_SIZE_D, min_size));
      XNB_CUBLAS(xnSetOption(handle_, XN_OPT_MIN_SIZE_S, min_size));
    }
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
    return error_stats(*p.ref_hi, *p.ref_lo, vals, (long long)bad);
  }

  // Seconds per call of `count` back-to-back calls between two events.
  template <class Call>
  double timed_train(Call &&call, const char *name, int count) {
    XNB_CUDA(cudaEventRecord(ev0_, stream_));
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < count && s == CUBLAS_STATUS_SUCCESS; ++i) s = call();
    XNB_CUDA(cudaEventRecord(ev1_, stream_));
    XNB_CUDA(cudaEventSynchronize(ev1_));
    check_status(s, name);
    float ms = 0;
    XNB_CUDA(cudaEventElapsedTime(&ms, ev0_, ev1_));
    return double(ms) * 1e-3 / count;
  }
  // Seconds of one call between two events on the handle's stream.
  template <class Call>
  double timed(Call &&call, const char *name) {
    return timed_train(call, name, 1);
  }

  int dev_ = 0;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  unsigned long long *counter_ = nullptr;
  int runtime_version_ = 0, driver_version_ = 0, cublas_version_ = 0;
  cublasMath_t math_mode_ = CUBLAS_DEFAULT_MATH;
};

template <class T>
CaseResult GpuRunner::run_t(const CaseSpec &c) {
  CaseResult r;
  r.seed = c.seed;
  const bool is_d = sizeof(T) == sizeof(double);
  const long long m = c.m, n = c.n, k = c.k;
  const cublasOperation_t opa = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const long long ra = c.ta ? k : m, ca = c.ta ? m : k;  // A as stored
  const long long rb = c.tb ? n : k, cb = c.tb ? k : n;  // B as stored
  const int lda = int(std::max(1ll, ra)), ldb = int(std::max(1ll, rb));
  const int ldc = int(std::max(1ll, m));
  const int im = int(m), in = int(n), ik = int(k);

  // 1. Fresh library state, then the case's options on the handle.
  fresh_state(c);
  std::int64_t leaf = 0, max_levels = 0, crossover = 0;
  XNB_CUBLAS(xnGetOption(handle_, is_d ? XN_OPT_LEAF_SIZE_D : XN_OPT_LEAF_SIZE_S, &leaf));
  XNB_CUBLAS(xnGetOption(handle_, XN_OPT_MAX_LEVELS, &max_levels));
  r.leaf = leaf;
  r.max_levels = max_levels;
  XNB_CUBLAS(
      xnGetOption(handle_, is_d ? XN_OPT_MIN_SIZE_D : XN_OPT_MIN_SIZE_S, &crossover));
  // The depth the library plans (same rule, crossover included); fewer run
  // only when the workspace cannot be had.
  const int planned = xn::choose_levels(m, n, k, leaf, int(max_levels), crossover);
  std::size_t ws_need = 0;
  XNB_CUBLAS(xnGetWorkspaceSize(handle_, c.prec, opa, opb, im, in, ik, &ws_need));

  // 2. Memory: skip what cannot fit rather than fail.
  r.ref_full = full_reference(c);
  const long long S = r.ref_full ? m * n : std::min<long long>(c.ref_samples, m * n);
  const std::uint64_t abc = std::uint64_t(ra * ca + rb * cb + m * n) * sizeof(T);
  const std::uint64_t ref_bytes = std::uint64_t(S) * (2 * 8 + 2 * 8 + 8);
  if (skip_for_memory(abc + ref_bytes, "A, B, C and the reference", &r)) return r;
  std::size_t free_b = 0, total_b = 0;
  XNB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (abc + ref_bytes + kMarginBytes + ws_need > free_b)
    r.message = "workspace of " + fmt_gib(double(ws_need)) +
                " GiB may not fit: the library may run fewer levels";

  DevMem A, B, C, dsi, dsj, dhi, dlo, dvals;
  std::string why;
  if (!try_alloc(A, std::size_t(ra * ca) * sizeof(T), &why) ||
      !try_alloc(B, std::size_t(rb * cb) * sizeof(T), &why) ||
      !try_alloc(C, std::size_t(m * n) * sizeof(T), &why) ||
      !try_alloc(dsi, std::size_t(S) * 8, &why) ||
      !try_alloc(dsj, std::size_t(S) * 8, &why) ||
      !try_alloc(dhi, std::size_t(S) * 8, &why) ||
      !try_alloc(dlo, std::size_t(S) * 8, &why) ||
      !try_alloc(dvals, std::size_t(S) * 8, &why)) {
    r.status = "skipped";
    r.message = why;
    return r;
  }

  // 3. Inputs, fresh per case from the case's seed.
  const int pm1 = c.dist == Dist::Upm1 ? 1 : 0;
  const unsigned long long key_a = mix64(c.seed ^ 0xA0761D6478BD642Full);
  const unsigned long long key_b = mix64(c.seed ^ 0xE7037ED1A0B428DBull);
  generate_kernel<T><<<grid_for(ra * ca, kBlock, 1 << 16), kBlock, 0, stream_>>>(
      A.as<T>(), ra * ca, key_a, pm1);
  XNB_CUDA(cudaGetLastError());
  generate_kernel<T><<<grid_for(rb * cb, kBlock, 1 << 16), kBlock, 0, stream_>>>(
      B.as<T>(), rb * cb, key_b, pm1);
  XNB_CUDA(cudaGetLastError());

  // 4. Reference at the chosen entries.
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, r.ref_full, S, c.seed, &si, &sj);
  r.ref_entries = S;
  static_assert(sizeof(std::int64_t) == sizeof(long long), "64-bit indices");
  XNB_CUDA(cudaMemcpyAsync(dsi.p, si.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  XNB_CUDA(cudaMemcpyAsync(dsj.p, sj.data(), std::size_t(S) * 8, cudaMemcpyHostToDevice,
                           stream_));
  const Operands ops{A.p, lda, c.ta ? 1 : 0, B.p, ldb, c.tb ? 1 : 0, k};
  if (r.ref_full)
    reference_thread_kernel<T><<<grid_for(S, kBlock, 1 << 16), kBlock, 0, stream_>>>(
        ops, dsi.as<long long>(), dsj.as<long long>(), S, dhi.as<double>(),
        dlo.as<double>());
  else
    reference_warp_kernel<T>
        <<<grid_for(S, kWarpsPerBlock, 1 << 16), kBlock, 0, stream_>>>(
            ops, dsi.as<long long>(), dsj.as<long long>(), S, dhi.as<double>(),
            dlo.as<double>());
  XNB_CUDA(cudaGetLastError());
  const std::size_t nS = static_cast<std::size_t>(S);
  std::vector<double> ref_hi(nS), ref_lo(nS);
  XNB_CUDA(cudaMemcpyAsync(ref_hi.data(), dhi.p, std::size_t(S) * 8,
                           cudaMemcpyDeviceToHost, stream_));
  XNB_CUDA(cudaMemcpyAsync(ref_lo.data(), dlo.p, std::size_t(S) * 8,
                           cudaMemcpyDeviceToHost, stream_));
  XNB_CUDA(cudaStreamSynchronize(stream_));

  const T one = T(1), zero = T(0);
  auto call_ours = [&] {
    return Gemm<T>::ours(handle_, opa, opb, im, in, ik, &one, A.as<T>(), lda, B.as<T>(),
                         ldb, &zero, C.as<T>(), ldc);
  };
  auto call_base = [&] {
    return Gemm<T>::base(handle_, opa, opb, im, in, ik, &one, A.as<T>(), lda, B.as<T>(),
                         ldb, &zero, C.as<T>(), ldc);
  };

  // 5. Accuracy, first and never timed.
  const Probe probe{
      dsi.as<long long>(), dsj.as<long long>(), S, dvals.as<double>(), &ref_hi, &ref_lo};
  r.ours = accuracy_of(call_ours, Gemm<T>::ours_name, C.as<T>(), m, n, ldc, probe);
  if (c.baseline)
    r.base = accuracy_of(call_base, Gemm<T>::base_name, C.as<T>(), m, n, ldc, probe);

  // 6. Timing: warm-up, then calls of the two routines interleaved, each
  //    between two events on the handle's stream, waited for one at a time.
  time_interleaved(
      c, [&] { return timed(call_ours, Gemm<T>::ours_name); },
      [&] { return timed(call_base, Gemm<T>::base_name); }, &r);

  // 7. Depth actually run (the library drops levels whose workspace it
  //    cannot get) and the workspace it holds.
  std::size_t held = 0;
  XNB_CUBLAS(xnGetWorkspaceHeld(handle_, &held));
  r.ws_held = held;
  int used = 0;
  XNB_CUBLAS(xnGetLastLevels(handle_, &used));
  r.levels = used;
  // What the call used: plan.h's size of the whole call at that depth, with
  // the packed quadrant of op(B) when the workspace held covers it (the
  // library gives the packed quadrant up before a level: plan.h
  // choose_workspace).
  std::int64_t normal_b_temps = -1;
  XNB_CUBLAS(xnGetOption(handle_, XN_OPT_PACK_TRANS_B, &normal_b_temps));
  const bool t_normal = xn::stores_t_normal(normal_b_temps, is_d, c.ta, c.tb);
  const std::uint64_t packed_bytes =
      std::uint64_t(xn::call_workspace_elems(m, n, k, used, c.ta, c.tb, t_normal, true)) *
      sizeof(T);
  r.ws_bytes = packed_bytes <= held ? packed_bytes
                                    : std::uint64_t(xn::call_workspace_elems(
                                          m, n, k, used, c.ta, c.tb, t_normal, false)) *
                                          sizeof(T);
  if (used < planned)
    r.message += std::string(r.message.empty() ? "" : "; ") + "ran " +
                 std::to_string(used) + " of " + std::to_string(planned) +
                 " planned levels (workspace)";

  if (r.ours.nonfinite > 0 || r.base.nonfinite > 0) {
    r.status = "error";
    r.message += std::string(r.message.empty() ? "" : "; ") +
                 "non-finite entries in C (ours " + std::to_string(r.ours.nonfinite) +
                 ", baseline " + std::to_string(r.base.nonfinite) + ")";
  }
  return r;
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
  std::string why;
  if (!try_alloc(A, inp.a.size() * 8, &why) || !try_alloc(B, inp.b.size() * 8, &why) ||
      !try_alloc(C, std::size_t(m * n) * 8, &why) ||
      !try_alloc(dsi, std::size_t(S) * 8, &why) ||
      !try_alloc(dsj, std::size_t(S) * 8, &why) ||
      !try_alloc(dvals, std::size_t(S) * 8, &why)) {
    r.status = "skipped";
    r.message = why;
    return r;
  }
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
      c, [&] { return timed(call_ours, "xnExdgemm"); },
      [&] { return timed(call_base, "cublasDgemm"); }, &r);
  // 6. The baseline as a train as long as our slice products (see
  //    CaseResult::t_base_train): one isolated DGEMM of tens of ms runs at
  //    a higher clock than a long run of them.
  if (c.baseline && r.ex.slice_products > 0) {
    const int count = int(std::max(1.0, std::round(r.ex.slice_products)));
    std::vector<double> trains;
    for (int i = 0; i < 3; ++i)
      trains.push_back(timed_train(call_base, "cublasDgemm", count));
    r.t_base_train = median_of(trains);
  }
  ex_check_result(&r);
  return r;
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
