// gemm_driver.h - the one driver of a recursive GEMM call, written once over
// the backend: quick returns, the non-negative scan, the depth choice, the
// workspace fallback and the executor. The CUDA entry points (src/api/) and
// the CPU backend (src/backend/cpu/) call it with their own hooks.
//
// Hooks for element type T provide:
//   Backend &plain();
//       executor primitives (executor.h) for the calls that do not recurse:
//       the product then is exactly the backend's own classical GEMM with
//       the caller's alpha and beta, and needs no shared per-handle state.
//   Status begin();
//       called once before anything that uses the backend's shared state
//       (constants for beta = 0 and 1, workspace, stream order); the CUDA
//       hooks enter the call guard here.
//   Backend &backend();
//       executor primitives for the recursion (valid after begin()).
//   Status find_negative(MatView<const T> A, MatView<const T> B,
//                        BlockMaxima *maxima, bool *found);
//       whether op(A) or op(B) has an entry < 0 (NaN is not negative); in the
//       same pass, when maxima->grid_levels >= 0, the largest entry of each
//       block of op(A) and op(B) on that grid (scale_depth.h), and whether an
//       entry is NaN or Inf. When it finds a negative entry the maxima may be
//       incomplete (they are not used).
//   bool capturing();
//       the call is being captured into a CUDA graph: the scan's answer would
//       reach the host only at a replay (docs/design.md, "CUDA graphs").
//   T *workspace(index_t elems);
//       `elems` elements of scratch memory, or nullptr when they cannot be
//       had (the call then runs with fewer levels, down to the classical
//       product: it never fails for lack of scratch memory).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/device_model.h"
#include "core/executor.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/scale_depth.h"
#include "core/schedule.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/elementwise.h"

namespace xn {

// What a call did: xnGetLastLevels, xnGetNonNegFallbackCount and the tests
// read it.
struct GemmReport {
  int levels = 0;          // recursion levels run (0: the classical product)
  bool fell_back = false;  // a negative entry sent it to the classical product
  bool t_normal = false;   // recursed with op(B) transposed and T stored normal
  bool s_normal = false;   // recursed with op(A) transposed and S stored normal
  // The non-negative scan's block maxima lowered the depth (scale_depth.h):
  // from scale_planned to levels (or less, for lack of workspace).
  bool scale_limited = false;
  int scale_planned = 0;
  // How the depth was chosen (planned_depth) and, with a model, its
  // prediction of the classical product's time over the planned depth's.
  ModelSource source = ModelSource::Options;
  int planned = 0;
  double predicted_speedup = 0;
};

// What the non-negative scan reports besides the sign: block maxima of
// op(A) (a[I + K 2^g], I over m, K over k) and op(B) (b[K + J 2^g]) on the
// grid of 2^g x 2^g blocks (scale_depth.h, scale_grid_block), g =
// grid_levels (< 0: none wanted), and whether an entry is NaN or Inf.
struct BlockMaxima {
  int grid_levels = -1;
  std::vector<double> a, b;
  bool nonfinite = false;
  void reset(int g) {
    grid_levels = g;
    const std::size_t cells = g < 0 ? 0 : std::size_t(1) << (2 * g);
    a.assign(cells, 0.0);
    b.assign(cells, 0.0);
    nonfinite = false;
  }
};

// The orientation of a call's temporaries from its options (plan.h,
// temp_orientation).
inline TempOrientation temp_orientation(const Options &opt, bool is_double, bool a_trans,
                                        bool b_trans) {
  return temp_orientation(opt.normal_a_temps, opt.normal_b_temps, is_double, a_trans,
                          b_trans);
}

// The leaf-size rule of backends without a depth model (the CPU): the
// values the GPU defaults were before the model (tuned on an H200): leaves
// of 2048 (single) and 4096 (double), no single-precision recursion below
// 14336.
constexpr index_t kRuleLeaf[2] = {2048, 4096};        // [single, double]
constexpr index_t kRuleMinSize[2] = {14336, 0};

// The depth of an m x n x k call of `algo` (before any workspace limit),
// and where it came from (*source). In order:
//  - a leaf-size option >= 1: the leaf-size rule (plan.h, choose_levels)
//    with the crossover option, or kRuleMinSize where that is -1 (the rule
//    as it was before the model);
//  - a crossover option >= 0 (XN_OPT_MIN_SIZE_*): no recursion below it;
//  - the device's model, where the backend has one (`model`, see
//    core/device_model.h): the depth it predicts fastest;
//  - else the leaf-size rule with kRuleLeaf and kRuleMinSize.
// `beta_nonzero`: which table the top level runs (the model counts its
// passes).
inline DepthPrediction planned_depth(const GemmAlgorithm &algo, const Options &opt,
                                     const DepthModel *model, bool is_double,
                                     bool beta_nonzero, index_t m, index_t n, index_t k,
                                     ModelSource *source) {
  const std::int64_t leaf = opt.leaf_for(algo.kind, is_double);
  const std::int64_t min_size = opt.min_size_for(algo.kind, is_double);
  const int max_levels = int(opt.max_levels);
  DepthPrediction p;
  *source = ModelSource::Options;
  if (leaf >= 1) {
    p.levels = choose_levels(m, n, k, leaf, max_levels,
                             min_size >= 0 ? min_size : kRuleMinSize[is_double]);
    return p;
  }
  if (min_size > 0 && double(m) * double(n) * double(k) <
                          double(min_size) * double(min_size) * double(min_size))
    return p;
  if (model && model->usable()) {
    *source = model->source;
    return predict_depth(*model, algo, is_double, beta_nonzero, m, n, k, max_levels,
                         opt.kchain_for(algo.kind, is_double));
  }
  p.levels = choose_levels(m, n, k, kRuleLeaf[is_double], max_levels,
                           min_size >= 0 ? min_size : kRuleMinSize[is_double]);
  return p;
}
inline int planned_levels(const GemmAlgorithm &algo, const Options &opt,
                          const DepthModel *model, bool is_double, bool beta_nonzero,
                          index_t m, index_t n, index_t k) {
  ModelSource source;
  return planned_depth(algo, opt, model, is_double, beta_nonzero, m, n, k, &source).levels;
}
// The deeper of the depths planned for beta = 0 and beta != 0 (the model's
// choice can differ by the read of C): a bound for a call whose beta is not
// known yet (the interposer's scan).
inline int planned_levels_any_beta(const GemmAlgorithm &algo, const Options &opt,
                                   const DepthModel *model, bool is_double, index_t m,
                                   index_t n, index_t k) {
  return std::max(planned_levels(algo, opt, model, is_double, false, m, n, k),
                  planned_levels(algo, opt, model, is_double, true, m, n, k));
}

// The elements of workspace the planned depth uses: what the workspace
// queries report (xnGetWorkspaceSize, xnGetFastGemmWorkspaceSize).
inline index_t planned_workspace_elems(const GemmAlgorithm &algo, const Options &opt,
                                       const DepthModel *model, bool is_double,
                                       bool beta_nonzero, index_t m, index_t n, index_t k,
                                       bool a_trans, bool b_trans) {
  const TempOrientation o = temp_orientation(opt, is_double, a_trans, b_trans);
  return call_workspace_elems(
      algo, beta_nonzero, m, n, k,
      planned_levels(algo, opt, model, is_double, beta_nonzero, m, n, k), o.a_layout,
      b_trans, o.t_normal);
}

// One call C = alpha op(A) op(B) + beta C of the recursive algorithm
// `algo` (its tables, its depth and crossover options; the non-negative
// check only for the algorithm that has that contract).
// `beta` is what is known of beta on the host (User when it is only known
// on the device); `alpha_zero` whether alpha is known to be 0. `levels` < 0
// lets the options and the device's model (`model`, nullptr for none)
// choose the depth (tests force one).
template <class T, class Hooks>
Status gemm_driver(Hooks &hooks, const GemmAlgorithm &algo, MatView<const T> A,
                   MatView<const T> B, MatView<T> C, ScalarKind beta, bool alpha_zero,
                   const Options &opt, const DepthModel *model, int levels,
                   GemmReport *report) {
  *report = GemmReport{};
  const index_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return Status::Ok;
  const bool is_double = sizeof(T) == sizeof(double);
  // BLAS quick return: alpha == 0 or k == 0 only scales C (A, B unread).
  const bool quick = k == 0 || alpha_zero;
  if (quick) levels = 0;
  if (levels < 0) {
    const DepthPrediction p = planned_depth(algo, opt, model, is_double,
                                            beta != ScalarKind::Zero, m, n, k,
                                            &report->source);
    levels = p.levels;
    if (p.ms_at_levels > 0) report->predicted_speedup = p.ms_at_zero / p.ms_at_levels;
  }
  report->planned = levels;
  const bool check_nonneg = algo.nonneg_contract && opt.check_nonneg;

  // Below the crossover, and for the quick return, the call is exactly one
  // classical GEMM (or one scaling pass) with the caller's own scalars: no
  // workspace and no shared state, so nothing is added to the backend's cost.
  if (levels == 0 && !check_nonneg)
    return quick ? hooks.plain().scale(C, beta)
                 : hooks.plain().gemm(A, B, ScalarKind::User, C);

  Status s = hooks.begin();
  if (s != Status::Ok) return s;
  auto &be = hooks.backend();
  if (quick) return be.scale(C, beta);
  if (check_nonneg && hooks.capturing()) {
    // Inside a graph capture the host cannot wait for the scan: the plan
    // that needs no host decision is the classical product, right for any
    // signs and scales (the bits a direct call gives when it finds a
    // negative entry).
    return be.gemm(A, B, beta, C);
  }
  if (check_nonneg) {
    bool negative = false;
    // The scan reads every entry anyway: it also takes the block maxima
    // that bound the depth at which the product keeps its accuracy on data
    // of unequal scales (scale_depth.h; docs/design.md, "Non-negative
    // check").
    BlockMaxima maxima;
    maxima.reset(levels > 0 ? scale_grid_levels(m, n, k, levels) : -1);
    s = hooks.find_negative(A, B, &maxima, &negative);
    if (s != Status::Ok) return s;
    if (negative) {
      report->fell_back = true;
      return be.gemm(A, B, beta, C);
    }
    // NaN and Inf: no accuracy to keep (the header says where they go).
    if (levels > 0 && !maxima.nonfinite) {
      const int kept =
          nonneg_scale_depth(algo.table_for(beta != ScalarKind::Zero), maxima.a.data(),
                             maxima.b.data(), maxima.grid_levels, levels, m, n, k);
      report->scale_planned = levels;
      report->scale_limited = kept < levels;
      levels = kept;
    }
  }
  const TempOrientation o = temp_orientation(opt, is_double, A.trans, B.trans);
  T *ws = nullptr;
  bool pack = false;
  const bool beta_nonzero = beta != ScalarKind::Zero;
  const int run = choose_workspace(
      algo, beta_nonzero, m, n, k, levels, o.a_layout, B.trans, o.t_normal,
      [&](index_t elems) {
        // Temporaries of no element (a core thinner than 2^levels) need no
        // memory.
        return (ws = hooks.workspace(elems)) != nullptr || elems == 0;
      },
      &pack);
  report->levels = run;
  report->t_normal = o.t_normal && run > 0;
  report->s_normal = o.s_normal && run > 0;
  return recursive_gemm<T>(be, algo, run, A, B, beta, C, ws,
                           opt.kchain_for(algo.kind, is_double), o.t_normal, pack,
                           o.s_normal);
}

}  // namespace xn
