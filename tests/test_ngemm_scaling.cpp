// test_ngemm_scaling.cpp - the non-negative product on data of unequal
// scales (core/scale_depth.h; docs/design.md, "Non-negative check").
//
// Unit: the depth rule from block maxima (one scale keeps every depth, the
// patterns that mix scales lose it, invariance, exact zeros, non-finite
// data, sizes that are not multiples of the grid).
// Accuracy: the CPU backend against the exact MPFR oracle. With the check
// on, every entry of C meets the classical product's componentwise bound
// gamma_{k+2} (|alpha| |A||B| + |beta| |C|) on badly scaled data (the
// issue's example scaled down: top-left quadrants of A and B times 1e6, and
// a row block, a column block, a deeper quadrant), while the same call
// without the check (the planned depth, as before the rule) does not; on
// well-scaled data the check keeps the planned depth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/scale_depth.h"
#include "core/schedule.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"

namespace {

using xn::index_t;
using xn_test::unit_roundoff;

const xn::Schedule &table() { return xn::winograd_nonneg_schedule(); }

// A 2^g x 2^g grid of maxima, cell (r, c) = f(r, c, side).
using Pattern = std::function<double(int, int, int)>;
std::vector<double> grid_of(int g, const Pattern &f) {
  const int side = 1 << g;
  std::vector<double> v(std::size_t(side) * side);
  for (int c = 0; c < side; ++c)
    for (int r = 0; r < side; ++r) v[std::size_t(r + c * side)] = f(r, c, side);
  return v;
}

double one(int, int, int) { return 1.0; }
bool top_left(int r, int c, int side) { return r < side / 2 && c < side / 2; }

int depth_for(const std::vector<double> &a, const std::vector<double> &b, int g,
              int levels, index_t m, index_t n, index_t k) {
  return xn::nonneg_scale_depth(table(), a.data(), b.data(), g, levels, m, n, k);
}

// ---------------------------------------------------------------------------
// Unit: the rule.

TEST(ScaleDepth, OneScaleKeepsEveryDepth) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  // Maxima of well-scaled data differ a little from block to block.
  const Pattern near_one = [&](int, int, int) {
    return 0.9 + 0.1 * xn_test::uniform01(rng);
  };
  for (int levels = 1; levels <= 6; ++levels)
    for (const index_t base : {index_t(16), index_t(37)}) {
      const index_t m = base << levels, n = (base << levels) + 5,
                    k = (base << levels) + 3;
      const int g = xn::scale_grid_levels(m, n, k, levels);
      EXPECT_EQ(g, std::min(levels, xn::kMaxScaleGridLevels));
      EXPECT_EQ(depth_for(grid_of(g, one), grid_of(g, one), g, levels, m, n, k), levels);
      EXPECT_EQ(depth_for(grid_of(g, near_one), grid_of(g, near_one), g, levels, m, n, k),
                levels)
          << "levels " << levels << " m " << m;
      // Scaling a whole operand changes no scale ratio.
      const Pattern big = [](int, int, int) { return 1e200; };
      EXPECT_EQ(depth_for(grid_of(g, big), grid_of(g, one), g, levels, m, n, k), levels);
    }
}

TEST(ScaleDepth, QuadrantsOfUnequalScaleLoseTheRecursion) {
  struct Case {
    const char *name;
    Pattern a, b;
  };
  const Case cases[] = {
      {"A11 and B11 x1e6 (the issue's example)",
       [](int r, int c, int s) { return top_left(r, c, s) ? 1e6 : 1.0; },
       [](int r, int c, int s) { return top_left(r, c, s) ? 1e6 : 1.0; }},
      {"A11 x1e6", [](int r, int c, int s) { return top_left(r, c, s) ? 1e6 : 1.0; },
       one},
      {"first row block of A x1e6", [](int r, int, int) { return r == 0 ? 1e6 : 1.0; },
       one},
      {"last column block of B x1e6", one,
       [](int, int c, int s) { return c == s - 1 ? 1e6 : 1.0; }},
      {"(A11)22 x1e6, a deeper quadrant only",
       [](int r, int c, int s) {
         return r >= s / 4 && r < s / 2 && c >= s / 4 && c < s / 2 ? 1e6 : 1.0;
       },
       one},
      {"A21 and A22 x1e6", [](int r, int, int s) { return r >= s / 2 ? 1e6 : 1.0; }, one},
  };
  for (const Case &c : cases)
    for (int levels = 2; levels <= 6; ++levels) {
      const index_t n = index_t(32) << levels;
      const int g = xn::scale_grid_levels(n, n, n, levels);
      const std::vector<double> a = grid_of(g, c.a), b = grid_of(g, c.b);
      EXPECT_EQ(depth_for(a, b, g, levels, n, n, n), 0)
          << c.name << ", levels " << levels;
      // The bound the rule compares grows with the scale: a factor 3 of A11
      // against A22 alone is within tau, 1e6 is not.
      double worst = 0;
      EXPECT_FALSE(xn::nonneg_depth_keeps_scale(table(), a.data(), b.data(), g, 1, n, n,
                                                n, &worst));
      EXPECT_GT(worst, 1e4) << c.name;
    }
}

TEST(ScaleDepth, ModerateScalesKeepTheRecursion) {
  const int levels = 3, g = 3;
  const index_t n = 512;
  // A11 three times A's other quadrants: the bound grows by less than tau.
  const auto a3 =
      grid_of(g, [](int r, int c, int s) { return top_left(r, c, s) ? 3.0 : 1.0; });
  EXPECT_EQ(depth_for(a3, grid_of(g, one), g, levels, n, n, n), levels);
  // Diagonal blocks three times the others (a Gram matrix's heavier
  // diagonal).
  const auto d3 = grid_of(g, [](int r, int c, int) { return r == c ? 3.0 : 1.0; });
  EXPECT_EQ(depth_for(d3, d3, g, levels, n, n, n), levels);
  // Ten times: no longer.
  const auto d10 = grid_of(g, [](int r, int c, int) { return r == c ? 10.0 : 1.0; });
  EXPECT_LT(depth_for(d10, d10, g, levels, n, n, n), levels);
  // A scale along k reaches every entry of C alike: the first k-block of A
  // x1e6 dominates every entry, so the top level mixes nothing smaller.
  const auto k0 = grid_of(g, [](int, int c, int) { return c == 0 ? 1e6 : 1.0; });
  EXPECT_GE(depth_for(k0, grid_of(g, one), g, levels, n, n, n), 1);
}

TEST(ScaleDepth, InvariantUnderScalingEachOperand) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (int trial = 0; trial < 20; ++trial) {
    const int levels = 1 + int(rng() % 4), g = levels;
    const index_t n = index_t(64) << levels;
    const Pattern wild = [&](int, int, int) {
      return std::pow(10.0, 4 * xn_test::uniform01(rng));
    };
    std::vector<double> a = grid_of(g, wild), b = grid_of(g, wild);
    double w0 = 0, w1 = 0;
    const bool k0 = xn::nonneg_depth_keeps_scale(table(), a.data(), b.data(), g, levels,
                                                 n, n, n, &w0);
    const int d0 = depth_for(a, b, g, levels, n, n, n);
    for (double &x : a) x *= 0x1p-1000;
    for (double &x : b) x *= 0x1p+900;
    const bool k1 = xn::nonneg_depth_keeps_scale(table(), a.data(), b.data(), g, levels,
                                                 n, n, n, &w1);
    EXPECT_EQ(k0, k1);
    EXPECT_EQ(d0, depth_for(a, b, g, levels, n, n, n));
    EXPECT_NEAR(w0, w1, 1e-12 * w0);
  }
}

TEST(ScaleDepth, ExactZeroBlocksOfCStopTheRecursion) {
  // Block upper triangular A and B: C21 = A21 B11 + A22 B21 = 0 exactly,
  // which the classical product returns, and Winograd's M1 + M6 + M7 + M4
  // does not (rounding errors of A11 B11 stay in it).
  const int levels = 2, g = 2;
  const index_t n = 256;
  const auto upper =
      grid_of(g, [](int r, int c, int s) { return r >= s / 2 && c < s / 2 ? 0.0 : 1.0; });
  double worst = 0;
  EXPECT_FALSE(xn::nonneg_depth_keeps_scale(table(), upper.data(), upper.data(), g, 1, n,
                                            n, n, &worst));
  EXPECT_TRUE(std::isinf(worst));
  EXPECT_EQ(depth_for(upper, upper, g, levels, n, n, n), 0);
}

TEST(ScaleDepth, NonFiniteOrZeroOperandsAreNotJudged) {
  const int levels = 3, g = 3;
  const index_t n = 512;
  auto a = grid_of(g, [](int r, int c, int s) { return top_left(r, c, s) ? 1e6 : 1.0; });
  const auto b = grid_of(g, one);
  ASSERT_EQ(depth_for(a, b, g, levels, n, n, n), 0);
  a[5] = INFINITY;  // NaN/Inf: the header says where they go; nothing to keep
  EXPECT_EQ(depth_for(a, b, g, levels, n, n, n), levels);
  a[5] = NAN;
  EXPECT_EQ(depth_for(a, b, g, levels, n, n, n), levels);
  const auto zero = grid_of(g, [](int, int, int) { return 0.0; });
  EXPECT_EQ(depth_for(zero, b, g, levels, n, n, n), levels);  // C = beta C, exact
}

TEST(ScaleDepth, GridBlocksAndDepthsBelowTheGrid) {
  // scale_grid_block: blocks d >> g wide, the last one takes the rest.
  EXPECT_EQ(xn::scale_grid_block(0, 70, 2), 0);
  EXPECT_EQ(xn::scale_grid_block(16, 70, 2), 0);
  EXPECT_EQ(xn::scale_grid_block(17, 70, 2), 1);
  EXPECT_EQ(xn::scale_grid_block(51, 70, 2), 3);
  EXPECT_EQ(xn::scale_grid_block(69, 70, 2), 3);
  EXPECT_EQ(xn::scale_grid_levels(3, 1000, 1000, 4), 1);  // each block >= 1 row
  EXPECT_EQ(xn::scale_grid_levels(1000, 1000, 1000, 9), xn::kMaxScaleGridLevels);
  // Deeper than the grid: the levels below it are judged at its resolution.
  const index_t n = 4096;
  for (int g = 0; g <= 2; ++g) {
    EXPECT_EQ(depth_for(grid_of(g, one), grid_of(g, one), g, 6, n, n, n), 6) << g;
    if (g > 0) {
      const auto a =
          grid_of(g, [](int r, int c, int s) { return top_left(r, c, s) ? 1e6 : 1.0; });
      EXPECT_EQ(depth_for(a, grid_of(g, one), g, 6, n, n, n), 0) << g;
    }
  }
}

// The maxima the rule uses at depth d bound every entry of the blocks the
// recursion at that depth sees, also where the depth's core (each dimension
// rounded down to a multiple of 2^d) is not the grid's.
TEST(ScaleDepth, GatheredMaximaCoverTheBlocksOfEveryDepth) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (int trial = 0; trial < 40; ++trial) {
    const int g = 1 + int(rng() % 4);
    const index_t d = (index_t(1) << g) + index_t(rng() % 300);
    std::vector<double> x(static_cast<std::size_t>(d), 0.0);
    for (double &v : x) v = xn_test::uniform01(rng);
    const int side = 1 << g;
    // A 1-D "grid" (one column) of the scan's maxima.
    std::vector<double> scan(std::size_t(side) * side, 0.0);
    for (index_t i = 0; i < d; ++i) {
      double &cell = scan[std::size_t(xn::scale_grid_block(i, d, g))];
      cell = std::max(cell, x[std::size_t(i)]);
    }
    for (int depth = 1; depth <= 6; ++depth) {
      std::vector<int> first, last, zero_first(std::size_t(side), 0),
          zero_last(std::size_t(side), 0);
      xn::scale_detail::depth_blocks(d, g, depth, first, last);
      const xn::scale_detail::Grid got = xn::scale_detail::gather(
          scan.data(), side, first, last, zero_first, zero_last, 1);
      const index_t core = d & ~((index_t(1) << depth) - 1);
      for (int s = 0; s < side; ++s) {
        // The recursion's block s at the grid's resolution:
        // [s core / 2^g, (s + 1) core / 2^g).
        const double lo = double(s) * double(core) / side,
                     hi = double(s + 1) * double(core) / side;
        double want = 0;
        for (index_t i = index_t(std::floor(lo)); double(i) < hi && i < d; ++i)
          want = std::max(want, x[std::size_t(i)]);
        ASSERT_GE(got.at(s, 0), want)
            << "d=" << d << " g=" << g << " depth=" << depth << " s=" << s;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Accuracy: the CPU backend against MPFR.

template <class T>
double gamma_n(std::int64_t n) {
  const double nu = double(n) * unit_roundoff<T>();
  return nu / (1 - nu);
}

// Scale factor of op(A)(i, p) and op(B)(p, j) for an m x n x k call.
struct Scaling {
  const char *name;
  std::function<double(index_t, index_t, index_t, index_t)> a;  // (i, p, m, k)
  std::function<double(index_t, index_t, index_t, index_t)> b;  // (p, j, k, n)
  bool breaks_unchecked;  // the planned depth breaks the classical bound
};

const std::vector<Scaling> &scalings() {
  static const std::vector<Scaling> s = {
      {"top-left quadrants of A and B x1e6 (the issue's example)",
       [](index_t i, index_t p, index_t m, index_t k) {
         return i < m / 2 && p < k / 2 ? 1e6 : 1.0;
       },
       [](index_t p, index_t j, index_t k, index_t n) {
         return p < k / 2 && j < n / 2 ? 1e6 : 1.0;
       },
       true},
      {"first eighth of A's rows x1e6 (a row block)",
       [](index_t i, index_t, index_t m, index_t) { return i < m / 8 ? 1e6 : 1.0; },
       [](index_t, index_t, index_t, index_t) { return 1.0; }, true},
      {"an eighth of B's columns x1e6 (a column block)",
       [](index_t, index_t, index_t, index_t) { return 1.0; },
       [](index_t, index_t j, index_t, index_t n) {
         return j >= n / 2 && j < n / 2 + n / 8 ? 1e6 : 1.0;
       },
       true},
      {"(A22)11 x1e6 (a deeper quadrant only)",
       [](index_t i, index_t p, index_t m, index_t k) {
         return i >= m / 2 && i < 3 * m / 4 && p >= k / 2 && p < 3 * k / 4 ? 1e6 : 1.0;
       },
       [](index_t, index_t, index_t, index_t) { return 1.0; }, true},
      {"the first eighth of k in A x1e6 (reaches every entry of C)",
       [](index_t, index_t p, index_t, index_t k) { return p < k / 8 ? 1e6 : 1.0; },
       [](index_t, index_t, index_t, index_t) { return 1.0; }, false},
  };
  return s;
}

template <class T>
struct Problem {
  bool ta = false, tb = false;
  index_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  T alpha = 1, beta = 0;
  std::vector<T> A, B, C0;
  std::vector<xn_test::ExactEntry> exact;

  T &a_at(index_t i, index_t p) { return A[std::size_t(ta ? p + i * lda : i + p * lda)]; }
  T &b_at(index_t p, index_t j) { return B[std::size_t(tb ? j + p * ldb : p + j * ldb)]; }

  void draw(std::mt19937_64 &rng, const Scaling *scaling) {
    lda = (ta ? k : m) + 2;
    ldb = (tb ? n : k) + 3;
    ldc = m + 1;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    xn_test::fill(A, ta ? k : m, ta ? m : k, lda, xn_test::Dist::Uniform01, rng, nan);
    xn_test::fill(B, tb ? n : k, tb ? k : n, ldb, xn_test::Dist::Uniform01, rng, nan);
    xn_test::fill(C0, m, n, ldc, xn_test::Dist::Uniform01, rng, T(-7));
    if (scaling) {
      for (index_t p = 0; p < k; ++p)
        for (index_t i = 0; i < m; ++i) a_at(i, p) *= T(scaling->a(i, p, m, k));
      for (index_t j = 0; j < n; ++j)
        for (index_t p = 0; p < k; ++p) b_at(p, j) *= T(scaling->b(p, j, k, n));
    }
    xn_test::exact_gemm<T>(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                           C0.data(), ldc, exact);
  }

  std::string describe() const {
    std::ostringstream s;
    s << (sizeof(T) == 8 ? "double" : "float") << " " << m << "x" << n << "x" << k
      << " ta=" << ta << " tb=" << tb << " alpha=" << alpha << " beta=" << beta;
    return s.str();
  }

  // Runs the CPU product; *levels gets the depth it ran.
  std::vector<T> run(const xn::Options &opt, int *levels) const {
    std::vector<T> C = C0;
    const xn::Status st =
        xn::cpu_recursive_gemm<T>(xn::nonneg_winograd_algorithm(), ta, tb, m, n, k, alpha,
                                  A.data(), lda, B.data(), ldb, beta, C.data(), ldc, opt,
                                  -1, xn::CpuLeaf::OpenBlas, nullptr, nullptr, levels);
    EXPECT_EQ(st, xn::Status::Ok) << describe();
    return C;
  }

  // The largest err / (gamma_{k+2} magnitude) over C (the classical
  // product's componentwise bound is 1), and where.
  double worst_ratio(const std::vector<T> &C, std::string *where) const {
    const double g = gamma_n<T>(k + 2);
    double worst = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        const xn_test::ExactEntry &e = exact[std::size_t(i + j * m)];
        const double got = double(C[std::size_t(i + j * ldc)]);
        const double err = xn_test::abs_error(got, e);
        const double bound = g * e.magnitude;
        double r = err == 0 ? 0 : bound > 0 ? err / bound : INFINITY;
        if (std::isnan(r)) r = INFINITY;
        if (r > worst) {
          worst = r;
          std::ostringstream s;
          s.precision(17);
          s << "entry (" << i << "," << j << "): got " << got << ", exact " << e.hi;
          *where = s.str();
        }
      }
    return worst;
  }
};

// Leaf 16, at most 4 levels, no crossover: a 192-sized call plans 3 levels
// (a 16384-sized one 2, a 32768-sized one 3, with the defaults).
xn::Options small_leaf(bool check) {
  xn::Options opt;
  opt.leaf_s = opt.leaf_d = 16;
  opt.max_levels = 4;
  opt.min_size_s = opt.min_size_d = 0;
  opt.check_nonneg = check ? 1 : 0;
  return opt;
}

template <class T>
void badly_scaled_data_meets_the_classical_bound() {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  struct Shape {
    index_t m, n, k;
  };
  // Square, and sizes off the grid (cores and grid blocks differ).
  const Shape shapes[] = {{192, 192, 192}, {198, 181, 197}};
  int turn = 0;
  for (const Shape &sh : shapes)
    for (const Scaling &sc : scalings()) {
      Problem<T> p;
      p.m = sh.m;
      p.n = sh.n;
      p.k = sh.k;
      p.ta = turn % 2 == 1;
      p.tb = turn % 4 >= 2;
      p.beta = turn % 3 == 0 ? T(0) : T(0.5);
      ++turn;
      p.draw(rng, &sc);
      const int planned = xn::choose_levels(p.m, p.n, p.k, 16, 4);
      ASSERT_GE(planned, 3);
      std::string where;
      int levels = -1;
      const std::vector<T> checked = p.run(small_leaf(true), &levels);
      const double ratio = p.worst_ratio(checked, &where);
      EXPECT_LE(ratio, 1.0) << sc.name << ", " << p.describe() << ", checked, ran "
                            << levels << " levels: " << where << "; "
                            << xn_test::describe_seed(seed);
      EXPECT_LT(levels, planned) << sc.name << ", " << p.describe();
      // Without the check (the planned depth, the behaviour before the
      // rule) the scales mix.
      int unchecked_levels = -1;
      const std::vector<T> unchecked = p.run(small_leaf(false), &unchecked_levels);
      EXPECT_EQ(unchecked_levels, planned);
      const double unchecked_ratio = p.worst_ratio(unchecked, &where);
      if (sc.breaks_unchecked) {
        EXPECT_GT(unchecked_ratio, 1e3)
            << sc.name << ", " << p.describe() << ": the unchecked call kept the bound";
      }
      std::printf(
          "%s %s: checked %d levels (planned %d), err / classical bound %.3g; "
          "unchecked %.3g\n",
          sizeof(T) == 8 ? "double" : "float", sc.name, levels, planned, ratio,
          unchecked_ratio);
    }
}

TEST(NgemmScaling, BadlyScaledDataMeetsTheClassicalBoundDouble) {
  badly_scaled_data_meets_the_classical_bound<double>();
}
TEST(NgemmScaling, BadlyScaledDataMeetsTheClassicalBoundFloat) {
  badly_scaled_data_meets_the_classical_bound<float>();
}

// Well-scaled data: the check keeps the planned depth (the result is the
// unchecked call's, bit for bit) and the classical bound holds.
template <class T>
void well_scaled_data_keeps_the_depth() {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  for (int turn = 0; turn < 4; ++turn) {
    Problem<T> p;
    p.m = 192 + 5 * turn;
    p.n = 192 - 3 * turn;
    p.k = 192 + turn;
    p.ta = turn % 2 == 1;
    p.tb = turn >= 2;
    p.beta = turn == 1 ? T(0.5) : T(0);
    p.draw(rng, nullptr);
    const int planned = xn::choose_levels(p.m, p.n, p.k, 16, 4);
    int levels = -1, unchecked_levels = -1;
    const std::vector<T> checked = p.run(small_leaf(true), &levels);
    const std::vector<T> unchecked = p.run(small_leaf(false), &unchecked_levels);
    EXPECT_EQ(levels, planned) << p.describe() << "; " << xn_test::describe_seed(seed);
    EXPECT_EQ(unchecked_levels, planned);
    EXPECT_TRUE(std::equal(checked.begin(), checked.end(), unchecked.begin(),
                           [](T x, T y) { return std::memcmp(&x, &y, sizeof x) == 0; }))
        << p.describe();
    std::string where;
    EXPECT_LE(p.worst_ratio(checked, &where), 1.0)
        << p.describe() << ": " << where << "; " << xn_test::describe_seed(seed);
  }
}

TEST(NgemmScaling, WellScaledDataKeepsThePlannedDepth) {
  well_scaled_data_keeps_the_depth<double>();
  well_scaled_data_keeps_the_depth<float>();
}

// The report says when and from where the rule lowered the depth; a
// negative entry still falls back as before, and a NaN keeps the depth.
TEST(NgemmScaling, ReportAndFallback) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  Problem<double> p;
  p.m = p.n = p.k = 128;
  p.draw(rng, &scalings()[0]);
  xn::CpuBackend<double> be(1.0, 0.0);
  const xn::Options opt = small_leaf(true);
  struct Hooks {
    xn::CpuBackend<double> &be;
    xn::CpuBackend<double> &plain() { return be; }
    xn::CpuBackend<double> &backend() { return be; }
    xn::Status begin() { return xn::Status::Ok; }
    bool capturing() const { return false; }
    double *workspace(index_t elems) {
      buf.resize(std::size_t(elems));
      return buf.data();
    }
    xn::Status find_negative(xn::MatView<const double> A, xn::MatView<const double> B,
                             xn::BlockMaxima *maxima, bool *found) {
      ++scans;
      grid = maxima->grid_levels;
      // The CPU backend's own scan, through cpu_recursive_gemm, is what the
      // other tests exercise; here the driver's use of the answer.
      *found = negative;
      maxima->nonfinite = nonfinite;
      const int side = grid < 0 ? 0 : 1 << grid;
      for (int c = 0; c < side; ++c)
        for (int r = 0; r < side; ++r) {
          maxima->a[std::size_t(r + c * side)] = r < side / 2 && c < side / 2 ? 1e6 : 1.0;
          maxima->b[std::size_t(r + c * side)] = 1.0;
        }
      (void)A;
      (void)B;
      return xn::Status::Ok;
    }
    std::vector<double> buf;
    bool negative = false, nonfinite = false;
    int scans = 0, grid = -2;
  } hooks{be, {}, false, false, 0, -2};
  std::vector<double> C(p.C0);
  auto call = [&](xn::GemmReport *report) {
    return xn::gemm_driver<double>(
        hooks, xn::nonneg_winograd_algorithm(),
        xn::MatView<const double>{p.A.data(), p.m, p.k, p.lda, false},
        xn::MatView<const double>{p.B.data(), p.k, p.n, p.ldb, false},
        xn::MatView<double>{C.data(), p.m, p.n, p.ldc, false}, xn::ScalarKind::Zero,
        false, opt, nullptr, -1, report);
  };
  const int planned = xn::choose_levels(128, 128, 128, 16, 4);
  xn::GemmReport report;
  ASSERT_EQ(call(&report), xn::Status::Ok);
  EXPECT_EQ(hooks.scans, 1);
  EXPECT_EQ(hooks.grid, xn::scale_grid_levels(128, 128, 128, planned));
  EXPECT_TRUE(report.scale_limited);
  EXPECT_EQ(report.scale_planned, planned);
  EXPECT_EQ(report.levels, 0);
  hooks.nonfinite = true;  // NaN or Inf: the depth stays
  ASSERT_EQ(call(&report), xn::Status::Ok);
  EXPECT_FALSE(report.scale_limited);
  EXPECT_EQ(report.levels, planned);
  hooks.negative = true;
  ASSERT_EQ(call(&report), xn::Status::Ok);
  EXPECT_TRUE(report.fell_back);
  EXPECT_EQ(report.levels, 0);
}

// The CPU scan's maxima: a single large entry lands in its block (op()
// orientation, for each transpose), and a negative entry still falls back.
TEST(NgemmScaling, CpuScanPlacesMaximaInOpOrientation) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  for (int trial = 0; trial < 8; ++trial) {
    Problem<double> p;
    p.m = 100 + trial;
    p.n = 90;
    p.k = 110 - trial;
    p.ta = trial % 2 == 1;
    p.tb = trial % 4 >= 2;
    p.draw(rng, nullptr);
    // One huge entry in op(A) bottom-right: alone it mixes into other
    // quadrants' C, so the checked call must lose depth; placed through
    // a_at, i.e. wherever the transpose stores it.
    p.a_at(p.m - 1, p.k - 1) = 1e9;
    p.exact.clear();
    xn_test::exact_gemm<double>(p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda,
                                p.B.data(), p.ldb, p.beta, p.C0.data(), p.ldc, p.exact);
    int levels = -1;
    const std::vector<double> C = p.run(small_leaf(true), &levels);
    EXPECT_LT(levels, xn::choose_levels(p.m, p.n, p.k, 16, 4)) << p.describe();
    std::string where;
    EXPECT_LE(p.worst_ratio(C, &where), 1.0) << p.describe() << ": " << where;
  }
}

}  // namespace
