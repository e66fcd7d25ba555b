// cpu_backend.cpp - OpenBLAS leaves and OpenMP loops for the CPU backend.
#include "backend/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "core/gemm_driver.h"

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
  // Preload loop (Badin et al., ICS'13, Figure 4) or k == 0: one running sum per entry,
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

// Column by column over the stored arrays, in chunks of rows: each
// target's terms (ew_combine_first, ew_combine_next: the same arithmetic
// as ew_combine, one term at a time over the chunk, so the loops vectorise)
// go to a buffer, and only when every target of the chunk is formed are
// they stored, so a target may be a source. ew_fold adds beta * old where
// the step asks for it.
template <class T>
Status CpuBackend<T>::combine(const CombineOp<T> &op) {
  constexpr index_t kChunk = 256;
  const index_t rows = op.dst[0].stored_rows(), cols = op.dst[0].stored_cols();
  const T beta = value(op.beta);
  // Each target's nonzero terms, in source order.
  int nterms[kMaxDst] = {};
  int term_src[kMaxDst][kMaxSrc];
  T term_sign[kMaxDst][kMaxSrc];
  for (int d = 0; d < op.ndst; ++d)
    for (int s = 0; s < op.nsrc; ++s)
      if (op.coef[d][s] != 0) {
        term_src[d][nterms[d]] = s;
        term_sign[d][nterms[d]++] = op.coef[d][s] > 0 ? T(1) : T(-1);
      }
  T out[kMaxDst][kChunk];
  for (index_t j = 0; j < cols; ++j) {
    const T *src[kMaxSrc];
    T *dst[kMaxDst];
    for (int s = 0; s < op.nsrc; ++s) src[s] = op.src[s].p + j * op.src[s].ld;
    for (int d = 0; d < op.ndst; ++d) dst[d] = op.dst[d].p + j * op.dst[d].ld;
    for (index_t i0 = 0; i0 < rows; i0 += kChunk) {
      const index_t len = std::min(kChunk, rows - i0);
      for (int d = 0; d < op.ndst; ++d) {
        T *o = out[d];
        const T *x = src[term_src[d][0]] + i0;
        const T s0 = term_sign[d][0];
        for (index_t i = 0; i < len; ++i) o[i] = ew_combine_first(s0, x[i]);
        for (int t = 1; t < nterms[d]; ++t) {
          const T *y = src[term_src[d][t]] + i0;
          const T st = term_sign[d][t];
          for (index_t i = 0; i < len; ++i) o[i] = ew_combine_next(o[i], st, y[i]);
        }
        if (op.beta_old[d]) {
          const T *old = dst[d] + i0;
          if (beta == T(0))  // BLAS: the old value is not read
            for (index_t i = 0; i < len; ++i) o[i] = ew_fold(o[i], beta, T(0));
          else
            for (index_t i = 0; i < len; ++i) o[i] = ew_fold(o[i], beta, old[i]);
        }
      }
      for (int d = 0; d < op.ndst; ++d) std::copy(out[d], out[d] + len, dst[d] + i0);
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

namespace {

// The CPU's hooks for the GEMM driver (core/gemm_driver.h): one backend for
// every step (no shared state to set up), a scan by loops, and a workspace
// kept per thread and grown on demand, so repeated calls allocate nothing
// (the CPU counterpart of the handle's workspace).
template <class T>
class CpuGemmHooks {
 public:
  CpuGemmHooks(CpuBackend<T> &be, const Options &opt) : be_(be), opt_(opt) {}

  CpuBackend<T> &plain() { return be_; }
  Status begin() { return Status::Ok; }
  CpuBackend<T> &backend() { return be_; }
  bool capturing() const { return false; }  // no CUDA graph on the CPU

  // One pass over each operand: signs (stopping at the first negative, which
  // decides the call), NaN/Inf, and the largest entry of each block of the
  // grid, kept in op() orientation.
  Status find_negative(MatView<const T> A, MatView<const T> B, BlockMaxima *maxima,
                       bool *found) {
    *found = false;
    const int g = maxima->grid_levels;
    const index_t side = g < 0 ? 0 : index_t(1) << g;
    for (int which = 0; which < 2; ++which) {
      const MatView<const T> &V = which == 0 ? A : B;
      double *grid = which == 0 ? maxima->a.data() : maxima->b.data();
      const index_t rows = V.stored_rows(), cols = V.stored_cols();
      for (index_t j = 0; j < cols; ++j) {
        const T *col = V.p + j * V.ld;
        int flags = 0;
        for (index_t i = 0; i < rows; ++i) flags |= ew_entry_flags(col[i]);
        if (flags & kEntryNegative) {
          *found = true;
          return Status::Ok;
        }
        maxima->nonfinite |= (flags & kEntryNonFinite) != 0;
        if (g < 0) continue;
        const index_t cb = scale_grid_block(j, cols, g);
        // Runs of rows in one block: [i0, i1).
        for (index_t i0 = 0; i0 < rows;) {
          const index_t rb = scale_grid_block(i0, rows, g);
          const index_t i1 = rb == side - 1 ? rows : (rb + 1) * (rows >> g);
          T mx = T(0);
          for (index_t i = i0; i < i1; ++i)
            if (col[i] > mx) mx = col[i];  // NaN and -0 never exceed 0
          // Stored (rb, cb) is op (cb, rb) for a transposed view.
          double &cell = V.trans ? grid[std::size_t(cb + side * rb)]
                                 : grid[std::size_t(rb + side * cb)];
          cell = std::max(cell, double(mx));
          i0 = i1;
        }
      }
    }
    return Status::Ok;
  }

  T *workspace(index_t elems) {
    thread_local std::unique_ptr<T[]> cache;
    thread_local std::size_t cached = 0;
    if (opt_.workspace_limit >= 0 && elems * index_t(sizeof(T)) > opt_.workspace_limit)
      return nullptr;
    if (std::size_t(elems) > cached) {
      T *p = new (std::nothrow) T[std::size_t(elems)];
      if (!p) return nullptr;  // never fail for lack of scratch memory
      cache.reset(p);
      cached = std::size_t(elems);
    }
    return cache.get();
  }

 private:
  CpuBackend<T> &be_;
  const Options &opt_;
};

}  // namespace

template <class T>
Status cpu_recursive_gemm(const GemmAlgorithm &algo, bool trans_a, bool trans_b,
                          std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                          const T *A, std::int64_t lda, const T *B, std::int64_t ldb,
                          T beta, T *C, std::int64_t ldc, const Options &opt, int levels,
                          CpuLeaf leaf, bool *used_fallback, bool *t_normal,
                          int *levels_run, GemmReport *report_out) {
  const ScalarKind beta_kind = beta == T(0)   ? ScalarKind::Zero
                               : beta == T(1) ? ScalarKind::One
                                              : ScalarKind::User;
  CpuBackend<T> be(alpha, beta, leaf);
  CpuGemmHooks<T> hooks(be, opt);
  GemmReport report;
  const Status s = gemm_driver<T>(hooks, algo, MatView<const T>{A, m, k, lda, trans_a},
                                  MatView<const T>{B, k, n, ldb, trans_b},
                                  MatView<T>{C, m, n, ldc, false}, beta_kind,
                                  alpha == T(0), opt, nullptr, levels, &report);
  if (used_fallback) *used_fallback = report.fell_back;
  if (report_out) *report_out = report;
  if (t_normal) *t_normal = report.t_normal;
  if (levels_run) *levels_run = report.levels;
  return s;
}

template class CpuBackend<float>;
template class CpuBackend<double>;
template Status cpu_recursive_gemm<float>(const GemmAlgorithm &, bool, bool, std::int64_t,
                                          std::int64_t, std::int64_t, float,
                                          const float *, std::int64_t, const float *,
                                          std::int64_t, float, float *, std::int64_t,
                                          const Options &, int, CpuLeaf, bool *, bool *,
                                          int *, GemmReport *);
template Status cpu_recursive_gemm<double>(const GemmAlgorithm &, bool, bool,
                                           std::int64_t, std::int64_t, std::int64_t,
                                           double, const double *, std::int64_t,
                                           const double *, std::int64_t, double, double *,
                                           std::int64_t, const Options &, int, CpuLeaf,
                                           bool *, bool *, int *, GemmReport *);

}  // namespace xn
