// device_gemm.h - internal entry points shared by the API translation units.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "core/status.h"

namespace xn {

cublasStatus_t to_cublas(Status s);

// The device ?ngemm for T = float or double (argument checks included).
template <class T>
cublasStatus_t device_ngemm(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const T *alpha,
                            const T *A, int lda, const T *B, int ldb, const T *beta, T *C,
                            int ldc);

// How many host-API calls fell back to the classical product under
// XN_OPT_CHECK_NONNEG (reported by xnGetNonNegFallbackCount(NULL, ...)).
std::uint64_t host_nonneg_fallbacks();

}  // namespace xn
