// args.h - argument checking, written once for both APIs.
//
// The device API must return exactly cuBLAS's status for every bad argument;
// the host API must report exactly reference BLAS's first bad parameter
// position through xerbla_. Both are pure functions, tested on the CPU.
#pragma once

#include <cublas_v2.h>

namespace xn {

// cublas?gemm's checks: handle (NOT_INITIALIZED), then transa/transb,
// m, n, k >= 0, lda >= max(1, rows of A as stored), ldb likewise,
// ldc >= max(1, m) (INVALID_VALUE). CUBLAS_OP_CONJG is not supported by
// cuBLAS for gemm and is rejected the same way.
cublasStatus_t check_gemm_device_args(const void *handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int m, int n, int k,
                                      int lda, int ldb, int ldc);

// The checks of a workspace query with GEMM arguments: those of
// check_gemm_device_args with the smallest valid leading dimensions (they do
// not change the size); a NULL handle is allowed (process-wide options).
cublasStatus_t check_gemm_query_args(cublasOperation_t transa, cublasOperation_t transb,
                                     int m, int n, int k);

// Reference ?GEMM's checks in its order; returns 0 or the position (1-based,
// Fortran argument list) of the first bad parameter: 1 transa, 2 transb,
// 3 m, 4 n, 5 k, 8 lda, 10 ldb, 13 ldc.
int check_gemm_fortran_args(char transa, char transb, int m, int n, int k, int lda,
                            int ldb, int ldc);

// Reference CBLAS's checks for cblas_?gemm (layout is parameter 1): returns 0
// or the CBLAS position of the first bad parameter: 1 layout, 2 transa,
// 3 transb, 4 m, 5 n, 6 k, 9 lda, 11 ldb, 14 ldc.
int check_gemm_cblas_args(int layout, int transa, int transb, int m, int n, int k,
                          int lda, int ldb, int ldc);

// cublas?symv's checks: handle (NOT_INITIALIZED), then uplo (UPPER or LOWER),
// n >= 0, lda >= n (cuBLAS accepts lda = 0 when n = 0), incx != 0, incy != 0
// (INVALID_VALUE).
cublasStatus_t check_symv_device_args(const void *handle, cublasFillMode_t uplo, int n,
                                      int lda, int incx, int incy);

// cublasDgemv's checks: handle (NOT_INITIALIZED), then trans, m, n >= 0,
// lda >= max(1, m), incx != 0, incy != 0 (INVALID_VALUE).
cublasStatus_t check_gemv_device_args(const void *handle, cublasOperation_t trans, int m,
                                      int n, int lda, int incx, int incy);

// Reference DGEMV's checks in its order; returns 0 or the position of the
// first bad parameter: 1 trans, 2 m, 3 n, 6 lda, 8 incx, 11 incy.
int check_gemv_fortran_args(char trans, int m, int n, int lda, int incx, int incy);

// Reference CBLAS's checks for cblas_dgemv: 0 or the CBLAS position of the
// first bad parameter: 1 layout, 2 trans, 3 m, 4 n, 7 lda, 9 incx, 12 incy
// (row-major: the Fortran routine sees n and m swapped and checks n first).
int check_gemv_cblas_args(int layout, int trans, int m, int n, int lda, int incx,
                          int incy);

// Element 0 of a BLAS vector of n elements with increment inc: a negative
// increment starts at the far end (reference BLAS), so the vector is read
// from there with the (negative) increment as its stride; 0 repeats p[0].
template <class T>
T *blas_vector_start(T *p, long long n, long long inc) {
  return inc >= 0 || n <= 0 ? p : p + (n - 1) * -inc;
}

}  // namespace xn
