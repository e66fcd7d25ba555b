// host_exblas.cpp - the correctly rounded BLAS beyond GEMM from host memory:
// exdgemv_ / cblas_exdgemv (DGEMV's arguments) and exddot_ / cblas_exddot
// (DDOT's). Both run the host exdgemm (GPU or CPU, the same bits) on
// contiguous copies of their vectors, so every value is the exact one rounded
// once under xnExdgemm's IEEE contract, the bits xnExdgemv and xnExddot give.
#include <cstdio>
#include <limits>
#include <new>
#include <vector>

#include "api/args.h"
#include "api/internal.h"
#include "numerics/elementwise.h"
#include "xngemm.h"

namespace xn {

namespace {

// The n elements of a BLAS vector (increment inc, numerics/elementwise.h)
// in their logical order.
std::vector<double> gather(int n, const double *v, int inc) {
  std::vector<double> out(std::size_t(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) out[std::size_t(i)] = v[blas_vector_offset(i, n, inc)];
  return out;
}

void scatter(const std::vector<double> &in, double *v, int inc) {
  const int n = int(in.size());
  for (int i = 0; i < n; ++i) v[blas_vector_offset(i, n, inc)] = in[std::size_t(i)];
}

void say_no_memory(const char *name) {
  std::fprintf(stderr, "xngemm: %s could not allocate its vector copies: nothing written\n",
               name);
}

// y = alpha op(A) x + beta y, A m x n column-major (arguments checked).
void host_exdgemv(const char *name, bool trans, int m, int n, double alpha,
                  const double *A, int lda, const double *x, int incx, double beta,
                  double *y, int incy) {
  // Reference DGEMV's quick return: y untouched.
  if (m == 0 || n == 0 || (alpha == 0.0 && beta == 1.0)) return;
  const int len_x = trans ? m : n, len_y = trans ? n : m;
  try {
    // alpha == 0 reads neither A nor x; beta == 0 never reads y.
    const std::vector<double> xs =
        alpha == 0.0 ? std::vector<double>(std::size_t(len_x)) : gather(len_x, x, incx);
    std::vector<double> ys =
        beta == 0.0 ? std::vector<double>(std::size_t(len_y)) : gather(len_y, y, incy);
    host_exdgemm(trans, false, len_y, 1, len_x, alpha, A, lda, xs.data(), len_x, beta,
                 ys.data(), len_y);
    if (!host_call_failed()) scatter(ys, y, incy);
  } catch (const std::bad_alloc &) {
    say_no_memory(name);
  }
}

// sum_i x_i y_i rounded once; n <= 0 gives 0, a call that could not run NaN.
double host_exddot(int n, const double *x, int incx, const double *y, int incy) {
  if (n <= 0) return 0.0;
  try {
    const std::vector<double> xs = gather(n, x, incx), ys = gather(n, y, incy);
    double r = 0.0;
    host_exdgemm(false, false, 1, 1, n, 1.0, xs.data(), 1, ys.data(), n, 0.0, &r, 1);
    if (!host_call_failed()) return r;
  } catch (const std::bad_alloc &) {
    say_no_memory("EXDDOT");
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

}  // namespace xn

using namespace xn;

extern "C" {

void exdgemv_(const char *trans, const int *m, const int *n, const double *alpha,
              const double *a, const int *lda, const double *x, const int *incx,
              const double *beta, double *y, const int *incy) {
  const int info = check_gemv_fortran_args(*trans, *m, *n, *lda, *incx, *incy);
  if (info != 0) {
    report_bad_argument("EXDGEMV", info);
    return;
  }
  host_exdgemv("EXDGEMV", fortran_trans(*trans), *m, *n, *alpha, a, *lda, x, *incx,
               *beta, y, *incy);
}

void cblas_exdgemv(int layout, int trans, int m, int n, double alpha, const double *A,
                   int lda, const double *x, int incx, double beta, double *y, int incy) {
  const int pos = check_gemv_cblas_args(layout, trans, m, n, lda, incx, incy);
  if (pos != 0) {
    report_bad_argument("cblas_exdgemv", pos);
    return;
  }
  const bool t = trans != XnNoTrans;
  if (layout == XnColMajor)
    host_exdgemv("cblas_exdgemv", t, m, n, alpha, A, lda, x, incx, beta, y, incy);
  else  // row-major A (m x n) is column-major A^T (n x m): op flips
    host_exdgemv("cblas_exdgemv", !t, n, m, alpha, A, lda, x, incx, beta, y, incy);
}

double exddot_(const int *n, const double *x, const int *incx, const double *y,
               const int *incy) {
  return host_exddot(*n, x, *incx, y, *incy);
}

double cblas_exddot(int n, const double *x, int incx, const double *y, int incy) {
  return host_exddot(n, x, incx, y, incy);
}

}  // extern "C"
