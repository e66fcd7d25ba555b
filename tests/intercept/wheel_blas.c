/* wheel_blas.c - a stand-in for the BLAS builds Python wheels and Julia
 * bundle (src/intercept/symbols.h): DGEMM, DGEMV and DDOT under the
 * names and integer widths of a plain LP64 BLAS (dgemm_, cblas_ddot),
 * scipy-openblas32 (scipy_dgemm_,
 * scipy_cblas_dgemv, 32-bit), scipy-openblas64 (scipy_dgemm_64_,
 * scipy_cblas_ddot64_, 64-bit) and an ILP64 OpenBLAS with the 64_ suffix
 * (dgemm_64_, cblas_dgemv64_), column-major, computed by plain loops in
 * double (not correctly rounded), so a pass-through shows in the bits. */
#include <stdint.h>

#define AT(p, i, j, ld) (p)[(i) + (int64_t)(j) * (ld)]

/* C = alpha op(A) op(B) + beta C, op N or T. */
static void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                 double *C, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta == 'N' ? AT(A, i, p, lda) : AT(A, p, i, lda)) *
             (tb == 'N' ? AT(B, p, j, ldb) : AT(B, j, p, ldb));
      AT(C, i, j, ldc) = alpha * s + (beta != 0.0 ? beta * AT(C, i, j, ldc) : 0.0);
    }
}

/* y = alpha op(A) x + beta y, positive increments. */
static void gemv(char t, int64_t m, int64_t n, double alpha, const double *A, int64_t lda,
                 const double *x, int64_t incx, double beta, double *y, int64_t incy) {
  const int64_t ly = t == 'N' ? m : n, lx = t == 'N' ? n : m;
  for (int64_t i = 0; i < ly; ++i) {
    double s = 0.0;
    for (int64_t p = 0; p < lx; ++p)
      s += (t == 'N' ? AT(A, i, p, lda) : AT(A, p, i, lda)) * x[p * incx];
    y[i * incy] = alpha * s + (beta != 0.0 ? beta * y[i * incy] : 0.0);
  }
}

static double dot(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += x[i * incx] * y[i * incy];
  return s;
}

#define WHEEL_BUILD(PREFIX, FSUF, CSUF, INT)                                                 \
  void PREFIX##dgemm##FSUF(const char *ta, const char *tb, const INT *m, const INT *n,       \
                           const INT *k, const double *alpha, const double *A,               \
                           const INT *lda, const double *B, const INT *ldb,                  \
                           const double *beta, double *C, const INT *ldc) {                  \
    gemm(*ta, *tb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);                    \
  }                                                                                          \
  void PREFIX##cblas_dgemm##CSUF(int layout, int ta, int tb, INT m, INT n, INT k,            \
                                 double alpha, const double *A, INT lda, const double *B,    \
                                 INT ldb, double beta, double *C, INT ldc) {                 \
    (void)layout; /* column-major (102) only */                                              \
    gemm(ta == 111 ? 'N' : 'T', tb == 111 ? 'N' : 'T', m, n, k, alpha, A, lda, B, ldb, beta, \
         C, ldc);                                                                            \
  }                                                                                          \
  void PREFIX##dgemv##FSUF(const char *t, const INT *m, const INT *n, const double *alpha,   \
                           const double *A, const INT *lda, const double *x,                 \
                           const INT *incx, const double *beta, double *y,                   \
                           const INT *incy) {                                                \
    gemv(*t, *m, *n, *alpha, A, *lda, x, *incx, *beta, y, *incy);                            \
  }                                                                                          \
  void PREFIX##cblas_dgemv##CSUF(int layout, int t, INT m, INT n, double alpha,              \
                                 const double *A, INT lda, const double *x, INT incx,        \
                                 double beta, double *y, INT incy) {                         \
    (void)layout;                                                                            \
    gemv(t == 111 ? 'N' : 'T', m, n, alpha, A, lda, x, incx, beta, y, incy);                 \
  }                                                                                          \
  double PREFIX##ddot##FSUF(const INT *n, const double *x, const INT *incx, const double *y, \
                            const INT *incy) {                                               \
    return dot(*n, x, *incx, y, *incy);                                                      \
  }                                                                                          \
  double PREFIX##cblas_ddot##CSUF(INT n, const double *x, INT incx, const double *y,         \
                                  INT incy) {                                                \
    return dot(n, x, incx, y, incy);                                                         \
  }

WHEEL_BUILD(, _, , int32_t)
WHEEL_BUILD(scipy_, _, , int32_t)
WHEEL_BUILD(scipy_, _64_, 64_, int64_t)
WHEEL_BUILD(, _64_, 64_, int64_t)
