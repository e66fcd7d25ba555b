// plan.h - recursion depth, peeling and workspace layout for a recursive GEMM.
//
// One source of truth for the shapes: the workspace-size query, the
// allocation and the executor all call level_layout() and workspace_plan(),
// so they cannot disagree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/schedule.h"
#include "core/view.h"

namespace xn {

// Temporaries start on multiples of kTempAlign elements and their leading
// dimensions are multiples of kLdAlign: every column starts 16-byte aligned
// (vector accesses in the elementwise kernels), without the near-2x waste a
// coarser rounding costs small odd halves.
constexpr index_t kTempAlign = 64;
constexpr index_t kLdAlign = 16;

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

// The shapes of the three roles (schedule.h) at one level of a 2x2 schedule
// whose product is m x n x k (m, n, k even): a quadrant of op(A) (hm x hk,
// stored with A's orientation), of op(B) (hk x hn, stored transposed when
// `t_trans`) and of C (hm x hn). Stored rows and columns, orientation and
// the leading dimension a temporary of that role uses.
struct RoleShapes {
  index_t rows[3], cols[3];  // logical rows and columns of op(role)
  bool trans[3];
  index_t ld[3];  // a temporary's: stored rows rounded up to kLdAlign

  index_t stored_rows(Role r) const {
    return trans[int(r)] ? cols[int(r)] : rows[int(r)];
  }
  index_t stored_cols(Role r) const {
    return trans[int(r)] ? rows[int(r)] : cols[int(r)];
  }
  index_t elems(Role r) const { return ld[int(r)] * stored_cols(r); }
};

inline RoleShapes role_shapes(index_t m, index_t n, index_t k, bool a_trans,
                              bool t_trans) {
  const index_t hm = m / 2, hn = n / 2, hk = k / 2;
  RoleShapes s{{hm, hk, hm}, {hk, hn, hn}, {a_trans, t_trans, false}, {0, 0, 0}};
  for (Role r : {Role::A, Role::B, Role::C})
    s.ld[int(r)] = round_up(s.stored_rows(r), kLdAlign);
  return s;
}

// Where one level's values live: each temporary the table uses at an offset
// from the level's base (sized for the largest role it takes), and for each
// quadrant of C used as scratch, whether a role's value fits in the
// quadrant itself (stored rows <= hm, columns <= hn, at C's leading
// dimension) or goes to a spare buffer (shapes where k exceeds m or n).
struct LevelLayout {
  RoleShapes shapes;
  index_t temp_off[kTempCount];  // -1: unused
  index_t spare_off[4];          // -1: no spare for that quadrant
  unsigned spare_roles[4];       // role_bit mask of the roles kept in the spare
  index_t elems;                 // the level's total, aligned
};

inline LevelLayout level_layout(const Schedule &sched, index_t m, index_t n, index_t k,
                                bool a_trans, bool t_trans) {
  LevelLayout L{};
  L.shapes = role_shapes(m, n, k, a_trans, t_trans);
  const RoleShapes &sh = L.shapes;
  index_t cursor = 0;
  auto place = [&](unsigned roles) {
    index_t size = 0;
    for (Role r : {Role::A, Role::B, Role::C})
      if (roles & role_bit(r)) size = std::max(size, sh.elems(r));
    const index_t off = cursor;
    cursor = round_up(off + size, kTempAlign);
    return off;
  };
  for (int t = 0; t < kTempCount; ++t)
    L.temp_off[t] = sched.temp_roles[t] ? place(sched.temp_roles[t]) : -1;
  for (int q = 0; q < 4; ++q) {
    unsigned spill = 0;
    for (Role r : {Role::A, Role::B})
      if ((sched.c_roles[q] & role_bit(r)) &&
          (sh.stored_rows(r) > sh.rows[int(Role::C)] ||
           sh.stored_cols(r) > sh.cols[int(Role::C)]))
        spill |= role_bit(r);
    L.spare_roles[q] = spill;
    L.spare_off[q] = spill ? place(spill) : -1;
  }
  L.elems = cursor;
  return L;
}

// Which tables can run at each level of `levels` for a call whose beta may
// (`beta_nonzero`) or may not be nonzero: bit 0 set when one runs with
// beta = 0 (algo.zero_beta), bit 1 when one may run with beta != 0
// (algo.any_beta). A product runs the level below with beta = 1 when it
// accumulates, with its level's beta when it is the first write of a
// quadrant of C, else with 0.
inline void level_beta_sets(const GemmAlgorithm &algo, bool beta_nonzero, int levels,
                            unsigned *sets) {
  if (levels <= 0) return;
  sets[0] = beta_nonzero ? 2u : 1u;
  for (int l = 1; l < levels; ++l) {
    sets[l] = 0;
    for (int nz = 0; nz < 2; ++nz) {
      if (!(sets[l - 1] & (1u << nz))) continue;
      // With beta = 0 either table may run (level_table decides by shape).
      for (int t = nz; t < 2; ++t)
        for (const Step &st : algo.table_for(t != 0).steps)
          if (st.kind == StepKind::Product)
            sets[l] |= (st.accumulate || (st.c_first[0] && nz)) ? 2u : 1u;
    }
  }
}

// The table a level of an m x n x k product runs: with beta != 0 the
// algorithm's accumulating one; with beta = 0 its beta = 0 table, unless
// that needs spares and the accumulating one needs less workspace at this
// shape. (Strassen's beta = 0 table keeps an A-role and a B-role sum in C12
// and C21; where k exceeds m or n they do not fit and take spares, while S,
// T and U stay small: the lower levels of a call split in halves,
// choose_split below, are such shapes. Where the beta = 0 table needs no
// spare it runs, even if larger: with k below m and n its temporaries hold
// C-shaped products, but it moves fewer bytes, 3 % of a d 32768 x 32768 x
// 8192 call on the H200.) Either table computes the product for beta = 0.
inline const Schedule &level_table(const GemmAlgorithm &algo, bool beta_nonzero,
                                   index_t m, index_t n, index_t k, bool a_trans,
                                   bool t_trans) {
  const Schedule &zero = algo.table_for(false), &any = algo.table_for(true);
  if (beta_nonzero || &zero == &any) return algo.table_for(beta_nonzero);
  const LevelLayout z = level_layout(zero, m, n, k, a_trans, t_trans);
  bool spares = false;
  for (index_t off : z.spare_off) spares |= off >= 0;
  return spares && level_layout(any, m, n, k, a_trans, t_trans).elems < z.elems ? any
                                                                                : zero;
}

// Elements of workspace level `l` of a call needs: the largest layout of
// the tables that can run there (level_beta_sets), on the core's dimensions.
inline index_t level_elems(const GemmAlgorithm &algo, unsigned set, index_t m, index_t n,
                           index_t k, bool a_trans, bool t_trans) {
  index_t e = 0;
  for (int nz = 0; nz < 2; ++nz)
    if (set & (1u << nz))
      e = std::max(e, level_layout(level_table(algo, nz != 0, m, n, k, a_trans, t_trans),
                                   m, n, k, a_trans, t_trans)
                          .elems);
  return e;
}

// Offsets of each level's temporaries in a call's workspace (levels run
// nested, so each has its own region): base[l] for l < levels, base[levels]
// the total. `max_levels` bounds the array.
constexpr int kMaxRecursionLevels = 31;
struct WorkspacePlan {
  index_t base[kMaxRecursionLevels + 1] = {};
};

inline WorkspacePlan workspace_plan(const GemmAlgorithm &algo, bool beta_nonzero,
                                    index_t m, index_t n, index_t k, int levels,
                                    bool a_trans, bool t_trans) {
  WorkspacePlan p;
  if (levels <= 0) return p;
  unsigned sets[kMaxRecursionLevels] = {};
  level_beta_sets(algo, beta_nonzero, levels, sets);
  const CoreShape c = core_shape(m, n, k, levels);
  for (int l = 0; l < levels; ++l)
    p.base[l + 1] = p.base[l] + level_elems(algo, sets[l], c.m >> l, c.n >> l, c.k >> l,
                                            a_trans, t_trans);
  return p;
}

// Elements of workspace for `levels` levels of recursion on the core of an
// m x n x k product, with T stored transposed at every level when `t_trans`.
// Levels run one after the other, so each level needs one set of
// temporaries. For the non-negative schedule, about (mk + kn + mn) / 3 in
// all; for the two-temporary schedules with beta = 0, at most 2 n^2 / 3 for
// square n (Li, Ranka, Sahni, ICPADS'11, section 1).
inline index_t workspace_elems(const GemmAlgorithm &algo, bool beta_nonzero, index_t m,
                               index_t n, index_t k, int levels, bool a_trans,
                               bool t_trans) {
  if (levels <= 0) return 0;
  return workspace_plan(algo, beta_nonzero, m, n, k, levels, a_trans, t_trans)
      .base[levels];
}
inline index_t workspace_elems(index_t m, index_t n, index_t k, int levels, bool a_trans,
                               bool t_trans) {
  return workspace_elems(nonneg_winograd_algorithm(), true, m, n, k, levels, a_trans,
                         t_trans);
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
// elements; it is used only while the call's workspace stays within the
// algorithm's budget (GemmAlgorithm::pack_budget_*): for ?ngemm half of
// A + B + C (a square call: 5/12); for Strassen and Winograd 2/9 of it,
// their 2 n^2 / 3 for square n, which their own temporaries leave no room
// in for square calls: they keep (2/7)^L or (3/7)^L of the leaves NT
// (about 0.5 % of a call). Else those products keep NT.

// Whether a call stores T non-transposed, from the option's value (-1
// automatic: double precision with the A-side values stored non-transposed,
// the measured case; 0 never; 1 whenever op(B) is transposed). `a_trans`:
// whether the A-side values are stored transposed (op(A) transposed and
// not stores_s_normal).
inline bool stores_t_normal(std::int64_t option, bool is_double, bool a_trans,
                            bool b_trans) {
  if (!b_trans || option == 0) return false;
  return option > 0 || (is_double && !a_trans);
}

// ---------------------------------------------------------------------------
// A-side temporaries stored non-transposed (XN_OPT_PACK_TRANS_A).
//
// The mirror image for op(A) transposed: the pre-additions of A's quadrants
// (S1..S4) are formed by the same transposing pass into non-transposed
// temporaries, so that the products reading them recurse as NN (or NT) and
// only the products that read a quadrant of op(A) itself (2 of Strassen's
// 7, 3 of Winograd's) keep transa = T: (2/7)^L or (3/7)^L of the leaves.
// No packing: the quadrants of op(A) are not copied. Measured on the H200
// (double, n = 16384, 2026-11-25, docs/performance.md): TN 0.6-1.1 % faster
// relative to NN over three routines; TT, where S normal makes the T-side
// rule below store T normal too (and ?ngemm pack op(B)), no faster than
// cuBLAS's own TT leaves (ngemm 2 % slower, for the passes and the packed
// quadrant). So the automatic choice takes TN only.

// Whether a call stores S non-transposed (-1 automatic: double precision
// with op(B) = B; 0 never; 1 whenever op(A) is transposed).
inline bool stores_s_normal(std::int64_t option, bool is_double, bool a_trans,
                            bool b_trans) {
  if (!a_trans || option == 0) return false;
  return option > 0 || (is_double && !b_trans);
}

// Both decisions of a call, from the two options: `a_layout` is how the
// A-side values are stored (op(A) transposed and S not normal), the
// orientation every plan.h function takes as `a_trans`.
struct TempOrientation {
  bool s_normal, t_normal, a_layout;
};
inline TempOrientation temp_orientation(std::int64_t a_option, std::int64_t b_option,
                                        bool is_double, bool a_trans, bool b_trans) {
  TempOrientation o{};
  o.s_normal = stores_s_normal(a_option, is_double, a_trans, b_trans);
  o.a_layout = a_trans && !o.s_normal;
  o.t_normal = stores_t_normal(b_option, is_double, o.a_layout, b_trans);
  return o;
}

// Elements of the packed B quadrant (hk x hn of the core) of a call with T
// stored non-transposed, or 0 when it packs nothing (no recursion, op(B) not
// transposed, T transposed, or the half-of-A+B+C bound would be exceeded).
// It follows the temporaries in the workspace.
inline index_t packed_b_elems(const GemmAlgorithm &algo, bool beta_nonzero, index_t m,
                              index_t n, index_t k, int levels, bool a_trans,
                              bool b_trans, bool t_normal) {
  if (levels <= 0 || !b_trans || !t_normal) return 0;
  const CoreShape c = core_shape(m, n, k, levels);
  const index_t packed = (c.k / 2) * (c.n / 2);
  const index_t temps =
      workspace_elems(algo, beta_nonzero, m, n, k, levels, a_trans, false);
  return algo.pack_budget_den * (temps + packed) <=
                 algo.pack_budget_num * (m * k + k * n + m * n)
             ? packed
             : 0;
}

// Elements of workspace of a call at `levels` levels (0: none) run whole,
// without the split below. With `t_normal`, T is stored non-transposed at
// every level, exactly as for op(B) = B; with `pack` too, the packed B
// quadrant follows when the bound allows it (packed_b_elems).
inline index_t whole_call_elems(const GemmAlgorithm &algo, bool beta_nonzero, index_t m,
                                index_t n, index_t k, int levels, bool a_trans,
                                bool b_trans, bool t_normal, bool pack) {
  if (levels <= 0) return 0;
  return workspace_elems(algo, beta_nonzero, m, n, k, levels, a_trans,
                         b_trans && !t_normal) +
         (pack ? packed_b_elems(algo, beta_nonzero, m, n, k, levels, a_trans, b_trans,
                                t_normal)
               : 0);
}

// ---------------------------------------------------------------------------
// beta != 0 in two halves of C.
//
// With beta != 0 (or a beta known only on the device) the top level cannot
// use C as scratch: C keeps beta * C until its last update, so the
// accumulating table needs S, T and U, three quadrants (3 n^2 / 4 for square
// n, 11 n^2 / 12 with the levels below), above the 2 n^2 / 3 of Li, Ranka,
// Sahni's two-temporary schedules. The call then runs as two products, the
// left and right column halves of C (the top and bottom row halves when that
// needs less), one after the other in the same workspace: each half's top
// level holds S (hm x hk) and T, U at half width, n^2 / 2, and 2 n^2 / 3 in
// all. The flops are the same (each half runs the same levels on half the
// width); the price is that the sums of the side that is not split (A's for
// column halves) are formed once per half at every level (docs/design.md
// counts the bytes, docs/performance.md the time). Only algorithms with a
// separate accumulating table split, and only where it needs less than the
// whole call and the whole call needs more than the same call with beta = 0.
enum class CallSplit { None, Columns, Rows };

// The size of the first half of a dimension d: half of it, rounded down to
// a multiple of 2^levels so that the first half peels nothing; 0 when a half
// would have no core to recurse on (d < 2^(levels + 1)): no split there.
inline index_t split_point(index_t d, int levels) {
  const index_t unit = index_t(1) << levels;
  return (d / 2) / unit * unit;
}

// How a call runs (the workspace it then needs, without the packed
// quadrant, in *elems if given).
inline CallSplit choose_split(const GemmAlgorithm &algo, bool beta_nonzero, index_t m,
                              index_t n, index_t k, int levels, bool a_trans,
                              bool b_trans, bool t_normal, index_t *elems = nullptr) {
  auto whole = [&](index_t mm, index_t nn) {
    return whole_call_elems(algo, beta_nonzero, mm, nn, k, levels, a_trans, b_trans,
                            t_normal, false);
  };
  const index_t e0 = whole(m, n);
  CallSplit best = CallSplit::None;
  index_t e = e0;
  if (beta_nonzero && levels > 0 && &algo.table_for(true) != &algo.table_for(false) &&
      e0 > whole_call_elems(algo, false, m, n, k, levels, a_trans, b_trans, t_normal,
                            false)) {
    const index_t n1 = split_point(n, levels), m1 = split_point(m, levels);
    if (n1 > 0) {
      const index_t ec = std::max(whole(m, n1), whole(m, n - n1));
      if (ec < e) e = ec, best = CallSplit::Columns;
    }
    if (m1 > 0) {
      const index_t er = std::max(whole(m1, n), whole(m - m1, n));
      if (er < e) e = er, best = CallSplit::Rows;
    }
  }
  if (elems) *elems = e;
  return best;
}

// Elements of workspace of a whole call at `levels` levels (0: none): what
// the executor uses, the size query reports and the allocation asks for
// (for a split call, the larger half's).
inline index_t call_workspace_elems(const GemmAlgorithm &algo, bool beta_nonzero,
                                    index_t m, index_t n, index_t k, int levels,
                                    bool a_trans, bool b_trans, bool t_normal,
                                    bool pack = true) {
  if (levels <= 0) return 0;
  auto whole = [&](index_t mm, index_t nn) {
    return whole_call_elems(algo, beta_nonzero, mm, nn, k, levels, a_trans, b_trans,
                            t_normal, pack);
  };
  switch (choose_split(algo, beta_nonzero, m, n, k, levels, a_trans, b_trans, t_normal)) {
    case CallSplit::Columns: {
      const index_t n1 = split_point(n, levels);
      return std::max(whole(m, n1), whole(m, n - n1));
    }
    case CallSplit::Rows: {
      const index_t m1 = split_point(m, levels);
      return std::max(whole(m1, n), whole(m - m1, n));
    }
    default:
      return whole(m, n);
  }
}

// The same for the ?ngemm algorithm (whose one table runs with any beta).
inline index_t packed_b_elems(index_t m, index_t n, index_t k, int levels, bool a_trans,
                              bool b_trans, bool t_normal) {
  return packed_b_elems(nonneg_winograd_algorithm(), true, m, n, k, levels, a_trans,
                        b_trans, t_normal);
}
inline index_t call_workspace_elems(index_t m, index_t n, index_t k, int levels,
                                    bool a_trans, bool b_trans, bool t_normal,
                                    bool pack = true) {
  return call_workspace_elems(nonneg_winograd_algorithm(), true, m, n, k, levels, a_trans,
                              b_trans, t_normal, pack);
}

// The depth a call runs when workspace may be refused: `acquire(elems)`
// tries to get `elems` elements and says whether it did. At each depth the
// packed B quadrant is given up before the level (a level is worth more than
// the packing); 0 levels need no workspace (acquire is not called). Sets
// *pack to whether the workspace got includes the packed quadrant. One
// fallback rule for both backends and every algorithm.
template <class Acquire>
int choose_workspace(const GemmAlgorithm &algo, bool beta_nonzero, index_t m, index_t n,
                     index_t k, int levels, bool a_trans, bool b_trans, bool t_normal,
                     Acquire &&acquire, bool *pack) {
  *pack = false;
  for (; levels > 0; --levels) {
    const index_t with_pack = call_workspace_elems(algo, beta_nonzero, m, n, k, levels,
                                                   a_trans, b_trans, t_normal, true);
    if (with_pack > call_workspace_elems(algo, beta_nonzero, m, n, k, levels, a_trans,
                                         b_trans, t_normal, false) &&
        acquire(with_pack)) {
      *pack = true;
      break;
    }
    if (acquire(call_workspace_elems(algo, beta_nonzero, m, n, k, levels, a_trans,
                                     b_trans, t_normal, false)))
      break;
  }
  return levels;
}

}  // namespace xn
