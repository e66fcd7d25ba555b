// executor.h - one executor for every recursive 2x2 schedule, over a backend.
//
// The algorithm is written once here; the CPU backend (OpenBLAS leaves + host
// loops) and the CUDA backend (cuBLAS leaves + our kernels) supply five
// primitives. A Backend for element type T provides:
//
//   Status gemm(MatView<const T> A, MatView<const T> B, ScalarKind beta,
//               MatView<T> C);
//       C = alpha * A * B + beta * C with the call's alpha (products are
//       linear, so alpha folds into every leaf) and beta as given. A and B
//       may be transposed views; C never is. beta == Zero never reads C.
//   Status combine(const CombineOp<T> &op);
//       The fused elementwise step of a schedule (CombineOp below): every
//       operand has the same orientation and stored shape; each source is
//       read once and every source is read before any target is written at
//       the same position, so targets may be sources.
//   Status transpose_add_sub(MatView<T> D, MatView<const T> X,
//                            MatView<const T> Y, bool subtract);
//       D = op(X) +/- op(Y) for a non-transposed D and X, Y of either
//       orientation (at least one transposed), read from the stored arrays.
//       D may alias a non-transposed X or Y, never a transposed one.
//   Status transpose_copy(MatView<T> D, MatView<const T> X);
//       D = op(X) for a non-transposed D and a transposed X (exact copy).
//   Status scale(MatView<T> C, ScalarKind beta);
//       C = beta * C (ew_scale).
#pragma once

#include <algorithm>
#include <utility>

#include "core/plan.h"
#include "core/schedule.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/elementwise.h"

namespace xn {

// One fused elementwise step, at every position of the targets:
//   dst[d] = sum_s coef[d][s] * src[s]          (ew_combine: in source order)
//   dst[d] = ew_fold(that, beta, old dst[d])    when beta_old[d]
// beta_old marks the first write of a quadrant of C under the caller's beta
// (beta == 0 never reads the old value).
template <class T>
struct CombineOp {
  int ndst = 0, nsrc = 0;
  MatView<T> dst[kMaxDst];
  MatView<const T> src[kMaxSrc];
  signed char coef[kMaxDst][kMaxSrc] = {};
  bool beta_old[kMaxDst] = {};
  ScalarKind beta = ScalarKind::Zero;
};

// A leaf product C = alpha A B + beta C as GEMMs over consecutive chunks of
// k no longer than `kchain` (0: one GEMM), the first with beta and the
// others accumulating (beta = 1).
// A GPU GEMM sums along k in one running sum per entry ("preload", Badin et
// al., ICS'13, section 3.4, Figure 4); a BLAS GEMM adds alpha*sum into beta*C only at the
// end, so chunking k turns the leaf into the "postload" order of Figure 5 and
// cuts its error chain from k to about kchain + k/kchain terms (eq. 3.4), for
// one extra read and write of the leaf's C per extra chunk.
template <class T, class Backend>
Status leaf_gemm(Backend &be, index_t kchain, MatView<const T> A, MatView<const T> B,
                 ScalarKind beta, MatView<T> C) {
  const index_t k = A.cols;
  if (kchain <= 0 || k <= kchain) return be.gemm(A, B, beta, C);
  // Equal chunks, rounded up to 8 so that chunk boundaries stay aligned.
  const index_t chunks = (k + kchain - 1) / kchain;
  const index_t chunk = round_up((k + chunks - 1) / chunks, 8);
  for (index_t p0 = 0; p0 < k; p0 += chunk) {
    const index_t kc = p0 + chunk <= k ? chunk : k - p0;
    const Status s = be.gemm(A.block(0, p0, A.rows, kc), B.block(p0, 0, kc, B.cols),
                             p0 == 0 ? beta : ScalarKind::One, C);
    if (s != Status::Ok) return s;
  }
  return Status::Ok;
}

template <class T, class Backend>
class ScheduleExecutor {
 public:
  // `plan`: each level's offset in the workspace (workspace_plan).
  // `t_normal`: store T non-transposed even when B is transposed (plan.h,
  // stores_t_normal); `s_normal` the same for S and A (stores_s_normal).
  // `packed`: room for one quadrant of op(B) of the top level (plan.h,
  // packed_b_elems), or nullptr.
  ScheduleExecutor(Backend &backend, const GemmAlgorithm &algo, int levels,
                   const WorkspacePlan &plan, index_t kchain = 0, bool t_normal = false,
                   T *packed = nullptr, bool s_normal = false)
      : be_(backend),
        algo_(algo),
        levels_(levels),
        plan_(plan),
        kchain_(kchain),
        t_normal_(t_normal),
        s_normal_(s_normal),
        packed_(packed) {}

  // C = alpha * A * B + beta * C over the levels below `level`; every
  // dimension must be divisible by 2^(levels - level). The level runs the
  // algorithm's table for its beta; `ws` is the call's workspace
  // (workspace_plan(...).base[levels] elements).
  Status run(int level, MatView<const T> A, MatView<const T> B, ScalarKind beta,
             MatView<T> C, T *ws) const {
    if (level == levels_) return leaf_gemm<T>(be_, kchain_, A, B, beta, C);

    const bool s_trans = A.trans && !s_normal_;
    const bool t_trans = B.trans && !t_normal_;
    const Schedule &tab = level_table(algo_, beta != ScalarKind::Zero, C.rows, C.cols,
                                      A.cols, s_trans, t_trans);
    const LevelLayout lay = level_layout(tab, C.rows, C.cols, A.cols, s_trans, t_trans);
    const RoleShapes &sh = lay.shapes;
    T *const base = ws + plan_.base[level];

    // Every operand, as a view of the role the step reads or writes it in.
    auto shaped = [&](T *p, index_t ld, Role r) {
      return MatView<T>{p, sh.rows[int(r)], sh.cols[int(r)], ld, sh.trans[int(r)]};
    };
    auto writable = [&](Operand o, Role r) -> MatView<T> {
      if (is_temporary(o))
        return shaped(base + lay.temp_off[temp_index(o)], sh.ld[int(r)], r);
      const int q = c_index(o);
      const MatView<T> quad = C.quad(q / 2, q % 2);
      if (r == Role::C) return quad;
      // C as scratch (beta = 0 tables only): in place at C's leading
      // dimension when the value fits the quadrant, else in its spare.
      if (lay.spare_roles[q] & role_bit(r))
        return shaped(base + lay.spare_off[q], sh.ld[int(r)], r);
      return shaped(quad.p, C.ld, r);
    };
    auto readable = [&](Operand o, Role r) -> MatView<const T> {
      if (is_a_quadrant(o)) {
        const int q = int(o) - int(Operand::A11);
        return A.quad(q / 2, q % 2);
      }
      if (is_b_quadrant(o)) {
        const int q = int(o) - int(Operand::B11);
        return B.quad(q / 2, q % 2);
      }
      return writable(o, r).as_const();
    };

    for (const Step &st : tab.steps) {
      Status s = Status::Ok;
      if (st.kind == StepKind::Combine) {
        s = combine(st, beta, writable, readable);
      } else {
        // beta is the caller's at the first write of a quadrant of C, 1 at
        // an accumulation, 0 at any other assignment.
        const ScalarKind step_beta = st.accumulate   ? ScalarKind::One
                                     : st.c_first[0] ? beta
                                                     : ScalarKind::Zero;
        MatView<const T> Y = readable(st.src[1], Role::B);
        // A transposed quadrant of op(B) itself (only at the top level, as
        // every deeper B is then non-transposed): packed non-transposed so
        // that the product recurses as NN/TN (plan.h).
        if (packed_ && Y.trans && is_b_quadrant(st.src[1])) {
          const MatView<T> P{packed_, Y.rows, Y.cols, std::max<index_t>(Y.rows, 1),
                             false};
          s = be_.transpose_copy(P, Y);
          Y = P.as_const();
        }
        if (s == Status::Ok)
          s = run(level + 1, readable(st.src[0], Role::A), Y, step_beta,
                  writable(st.dst[0], Role::C), ws);
      }
      if (s != Status::Ok) return s;
    }
    return Status::Ok;
  }

 private:
  template <class Writable, class Readable>
  Status combine(const Step &st, ScalarKind beta, Writable &&writable,
                 Readable &&readable) const {
    CombineOp<T> op;
    op.ndst = st.ndst;
    op.nsrc = st.nsrc;
    op.beta = beta;
    bool same_orientation = true;
    for (int d = 0; d < st.ndst; ++d) {
      op.dst[d] = writable(st.dst[d], st.role);
      op.beta_old[d] = st.c_first[d] && beta != ScalarKind::Zero;
      for (int s = 0; s < st.nsrc; ++s) op.coef[d][s] = st.coef[d][s];
    }
    for (int s = 0; s < st.nsrc; ++s) {
      op.src[s] = readable(st.src[s], st.role);
      same_orientation &= op.src[s].trans == op.dst[0].trans;
    }
    for (int d = 0; d < st.ndst; ++d)
      same_orientation &= op.dst[d].trans == op.dst[0].trans;
    if (same_orientation) return be_.combine(op);
    // A non-transposed value from transposed quadrants of op(A) or op(B)
    // (s_normal, t_normal): one pass "D = X +/- Y" per target (the parser
    // admits only such steps, with no target read by the step), transposing
    // where a source is transposed, else a plain combine (a target of a
    // fused step that reads only temporaries). A sum of two terms rounds
    // alike in either order.
    for (int d = 0; d < op.ndst; ++d) {
      int x = -1, y = -1;
      for (int s = 0; s < op.nsrc; ++s)
        if (op.coef[d][s] != 0) (x < 0 ? x : y) = s;
      if (y < 0 || op.beta_old[d] || op.dst[d].trans) return Status::Internal;
      if (op.coef[d][x] < 0) std::swap(x, y);
      if (op.coef[d][x] < 0) return Status::Internal;
      Status s;
      if (op.src[x].trans || op.src[y].trans) {
        s = be_.transpose_add_sub(op.dst[d], op.src[x], op.src[y], op.coef[d][y] < 0);
      } else {
        CombineOp<T> one;
        one.ndst = 1;
        one.nsrc = 2;
        one.dst[0] = op.dst[d];
        one.src[0] = op.src[x];
        one.src[1] = op.src[y];
        one.coef[0][0] = 1;
        one.coef[0][1] = op.coef[d][y];
        s = be_.combine(one);
      }
      if (s != Status::Ok) return s;
    }
    return Status::Ok;
  }

  Backend &be_;
  const GemmAlgorithm &algo_;
  int levels_;
  const WorkspacePlan &plan_;
  index_t kchain_;
  bool t_normal_;
  bool s_normal_;
  T *packed_;
};

// One call run whole (no split): C = alpha * op(A) * op(B) + beta * C by
// `levels` (> 0) levels of the algorithm's schedules on the largest part
// whose dimensions are multiples of 2^levels, then thin leaf GEMMs for the
// peeled strips (docs/design.md, "Views, orientation, peeling").
template <class T, class Backend>
Status whole_recursive_gemm(Backend &be, const GemmAlgorithm &algo, int levels,
                            MatView<const T> A, MatView<const T> B, ScalarKind beta,
                            MatView<T> C, T *ws, index_t kchain, bool t_normal, bool pack,
                            bool s_normal) {
  const index_t m = C.rows, n = C.cols, k = A.cols;
  const bool nz = beta != ScalarKind::Zero;
  const CoreShape c = core_shape(m, n, k, levels);
  const bool a_layout = A.trans && !s_normal;
  const WorkspacePlan plan =
      workspace_plan(algo, nz, m, n, k, levels, a_layout, B.trans && !t_normal);
  // The packed quadrant of op(B) follows the temporaries (plan.h).
  T *const packed =
      pack && packed_b_elems(algo, nz, m, n, k, levels, a_layout, B.trans, t_normal) > 0
          ? ws + plan.base[levels]
          : nullptr;
  ScheduleExecutor<T, Backend> exec(be, algo, levels, plan, kchain, t_normal, packed,
                                    s_normal);
  Status s = exec.run(0, A.block(0, 0, c.m, c.k), B.block(0, 0, c.k, c.n), beta,
                      C.block(0, 0, c.m, c.n), ws);
  // The k-strip adds to the core of C, which now holds beta*C + its product.
  if (s == Status::Ok && c.k < k)
    s = be.gemm(A.block(0, c.k, c.m, k - c.k), B.block(c.k, 0, k - c.k, c.n),
                ScalarKind::One, C.block(0, 0, c.m, c.n));
  // The bottom strip of rows (full width), then the right strip of columns.
  if (s == Status::Ok && c.m < m)
    s = leaf_gemm<T>(be, kchain, A.block(c.m, 0, m - c.m, k), B, beta,
                     C.block(c.m, 0, m - c.m, n));
  if (s == Status::Ok && c.n < n)
    s = leaf_gemm<T>(be, kchain, A.block(0, 0, c.m, k), B.block(0, c.n, k, n - c.n), beta,
                     C.block(0, c.n, c.m, n - c.n));
  return s;
}

// C = alpha * op(A) * op(B) + beta * C, m x n x k, by `levels` levels of the
// algorithm's schedules: whole, or with beta != 0 as two halves of C one
// after the other in the same workspace where that needs less (plan.h,
// choose_split). `ws` must hold call_workspace_elems(algo, beta != Zero, m,
// n, k, levels, A.trans && !s_normal, B.trans, t_normal, pack) elements.
// When levels > 0, every leaf product (recursion leaves and the peeled strips
// alike) is split into chunks of k of at most `kchain` (leaf_gemm). With
// `t_normal`, the B-side temporaries are stored non-transposed even when
// op(B) is transposed (plan.h, stores_t_normal), and with `pack` the top
// level's products with quadrants of op(B) run on a packed copy when the
// bound allows it (packed_b_elems). With `s_normal`, the A-side ones are
// stored non-transposed when op(A) is transposed (stores_s_normal).
template <class T, class Backend>
Status recursive_gemm(Backend &be, const GemmAlgorithm &algo, int levels,
                      MatView<const T> A, MatView<const T> B, ScalarKind beta,
                      MatView<T> C, T *ws, index_t kchain = 0, bool t_normal = false,
                      bool pack = true, bool s_normal = false) {
  const index_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return Status::Ok;
  if (k == 0) return be.scale(C, beta);
  // No recursion: exactly the backend's own product (below the crossover
  // the library is cuBLAS / OpenBLAS, bit for bit).
  if (levels <= 0) return be.gemm(A, B, beta, C);

  auto whole = [&](MatView<const T> a, MatView<const T> b, MatView<T> c) {
    return whole_recursive_gemm<T>(be, algo, levels, a, b, beta, c, ws, kchain, t_normal,
                                   pack, s_normal);
  };
  switch (choose_split(algo, beta != ScalarKind::Zero, m, n, k, levels,
                       A.trans && !s_normal, B.trans, t_normal)) {
    case CallSplit::Columns: {
      const index_t n1 = split_point(n, levels);
      const Status s = whole(A, B.block(0, 0, k, n1), C.block(0, 0, m, n1));
      return s != Status::Ok
                 ? s
                 : whole(A, B.block(0, n1, k, n - n1), C.block(0, n1, m, n - n1));
    }
    case CallSplit::Rows: {
      const index_t m1 = split_point(m, levels);
      const Status s = whole(A.block(0, 0, m1, k), B, C.block(0, 0, m1, n));
      return s != Status::Ok
                 ? s
                 : whole(A.block(m1, 0, m - m1, k), B, C.block(m1, 0, m - m1, n));
    }
    default:
      return whole(A, B, C);
  }
}

}  // namespace xn
