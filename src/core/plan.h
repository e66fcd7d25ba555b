// plan.h - recursion depth, peeling and workspace layout for a recursive GEMM.
//
// One source of truth for the shapes: the workspace-size query, the
// allocation and the executor all call temp_layout(), so they cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/view.h"

namespace xn {

// Temporaries start on multiples of kTempAlign elements and their leading
// dimensions are multiples of kLdAlign: every column starts 16-byte aligned
// (vector accesses in the elementwise kernels), without the near-2x waste a
// coarser rounding costs small odd halves.
constexpr index_t kTempAlign = 64;
constexpr index_t kLdAlign = 16;

inline index_t round_up(index_t x, index_t a) { return (x + a - 1) / a * a; }

// Largest L <= max_levels such that, halved L times, the two largest
// dimensions are still at least `leaf` and the smallest at least leaf / 2.
// For square shapes this is "recurse while every dimension is at least twice
// the leaf size" (docs/design.md, "Views, orientation, peeling"). The smallest dimension
// may go lower because a level saves 1/8 of the product's flops while its elementwise
// passes cost about (3mk + 3kn + 3.25mn) element moves: for 32768 x 32768 x 8192 the
// second level still saves twice what it costs, and a GEMM of 8192 x 8192 x 2048 runs at
// full speed (measured on the H200, docs/performance.md). 0 means the classical leaf
// product. No recursion at all when m n k < min_size^3 (the crossover option).
inline int choose_levels(index_t m, index_t n, index_t k, index_t leaf, int max_levels,
                         index_t min_size = 0) {
  if (leaf < 1) leaf = 1;
  if (min_size > 0 && double(m) * double(n) * double(k) <
                          double(min_size) * double(min_size) * double(min_size))
    return 0;
  const index_t small_leaf = leaf / 2 > 0 ? leaf / 2 : 1;
  auto fits = [&](int l) {
    index_t a = m >> l, b = n >> l, c = k >> l;
    if (a > b) std::swap(a, b);
    if (b > c) std::swap(b, c);
    if (a > b) std::swap(a, b);  // now a <= b <= c
    return a >= small_leaf && b >= leaf;
  };
  int levels = 0;
  while (levels < max_levels && fits(levels + 1)) ++levels;
  return levels;
}

// The part of an m x n x k product the schedule runs on: each dimension
// rounded down to a multiple of 2^levels. The strips beyond are fixed up with
// thin leaf GEMMs (peeling at the top).
struct CoreShape {
  index_t m, n, k;
};
inline CoreShape core_shape(index_t m, index_t n, index_t k, int levels) {
  const index_t mask = ~((index_t(1) << levels) - 1);
  return CoreShape{m & mask, n & mask, k & mask};
}

// Temporaries of one level of a 2x2 schedule whose product is m x n x k
// (m, n, k even): S ~ a quadrant of op(A), stored with A's orientation;
// T ~ a quadrant of op(B), stored transposed (hn x hk) when `t_trans`, else
// hk x hn; U ~ a quadrant of C.
struct TempLayout {
  index_t s_ld, t_ld, u_ld;     // leading dimensions (elements)
  index_t s_off, t_off, u_off;  // offsets from the level's base
  index_t elems;                // this level's total, aligned
};

inline TempLayout temp_layout(index_t m, index_t n, index_t k, bool a_trans,
                              bool t_trans) {
  const index_t hm = m / 2, hn = n / 2, hk = k / 2;
  TempLayout t{};
  // stored shape of S: (hm x hk) or, transposed, (hk x hm)
  const index_t s_rows = a_trans ? hk : hm, s_cols = a_trans ? hm : hk;
  const index_t t_rows = t_trans ? hn : hk, t_cols = t_trans ? hk : hn;
  t.s_ld = round_up(s_rows, kLdAlign);
  t.t_ld = round_up(t_rows, kLdAlign);
  t.u_ld = round_up(hm, kLdAlign);
  t.s_off = 0;
  t.t_off = round_up(t.s_off + t.s_ld * s_cols, kTempAlign);
  t.u_off = round_up(t.t_off + t.t_ld * t_cols, kTempAlign);
  t.elems = round_up(t.u_off + t.u_ld * hn, kTempAlign);
  return t;
}

// Elements of workspace for `levels` levels of recursion on the core of an
// m x n x k product, with T stored transposed at every level when `t_trans`.
// Levels run one after the other, so each level needs one set of
// temporaries: sum over levels, about (mk + kn + mn) / 3 in all.
inline index_t workspace_elems(index_t m, index_t n, index_t k, int levels, bool a_trans,
                               bool t_trans) {
  const CoreShape c = core_shape(m, n, k, levels);
  index_t total = 0;
  for (int l = 0; l < levels; ++l)
    total += temp_layout(c.m >> l, c.n >> l, c.k >> l, a_trans, t_trans).elems;
  return total;
}

// ---------------------------------------------------------------------------
// B-side temporaries stored non-transposed (XN_OPT_PACK_TRANS_B).
//
// cuBLAS runs its double NT leaves 5-20 % slower than NN on the H200
// (docs/performance.md). With op(B) transposed, the pre-additions T1..T4 of
// Badin et al., ICS'13, Table 1 are then formed by a transposing add/sub straight into a
// non-transposed T (hk x hn), so the products that read T (M4..M7) recurse
// as NN/TN. T has the same number of elements either way.
//
// The three top-level products that read B's quadrants directly (M1, M2,
// M3) would still recurse with transb = T, (3/7)^L of the leaves. When the
// workspace allows, each of those quadrants is first copied, transposed,
// into one packed hk x hn buffer (one after the other, reusing it), so that
// the whole recursion below runs NN/TN: three transposing copies of a
// quarter of B buy every leaf back from NT. The buffer costs k n / 4
// elements; it is used only while the call's workspace stays within half of
// A + B + C (a square call: 5/12), else those three products keep NT.

// Whether a call stores T non-transposed, from the option's value (-1
// automatic: double precision with op(A) = A, the measured case; 0 never;
// 1 whenever op(B) is transposed).
inline bool stores_t_normal(std::int64_t option, bool is_double, bool a_trans,
                            bool b_trans) {
  if (!b_trans || option == 0) return false;
  return option > 0 || (is_double && !a_trans);
}

// Elements of the packed B quadrant (hk x hn of the core) of a call with T
// stored non-transposed, or 0 when it packs nothing (no recursion, op(B) not
// transposed, T transposed, or the half-of-A+B+C bound would be exceeded).
// It follows the temporaries in the workspace.
inline index_t packed_b_elems(index_t m, index_t n, index_t k, int levels, bool a_trans,
                              bool b_trans, bool t_normal) {
  if (levels <= 0 || !b_trans || !t_normal) return 0;
  const CoreShape c = core_shape(m, n, k, levels);
  const index_t packed = (c.k / 2) * (c.n / 2);
  const index_t temps = workspace_elems(m, n, k, levels, a_trans, false);
  return 2 * (temps + packed) <= m * k + k * n + m * n ? packed : 0;
}

// Elements of workspace of a whole call at `levels` levels (0: none): what
// the executor uses, the size query reports and the allocation asks for.
// With `t_normal`, T is stored non-transposed at every level, exactly as for
// op(B) = B; with `pack` too, the packed B quadrant follows when the bound
// allows it (packed_b_elems).
inline index_t call_workspace_elems(index_t m, index_t n, index_t k, int levels,
                                    bool a_trans, bool b_trans, bool t_normal,
                                    bool pack = true) {
  if (levels <= 0) return 0;
  return workspace_elems(m, n, k, levels, a_trans, b_trans && !t_normal) +
         (pack ? packed_b_elems(m, n, k, levels, a_trans, b_trans, t_normal) : 0);
}

// The depth a call runs when workspace may be refused: `acquire(elems)`
// tries to get `elems` elements and says whether it did. At each depth the
// packed B quadrant is given up before the level (a level is worth more than
// the packing); 0 levels need no workspace (acquire is not called). Sets
// *pack to whether the workspace got includes the packed quadrant. One
// fallback rule for both backends.
template <class Acquire>
int choose_workspace(index_t m, index_t n, index_t k, int levels, bool a_trans,
                     bool b_trans, bool t_normal, Acquire &&acquire, bool *pack) {
  *pack = false;
  for (; levels > 0; --levels) {
    if (packed_b_elems(m, n, k, levels, a_trans, b_trans, t_normal) > 0 &&
        acquire(
            call_workspace_elems(m, n, k, levels, a_trans, b_trans, t_normal, true))) {
      *pack = true;
      break;
    }
    if (acquire(call_workspace_elems(m, n, k, levels, a_trans, b_trans, t_normal, false)))
      break;
  }
  return levels;
}

}  // namespace xn
