// host_exblas.cpp - the correctly rounded BLAS beyond GEMM from host memory:
// exdgemv_ / cblas_exdgemv (DGEMV's arguments) and exddot_ / cblas_exddot
// (DDOT's). They run on the CPU, with the numerics the GPU kernels run
// (numerics/exact_dot.h): a matrix-vector product reads A once, so copying
// A to a GPU would cost more than the product. Every value is the exact one
// rounded once under xnExdgemm's IEEE contract, the bits xnExdgemv and
// xnExddot give.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "api/args.h"
#include "api/internal.h"
#include "core/blas_conventions.h"
#include "core/call_depth.h"
#include "numerics/exact_dot.h"
#include "xngemm.h"

namespace xn {

namespace {

// y[o * y_out] = RN(alpha X_o + beta y_o), X_o = sum_t a[o a_out + t a_term]
// x[t x_term] (signed strides from element 0), for o < outputs. Outputs go
// in blocks whose accumulators advance together along t, so a column-major
// A is read down its columns; where the blocks are fewer than the threads
// (a DOT, a short y) the terms are cut into chunks too, whose parts merge in
// chunk order. Small problems run on the calling thread: an OpenMP region
// costs more than a short DOT (about 1.4 us against 5 ns for n = 4).
void cpu_exact_dots(std::int64_t outputs, std::int64_t terms, const double *a,
                    std::int64_t a_out, std::int64_t a_term, const double *x,
                    std::int64_t x_term, double alpha, double beta, double *y,
                    std::int64_t y_out) {
  constexpr std::int64_t kBlock = 64, kMinChunkTerms = 16384;
  constexpr double kParallelWork = 1 << 16;  // products
  const std::int64_t blocks = (outputs + kBlock - 1) / kBlock;
  const bool parallel = double(outputs) * double(terms) >= kParallelWork;
  const std::int64_t threads = parallel ? omp_get_max_threads() : 1;
  std::int64_t chunks = 1;
  if (parallel && alpha != 0.0 && blocks < 2 * threads)
    chunks = std::clamp<std::int64_t>(terms / kMinChunkTerms, 1, 4 * threads / blocks + 1);
  const std::int64_t per = (terms + chunks - 1) / chunks;
  chunks = terms > 0 ? (terms + per - 1) / per : 1;
  // One block of one chunk (a short DOT or GEMV) needs no heap.
  exact::Dot2 local[kBlock];
  std::vector<exact::Dot2> heap(blocks * chunks > 1 ? std::size_t(blocks * chunks * kBlock) : 0);
  exact::Dot2 *parts = heap.empty() ? local : heap.data();
  auto accumulate = [&](std::int64_t b, std::int64_t c) {
    const std::int64_t o0 = b * kBlock, count = std::min(kBlock, outputs - o0);
    exact::Dot2 *acc = parts + (b * chunks + c) * kBlock;
    for (std::int64_t k = 0; k < count; ++k) exact::dot2_clear(acc[k]);
    if (alpha == 0.0) return;  // alpha == 0 reads neither A nor x
    for (std::int64_t t = c * per; t < std::min(terms, (c + 1) * per); ++t) {
      const double xt = x[t * x_term];
      const double *at = a + o0 * a_out + t * a_term;
      for (std::int64_t k = 0; k < count; ++k) exact::dot2_add(acc[k], at[k * a_out], xt);
    }
  };
  const double ops = double(terms) + double(chunks) + 1.0;
  auto finish = [&](std::int64_t o) {
    const std::int64_t b = o / kBlock, k = o % kBlock;
    exact::Dot2 d = parts[b * chunks * kBlock + k];
    for (std::int64_t c = 1; c < chunks; ++c)
      exact::dot2_merge(d, parts[(b * chunks + c) * kBlock + k]);
    double *yo = y + o * y_out;
    const double cv = beta != 0.0 ? *yo : 0.0;  // beta == 0 never reads y
    double out;
    if (!exact::dot2_round(d, ops, alpha, beta, cv, &out))
      out = exact::exact_dot_entry(a + o * a_out, a_term, x, x_term, terms, alpha, beta, yo);
    *yo = out;
  };
  if (!parallel) {
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t c = 0; c < chunks; ++c) accumulate(b, c);
    for (std::int64_t o = 0; o < outputs; ++o) finish(o);
    return;
  }
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::int64_t c = 0; c < chunks; ++c) accumulate(b, c);
#pragma omp parallel for schedule(dynamic, kBlock)
  for (std::int64_t o = 0; o < outputs; ++o) finish(o);
}

// y = alpha op(A) x + beta y, A m x n column-major (arguments checked).
void host_exdgemv(bool trans, int m, int n, double alpha, const double *A, int lda,
                  const double *x, int incx, double beta, double *y, int incy) {
  const CallDepthGuard inside;  // the interposer sends nothing here back
  begin_host_call();
  // Reference DGEMV's quick return: y untouched.
  if (m == 0 || n == 0 || (alpha == 0.0 && beta == 1.0)) return;
  const std::int64_t len_x = trans ? m : n, len_y = trans ? n : m;
  cpu_exact_dots(len_y, len_x, A, trans ? lda : 1, trans ? 1 : lda,
                 blas_vector_start(x, len_x, incx), incx, alpha, beta,
                 blas_vector_start(y, len_y, incy), incy);
}

double host_exddot(int n, const double *x, int incx, const double *y, int incy) {
  const CallDepthGuard inside;
  begin_host_call();
  if (n <= 0) return 0.0;
  double r = 0.0;
  cpu_exact_dots(1, n, blas_vector_start(x, n, incx), 0, incx,
                 blas_vector_start(y, n, incy), incy, 1.0, 0.0, &r, 1);
  return r;
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
  host_exdgemv(blas::transposes(*trans), *m, *n, *alpha, a, *lda, x, *incx, *beta, y, *incy);
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
    host_exdgemv(t, m, n, alpha, A, lda, x, incx, beta, y, incy);
  else  // row-major A (m x n) is column-major A^T (n x m): op flips
    host_exdgemv(!t, n, m, alpha, A, lda, x, incx, beta, y, incy);
}

double exddot_(const int *n, const double *x, const int *incx, const double *y,
               const int *incy) {
  return host_exddot(*n, x, *incx, y, *incy);
}

double cblas_exddot(int n, const double *x, int incx, const double *y, int incy) {
  return host_exddot(n, x, incx, y, incy);
}

}  // extern "C"
