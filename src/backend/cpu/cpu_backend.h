// cpu_backend.h - the CPU backend: OpenBLAS cblas_?gemm leaves and host loops
// over the shared elementwise functions (kernels/numerics/elementwise.h).
#pragma once

#include <cstdint>

#include "core/executor.h"
#include "core/options.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/elementwise.h"

namespace xn {

struct GemmReport;

// Which leaf product the CPU backend uses. OpenBLAS is the library's; the
// preload loop (Badin et al., ICS'13, Figure 4: one running sum along k per entry, as a
// GPU GEMM does) exists so tests can show, on the CPU, what the recursion does
// to a preload leaf's error.
enum class CpuLeaf { OpenBlas, PreloadLoop };

template <class T>
class CpuBackend {
 public:
  CpuBackend(T alpha, T beta, CpuLeaf leaf = CpuLeaf::OpenBlas)
      : alpha_(alpha), beta_(beta), leaf_(leaf) {}

  Status gemm(MatView<const T> A, MatView<const T> B, ScalarKind beta, MatView<T> C);
  Status combine(const CombineOp<T> &op);
  Status transpose_add_sub(MatView<T> D, MatView<const T> X, MatView<const T> Y,
                           bool subtract);
  Status transpose_copy(MatView<T> D, MatView<const T> X);
  Status scale(MatView<T> C, ScalarKind beta);

  std::int64_t leaf_calls() const { return leaf_calls_; }

 private:
  T value(ScalarKind k) const {
    return k == ScalarKind::Zero ? T(0) : k == ScalarKind::One ? T(1) : beta_;
  }
  T alpha_, beta_;
  CpuLeaf leaf_;
  std::int64_t leaf_calls_ = 0;
};

// The whole CPU computation of C = alpha op(A) op(B) + beta C by the
// recursive algorithm `algo` for valid, non-trivial arguments (column-major,
// m, n > 0): level choice from the options, workspace on the heap (fewer
// levels if it cannot be had), non-negative check (?ngemm) and quick
// returns. Used by the host API without a GPU, and by tests with a chosen
// leaf and depth (levels < 0: automatic).
// The B-side temporaries are stored non-transposed as opt.normal_b_temps says
// (plan.h, stores_t_normal); `t_normal`, if given, tells whether they were
// (a call that recursed with op(B) transposed). `levels_run`, if given, is
// the depth the call ran.
template <class T>
Status cpu_recursive_gemm(const GemmAlgorithm &algo, bool trans_a, bool trans_b,
                          std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                          const T *A, std::int64_t lda, const T *B, std::int64_t ldb,
                          T beta, T *C, std::int64_t ldc, const Options &opt,
                          int levels = -1, CpuLeaf leaf = CpuLeaf::OpenBlas,
                          bool *used_fallback = nullptr, bool *t_normal = nullptr,
                          int *levels_run = nullptr, GemmReport *report = nullptr);

// ?ngemm on the CPU: cpu_recursive_gemm with the non-negative schedule.
template <class T>
Status cpu_ngemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                 std::int64_t k, T alpha, const T *A, std::int64_t lda, const T *B,
                 std::int64_t ldb, T beta, T *C, std::int64_t ldc, const Options &opt,
                 int levels = -1, CpuLeaf leaf = CpuLeaf::OpenBlas,
                 bool *used_fallback = nullptr, bool *t_normal = nullptr) {
  return cpu_recursive_gemm<T>(nonneg_winograd_algorithm(), trans_a, trans_b, m, n, k,
                               alpha, A, lda, B, ldb, beta, C, ldc, opt, levels, leaf,
                               used_fallback, t_normal);
}

}  // namespace xn
