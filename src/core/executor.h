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
//   Status add_sub(MatView<T> D, MatView<const T> X, MatView<const T> Y,
//                  bool subtract);
//       D = X + Y or X - Y, elementwise over the stored arrays (all three have
//       the same orientation and shape; D may alias X or Y).
//   Status transpose_add_sub(MatView<T> D, MatView<const T> X,
//                            MatView<const T> Y, bool subtract);
//       The same for a non-transposed D and X, Y of either orientation (at
//       least one transposed): D = op(X) +/- op(Y) read from the stored
//       arrays. D may alias a non-transposed X or Y, never a transposed one.
//   Status transpose_copy(MatView<T> D, MatView<const T> X);
//       D = op(X) for a non-transposed D and a transposed X (exact copy).
//   Status fold(MatView<T> D0, MatView<T> D1, MatView<const T> X,
//               ScalarKind beta);
//       Di = X + beta * Di for D0 and, when D1.p != nullptr, D1
//       (ew_fold in src/numerics/elementwise.h).
//   Status scale(MatView<T> C, ScalarKind beta);
//       C = beta * C (ew_scale).
#pragma once

#include <algorithm>

#include "core/plan.h"
#include "core/schedule.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/elementwise.h"

namespace xn {

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
  // `t_normal`: store T non-transposed even when B is transposed (plan.h,
  // stores_t_normal). `packed`: room for one quadrant of op(B) of the top
  // level (plan.h, packed_b_elems), or nullptr.
  ScheduleExecutor(Backend &backend, const Schedule &schedule, int levels,
                   index_t kchain = 0, bool t_normal = false, T *packed = nullptr)
      : be_(backend),
        sched_(schedule),
        levels_(levels),
        kchain_(kchain),
        t_normal_(t_normal),
        packed_(packed) {}

  // C = alpha * A * B + beta * C over `levels` levels of the schedule below
  // this one; every dimension must be divisible by 2^(levels - level).
  // `ws` holds workspace_elems(...) elements for the remaining levels (T
  // transposed exactly when B is and !t_normal: the same at every level).
  Status run(int level, MatView<const T> A, MatView<const T> B, ScalarKind beta,
             MatView<T> C, T *ws) const {
    if (level == levels_) return leaf_gemm<T>(be_, kchain_, A, B, beta, C);

    const bool t_trans = B.trans && !t_normal_;
    const TempLayout lay = temp_layout(C.rows, C.cols, A.cols, A.trans, t_trans);
    const MatView<T> S{ws + lay.s_off, A.rows / 2, A.cols / 2, lay.s_ld, A.trans};
    const MatView<T> Tm{ws + lay.t_off, B.rows / 2, B.cols / 2, lay.t_ld, t_trans};
    const MatView<T> U{ws + lay.u_off, C.rows / 2, C.cols / 2, lay.u_ld, false};
    T *const deeper = ws + lay.elems;

    // Every operand of the table, as a view of this level.
    auto writable = [&](Operand o) -> MatView<T> {
      switch (o) {
        case Operand::C11:
          return C.quad(0, 0);
        case Operand::C12:
          return C.quad(0, 1);
        case Operand::C21:
          return C.quad(1, 0);
        case Operand::C22:
          return C.quad(1, 1);
        case Operand::S:
          return S;
        case Operand::T:
          return Tm;
        case Operand::U:
          return U;
        default:
          return MatView<T>{};
      }
    };
    auto readable = [&](Operand o) -> MatView<const T> {
      switch (o) {
        case Operand::A11:
          return A.quad(0, 0);
        case Operand::A12:
          return A.quad(0, 1);
        case Operand::A21:
          return A.quad(1, 0);
        case Operand::A22:
          return A.quad(1, 1);
        case Operand::B11:
          return B.quad(0, 0);
        case Operand::B12:
          return B.quad(0, 1);
        case Operand::B21:
          return B.quad(1, 0);
        case Operand::B22:
          return B.quad(1, 1);
        default:
          return writable(o).as_const();
      }
    };

    for (std::size_t i = 0; i < sched_.count; ++i) {
      const Step &st = sched_.steps[i];
      // beta is the caller's at the (single) assignment to a quadrant of C,
      // 0 at an assignment to a temporary, 1 at every accumulation.
      const ScalarKind step_beta =
          st.accumulate ? ScalarKind::One
                        : (is_c_quadrant(st.dst) ? beta : ScalarKind::Zero);
      Status s = Status::Ok;
      switch (st.kind) {
        case StepKind::Sum:
        case StepKind::Diff: {
          const MatView<T> D = writable(st.dst);
          const MatView<const T> X = readable(st.x), Y = readable(st.y);
          const bool subtract = st.kind == StepKind::Diff;
          // A non-transposed T from transposed B quadrants (T1..T4 of seed
          // 000 Table 1 under t_normal) is a transposing pass; every other
          // step reads and writes one orientation.
          s = X.trans == D.trans && Y.trans == D.trans
                  ? be_.add_sub(D, X, Y, subtract)
                  : be_.transpose_add_sub(D, X, Y, subtract);
          break;
        }
        case StepKind::Product: {
          MatView<const T> Y = readable(st.y);
          // A transposed quadrant of op(B) itself (M1..M3 of Table 1; only at
          // the top level, as every deeper B is then non-transposed): packed
          // non-transposed so that the product recurses as NN/TN (plan.h).
          if (packed_ && Y.trans && is_b_quadrant(st.y)) {
            const MatView<T> P{packed_, Y.rows, Y.cols, std::max<index_t>(Y.rows, 1),
                               false};
            s = be_.transpose_copy(P, Y);
            Y = P.as_const();
          }
          if (s == Status::Ok)
            s = run(level + 1, readable(st.x), Y, step_beta, writable(st.dst), deeper);
          break;
        }
        case StepKind::Store:
          s = be_.fold(writable(st.dst), writable(st.dst2), readable(st.x), step_beta);
          break;
      }
      if (s != Status::Ok) return s;
    }
    return Status::Ok;
  }

 private:
  Backend &be_;
  const Schedule &sched_;
  int levels_;
  index_t kchain_;
  bool t_normal_;
  T *packed_;
};

// C = alpha * op(A) * op(B) + beta * C, m x n x k, by `levels` levels of the
// schedule on the largest part whose dimensions are multiples of 2^levels,
// then thin leaf GEMMs for the peeled strips (docs/design.md,
// "Views, orientation, peeling"). `ws` must hold
// call_workspace_elems(m, n, k, levels, A.trans, B.trans, t_normal, pack)
// elements.
// When levels > 0, every leaf product (recursion leaves and the peeled strips
// alike) is split into chunks of k of at most `kchain` (leaf_gemm). With
// `t_normal`, the B-side temporaries are stored non-transposed even when
// op(B) is transposed (plan.h, stores_t_normal), and with `pack` the top
// level's products with quadrants of op(B) run on a packed copy when the
// bound allows it (packed_b_elems; `ws` then holds
// call_workspace_elems(..., t_normal, pack) elements).
template <class T, class Backend>
Status recursive_gemm(Backend &be, const Schedule &sched, int levels, MatView<const T> A,
                      MatView<const T> B, ScalarKind beta, MatView<T> C, T *ws,
                      index_t kchain = 0, bool t_normal = false, bool pack = true) {
  const index_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return Status::Ok;
  if (k == 0) return be.scale(C, beta);
  // No recursion: exactly the backend's own product (below the crossover
  // the library is cuBLAS / OpenBLAS, bit for bit).
  if (levels <= 0) return be.gemm(A, B, beta, C);

  const CoreShape c = core_shape(m, n, k, levels);
  // The packed quadrant of op(B) follows the temporaries (plan.h).
  T *const packed =
      pack && packed_b_elems(m, n, k, levels, A.trans, B.trans, t_normal) > 0
          ? ws + call_workspace_elems(m, n, k, levels, A.trans, B.trans, t_normal, false)
          : nullptr;
  ScheduleExecutor<T, Backend> exec(be, sched, levels, kchain, t_normal, packed);
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

}  // namespace xn
