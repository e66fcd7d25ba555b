// cpu_backend.cpp - OpenBLAS leaves and OpenMP loops for the CPU backend.
#include "backend/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "core/executor.h"
#include "core/plan.h"
#include "core/schedule.h"

namespace xn {

namespace {

// The preload loop (a test leaf) is parallelised when it has enough work. The
// elementwise loops are not: they are memory-bound, and OpenMP workers that
// spin after a loop take the cores OpenBLAS's own threads need for the next
// leaf (measured: a 1024^3 product 5x slower with them).
constexpr index_t kParallelElems = index_t(1) << 16;

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, index_t m, index_t n, index_t k,
               float alpha, const float *A, index_t lda, const float *B, index_t ldb,
               float beta, float *C, index_t ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, A,
              (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, index_t m, index_t n, index_t k,
               double alpha, const double *A, index_t lda, const double *B, index_t ldb,
               double beta, double *C, index_t ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, A,
              (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}

}  // namespace

template <class T>
Status CpuBackend<T>::gemm(MatView<const T> A, MatView<const T> B, ScalarKind beta_kind,
                           MatView<T> C) {
  ++leaf_calls_;
  const index_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return Status::Ok;
  const T beta = value(beta_kind);
  if (leaf_ == CpuLeaf::OpenBlas && k > 0) {
    blas_gemm(A.trans ? CblasTrans : CblasNoTrans, B.trans ? CblasTrans : CblasNoTrans, m,
              n, k, alpha_, A.p, A.ld, B.p, B.ld, beta, C.p, C.ld);
    return Status::Ok;
  }
  // Preload loop (seed 000, Figure 4) or k == 0: one running sum per entry,
  // accumulated with fused multiply-adds in k order, then scaled into C.
#pragma omp parallel for schedule(static) if (m * n * k > kParallelElems)
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      T acc = T(0);
      for (index_t p = 0; p < k; ++p) acc = xn_fma(*A.at(i, p), *B.at(p, j), acc);
      T *c = C.at(i, j);
      *c = ew_fold(alpha_ * acc, beta, *c);
    }
  return Status::Ok;
}

template <class T>
Status CpuBackend<T>::add_sub(MatView<T> D, MatView<const T> X, MatView<const T> Y,
                              bool subtract) {
  const index_t rows = D.stored_rows(), cols = D.stored_cols();
  for (index_t j = 0; j < cols; ++j) {
    T *d = D.p + j * D.ld;
    const T *x = X.p + j * X.ld, *y = Y.p + j * Y.ld;
    if (subtract)
      for (index_t i = 0; i < rows; ++i) d[i] = ew_sub(x[i], y[i]);
    else
      for (index_t i = 0; i < rows; ++i) d[i] = ew_add(x[i], y[i]);
  }
  return Status::Ok;
}

template <class T>
Status CpuBackend<T>::fold(MatView<T> D0, MatView<T> D1, MatView<const T> X,
                           ScalarKind beta_kind) {
  const T beta = value(beta_kind);
  const index_t rows = X.stored_rows(), cols = X.stored_cols();
  for (MatView<T> D : {D0, D1}) {
    if (D.p == nullptr) continue;
    for (index_t j = 0; j < cols; ++j) {
      T *d = D.p + j * D.ld;
      const T *x = X.p + j * X.ld;
      for (index_t i = 0; i < rows; ++i) d[i] = ew_fold(x[i], beta, d[i]);
    }
  }
  return Status::Ok;
}

template <class T>
Status CpuBackend<T>::scale(MatView<T> C, ScalarKind beta_kind) {
  const T beta = value(beta_kind);
  if (beta_kind == ScalarKind::One) return Status::Ok;
  for (index_t j = 0; j < C.cols; ++j) {
    T *c = C.p + j * C.ld;
    for (index_t i = 0; i < C.rows; ++i) c[i] = ew_scale(beta, c[i]);
  }
  return Status::Ok;
}

// Calls column(j, i0, i1) for every column j of a rows x cols D, in 32 x 32
// tiles, so that the strided reads of a transposed operand stay within a few
// cache lines per tile. Not parallelised, like the other elementwise loops
// (see kParallelElems).
namespace {
template <class Column>
void for_each_tile_column(index_t rows, index_t cols, Column &&column) {
  constexpr index_t kBlock = 32;
  for (index_t j0 = 0; j0 < cols; j0 += kBlock) {
    const index_t j1 = std::min(j0 + kBlock, cols);
    for (index_t i0 = 0; i0 < rows; i0 += kBlock) {
      const index_t i1 = std::min(i0 + kBlock, rows);
      for (index_t j = j0; j < j1; ++j) column(j, i0, i1);
    }
  }
}
}  // namespace

// Each entry is read before it is written, so D may alias a non-transposed
// operand (T = B22 - T).
template <class T>
Status CpuBackend<T>::transpose_add_sub(MatView<T> D, MatView<const T> X,
                                        MatView<const T> Y, bool subtract) {
  if (D.trans || X.rows != D.rows || X.cols != D.cols || Y.rows != D.rows ||
      Y.cols != D.cols)
    return Status::InvalidValue;
  // Strides of op(X), op(Y) along D's rows (i) and columns (j).
  const index_t xi = X.trans ? X.ld : 1, xj = X.trans ? 1 : X.ld;
  const index_t yi = Y.trans ? Y.ld : 1, yj = Y.trans ? 1 : Y.ld;
  for_each_tile_column(D.rows, D.cols, [&](index_t j, index_t i0, index_t i1) {
    T *d = D.p + j * D.ld;
    const T *x = X.p + j * xj, *y = Y.p + j * yj;
    if (subtract)
      for (index_t i = i0; i < i1; ++i) d[i] = ew_sub(x[i * xi], y[i * yi]);
    else
      for (index_t i = i0; i < i1; ++i) d[i] = ew_add(x[i * xi], y[i * yi]);
  });
  return Status::Ok;
}

template <class T>
Status CpuBackend<T>::transpose_copy(MatView<T> D, MatView<const T> X) {
  if (D.trans || !X.trans || X.rows != D.rows || X.cols != D.cols)
    return Status::InvalidValue;
  for_each_tile_column(D.rows, D.cols, [&](index_t j, index_t i0, index_t i1) {
    for (index_t i = i0; i < i1; ++i) D.p[i + j * D.ld] = X.p[j + i * X.ld];
  });
  return Status::Ok;
}

template <class T>
Status cpu_ngemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                 std::int64_t k, T alpha, const T *A, std::int64_t lda, const T *B,
                 std::int64_t ldb, T beta, T *C, std::int64_t ldc, const Options &opt,
                 int levels, CpuLeaf leaf, bool *used_fallback, bool *t_normal) {
  if (used_fallback) *used_fallback = false;
  if (t_normal) *t_normal = false;
  if (m == 0 || n == 0) return Status::Ok;
  const ScalarKind beta_kind = beta == T(0)   ? ScalarKind::Zero
                               : beta == T(1) ? ScalarKind::One
                                              : ScalarKind::User;
  CpuBackend<T> be(alpha, beta, leaf);
  MatView<T> Cv{C, m, n, ldc, false};
  // BLAS quick return: alpha == 0 or k == 0 only scales C (A, B unread).
  if (alpha == T(0) || k == 0) return be.scale(Cv, beta_kind);

  const MatView<const T> Av{A, m, k, lda, trans_a};
  const MatView<const T> Bv{B, k, n, ldb, trans_b};

  if (opt.check_nonneg) {
    bool negative = false;
    for (const MatView<const T> &V : {Av, Bv})
      for (index_t j = 0; j < V.stored_cols() && !negative; ++j)
        for (index_t i = 0; i < V.stored_rows(); ++i)
          if (ew_is_negative(V.p[i + j * V.ld])) {
            negative = true;
            break;
          }
    if (negative) {
      if (used_fallback) *used_fallback = true;
      return be.gemm(Av, Bv, beta_kind, Cv);
    }
  }

  const bool is_double = sizeof(T) == sizeof(double);
  if (levels < 0)
    levels = choose_levels(m, n, k, opt.leaf_for(is_double), int(opt.max_levels),
                           opt.min_size_for(is_double));
  // Fewer levels when the workspace would pass the limit or cannot be had:
  // the classical product never fails for lack of scratch memory. The
  // workspace is kept per thread and grown on demand, so repeated calls
  // allocate nothing (the CPU counterpart of the handle's workspace).
  thread_local std::unique_ptr<T[]> cache;
  thread_local std::size_t cached = 0;
  const bool normal_t = stores_t_normal(opt.normal_b_temps, is_double, trans_a, trans_b);
  bool pack = false;
  levels = choose_workspace(
      m, n, k, levels, trans_a, trans_b, normal_t,
      [&](index_t elems) {
        if (opt.workspace_limit >= 0 && elems * index_t(sizeof(T)) > opt.workspace_limit)
          return false;
        if (std::size_t(elems) <= cached) return true;
        T *p = new (std::nothrow) T[std::size_t(elems)];
        if (!p) return false;  // never fail for lack of scratch memory
        cache.reset(p);
        cached = std::size_t(elems);
        return true;
      },
      &pack);
  if (t_normal) *t_normal = normal_t && levels > 0;
  return recursive_gemm<T>(be, winograd_nonneg_schedule(), levels, Av, Bv, beta_kind, Cv,
                           cache.get(), opt.kchain_for(is_double), normal_t, pack);
}

template class CpuBackend<float>;
template class CpuBackend<double>;
template Status cpu_ngemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 float, const float *, std::int64_t, const float *,
                                 std::int64_t, float, float *, std::int64_t,
                                 const Options &, int, CpuLeaf, bool *, bool *);
template Status cpu_ngemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                  double, const double *, std::int64_t, const double *,
                                  std::int64_t, double, double *, std::int64_t,
                                  const Options &, int, CpuLeaf, bool *, bool *);

}  // namespace xn
