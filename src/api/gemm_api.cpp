// gemm_api.cpp - the recursive GEMMs' device entry points: xnSngemm/xnDngemm
// (non-negative inputs, Badin et al., ICS'13) and xn?gemmStrassen /
// xn?gemmWinograd (general inputs, Li, Ranka, Sahni, ICPADS'11). One body
// for all six: cublas?gemm's argument checks, the call guard and the GEMM
// driver (core/gemm_driver.h) with the CUDA hooks and the routine's
// algorithm.
#include <cublas_v2.h>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "backend/cuda/cuda_backend.h"
#include "core/gemm_driver.h"
#include "core/schedule.h"
#include "xngemm.h"

namespace xn {

template <class T>
cublasStatus_t device_recursive_gemm(const GemmAlgorithm &algo, cublasHandle_t handle,
                                     cublasOperation_t transa, cublasOperation_t transb,
                                     int m, int n, int k, const T *alpha, const T *A,
                                     int lda, const T *B, int ldb, const T *beta, T *C,
                                     int ldc) {
  return gemm_entry(
      handle, transa, transb, m, n, k, lda, ldb, ldc, [&](CallGuard &guard) {
        HandleState &st = guard.state();
        // With device scalars their values are unknown on the host: the kernels
        // read beta on the device (beta == 0 still never reads C) and cuBLAS
        // does the same for the leaves. The top level then runs the table
        // for any beta (GemmAlgorithm::any_beta).
        const bool dev = guard.device_scalars();
        CudaGemmHooks<T> hooks(guard, alpha, beta);
        GemmReport report;
        const Status s = gemm_driver<T>(
            hooks, algo, MatView<const T>{A, m, k, lda, is_trans(op_of(transa))},
            MatView<const T>{B, k, n, ldb, is_trans(op_of(transb))},
            MatView<T>{C, m, n, ldc, false}, dev ? ScalarKind::User : kind_of(*beta),
            !dev && *alpha == T(0), st.opt, handle_depth_model(st), -1, &report);
        st.last_report = report;
        st.last_model = st.model;  // a copy of the pointer: no allocation
        st.has_last_report = true;
        if (report.fell_back) ++st.nonneg_fallbacks;
        return to_cublas(guard.finish(s));
      });
}

#define XN_INSTANTIATE(T)                                                               \
  template cublasStatus_t device_recursive_gemm<T>(                                     \
      const GemmAlgorithm &, cublasHandle_t, cublasOperation_t, cublasOperation_t, int, \
      int, int, const T *, const T *, int, const T *, int, const T *, T *, int);
XN_INSTANTIATE(float)
XN_INSTANTIATE(double)
#undef XN_INSTANTIATE

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnSngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k, const float *alpha,
                        const float *A, int lda, const float *B, int ldb,
                        const float *beta, float *C, int ldc) {
  return device_recursive_gemm<float>(nonneg_winograd_algorithm(), handle, transa, transb,
                                      m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t xnDngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k,
                        const double *alpha, const double *A, int lda, const double *B,
                        int ldb, const double *beta, double *C, int ldc) {
  return device_recursive_gemm<double>(nonneg_winograd_algorithm(), handle, transa,
                                       transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                       ldc);
}

cublasStatus_t xnSgemmStrassen(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const float *alpha, const float *A, int lda,
                               const float *B, int ldb, const float *beta, float *C,
                               int ldc) {
  return device_recursive_gemm<float>(strassen_algorithm(), handle, transa, transb, m, n,
                                      k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t xnDgemmStrassen(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const double *alpha, const double *A, int lda,
                               const double *B, int ldb, const double *beta, double *C,
                               int ldc) {
  return device_recursive_gemm<double>(strassen_algorithm(), handle, transa, transb, m, n,
                                       k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t xnSgemmWinograd(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const float *alpha, const float *A, int lda,
                               const float *B, int ldb, const float *beta, float *C,
                               int ldc) {
  return device_recursive_gemm<float>(winograd_algorithm(), handle, transa, transb, m, n,
                                      k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t xnDgemmWinograd(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const double *alpha, const double *A, int lda,
                               const double *B, int ldb, const double *beta, double *C,
                               int ldc) {
  return device_recursive_gemm<double>(winograd_algorithm(), handle, transa, transb, m, n,
                                       k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // extern "C"
