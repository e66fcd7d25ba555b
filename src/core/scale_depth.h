// scale_depth.h - how deep the non-negative product may recurse on data of
// unequal scales, from block maxima of op(A) and op(B) (docs/design.md,
// "Non-negative check", "Scales").
//
// Winograd's pre-additions (Badin et al., ICS'13, Table 1: S2 = S1 - A11,
// T2 = B22 - T1, ...) mix quadrants: an error of about u max|A11| max|B11|
// reaches C22, whose exact value is sum A21 B12 + A22 B22 and may be far
// smaller. On data of one scale that costs nothing (Badin et al., §4.2, and
// the CPU suite's measurements); where the quadrants' scales differ it can
// cost every digit. This file bounds, from the maxima alone, the error each
// block of C gets at a given depth, and compares it with the bound the
// classical product has from the same maxima:
//
//  * The scan (the hooks' find_negative on both backends, gemm_driver.h)
//    gives, on a grid of 2^g x 2^g blocks of op(A) (m x k) and of op(B)
//    (k x n), each block's largest entry. Along a dimension of size d the
//    blocks are d >> g wide, the last one also taking the d mod 2^g rows or
//    columns beyond (scale_grid_block).
//  * scale_detail::Evaluator runs the schedule itself on those bounds, first
//    order in u (the model of tests/support/error_bound.h, one value per block
//    instead of one per quadrant): every value v of a table gets grids
//    (M, E) with |v| <= M and |v^ - v| <= E u blockwise. Inputs (max, 0).
//    A Combine target summed left to right: M = sum M_s, E = sum E_s + each
//    partial sum's M from the second term on. A product of X and Y with
//    blocks of inner width w: M = w X Y (grid products), E = w (E_X M_Y +
//    M_X E_Y) + the error of the product of the exact X and Y one level
//    down; at a leaf (a classical GEMM of inner dimension n, any summation
//    order) n M. "+=" adds as a Combine of two terms. Below the grid's
//    resolution a block's bound holds for each of its quadrants, and the
//    bound is bilinear, so those levels cost one unit evaluation per depth.
//  * The classical product's bound from the same maxima: K = k w A B
//    (gamma_k |A||B| <= k u (|A||B|) blockwise).
//  * Depth d is allowed when, for every block of C, E_d <= tau omega_d K,
//    where omega_d is the largest E_d / K over the blocks of C for data of
//    one scale (every maximum equal; about 4.5^d), and tau = kScaleSlack.
//    That is: no block of C gets a bound, relative to the classical bound
//    from its own maxima, more than tau times what every block gets on
//    data of one scale.
//
// The executor recurses uniformly, so a call runs the deepest allowed depth
// (0, the classical product, always is). The bound is in terms of block
// maxima: an entry far below its blocks' maxima (a zero row inside a block)
// is held to the bound of its block, not to its own size.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/plan.h"
#include "core/schedule.h"
#include "core/types.h"

namespace xn {

// tau: how much larger (relative to the classical bound of the same block
// maxima) a block's bound may be than the largest one of data of one scale.
// 2: one bit of the bound; the maxima of uniform random blocks differ by far
// less, so well-scaled data keeps its full depth (docs/design.md).
constexpr double kScaleSlack = 2.0;

// The finest grid the scan makes: 2^4 x 2^4 blocks, 256 maxima per operand
// (the recursion's own blocks for every depth the defaults plan up to
// n = 65536). Deeper calls judge their lower levels at this resolution
// (sound: a block's bound holds for its parts).
constexpr int kMaxScaleGridLevels = 4;

// The grid of a call that plans `levels` levels: 2^g blocks along each
// dimension, g = levels, at most kMaxScaleGridLevels, and each block at least
// one row or column wide.
inline int scale_grid_levels(index_t m, index_t n, index_t k, int levels) {
  int g = std::min(levels, kMaxScaleGridLevels);
  const index_t smallest = std::min(m, std::min(n, k));
  while (g > 0 && (smallest >> g) == 0) --g;
  return std::max(g, 0);
}

// The block of position i along a dimension of size d (d >> g >= 1).
inline index_t scale_grid_block(index_t i, index_t d, int grid_levels) {
  const index_t blocks = index_t(1) << grid_levels, width = d >> grid_levels;
  return std::min(i / std::max<index_t>(width, 1), blocks - 1);
}

namespace scale_detail {

// A square grid of bounds, column-major.
struct Grid {
  int side = 0;
  std::vector<double> v;
  Grid() = default;
  explicit Grid(int s, double fill = 0) : side(s), v(std::size_t(s) * s, fill) {}
  double &at(int i, int j) { return v[std::size_t(i) + std::size_t(j) * side]; }
  double at(int i, int j) const { return v[std::size_t(i) + std::size_t(j) * side]; }
};

struct Bound {
  Grid m, e;  // |v| <= m, |v^ - v| <= e u, per block
};

inline Grid quadrant(const Grid &x, int qi, int qj) {
  const int h = x.side / 2;
  Grid q(h);
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < h; ++i) q.at(i, j) = x.at(qi * h + i, qj * h + j);
  return q;
}

// x y (grid product) times `scale`, added to `out`.
inline void add_product(const Grid &x, const Grid &y, double scale, Grid &out) {
  const int s = x.side;
  for (int j = 0; j < s; ++j)
    for (int l = 0; l < s; ++l) {
      const double ylj = y.at(l, j) * scale;
      if (ylj == 0) continue;
      for (int i = 0; i < s; ++i) out.at(i, j) += x.at(i, l) * ylj;
    }
}

inline void add_scaled(const Grid &x, double scale, Grid &out) {
  for (std::size_t i = 0; i < x.v.size(); ++i) out.v[i] += scale * x.v[i];
}

class Evaluator {
 public:
  explicit Evaluator(const Schedule &tab) : tab_(tab) {}

  // The bound of the product of exact X, Y (magnitudes, side s grids whose
  // blocks have inner width w) by `depth` levels of the table.
  Bound product(int depth, const Grid &x, const Grid &y, double w) {
    const int s = x.side;
    Bound r{Grid(s), Grid(s)};
    add_product(x, y, w, r.m);
    if (depth == 0) {  // a classical leaf of inner dimension s w
      add_scaled(r.m, double(s) * w, r.e);
      return r;
    }
    if (s == 1) {  // below the grid: bilinear in (x, y)
      const double xy = x.v[0] * y.v[0];
      r.e.v[0] = xy * unit_error(depth, w);
      return r;
    }
    return level(depth, x, y, w);
  }

 private:
  // The error of `depth` levels on 1 x 1 unit inputs of inner width w.
  double unit_error(int depth, double w) {
    for (const Memo &c : memo_)
      if (c.depth == depth && c.w == w) return c.e;
    // Refined to 2 x 2 blocks of half the width; the block holds every
    // quadrant's bound.
    Grid one(2, 1.0);
    const Bound b = level(depth, one, one, w / 2);
    const double e = *std::max_element(b.e.v.begin(), b.e.v.end());
    memo_.push_back({depth, w, e});
    return e;
  }

  // One level of the table over the quadrants of x and y (side >= 2).
  Bound level(int depth, const Grid &x, const Grid &y, double w) {
    constexpr int kOperands = static_cast<int>(Operand::None);
    Bound v[kOperands];
    for (int q = 0; q < 4; ++q) {
      Bound &a = v[int(Operand::A11) + q];
      Bound &b = v[int(Operand::B11) + q];
      a.m = quadrant(x, q / 2, q % 2);
      b.m = quadrant(y, q / 2, q % 2);
      a.e = Grid(a.m.side);
      b.e = Grid(b.m.side);
    }
    const int h = x.side / 2;
    for (const Step &st : tab_.steps) {
      if (st.kind == StepKind::Product) {
        const Bound &p = v[int(st.src[0])], &q = v[int(st.src[1])];
        Bound r = product(depth - 1, p.m, q.m, w);
        add_product(p.e, q.m, w, r.e);
        add_product(p.m, q.e, w, r.e);
        Bound &d = v[int(st.dst[0])];
        if (st.accumulate) {  // d + r, one more rounding
          add_scaled(r.m, 1, d.m);
          add_scaled(r.e, 1, d.e);
          add_scaled(d.m, 1, d.e);
        } else {
          d = std::move(r);
        }
        continue;
      }
      // Every source is read before any target is written.
      Bound out[kMaxDst];
      for (int d = 0; d < st.ndst; ++d) {
        out[d] = Bound{Grid(h), Grid(h)};
        int terms = 0;
        for (int s = 0; s < st.nsrc; ++s) {
          if (st.coef[d][s] == 0) continue;
          const Bound &src = v[int(st.src[s])];
          add_scaled(src.m, 1, out[d].m);
          add_scaled(src.e, 1, out[d].e);
          if (++terms >= 2) add_scaled(out[d].m, 1, out[d].e);
        }
      }
      for (int d = 0; d < st.ndst; ++d) v[int(st.dst[d])] = std::move(out[d]);
    }
    Bound r{Grid(x.side), Grid(x.side)};
    for (int q = 0; q < 4; ++q) {
      const Bound &c = v[int(Operand::C11) + q];
      for (int j = 0; j < h; ++j)
        for (int i = 0; i < h; ++i) {
          r.m.at((q / 2) * h + i, (q % 2) * h + j) = c.m.at(i, j);
          r.e.at((q / 2) * h + i, (q % 2) * h + j) = c.e.at(i, j);
        }
    }
    return r;
  }

  struct Memo {
    int depth;
    double w, e;
  };
  const Schedule &tab_;
  std::vector<Memo> memo_;
};

// The grid of the blocks the recursion at `depth` levels sees along a
// dimension of size d, at the scan's resolution (2^g blocks): block s covers
// [s c / 2^g, (s + 1) c / 2^g) of the depth's core c = d rounded down to a
// multiple of 2^depth, which may straddle the scan's blocks (d >> g wide)
// when d is not a multiple of 2^g. For each, the first and last scan block
// it touches.
inline void depth_blocks(index_t d, int grid_levels, int depth, std::vector<int> &first,
                         std::vector<int> &last) {
  const int blocks = 1 << grid_levels;
  const index_t core = d & ~((index_t(1) << depth) - 1);
  first.assign(std::size_t(blocks), 0);
  last.assign(std::size_t(blocks), 0);
  for (int s = 0; s < blocks; ++s) {
    const index_t lo = index_t(s) * core / blocks;                     // floor
    const index_t hi = (index_t(s + 1) * core + blocks - 1) / blocks;  // ceil
    first[std::size_t(s)] = int(scale_grid_block(lo, d, grid_levels));
    last[std::size_t(s)] =
        int(scale_grid_block(std::max(hi, lo + 1) - 1, d, grid_levels));
  }
}

// max over the scan blocks of each (row, column) range.
inline Grid gather(const double *grid, int side, const std::vector<int> &r0,
                   const std::vector<int> &r1, const std::vector<int> &c0,
                   const std::vector<int> &c1, double scale) {
  Grid g(side);
  for (int j = 0; j < side; ++j)
    for (int i = 0; i < side; ++i) {
      double mx = 0;
      for (int c = c0[std::size_t(j)]; c <= c1[std::size_t(j)]; ++c)
        for (int r = r0[std::size_t(i)]; r <= r1[std::size_t(i)]; ++r)
          mx = std::max(mx, grid[std::size_t(r) + std::size_t(c) * side]);
      g.at(i, j) = mx * scale;
    }
  return g;
}

}  // namespace scale_detail

// Whether `depth` levels of `tab` keep every block of C within tau omega_d
// of its classical bound (the rule above), for op(A)'s and op(B)'s block
// maxima a_max (m x k blocks, a_max[I + K 2^g]) and b_max (k x n, b_max[K +
// J 2^g]) on the 2^g grid of an m x n x k call. *worst, if given, gets the
// largest E_d / (omega_d K) over the blocks (0 where E_d = 0; infinite
// where K = 0 < E_d).
inline bool nonneg_depth_keeps_scale(const Schedule &tab, const double *a_max,
                                     const double *b_max, int grid_levels, int depth,
                                     index_t m, index_t n, index_t k,
                                     double *worst = nullptr) {
  using namespace scale_detail;
  if (worst) *worst = 0;
  if (depth <= 0) return true;
  const int side = 1 << grid_levels;
  // Bilinear: scale each operand to a largest maximum of 1 (no overflow).
  double amax = 0, bmax = 0;
  bool finite = true;
  for (int i = 0; i < side * side; ++i) {
    finite &= std::isfinite(a_max[i]) && std::isfinite(b_max[i]);
    amax = std::max(amax, a_max[i]);
    bmax = std::max(bmax, b_max[i]);
  }
  // A zero product is exact; non-finite data is not judged.
  if (!finite || !(amax > 0 && bmax > 0)) return true;
  std::vector<int> m0, m1, n0, n1, k0, k1;
  depth_blocks(m, grid_levels, depth, m0, m1);
  depth_blocks(n, grid_levels, depth, n0, n1);
  depth_blocks(k, grid_levels, depth, k0, k1);
  const Grid a = gather(a_max, side, m0, m1, k0, k1, 1 / amax);
  const Grid b = gather(b_max, side, k0, k1, n0, n1, 1 / bmax);
  const double core_k = double(k & ~((index_t(1) << depth) - 1));
  const double w = core_k / side;  // inner width of a block

  Evaluator ev(tab);
  const Grid e = ev.product(depth, a, b, w).e;
  const Grid e_one = ev.product(depth, Grid(side, 1.0), Grid(side, 1.0), w).e;
  // K = k w A B; omega: the largest E / K of data of one scale (K = k^2).
  Grid classical(side);
  add_product(a, b, core_k * w, classical);
  double omega = 0;
  for (double x : e_one.v) omega = std::max(omega, x / (core_k * core_k));
  bool ok = true;
  for (std::size_t i = 0; i < e.v.size(); ++i) {
    const double bound = omega * classical.v[i];
    const double ratio = e.v[i] == 0 ? 0 : bound > 0 ? e.v[i] / bound : INFINITY;
    if (worst) *worst = std::max(*worst, ratio);
    ok &= ratio <= kScaleSlack;
  }
  return ok;
}

// The deepest depth <= `levels` that keeps the scale (0, the classical
// product, always does). Maxima as for nonneg_depth_keeps_scale, on the grid
// of scale_grid_levels(m, n, k, levels) (or any coarser one).
inline int nonneg_scale_depth(const Schedule &tab, const double *a_max,
                              const double *b_max, int grid_levels, int levels, index_t m,
                              index_t n, index_t k) {
  for (int d = levels; d > 0; --d)
    if (nonneg_depth_keeps_scale(tab, a_max, b_max, grid_levels, d, m, n, k)) return d;
  return 0;
}

}  // namespace xn
