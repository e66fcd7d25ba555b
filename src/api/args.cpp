// args.cpp - argument checks identical to cuBLAS and reference (C)BLAS.
#include "api/args.h"

#include <algorithm>

#include "core/blas_conventions.h"
#include "xngemm.h"

namespace xn {

namespace {

bool valid_device_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}
using blas::kColMajor;
using blas::kNoTrans;
using blas::kRowMajor;
static_assert(XnRowMajor == blas::kRowMajor && XnColMajor == blas::kColMajor &&
                  XnNoTrans == blas::kNoTrans && XnTrans == blas::kTrans &&
                  XnConjTrans == blas::kConjTrans,
              "the public header's CBLAS values are cblas.h's");

}  // namespace

cublasStatus_t check_gemm_device_args(const void *handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int m, int n, int k,
                                      int lda, int ldb, int ldc) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_device_op(transa) || !valid_device_op(transb))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const int rows_a = transa == CUBLAS_OP_N ? m : k;
  const int rows_b = transb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, rows_a) || ldb < std::max(1, rows_b) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t check_gemm_query_args(cublasOperation_t transa, cublasOperation_t transb,
                                     int m, int n, int k) {
  const int lda = std::max(1, transa == CUBLAS_OP_N ? m : k);
  const int ldb = std::max(1, transb == CUBLAS_OP_N ? k : n);
  const int any_handle = 1;
  return check_gemm_device_args(&any_handle, transa, transb, m, n, k, lda, ldb,
                                std::max(1, m));
}

cublasStatus_t check_symv_device_args(const void *handle, cublasFillMode_t uplo, int n,
                                      int lda, int incx, int incy) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER)
    return CUBLAS_STATUS_INVALID_VALUE;
  // lda >= n, not max(1, n): cuBLAS 13.1 accepts lda = 0 with n = 0
  // (measured on the H200 against cublasDsymv/cublasSsymv).
  if (n < 0 || lda < n || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

int check_gemm_fortran_args(char transa, char transb, int m, int n, int k, int lda,
                            int ldb, int ldc) {
  // Reference DGEMM: the first failing test, in this order, sets INFO.
  const int nrowa = blas::transposes(transa) ? k : m;
  const int nrowb = blas::transposes(transb) ? n : k;
  if (!blas::valid_trans(transa)) return 1;
  if (!blas::valid_trans(transb)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max(1, nrowa)) return 8;
  if (ldb < std::max(1, nrowb)) return 10;
  if (ldc < std::max(1, m)) return 13;
  return 0;
}

int check_gemm_cblas_args(int layout, int transa, int transb, int m, int n, int k,
                          int lda, int ldb, int ldc) {
  // Reference CBLAS checks the layout and the two transposes itself, then
  // calls Fortran DGEMM (with A and B, m and n swapped for row-major) whose
  // xerbla position is mapped back to the CBLAS argument list.
  if (!blas::valid_layout(layout)) return 1;
  if (!blas::valid_cblas_trans(transa)) return 2;
  if (!blas::valid_cblas_trans(transb)) return 3;
  const bool ta = transa != kNoTrans, tb = transb != kNoTrans;
  // The CBLAS position of each Fortran position (index: 3 m, 4 n, 5 k,
  // 8 lda, 10 ldb, 13 ldc; 0: valid). Row-major: Fortran sees
  // C^T = op(B)^T op(A)^T, an n x m x k product with B in the place of A.
  static const int kColPos[14] = {0, 0, 0, 4, 5, 6, 0, 0, 9, 0, 11, 0, 0, 14};
  static const int kRowPos[14] = {0, 0, 0, 5, 4, 6, 0, 0, 11, 0, 9, 0, 0, 14};
  if (layout == kColMajor)
    return kColPos[check_gemm_fortran_args(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, lda,
                                           ldb, ldc)];
  return kRowPos[check_gemm_fortran_args(tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, ldb,
                                         lda, ldc)];
}

cublasStatus_t check_gemv_device_args(const void *handle, cublasOperation_t trans, int m,
                                      int n, int lda, int incx, int incy) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_device_op(trans)) return CUBLAS_STATUS_INVALID_VALUE;
  // lda >= m, not max(1, m): cuBLAS 13.1 accepts lda = 0 with m = 0
  // (measured on the H200 against cublasDgemv, as for SYMV above).
  if (m < 0 || n < 0 || lda < m || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

int check_gemv_fortran_args(char trans, int m, int n, int lda, int incx, int incy) {
  // Reference DGEMV: the first failing test, in this order, sets INFO.
  if (!blas::valid_trans(trans)) return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < std::max(1, m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  return 0;
}

int check_gemv_cblas_args(int layout, int trans, int m, int n, int lda, int incx,
                          int incy) {
  // As cblas_?gemm: layout and trans checked by CBLAS itself, the rest by
  // Fortran DGEMV (row-major: on the transposed problem, n x m), mapped
  // back to the argument that failed.
  if (!blas::valid_layout(layout)) return 1;
  if (!blas::valid_cblas_trans(trans)) return 2;
  static const int kColPos[12] = {0, 0, 3, 4, 0, 0, 7, 0, 9, 0, 0, 12};
  static const int kRowPos[12] = {0, 0, 4, 3, 0, 0, 7, 0, 9, 0, 0, 12};
  if (layout == kColMajor) return kColPos[check_gemv_fortran_args('N', m, n, lda, incx, incy)];
  return kRowPos[check_gemv_fortran_args('N', n, m, lda, incx, incy)];
}

}  // namespace xn
