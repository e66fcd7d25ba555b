// host_api.cpp - the BLAS extension of Badin et al., ICS'13, section 6: sngemm_/dngemm_
// (Fortran 77, SGEMM/DGEMM argument list) and cblas_sngemm/cblas_dngemm; in
// the same spirit sstgemm_/dstgemm_ (Strassen), swigemm_/dwigemm_
// (Winograd) and exdgemm_ (correctly rounded), with their cblas_ forms.
//
// Host memory in and out. With a GPU (XN_DEVICE=auto or gpu) the operands are
// copied to it, multiplied by the device routine and C copied back, as NVBLAS
// does; without one, or if the device path cannot get its memory, the CPU
// backend computes the same schedule over OpenBLAS leaves.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <type_traits>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_exdgemm.h"
#include "backend/cuda/kept_device.h"
#include "core/blas_conventions.h"
#include "core/call_depth.h"
#include "core/environment.h"
#include "core/options.h"
#include "xngemm.h"

extern "C" void xerbla_(const char *srname, const int *info, std::size_t len);

namespace xn {

namespace {

std::atomic<std::uint64_t> g_host_fallbacks{0};

// Products smaller than this run on the CPU under XN_DEVICE=auto: the copies
// to and from the GPU would cost more than they save.
constexpr double kGpuMinFlops = 2.0 * 256 * 256 * 256;

bool gpu_present() {
  static const bool present = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
      count = 0;
    }
    return count > 0;
  }();
  return present;
}

// The outcome of the calling thread's last host call (xnGetLastHostStatus):
// 0, -position of an illegal argument, XN_STATUS_UNCHANGED.
thread_local int t_host_status = 0;

// An illegal argument: XERBLA, as reference BLAS, and the same position in
// the thread's last status.
void report(const char *name, int position) {
  t_host_status = -position;
  std::size_t len = 0;
  while (name[len]) ++len;
  xerbla_(name, &position, len);
}

// Per host thread: a cuBLAS handle, a stream and a device buffer, grown on
// demand and kept for the thread's next call (the kind the distributed
// routines keep per GPU).
thread_local KeptDevice t_gpu;

// The interposer's ngemm mode (xn_internal_host_check_nonneg): the host
// routines scan their operands and limit the depth as XN_OPT_CHECK_NONNEG
// does, without changing the process-wide options that the program's own
// handles start from.
std::atomic<bool> g_host_check_nonneg{false};
Options host_options() {
  Options o = default_options();
  if (g_host_check_nonneg.load(std::memory_order_relaxed)) o.check_nonneg = 1;
  return o;
}


// What the calling thread's last recursive host GEMM did
// (xnGetLastGemmInfo(NULL, ...); its levels: xnGetLastLevels(NULL, ...));
// levels -1 before any.
thread_local xnGemmInfo_t t_last_info = {-1, 0, XN_PARAMETERS_FROM_OPTIONS, 0, ""};

// Which routine a host call runs: a recursive GEMM (non-negative, Strassen,
// Winograd) or (double only) the correctly rounded product.
enum class HostRoutine { Ngemm, Strassen, Winograd, Exdgemm };

const GemmAlgorithm &algorithm_of(HostRoutine r) {
  return r == HostRoutine::Strassen   ? strassen_algorithm()
         : r == HostRoutine::Winograd ? winograd_algorithm()
                                      : nonneg_winograd_algorithm();
}

// What the GPU path did: the product is in C; it could not run (no memory,
// no handle, a failed product), C untouched; or the copy of the finished
// product back into C failed, which may have written part of C.
enum class GpuPath { Done, NotRun, CopyOutFailed };

// Copy in, multiply on the GPU, copy out. C is written only after the device
// result is complete; a recursive GEMM's report goes to t_last_info.
template <class T>
GpuPath gpu_gemm(HostRoutine routine, bool ta, bool tb, int m, int n, int k, T alpha,
                 const T *A, int lda, const T *B, int ldb, T beta, T *C, int ldc) {
  // Allocations and waits outside any stream capture: they must not
  // invalidate another thread's global-mode capture (docs/design.md, "CUDA
  // graphs").
  const RelaxedCaptureMode relaxed;
  if (!t_gpu.ready(KeptDevice::StreamKind::NonBlocking)) return GpuPath::NotRun;
  const std::size_t ra = ta ? k : m, ca = ta ? m : k;
  const std::size_t rb = tb ? n : k, cb = tb ? k : n;
  const std::size_t na = ra * ca, nb = rb * cb, nc = std::size_t(m) * n;
  auto align = [](std::size_t x) { return (x + 63) / 64 * 64; };
  if (!t_gpu.work.reserve((align(na) + align(nb) + nc) * sizeof(T), t_gpu.stream,
                          t_gpu.device))
    return GpuPath::NotRun;
  T *dev = static_cast<T *>(t_gpu.work.data());
  T *dA = dev, *dB = dev + align(na), *dC = dB + align(nb);
  const cudaStream_t s = t_gpu.stream;
  auto copy_in = [&](T *dst, const T *src, std::size_t rows, std::size_t cols, int ld) {
    return rows == 0 || cols == 0 ||
           cudaMemcpy2DAsync(dst, rows * sizeof(T), src, std::size_t(ld) * sizeof(T),
                             rows * sizeof(T), cols, cudaMemcpyHostToDevice,
                             s) == cudaSuccess;
  };
  bool ok = copy_in(dA, A, ra, ca, lda) && copy_in(dB, B, rb, cb, ldb);
  if (ok && beta != T(0)) ok = copy_in(dC, C, m, n, ldc);  // beta == 0: C unread
  if (!ok) {
    cudaGetLastError();
    cudaStreamSynchronize(s);
    return GpuPath::NotRun;
  }
  // The thread's handle follows the process-wide options.
  t_gpu.follow(host_options());
  std::uint64_t before = 0, after = 0;
  xnGetNonNegFallbackCount(t_gpu.handle, &before);
  cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldda = int(std::max<std::size_t>(1, ra)),
            lddb = int(std::max<std::size_t>(1, rb));
  if constexpr (std::is_same_v<T, double>) {
    if (routine == HostRoutine::Exdgemm) {
      st = device_exdgemm(t_gpu.handle, opa, opb, m, n, k, &alpha, dA, ldda, dB, lddb,
                          &beta, dC, std::max(1, m));
      xnExdgemmInfo_t info;
      if (st == CUBLAS_STATUS_SUCCESS &&
          xnGetLastExdgemmInfo(t_gpu.handle, &info) == CUBLAS_STATUS_SUCCESS)
        set_host_exdgemm_info(info);
    }
  }
  if (routine != HostRoutine::Exdgemm) {
    st = device_recursive_gemm<T>(algorithm_of(routine), t_gpu.handle, opa, opb, m, n, k,
                                  &alpha, dA, ldda, dB, lddb, &beta, dC, std::max(1, m));
    if (st == CUBLAS_STATUS_SUCCESS) xnGetLastGemmInfo(t_gpu.handle, &t_last_info);
  }
  if (st != CUBLAS_STATUS_SUCCESS || cudaStreamSynchronize(s) != cudaSuccess) {
    cudaGetLastError();
    return GpuPath::NotRun;
  }
  xnGetNonNegFallbackCount(t_gpu.handle, &after);
  g_host_fallbacks += after - before;
  ok = cudaMemcpy2DAsync(C, std::size_t(ldc) * sizeof(T), dC, std::size_t(m) * sizeof(T),
                         std::size_t(m) * sizeof(T), n, cudaMemcpyDeviceToHost,
                         s) == cudaSuccess &&
       cudaStreamSynchronize(s) == cudaSuccess;
  if (ok) return GpuPath::Done;
  cudaGetLastError();
  return GpuPath::CopyOutFailed;
}

template <class T>
void host_gemm(HostRoutine routine, bool ta, bool tb, int m, int n, int k, T alpha,
               const T *A, int lda, const T *B, int ldb, T beta, T *C, int ldc) {
  const CallDepthGuard inside;  // its BLAS/cuBLAS leaves bypass the interposer
  begin_host_call();
  // The depth this call ran, for xnGetLastLevels(NULL, ...): 0 for an empty
  // C and the quick return, the device's on the GPU, the CPU's otherwise.
  const bool recursive = routine != HostRoutine::Exdgemm;
  if (recursive) t_last_info = gemm_info_of(GemmReport{}, nullptr, 0);
  if (m == 0 || n == 0) return;
  const HostDevice where = host_device_from_environment();
  const bool big = 2.0 * m * n * k >= kGpuMinFlops;
  const bool quick = k == 0 || alpha == T(0);  // only scales C
  if (!quick && where == HostDevice::Gpu && !gpu_present())
    report_environment_once("XN_DEVICE", "gpu", "but no GPU is usable",
                            "the host routines run on the CPU");
  if (!quick && where != HostDevice::Cpu && gpu_present() &&
      (where == HostDevice::Gpu || big)) {
    const GpuPath gpu =
        gpu_gemm<T>(routine, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (gpu == GpuPath::Done) return;
    // Else the CPU computes it, unless part of C may be overwritten and the
    // product reads C (beta != 0): then C cannot be had again.
    if (gpu == GpuPath::CopyOutFailed && beta != T(0)) {
      t_host_status = XN_STATUS_PARTIAL;
      diagnostic("the product's copy from the GPU failed: part of C may be written");
      return;
    }
  }
  if constexpr (std::is_same_v<T, double>) {
    if (routine == HostRoutine::Exdgemm) {
      const Options o = default_options();
      ExdgemmReport info{};
      const Status st =
          cpu_exdgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, o, &info);
      set_host_exdgemm_info(to_public(info));
      // A BLAS routine has no error return: the thread's last status says
      // it (a workspace limit too small for one block leaves C unchanged).
      t_host_status = outcome_of(st, false);
      if (st != Status::Ok)
        diagnostic("EXDGEMM could not run on the CPU (status %d; "
                   "XN_EXDGEMM_WORKSPACE_LIMIT too small?): C is unchanged",
                   int(st));
      return;
    }
  }
  bool fell_back = false;
  GemmReport report;
  cpu_recursive_gemm<T>(algorithm_of(routine), ta, tb, m, n, k, alpha, A, lda, B, ldb,
                        beta, C, ldc, host_options(), -1, CpuLeaf::OpenBlas,
                        &fell_back, nullptr, nullptr, &report);
  t_last_info = gemm_info_of(report, nullptr);
  if (fell_back) ++g_host_fallbacks;
}

template <class T>
void fortran_gemm(HostRoutine routine, const char *name, const char *transa,
                  const char *transb, const int *m, const int *n, const int *k,
                  const T *alpha, const T *a, const int *lda, const T *b, const int *ldb,
                  const T *beta, T *c, const int *ldc) {
  const int info =
      check_gemm_fortran_args(*transa, *transb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info != 0) {
    report(name, info);
    return;
  }
  host_gemm<T>(routine, blas::transposes(*transa), blas::transposes(*transb), *m, *n, *k,
               *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}

template <class T>
void cblas_gemm_entry(HostRoutine routine, const char *name, int layout, int transa,
                      int transb, int m, int n, int k, T alpha, const T *A, int lda,
                      const T *B, int ldb, T beta, T *C, int ldc) {
  const int pos = check_gemm_cblas_args(layout, transa, transb, m, n, k, lda, ldb, ldc);
  if (pos != 0) {
    report(name, pos);
    return;
  }
  const bool ta = transa != XnNoTrans, tb = transb != XnNoTrans;
  if (layout == XnColMajor)
    host_gemm<T>(routine, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  else  // row-major C is column-major C^T = op(B)^T op(A)^T
    host_gemm<T>(routine, tb, ta, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
}

}  // namespace

void report_bad_argument(const char *name, int position) { report(name, position); }

std::uint64_t host_nonneg_fallbacks() { return g_host_fallbacks; }
xnGemmInfo_t host_last_gemm_info() { return t_last_info; }
bool host_call_failed() { return t_host_status == XN_STATUS_UNCHANGED; }
void begin_host_call() { t_host_status = 0; }

void set_host_check_nonneg(bool on) { g_host_check_nonneg = on; }

}  // namespace xn

using namespace xn;

extern "C" {

void sngemm_(const char *transa, const char *transb, const int *m, const int *n,
             const int *k, const float *alpha, const float *a, const int *lda,
             const float *b, const int *ldb, const float *beta, float *c,
             const int *ldc) {
  fortran_gemm<float>(HostRoutine::Ngemm, "SNGEMM", transa, transb, m, n, k, alpha, a,
                      lda, b, ldb, beta, c, ldc);
}

void dngemm_(const char *transa, const char *transb, const int *m, const int *n,
             const int *k, const double *alpha, const double *a, const int *lda,
             const double *b, const int *ldb, const double *beta, double *c,
             const int *ldc) {
  fortran_gemm<double>(HostRoutine::Ngemm, "DNGEMM", transa, transb, m, n, k, alpha, a,
                       lda, b, ldb, beta, c, ldc);
}

void cblas_sngemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta, float *C,
                  int ldc) {
  cblas_gemm_entry<float>(HostRoutine::Ngemm, "cblas_sngemm", layout, transa, transb, m,
                          n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_dngemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                  const double *A, int lda, const double *B, int ldb, double beta,
                  double *C, int ldc) {
  cblas_gemm_entry<double>(HostRoutine::Ngemm, "cblas_dngemm", layout, transa, transb, m,
                           n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void sstgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *lda,
              const float *b, const int *ldb, const float *beta, float *c,
              const int *ldc) {
  fortran_gemm<float>(HostRoutine::Strassen, "SSTGEMM", transa, transb, m, n, k, alpha, a,
                      lda, b, ldb, beta, c, ldc);
}

void dstgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc) {
  fortran_gemm<double>(HostRoutine::Strassen, "DSTGEMM", transa, transb, m, n, k, alpha,
                       a, lda, b, ldb, beta, c, ldc);
}

void swigemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *lda,
              const float *b, const int *ldb, const float *beta, float *c,
              const int *ldc) {
  fortran_gemm<float>(HostRoutine::Winograd, "SWIGEMM", transa, transb, m, n, k, alpha, a,
                      lda, b, ldb, beta, c, ldc);
}

void dwigemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc) {
  fortran_gemm<double>(HostRoutine::Winograd, "DWIGEMM", transa, transb, m, n, k, alpha,
                       a, lda, b, ldb, beta, c, ldc);
}

void cblas_sstgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc) {
  cblas_gemm_entry<float>(HostRoutine::Strassen, "cblas_sstgemm", layout, transa, transb,
                          m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_dstgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc) {
  cblas_gemm_entry<double>(HostRoutine::Strassen, "cblas_dstgemm", layout, transa, transb,
                           m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_swigemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc) {
  cblas_gemm_entry<float>(HostRoutine::Winograd, "cblas_swigemm", layout, transa, transb,
                          m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cblas_dwigemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc) {
  cblas_gemm_entry<double>(HostRoutine::Winograd, "cblas_dwigemm", layout, transa, transb,
                           m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void exdgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc) {
  fortran_gemm<double>(HostRoutine::Exdgemm, "EXDGEMM", transa, transb, m, n, k, alpha, a,
                       lda, b, ldb, beta, c, ldc);
}

void cblas_exdgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc) {
  cblas_gemm_entry<double>(HostRoutine::Exdgemm, "cblas_exdgemm", layout, transa, transb,
                           m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

int xnGetLastHostStatus(void) { return xn::t_host_status; }

}  // extern "C"
