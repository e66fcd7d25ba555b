// device_gemm.h - internal entry points shared by the API translation units.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/status.h"
#include "xngemm.h"

namespace xn {

cublasStatus_t to_cublas(Status s);

// The handle's stream and whether alpha/beta live in device memory
// (CUBLAS_POINTER_MODE_DEVICE): the first thing every device routine reads.
cublasStatus_t handle_stream_and_mode(cublasHandle_t handle, cudaStream_t *stream,
                                      bool *dev_scalars);

// The device ?ngemm for T = float or double (argument checks included).
template <class T>
cublasStatus_t device_ngemm(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const T *alpha,
                            const T *A, int lda, const T *B, int ldb, const T *beta, T *C,
                            int ldc);

// The device exdgemm (argument checks included), and the per-thread report
// of the host exdgemm (xnGetLastExdgemmInfo(NULL, ...)).
cublasStatus_t device_exdgemm(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double *alpha, const double *A, int lda,
                              const double *B, int ldb, const double *beta, double *C,
                              int ldc);
void set_host_exdgemm_info(const xnExdgemmInfo_t &info);

// How many host-API calls fell back to the classical product under
// XN_OPT_CHECK_NONNEG (reported by xnGetNonNegFallbackCount(NULL, ...)).
std::uint64_t host_nonneg_fallbacks();

}  // namespace xn
