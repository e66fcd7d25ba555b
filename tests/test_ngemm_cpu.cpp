// test_ngemm_cpu.cpp - the CPU backend against the exact MPFR oracle:
// a sweep of shapes, transposes, leading dimensions, alpha/beta and
// recursion depths under a componentwise error bound; the preload-versus-
// recursion claim of Badin et al., ICS'13, §4.1; NaN/Inf propagation; the non-negative
// check; the workspace limit; B-side temporaries stored non-transposed for
// a transposed op(B); the public host API on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/executor.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/host_state.h"
#include "support/mpfr_oracle.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::unit_roundoff;

using xn::CpuLeaf;
using xn_test::Dist;
using xn_test::ExactEntry;

template <class T>
double gamma_n(std::int64_t n) {
  const double nu = double(n) * unit_roundoff<T>();
  return nu / (1 - nu);
}
template <class T>
const char *type_name() {
  return sizeof(T) == sizeof(double) ? "double" : "float";
}

// ---------------------------------------------------------------------------
// The error bounds
//
// Componentwise, with `magnitude` from the oracle:
//
//   |C - C_exact|_ij <= c_L * gamma_{k+2} * (|alpha| (|A||B|)_ij + |beta||C_ij|)
//
// gamma_{k+2}, not gamma_k: BLAS's own bound for alpha*A*B + beta*C counts
// the roundings of alpha * (.) and of the addition of beta*C (it matters only
// for tiny k; at k = 0 the result is beta*C rounded once). c_0 = 1: the
// classical product (OpenBLAS or the preload loop) meets it for any data.
//
// Derivation of c_L, first order in u, for L levels of the schedule of seed
// 000 Table 1 on non-negative A, B. Let a, b bound the entries of |alpha|
// op(A) and op(B), h = k/2, and G_L(k) (operands of any sign), N_L(k)
// (non-negative operands) bound the error of L levels in units of u a b.
//  * Leaf: gamma_k |A||B| + alpha's rounding: G_0 = N_0 = k (k + 1).
//  * Accumulating into existing content d (beta = 1) rounds d again R_L
//    times: R_0 = 3 (the fold, or OpenBLAS's beta scaling and up to two k
//    blocks at the k <= 512 used here), R_L = R_{L-1} + 2 (C12 gets two
//    folds and one accumulating product). beta*C is rounded R_L times in
//    the core and R_0 more by the k-strip.
//  * Any signs: |S1|,|S3| <= 2a, |S2| <= 3a, |S4| <= 4a (likewise T), so the
//    worst quadrant C12 = M1 + M6 + M5 + M3 weighs the sub-product errors by
//    1 + 9 + 4 + 4 = 18 (Higham, ASNA 2nd ed. §23.2.2). The pre-addition
//    roundings propagated through the products and the roundings of the
//    partial sums into U and C12 add (65 + 15 R_{L-1}) h:
//      G_L(k) = 18 G_{L-1}(h) + (65 + 15 R_{L-1}) h.
//  * Non-negative top level: |S1|,|S2|,|S4| <= 2a, |S3| <= a, |T2|,|T4| <=
//    2b, |T1|,|T3| <= b, weights 1 + 4 + 2 + 2 = 9, and below it the
//    sub-products have mixed signs:
//      N_L(k) = 9 G_{L-1}(h) + (33 + 8 R_{L-1}) h.
// Leading term: N_L ~ (9/4) (18/4)^(L-1) k^2, a factor 4.5 per level (the
// leaf's k halves, the operands of the products grow 18-fold in all). This
// bound is normwise, u a b N_L(k) (asserted as such below, for every run).
// For uniform [0,1] data the componentwise scale (|A||B|)_ij ~ |alpha| k/4 is
// within a small factor of |alpha| k a b, so c_L = 4 N_L(k) / (k (k + 2)),
// which tends to 9 * 4.5^(L-1) as k grows. Where the library recurses (every
// dimension of a leaf at least the leaf size, here 16, so k >= 16 * 2^L) the
// lower-order terms are largest at the smallest k, which gives the stated
// constants
//   c_0 = 1, c_1 = 13, c_2 = 60, c_3 = 271       (k -> inf: 9, 40.5, 182)
// These are worst cases: every rounding error of the same sign, every
// operand at its largest. Measured in the library's regime the ratio stays
// below about 0.2 at every depth (the sweep prints it), so the sweep also
// asserts the empirical claim of Badin et al., ICS'13, §4.2, that on non-negative data
// the schedule is as accurate as the classical product: ratio <= c_0 = 1.
//
// A componentwise bound cannot hold for every non-negative input: an error
// of M6 = (A21 + A22 - A11)(B22 - B12 + B11) lands in C12 even when A11, A12
// are tiny and A21, A22 huge. So it is asserted only where the recursion is
// one the library would choose (leaf >= 16) on uniform data; recursion forced
// onto tiny shapes (e.g. 2x2x2 at one level, where an entry of C can be 0.02
// while its neighbours are 1) is held to the normwise bound, the theorem.
constexpr double kStatedC[] = {1, 13, 60, 271};

int residue_rounds(int levels) { return 3 + 2 * levels; }  // R_L
double coeff_any_sign(int levels, double k) {              // G_L(k)
  if (levels == 0) return k * (k + 1);
  return 18 * coeff_any_sign(levels - 1, k / 2) +
         (65 + 15 * residue_rounds(levels - 1)) * k / 2;
}
double coeff_nonneg(int levels, double k) {  // N_L(k)
  if (levels == 0) return k * (k + 1);
  return 9 * coeff_any_sign(levels - 1, k / 2) +
         (33 + 8 * residue_rounds(levels - 1)) * k / 2;
}
// The whole call on the core (k rounded down to a multiple of 2^L) plus the
// k-strip added to it by one more leaf, whose addition rounds the core again.
double coeff_call(int levels, std::int64_t k, bool nonneg) {
  const std::int64_t ck = k & ~((std::int64_t(1) << levels) - 1), ks = k - ck;
  const double core =
      nonneg ? coeff_nonneg(levels, double(ck)) : coeff_any_sign(levels, double(ck));
  return core + double(ks) * double(ks + 1) + residue_rounds(0) * double(ck);
}
// c_L(k) of the derivation (for printing; kStatedC is its regime maximum).
double c_derived(int levels, std::int64_t k) {
  return levels == 0 ? 1.0 : 4 * coeff_call(levels, k, true) / (double(k) * (k + 2));
}

// ---------------------------------------------------------------------------
// A GEMM problem, its inputs and its exact result.

constexpr double kPadC = -12345.0;  // C's padding rows: must stay untouched

template <class T>
struct Problem {
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  T alpha = 1, beta = 0;
  std::vector<T> A, B, C0;  // C0 is all NaN when beta == 0
  std::vector<ExactEntry> exact;

  // Draws the inputs (padding NaN for A and B, kPadC for C) and solves.
  void draw(std::mt19937_64 &rng, Dist dist, int pad = 3) {
    const std::int64_t ar = ta ? k : m, ac = ta ? m : k;
    const std::int64_t br = tb ? n : k, bc = tb ? k : n;
    lda = std::max<std::int64_t>(1, ar + pad);
    ldb = std::max<std::int64_t>(1, br + pad + 1);
    ldc = std::max<std::int64_t>(1, m + pad + 2);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    xn_test::fill(A, ar, ac, lda, dist, rng, nan);
    xn_test::fill(B, br, bc, ldb, dist, rng, nan);
    xn_test::fill(C0, m, n, ldc, Dist::Uniform01, rng, T(kPadC));
    if (beta == T(0))  // BLAS: C is not read, so it may hold anything
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) C0[std::size_t(i + j * ldc)] = nan;
  }
  void solve() {
    xn_test::exact_gemm<T>(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                           C0.data(), ldc, exact);
  }
  std::string describe() const {
    std::ostringstream s;
    s << type_name<T>() << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta
      << " tb=" << tb << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc
      << " alpha=" << alpha << " beta=" << beta;
    return s.str();
  }
  // max |op(A)|, max |op(B)| over the stored entries (padding excluded).
  double max_abs_a() const { return max_abs(A, ta ? k : m, ta ? m : k, lda); }
  double max_abs_b() const { return max_abs(B, tb ? n : k, tb ? k : n, ldb); }
  static double max_abs(const std::vector<T> &X, std::int64_t r, std::int64_t c,
                        std::int64_t ld) {
    double v = 0;
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t i = 0; i < r; ++i)
        v = std::max(v, std::fabs(double(X[std::size_t(i + j * ld)])));
    return v;
  }
  // op(A)(i, p) and op(B)(p, j) in their storage.
  T &a_at(std::int64_t i, std::int64_t p) {
    return A[std::size_t(ta ? p + i * lda : i + p * lda)];
  }
  T &b_at(std::int64_t p, std::int64_t j) {
    return B[std::size_t(tb ? j + p * ldb : p + j * ldb)];
  }
  const ExactEntry &at(std::int64_t i, std::int64_t j) const {
    return exact[std::size_t(i + j * m)];
  }
  T &c(std::vector<T> &C, std::int64_t i, std::int64_t j) const {
    return C[std::size_t(i + j * ldc)];
  }
};

template <class T>
std::vector<T> run_cpu(const Problem<T> &p, int levels, CpuLeaf leaf,
                       const xn::Options &opt, bool *used_fallback = nullptr,
                       bool *t_normal = nullptr) {
  std::vector<T> C = p.C0;
  const xn::Status st = xn::cpu_ngemm<T>(
      p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta,
      C.data(), p.ldc, opt, levels, leaf, used_fallback, t_normal);
  EXPECT_EQ(st, xn::Status::Ok) << p.describe();
  return C;
}

// How a run is judged: the normwise bound of the derivation always (for
// the core; the peeled strips are classical products and meet c_0), and the
// componentwise bound with constant c where `componentwise` is set.
struct Judge {
  int levels = 0;             // the depth that actually ran
  bool componentwise = true;  // assert err <= c gamma_{k+2} magnitude
  double c = 1;
  bool nonneg = true;  // N_L (non-negative operands) or G_L
};

// Neglected O(u^2) terms: below (number of roundings in a chain) * u.
constexpr double kSecondOrder = 1.01;

struct Measured {
  double max_ratio = 0;       // max err / (gamma_{k+2} magnitude)
  double max_norm_ratio = 0;  // max err / normwise bound over the recursion's core
  std::string failure;        // empty if every entry is within the bounds
};

template <class T>
Measured measure(const Problem<T> &p, std::vector<T> &C, const Judge &jd) {
  Measured r;
  const double g = gamma_n<T>(p.k + 2), u = unit_roundoff<T>();
  const double ab = std::fabs(double(p.alpha)) * p.max_abs_a() * p.max_abs_b();
  const double coeff = jd.levels == 0 ? 0 : coeff_call(jd.levels, p.k, jd.nonneg);
  const double beta_rounds = residue_rounds(jd.levels) + residue_rounds(0);
  // Entries the recursion computes (the rest are classical strips).
  const xn::CoreShape core = xn::core_shape(p.m, p.n, p.k, jd.levels);
  auto in_core = [&](std::int64_t i, std::int64_t j) {
    return jd.levels > 0 && core.k > 0 && i < core.m && j < core.n;
  };
  for (std::int64_t j = 0; j < p.n; ++j) {
    for (std::int64_t i = p.m; i < p.ldc; ++i)
      if (p.c(C, i, j) != T(kPadC) && r.failure.empty())
        r.failure = "padding of C written at row " + std::to_string(i);
    for (std::int64_t i = 0; i < p.m; ++i) {
      const ExactEntry &e = p.at(i, j);
      const double got = double(p.c(C, i, j));
      const double err = xn_test::abs_error(got, e);
      const double comp = g * e.magnitude;
      double ratio = err == 0 ? 0 : comp > 0 ? err / comp : INFINITY;
      if (std::isnan(ratio)) ratio = INFINITY;
      r.max_ratio = std::max(r.max_ratio, ratio);
      const double bc =
          p.beta == T(0) ? 0 : std::fabs(double(p.beta) * double(p.C0[i + j * p.ldc]));
      const double norm = kSecondOrder * u * (coeff * ab + beta_rounds * bc);
      if (in_core(i, j) && err > 0)
        r.max_norm_ratio =
            std::max(r.max_norm_ratio, std::isnan(err) ? INFINITY : err / norm);
      const bool ok = err <= std::max(comp, norm) && (!jd.componentwise || ratio <= jd.c);
      if (!ok && r.failure.empty()) {
        std::ostringstream s;
        s.precision(17);
        s << "entry (" << i << "," << j << "): got " << got << " exact " << e.hi << " + "
          << e.lo << ", err " << err << " = " << ratio << " gamma_{k+2} magnitude"
          << " (componentwise: "
          << (jd.componentwise ? "c_L = " + std::to_string(jd.c)
                               : std::string("not asserted"))
          << "; normwise bound " << norm << ")";
        r.failure = s.str();
      }
    }
  }
  return r;
}

// Max and mean relative error |c - exact| / |exact| (exact is never 0 on
// uniform data).
struct RelativeError {
  double max = 0, mean = 0;
};
template <class T>
RelativeError relative_error(const Problem<T> &p, std::vector<T> &C) {
  RelativeError r;
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      const ExactEntry &e = p.at(i, j);
      const double rel = xn_test::abs_error(double(p.c(C, i, j)), e) / std::fabs(e.hi);
      r.max = std::max(r.max, rel);
      r.mean += rel;
    }
  r.mean /= double(p.m * p.n);
  return r;
}

const char *leaf_name(CpuLeaf leaf) {
  return leaf == CpuLeaf::OpenBlas ? "openblas" : "preload";
}

constexpr int kLeaf = 16;
constexpr int kMaxLevels = 3;

// Depth `levels` is one the library would choose with leaf 16 when every
// dimension of the core halved `levels` times is still at least 16.
bool library_regime(std::int64_t m, std::int64_t n, std::int64_t k, int levels) {
  return levels <= xn::choose_levels(m, n, k, kLeaf, kMaxLevels);
}

// ---------------------------------------------------------------------------
// The derivation's own consistency: the stated constants cover c_L(k) for
// every k the library recurses on, and approach the leading term.

TEST(CpuAccuracyBound, StatedConstantsCoverTheDerivation) {
  for (int l = 1; l <= kMaxLevels; ++l) {
    for (std::int64_t k = std::int64_t(kLeaf) << l; k <= 20000; ++k)
      ASSERT_LE(c_derived(l, k), kStatedC[l]) << "L" << l << " k=" << k;
    const double leading = 9 * std::pow(4.5, l - 1);
    EXPECT_NEAR(c_derived(l, std::int64_t(1) << 24) / leading, 1.0, 0.01) << "L" << l;
    std::printf("c_%d: stated %g, derived %.1f at k=%d, %.1f at k=512, -> %.2f\n", l,
                kStatedC[l], c_derived(l, std::int64_t(kLeaf) << l), kLeaf << l,
                c_derived(l, 512), leading);
  }
}

// ---------------------------------------------------------------------------
// a, b: the sweep.

// Explicit depths 0..3, then -1: the automatic choice (leaf 16, <= 3 levels).
constexpr int kDepths[] = {0, 1, 2, 3, -1};

struct Shape {
  int m, n, k;
};
// clang-format off
const Shape kShapes[] = {
    {0, 7, 5}, {7, 0, 5}, {6, 7, 0},                    // empty C, k = 0
    {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {5, 5, 5}, {9, 9, 9},  // tiny
    {kLeaf - 1, kLeaf - 1, kLeaf - 1}, {kLeaf, kLeaf, kLeaf},
    {kLeaf + 1, kLeaf + 1, kLeaf + 1},                  // around the leaf
    {2 * kLeaf - 1, 2 * kLeaf + 1, 2 * kLeaf - 1},      // around one level
    {2 * kLeaf + 1, 2 * kLeaf - 1, 2 * kLeaf + 1}, {2 * kLeaf, 2 * kLeaf, 2 * kLeaf},
    {37, 37, 37}, {63, 63, 63}, {64, 64, 64}, {65, 65, 65},
    {101, 101, 101}, {131, 131, 131}, {129, 133, 140},  // odd primes, 3 levels
    {1, 200, 3}, {200, 1, 150}, {7, 130, 260},          // thin
    {130, 260, 7}, {64, 37, 129},                       // rectangular
};
// clang-format on

struct SweepStats {
  // Max err / (gamma magnitude) per depth, in the library's regime and for
  // recursion forced onto smaller shapes.
  double regime[kMaxLevels + 1] = {}, forced[kMaxLevels + 1] = {};
  double normwise[kMaxLevels + 1] = {};  // max err / normwise bound
  int runs = 0, failures = 0;
};

template <class T>
void check_all_depths(const Problem<T> &p, SweepStats &stats, std::uint64_t seed) {
  xn::Options opt;
  opt.leaf_s = opt.leaf_d = kLeaf;
  opt.max_levels = kMaxLevels;
  for (int depth : kDepths)
    for (CpuLeaf leaf : {CpuLeaf::OpenBlas, CpuLeaf::PreloadLoop}) {
      Judge jd;
      jd.levels =
          depth >= 0 ? depth : xn::choose_levels(p.m, p.n, p.k, kLeaf, kMaxLevels);
      jd.componentwise = library_regime(p.m, p.n, p.k, jd.levels);
      jd.c = kStatedC[jd.levels];
      std::vector<T> C = run_cpu(p, depth, leaf, opt);
      const Measured r = measure(p, C, jd);
      ++stats.runs;
      double &worst =
          jd.componentwise ? stats.regime[jd.levels] : stats.forced[jd.levels];
      worst = std::max(worst, r.max_ratio);
      stats.normwise[jd.levels] = std::max(stats.normwise[jd.levels], r.max_norm_ratio);
      if (!r.failure.empty() && ++stats.failures <= 5)
        ADD_FAILURE() << p.describe() << " levels=" << depth
                      << " leaf=" << leaf_name(leaf) << ": " << r.failure << "; "
                      << xn_test::describe_seed(seed);
    }
}

template <class T>
void sweep() {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  auto random_scalar = [&] { return T(0.5 + 1.5 * xn_test::uniform01(rng)); };
  SweepStats stats;
  int turn = 0;
  for (const Shape &s : kShapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        // All 12 (alpha, beta) pairs on small shapes; on large ones three per
        // transpose pair, so all 12 over the four.
        const T alphas[] = {T(1), T(0), random_scalar()};
        const T betas[] = {T(0), T(1), random_scalar(), T(-1.5)};
        const bool small = std::int64_t(s.m) * s.n * s.k <= 40000;
        for (int ab = 0; ab < 12; ++ab) {
          if (!small && (ab + turn) % 4 != 0) continue;
          Problem<T> p;
          p.ta = ta;
          p.tb = tb;
          p.m = s.m;
          p.n = s.n;
          p.k = s.k;
          p.alpha = alphas[ab % 3];
          p.beta = betas[ab / 3];
          p.draw(rng, Dist::Uniform01);
          p.solve();
          check_all_depths(p, stats, seed);
        }
        ++turn;
      }
  std::printf("%s sweep, %d runs: max err / (gamma_{k+2} magnitude)\n", type_name<T>(),
              stats.runs);
  for (int l = 0; l <= kMaxLevels; ++l)
    std::printf(
        "  L%d: %.3g in the library's regime (c_L = %g), %.3g forced onto small "
        "shapes; err / normwise bound <= %.3g\n",
        l, stats.regime[l], kStatedC[l], stats.forced[l], stats.normwise[l]);
  for (int l = 0; l <= kMaxLevels; ++l) {
    // The measurement measures something: rounding errors do occur.
    EXPECT_GT(stats.regime[l], 0) << "L" << l;
    // Badin et al., ICS'13, §4.2: on non-negative inputs the schedule behaves like the
    // classical product in accuracy. Measured: at most about 0.2 at every
    // depth, so c_0 = 1 holds with room, far inside the worst-case c_L.
    EXPECT_LE(stats.regime[l], 1.0) << "L" << l << ": " << xn_test::describe_seed(seed);
  }
}

TEST(CpuAccuracy, SweepDouble) { sweep<double>(); }
TEST(CpuAccuracy, SweepFloat) { sweep<float>(); }

// ---------------------------------------------------------------------------
// c: Badin et al., ICS'13, §4.1. A preload leaf (one running sum along k per entry, as a
// GPU GEMM does) accumulates rounding errors along chains of length k; the
// recursion cuts them to k / 2^L, so three levels over preload leaves are
// more accurate than the preload loop over the whole product.

TEST(CpuAccuracy, RecursionOverPreloadLeavesBeatsThePreloadLoop) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  Problem<float> p;
  p.m = p.n = p.k = 512;  // leaves of 64 at three levels
  p.draw(rng, Dist::Uniform01, 0);
  p.solve();
  const xn::Options opt;
  std::vector<float> flat = run_cpu(p, 0, CpuLeaf::PreloadLoop, opt);
  std::vector<float> rec = run_cpu(p, 3, CpuLeaf::PreloadLoop, opt);
  std::vector<float> blas = run_cpu(p, 0, CpuLeaf::OpenBlas, opt);
  const RelativeError e_flat = relative_error(p, flat), e_rec = relative_error(p, rec),
                      e_blas = relative_error(p, blas);
  std::printf(
      "float 512^3, relative error max (mean): preload loop %.3g (%.3g), 3 levels "
      "over preload leaves of 64 %.3g (%.3g), %.2fx (%.2fx) better; OpenBLAS %.3g "
      "(%.3g)\n",
      e_flat.max, e_flat.mean, e_rec.max, e_rec.mean, e_flat.max / e_rec.max,
      e_flat.mean / e_rec.mean, e_blas.max, e_blas.mean);
  // Measured over 38 seeds: the max 1.8x to 2.8x better (median 2.3x), the
  // mean error 3.0x to 3.1x better.
  EXPECT_GE(e_flat.max, 1.5 * e_rec.max) << xn_test::describe_seed(seed);
  EXPECT_GE(e_flat.mean, 2.5 * e_rec.mean) << xn_test::describe_seed(seed);
  EXPECT_GT(e_rec.max, 0);
}

// ---------------------------------------------------------------------------
// d: NaN and Inf. Only +, - and * are used, none of which turns a
// non-finite value into a finite one, so every entry the classical product
// makes non-finite must be non-finite here too. The converse is not
// required: Winograd's pre-additions mix quadrants, so an Inf or NaN in A
// or B can turn entries the classical product leaves finite into NaN (e.g.
// Inf - Inf in S2 = S1 - A11), which xngemm.h documents; they are only
// counted.

template <class T>
void nonfinite_case(int placement, bool ta, bool tb, int levels, CpuLeaf leaf,
                    std::mt19937_64 &rng, std::uint64_t seed, int &spread) {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Problem<T> p;
  p.ta = ta;
  p.tb = tb;
  p.m = 67;  // odd sizes: the peeled strips see the non-finite values too
  p.n = 69;
  p.k = 71;
  p.beta = placement == 0 ? T(0) : T(0.75);
  p.draw(rng, Dist::Uniform01);
  auto pick = [&](std::int64_t hi) { return std::int64_t(rng() % std::uint64_t(hi)); };
  switch (placement) {
    case 0:
      p.a_at(pick(64), pick(64)) = inf;
      break;  // in the core
    case 1:
      p.b_at(pick(64), pick(64)) = nan;
      break;
    default:  // in the strips: last row of A, last k, last column of B
      p.a_at(p.m - 1, p.k - 1) = inf;
      p.b_at(pick(p.k), p.n - 1) = inf;
      p.a_at(pick(p.m), pick(p.k)) = nan;
  }
  p.solve();
  const xn::Options opt;
  std::vector<T> C = run_cpu(p, levels, leaf, opt);
  int classical_nonfinite = 0;
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      const bool exact_finite = std::isfinite(p.at(i, j).hi);
      const bool got_finite = std::isfinite(p.c(C, i, j));
      if (!exact_finite) {
        ++classical_nonfinite;
        ASSERT_FALSE(got_finite)
            << "entry (" << i << "," << j << ") = " << p.c(C, i, j)
            << " is finite, classical " << p.at(i, j).hi << "; " << p.describe()
            << " levels=" << levels << " leaf=" << leaf_name(leaf)
            << " placement=" << placement << "; " << xn_test::describe_seed(seed);
      } else if (!got_finite) {
        ++spread;
      }
    }
  ASSERT_GT(classical_nonfinite, 0) << "the case tests nothing";
}

TEST(CpuAccuracy, NonFiniteInputsStayNonFinite) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  int spread = 0, cases = 0;
  for (int placement = 0; placement < 3; ++placement)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int levels = 0; levels <= 3; ++levels)
          for (CpuLeaf leaf : {CpuLeaf::OpenBlas, CpuLeaf::PreloadLoop}) {
            nonfinite_case<double>(placement, ta, tb, levels, leaf, rng, seed, spread);
            nonfinite_case<float>(placement, ta, tb, levels, leaf, rng, seed, spread);
            cases += 2;
          }
  std::printf("%d cases: %d entries finite in the classical product became NaN/Inf\n",
              cases, spread);
}

// ---------------------------------------------------------------------------
// e: the non-negative check (opt.check_nonneg).

template <class T>
void nonneg_check() {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  constexpr int kLevels = 2;
  for (int variant = 0; variant < 5; ++variant) {
    Problem<T> p;
    p.m = 70;
    p.n = 66;
    p.k = 68;
    p.tb = variant == 3;
    p.beta = T(0.75);
    p.draw(rng, Dist::Uniform01);
    // The scan must look at the matrices only, not at their padding.
    for (std::int64_t j = 0; j < p.k; ++j)
      for (std::int64_t i = p.m; i < p.lda; ++i) p.A[std::size_t(i + j * p.lda)] = T(-1);
    p.a_at(1, 2) = T(-0.0);  // not negative
    xn::Options opt;
    opt.check_nonneg = variant == 4 ? 0 : 1;
    bool negative = true;
    if (variant == 1)
      p.a_at(0, 0) = T(-0.25);
    else if (variant == 2)
      p.a_at(p.m - 1, p.k - 1) = T(-1e-30);  // the last entry
    else if (variant >= 3)
      p.b_at(5, 7) = T(-0.5);
    else
      negative = false;
    p.solve();
    bool used_fallback = !negative;
    std::vector<T> C = run_cpu(p, kLevels, CpuLeaf::OpenBlas, opt, &used_fallback);
    Judge jd;
    if (variant == 4) {
      // Unchecked mixed signs: a correct product within the normwise bound
      // for operands of any sign (G_L), not componentwise.
      EXPECT_FALSE(used_fallback);
      jd.levels = kLevels;
      jd.componentwise = false;
      jd.nonneg = false;
    } else if (negative) {
      EXPECT_TRUE(used_fallback) << "variant " << variant;
      jd.levels = 0;  // the classical product: c_0, componentwise
    } else {
      EXPECT_FALSE(used_fallback);
      jd.levels = kLevels;
      jd.c = kStatedC[kLevels];
    }
    const Measured r = measure(p, C, jd);
    EXPECT_TRUE(r.failure.empty()) << p.describe() << " variant " << variant << ": "
                                   << r.failure << "; " << xn_test::describe_seed(seed);
  }
}

TEST(CpuAccuracy, NonNegativeCheckFallsBackToTheClassicalProduct) {
  nonneg_check<double>();
  nonneg_check<float>();
}

// ---------------------------------------------------------------------------
// f: the workspace limit. A limit too small for any level runs the classical
// product; otherwise the deepest depth (<= the one asked for) whose workspace
// fits runs. With preload leaves every depth rounds differently and
// deterministically, so the depth that ran shows bit for bit.

void workspace_case(const Shape &s, bool every_depth) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  Problem<double> p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.tb = true;
  p.alpha = 0.75;
  p.beta = 1;
  p.draw(rng, Dist::Uniform01);
  p.solve();
  // What the call uses (double NT: T non-transposed by default).
  const xn::TempOrientation o = xn::temp_orientation(xn::Options(), true, p.ta, p.tb);
  // The least each depth can run with (without the packed quadrant of op(B),
  // which is given up before a level) and what it asks for first.
  std::int64_t bytes[4], packed_bytes[4];
  for (int l = 0; l <= 3; ++l) {
    bytes[l] =
        std::int64_t(sizeof(double)) *
        xn::call_workspace_elems(p.m, p.n, p.k, l, o.a_layout, p.tb, o.t_normal, false);
    packed_bytes[l] =
        std::int64_t(sizeof(double)) *
        xn::call_workspace_elems(p.m, p.n, p.k, l, o.a_layout, p.tb, o.t_normal, true);
  }
  std::printf(
      "%dx%dx%d workspace bytes by depth: %lld %lld %lld %lld (packed: %lld %lld %lld)\n",
      s.m, s.n, s.k, (long long)bytes[0], (long long)bytes[1], (long long)bytes[2],
      (long long)bytes[3], (long long)packed_bytes[1], (long long)packed_bytes[2],
      (long long)packed_bytes[3]);
  auto deepest_fitting = [&](std::int64_t limit) {
    if (limit < 0) return 3;
    for (int l = 3; l > 0; --l)
      if (bytes[l] <= limit) return l;
    return 0;
  };

  xn::Options opt;
  std::vector<double> by_depth[4];
  for (int l = 0; l <= 3; ++l) by_depth[l] = run_cpu(p, l, CpuLeaf::PreloadLoop, opt);
  for (int l = 0; l < 3; ++l)
    ASSERT_NE(by_depth[l], by_depth[3])
        << "depths " << l << " and 3 agree: the test is void";

  bool seen[4] = {};
  for (std::int64_t limit :
       {std::int64_t(0), std::int64_t(-1), bytes[1] - 1, bytes[1], bytes[2] - 1, bytes[2],
        bytes[3] - 1, bytes[3], packed_bytes[1], packed_bytes[2] - 1, packed_bytes[3]}) {
    const int expect = deepest_fitting(limit);
    seen[expect] = true;
    opt.workspace_limit = limit;
    std::vector<double> C = run_cpu(p, 3, CpuLeaf::PreloadLoop, opt);
    EXPECT_TRUE(C == by_depth[expect])
        << "limit " << limit << ": not the result of depth " << expect << "; "
        << xn_test::describe_seed(seed);
    Judge jd;
    jd.levels = expect;
    jd.c = kStatedC[expect];
    const Measured r = measure(p, C, jd);
    EXPECT_TRUE(r.failure.empty())
        << "limit " << limit << ": " << r.failure << "; " << xn_test::describe_seed(seed);
    // OpenBLAS leaves under the same limit: within the bound of that depth.
    std::vector<double> Cb = run_cpu(p, 3, CpuLeaf::OpenBlas, opt);
    const Measured rb = measure(p, Cb, jd);
    EXPECT_TRUE(rb.failure.empty()) << "limit " << limit << " (openblas): " << rb.failure
                                    << "; " << xn_test::describe_seed(seed);
  }
  if (every_depth) {
    EXPECT_TRUE(seen[0] && seen[1] && seen[2] && seen[3]) << "the limits miss a depth";
  }
}

TEST(CpuAccuracy, WorkspaceLimitLowersTheDepth) {
  // Even halves at every depth: the workspace grows with the depth, and each
  // depth is reachable by a limit.
  workspace_case({128, 128, 128}, true);
  // Odd sizes: a shallower recursion peels less and its odd halves round
  // their temporaries up to 64 rows, so it can need more workspace than a
  // deeper one; the limit then skips to the classical product.
  workspace_case({130, 132, 134}, false);
}

// ---------------------------------------------------------------------------
// g: B-side temporaries stored non-transposed (XN_OPT_PACK_TRANS_B, plan.h
// stores_t_normal). With op(B) transposed, T1..T4 of Badin et al., ICS'13, Table 1 are
// formed by transposing add/subs into a non-transposed T, so the products
// that read T (M4..M7) get a non-transposed B while M1..M3 read B's
// quadrants as transposed views. T holds the same values either way and the
// preload leaf is blind to orientation, so with it the call gives, bit for
// bit, what the same call gives on op(B) stored by the caller (transb = N).
// cpu_ngemm reports whether T was stored non-transposed.

template <class T>
bool same_bits(const std::vector<T> &x, const std::vector<T> &y) {
  return x.size() == y.size() &&
         std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// The same problem with op(B) stored non-transposed (leading dimension k +
// 5, NaN padding), as a caller would transpose it.
template <class T>
Problem<T> with_explicit_op_b(const Problem<T> &p) {
  Problem<T> q = p;
  q.tb = false;
  q.ldb = p.k + 5;
  q.B.assign(std::size_t(q.ldb * std::max<std::int64_t>(p.n, 1)),
             std::numeric_limits<T>::quiet_NaN());
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.k; ++i)
      q.B[std::size_t(i + j * q.ldb)] = p.B[std::size_t(j + i * p.ldb)];
  return q;
}

// Leaf 16, at most 3 levels, no crossover, and the option's value.
xn::Options small_leaf_options(std::int64_t normal_b_temps) {
  xn::Options opt;
  opt.leaf_s = opt.leaf_d = kLeaf;
  opt.max_levels = kMaxLevels;
  opt.min_size_s = opt.min_size_d = 0;
  opt.normal_b_temps = normal_b_temps;
  return opt;
}

// Every transpose pair, odd and rectangular sizes (peeled strips at every
// depth), padded leading dimensions (Problem::draw: NaN padding in A and B),
// 1-3 levels and the automatic depth, both leaves: within the bound of the
// depth; with the preload leaf bitwise the run with T transposed and the run
// on the caller's transpose of op(B).
template <class T>
void normal_t_sweep(std::uint64_t seed, int &runs) {
  std::mt19937_64 rng(seed);
  const bool is_double = sizeof(T) == sizeof(double);
  const xn::Options on = small_leaf_options(1), off = small_leaf_options(0),
                    automatic = small_leaf_options(-1);
  const Shape shapes[] = {{67, 69, 71}, {131, 129, 133}, {37, 101, 65}, {100, 36, 130}};
  const T scalars[][2] = {
      {T(1), T(0)}, {T(0.75), T(0)}, {T(1), T(1)}, {T(1.25), T(-1.5)}};
  int turn = 0;
  for (const Shape &s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int ab = 0; ab < 2; ++ab) {
          const T *alpha_beta = scalars[(turn++ + ab) % 4];
          Problem<T> p;
          p.ta = ta;
          p.tb = tb;
          p.m = s.m;
          p.n = s.n;
          p.k = s.k;
          p.alpha = alpha_beta[0];
          p.beta = alpha_beta[1];
          p.draw(rng, Dist::Uniform01);
          p.solve();
          const Problem<T> q = tb ? with_explicit_op_b(p) : p;
          const std::string what = p.describe() + "; " + xn_test::describe_seed(seed);
          for (int depth : {1, 2, 3, -1})
            for (CpuLeaf leaf : {CpuLeaf::OpenBlas, CpuLeaf::PreloadLoop}) {
              const int levels =
                  depth >= 0 ? depth
                             : xn::choose_levels(p.m, p.n, p.k, kLeaf, kMaxLevels);
              const std::string where =
                  " depth=" + std::to_string(depth) + " leaf=" + leaf_name(leaf) + "; ";
              bool t_normal = !tb;
              std::vector<T> C = run_cpu(p, depth, leaf, on, nullptr, &t_normal);
              EXPECT_EQ(t_normal, tb && levels > 0) << where << what;
              ++runs;
              Judge jd;
              jd.levels = levels;
              jd.componentwise = library_regime(p.m, p.n, p.k, levels);
              jd.c = kStatedC[levels];
              const Measured r = measure(p, C, jd);
              EXPECT_TRUE(r.failure.empty()) << where << r.failure << "; " << what;
              bool auto_normal = !(is_double && !ta && tb);
              std::vector<T> Ca =
                  run_cpu(p, depth, leaf, automatic, nullptr, &auto_normal);
              EXPECT_EQ(auto_normal, is_double && !ta && tb && levels > 0)
                  << "automatic;" << where << what;
              bool never = true;
              std::vector<T> Cn = run_cpu(p, depth, leaf, off, nullptr, &never);
              EXPECT_FALSE(never) << where << what;
              if (leaf == CpuLeaf::PreloadLoop) {  // orientation-blind leaf
                EXPECT_TRUE(same_bits(C, Cn)) << "T stored either way;" << where << what;
                EXPECT_TRUE(same_bits(C, Ca)) << where << what;
                EXPECT_TRUE(same_bits(C, run_cpu(q, depth, leaf, off)))
                    << "not the caller's transpose;" << where << what;
              }
              if (::testing::Test::HasFailure()) return;
            }
        }
}

TEST(CpuAccuracy, NonTransposedBTempsMeetTheBoundForEveryTransposePair) {
  const std::uint64_t seed = xn_test::fresh_seed();
  int runs = 0;
  normal_t_sweep<double>(seed, runs);
  normal_t_sweep<float>(seed + 1, runs);
  std::printf("%d runs with T stored non-transposed, within the bound\n", runs);
}

// The executor itself, through a backend that records what it is asked to
// do. With T non-transposed and op(B) transposed, each B-side pre-addition
// of a level whose B is transposed is a transposing pass and the plain
// add/sub never sees mixed orientations. Without the packed quadrant, 3^L of
// the 7^L leaves (M1..M3 chains) read the caller's B transposed, and every
// level of those chains forms its T by transposing passes; with it
// (plan.h, packed_b_elems), the top level copies B11, B21, B22 transposed
// (three copies), only its own four pre-additions transpose, and no leaf of
// the recursion reads a transposed B. Nothing is written past
// call_workspace_elems. Counts the runs that packed.
template <class T>
class RecordingBackend {
 public:
  RecordingBackend(T alpha, T beta, const T *caller_b, std::size_t caller_b_elems)
      : cpu_(alpha, beta), b_(caller_b), b_end_(caller_b + caller_b_elems) {}
  xn::Status gemm(xn::MatView<const T> A, xn::MatView<const T> B, xn::ScalarKind beta,
                  xn::MatView<T> C) {
    ++gemms;
    const bool caller = B.p >= b_ && B.p < b_end_;
    if (B.trans) ++trans_b_leaves;
    if (B.trans && caller) ++trans_b_from_caller;
    return cpu_.gemm(A, B, beta, C);
  }
  xn::Status combine(const xn::CombineOp<T> &op) {
    for (int i = 0; i < op.nsrc; ++i)
      if (op.src[i].trans != op.dst[0].trans) ++mixed_add_subs;
    for (int i = 0; i < op.ndst; ++i)
      if (op.dst[i].trans != op.dst[0].trans) ++mixed_add_subs;
    return cpu_.combine(op);
  }
  xn::Status transpose_add_sub(xn::MatView<T> D, xn::MatView<const T> X,
                               xn::MatView<const T> Y, bool subtract) {
    ++transposing;
    if (D.trans || !(X.trans || Y.trans)) ++needless_transposing;
    return cpu_.transpose_add_sub(D, X, Y, subtract);
  }
  xn::Status transpose_copy(xn::MatView<T> D, xn::MatView<const T> X) {
    ++packs;
    if (D.trans || !X.trans || X.p < b_ || X.p >= b_end_) ++bad_packs;
    return cpu_.transpose_copy(D, X);
  }
  xn::Status scale(xn::MatView<T> C, xn::ScalarKind beta) { return cpu_.scale(C, beta); }

  int gemms = 0, trans_b_leaves = 0, trans_b_from_caller = 0;
  int mixed_add_subs = 0, transposing = 0, needless_transposing = 0;
  int packs = 0, bad_packs = 0;  // transposing copies; those not of the caller's B

 private:
  xn::CpuBackend<T> cpu_;
  const T *b_, *b_end_;
};

int power(int base, int e) { return e == 0 ? 1 : base * power(base, e - 1); }

template <class T>
void executor_counts(std::uint64_t seed, int &packed_runs) {
  std::mt19937_64 rng(seed);
  constexpr std::int64_t kGuard = 256;
  const T guard = T(kPadC);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int levels = 1; levels <= 3; ++levels)
        for (bool t_normal : {true, false})
          for (const Shape &s : {Shape{72, 80, 88}, Shape{67, 69, 71}}) {
            Problem<T> p;
            p.ta = ta;
            p.tb = tb;
            p.m = s.m;
            p.n = s.n;
            p.k = s.k;
            p.alpha = T(0.75);
            p.beta = T(0);
            p.draw(rng, Dist::Uniform01);
            p.solve();
            const std::int64_t elems =
                xn::call_workspace_elems(p.m, p.n, p.k, levels, ta, tb, t_normal);
            std::vector<T> ws(std::size_t(elems + kGuard), guard);
            RecordingBackend<T> be(p.alpha, p.beta, p.B.data(), p.B.size());
            std::vector<T> C = p.C0;
            const xn::MatView<const T> Av{p.A.data(), p.m, p.k, p.lda, ta};
            const xn::MatView<const T> Bv{p.B.data(), p.k, p.n, p.ldb, tb};
            const xn::MatView<T> Cv{C.data(), p.m, p.n, p.ldc, false};
            ASSERT_EQ(
                xn::recursive_gemm<T>(be, xn::nonneg_winograd_algorithm(), levels, Av, Bv,
                                      xn::ScalarKind::Zero, Cv, ws.data(), 0, t_normal),
                xn::Status::Ok);
            const std::string what = p.describe() + " levels=" + std::to_string(levels) +
                                     " t_normal=" + std::to_string(t_normal) + "; " +
                                     xn_test::describe_seed(seed);
            EXPECT_EQ(be.mixed_add_subs, 0) << what;
            EXPECT_EQ(be.needless_transposing, 0) << what;
            const bool used = tb && t_normal;
            const bool packed =
                xn::packed_b_elems(p.m, p.n, p.k, levels, ta, tb, t_normal) > 0;
            EXPECT_EQ(packed,
                      used && xn::packed_b_elems(p.m, p.n, p.k, levels, ta, tb, true) > 0)
                << what;
            packed_runs += packed;
            EXPECT_EQ(be.packs, packed ? 3 : 0) << what;
            EXPECT_EQ(be.bad_packs, 0) << what;
            EXPECT_EQ(be.transposing, !used    ? 0
                                      : packed ? 4
                                               : 2 * (power(3, levels) - 1))
                << what;
            if (s.m % 8 == 0) {  // no peeled strips: the recursion's leaves only
              EXPECT_EQ(be.gemms, power(7, levels)) << what;
              EXPECT_EQ(be.trans_b_leaves, !tb        ? 0
                                           : packed   ? 0
                                           : t_normal ? power(3, levels)
                                                      : power(7, levels))
                  << what;
              if (used) {
                EXPECT_EQ(be.trans_b_from_caller, packed ? 0 : power(3, levels)) << what;
              }
            }
            for (std::int64_t i = elems; i < elems + kGuard; ++i)
              ASSERT_EQ(ws[std::size_t(i)], guard)
                  << "wrote past the workspace; " << what;
            Judge jd;
            jd.levels = levels;
            jd.componentwise = library_regime(p.m, p.n, p.k, levels);
            jd.c = kStatedC[levels];
            const Measured r = measure(p, C, jd);
            EXPECT_TRUE(r.failure.empty()) << r.failure << "; " << what;
            // cpu_ngemm runs the same executor on the same backend.
            xn::Options opt;
            opt.normal_b_temps = t_normal ? 1 : 0;
            opt.normal_a_temps = 0;  // as the executor above
            EXPECT_TRUE(same_bits(C, run_cpu(p, levels, CpuLeaf::OpenBlas, opt))) << what;
            if (::testing::Test::HasFailure()) return;
          }
}

TEST(CpuAccuracy, NonTransposedBTempsAndPackedQuadrantsCountedByTheExecutor) {
  const std::uint64_t seed = xn_test::fresh_seed();
  int packed = 0;
  executor_counts<double>(seed, packed);
  executor_counts<float>(seed + 1, packed);
  EXPECT_GT(packed, 0) << "no run packed: the packed path is untested";
}

// The budget: T has the same shape whatever op(B)'s orientation, so
// an NT call needs the workspace of NN (a square one about a third of
// A + B + C) plus, when it fits within half of A + B + C, the packed
// quadrant of op(B) (a square one: 5/12 in all); a workspace limit of the NN
// size lets it run at full depth without packing. With preload leaves every
// depth rounds differently, so the depth that ran shows bit for bit (packing
// does not change the bits of the orientation-blind preload leaf).
TEST(CpuAccuracy, TransposedBNeedsTheWorkspaceOfNNPlusAtMostThePackedQuadrant) {
  for (const Shape &s :
       {Shape{128, 128, 128}, Shape{131, 133, 130}, Shape{67, 69, 71}, Shape{37, 101, 65},
        Shape{4096, 4096, 4096}, Shape{5003, 5003, 5003}})
    for (bool ta : {false, true})
      for (int l = 0; l <= 3; ++l) {
        const std::int64_t nn =
            xn::call_workspace_elems(s.m, s.n, s.k, l, ta, false, false);
        const std::int64_t packed = xn::packed_b_elems(s.m, s.n, s.k, l, ta, true, true);
        const double operands = double(s.m) * double(s.k) + double(s.k) * double(s.n) +
                                double(s.m) * double(s.n);
        EXPECT_EQ(xn::call_workspace_elems(s.m, s.n, s.k, l, ta, true, true), nn + packed)
            << s.m << "x" << s.n << "x" << s.k << " ta=" << ta << " L" << l;
        EXPECT_EQ(xn::call_workspace_elems(s.m, s.n, s.k, l, ta, true, true, false), nn);
        EXPECT_EQ(xn::call_workspace_elems(s.m, s.n, s.k, l, ta, false, true), nn);
        EXPECT_EQ(xn::packed_b_elems(s.m, s.n, s.k, l, ta, false, true), 0);
        EXPECT_EQ(xn::packed_b_elems(s.m, s.n, s.k, l, ta, true, false), 0);
        if (packed > 0) {
          EXPECT_LE(2 * double(nn + packed), operands);
        }
        if (l == 0) {
          EXPECT_EQ(nn, 0);
          EXPECT_EQ(packed, 0);
        }
        if (s.m == s.n && s.n == s.k && s.n >= 4096) {
          EXPECT_LE(double(nn), operands / 3 * 1.01) << s.n << " L" << l;
          if (l > 0) {  // a quarter of B's core: 5/12 of A + B + C in all
            const std::int64_t half = (s.n & ~((std::int64_t(1) << l) - 1)) / 2;
            EXPECT_EQ(packed, half * half) << s.n << " L" << l;
            EXPECT_LE(double(nn + packed), operands * 5 / 12 * 1.01) << s.n << " L" << l;
          }
        }
      }

  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  for (bool ta : {false, true}) {
    Problem<double> p;
    p.m = 131;
    p.n = 133;
    p.k = 130;
    p.ta = ta;
    p.tb = true;
    p.alpha = 0.75;
    p.beta = 1;
    p.draw(rng, Dist::Uniform01);
    p.solve();
    const std::string what = p.describe() + "; " + xn_test::describe_seed(seed);
    xn::Options opt;
    opt.normal_b_temps = 1;
    const bool a_layout = xn::temp_orientation(opt, true, ta, true).a_layout;
    std::int64_t nn_bytes[4];
    for (int l = 0; l <= 3; ++l)
      nn_bytes[l] =
          8 * xn::call_workspace_elems(p.m, p.n, p.k, l, a_layout, false, false);
    std::vector<double> by_depth[4];
    for (int l = 0; l <= 3; ++l) by_depth[l] = run_cpu(p, l, CpuLeaf::PreloadLoop, opt);
    for (int l = 0; l < 3; ++l)
      ASSERT_FALSE(same_bits(by_depth[l], by_depth[3]))
          << "depths " << l << " and 3 agree: the test is void";
    auto deepest = [&](std::int64_t limit) {
      for (int l = 3; l > 0; --l)
        if (nn_bytes[l] <= limit) return l;
      return 0;
    };
    for (std::int64_t limit :
         {std::int64_t(-1), nn_bytes[3], nn_bytes[3] - 1, nn_bytes[1], std::int64_t(0)}) {
      const int expect = limit < 0 ? 3 : deepest(limit);
      opt.workspace_limit = limit;
      bool t_normal = expect == 0;
      std::vector<double> C =
          run_cpu(p, 3, CpuLeaf::PreloadLoop, opt, nullptr, &t_normal);
      EXPECT_EQ(t_normal, expect > 0) << "limit " << limit << "; " << what;
      EXPECT_TRUE(same_bits(C, by_depth[expect]))
          << "limit " << limit << ": not the result of depth " << expect << "; " << what;
    }
  }
}

// The option's range, its environment variable, its default and the rule.
// A forced depth whose temporaries hold no element (a core thinner than
// 2^levels, here m = n = 4 at 3 levels) needs no workspace: the result must
// not depend on whether the thread already holds scratch memory (a fresh
// thread has none).
TEST(CpuAccuracy, ForcedDepthDoesNotDependOnTheThreadsScratch) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  const std::int64_t m = 4, n = 4, k = 5000;
  std::vector<double> a(std::size_t(m * k)), b(std::size_t(k * n));
  for (auto &x : a) x = double(rng() >> 11) * 0x1p-53;
  for (auto &x : b) x = double(rng() >> 11) * 0x1p-53;
  const xn::Options opt;
  auto product = [&] {
    std::vector<double> c(std::size_t(m * n), std::nan(""));
    EXPECT_EQ(xn::cpu_ngemm<double>(false, false, m, n, k, 1.0, a.data(), m, b.data(), k,
                                    0.0, c.data(), m, opt, 3),
              xn::Status::Ok);
    return c;
  };
  std::vector<double> fresh;
  std::thread([&] { fresh = product(); }).join();
  // This thread first grows its scratch memory with a recursing call.
  std::vector<double> big(256 * 256, 1.0), out(256 * 256);
  ASSERT_EQ(xn::cpu_ngemm<double>(false, false, 256, 256, 256, 1.0, big.data(), 256,
                                  big.data(), 256, 0.0, out.data(), 256, opt, 2),
            xn::Status::Ok);
  EXPECT_TRUE(same_bits(product(), fresh));
}

TEST(CpuAccuracy, NonTransposedBTempsOptionValuesAndEnvironment) {
  EXPECT_EQ(xn::Options().normal_b_temps, -1);
  xn::Options o;
  for (std::int64_t v : {-1, 0, 1}) {
    EXPECT_TRUE(xn::apply_option(o, XN_OPT_PACK_TRANS_B, v));
    std::int64_t got = 7;
    EXPECT_TRUE(xn::read_option(o, XN_OPT_PACK_TRANS_B, &got));
    EXPECT_EQ(got, v);
  }
  for (std::int64_t bad : {-2, 2, 99})
    EXPECT_FALSE(xn::apply_option(o, XN_OPT_PACK_TRANS_B, bad));
  EXPECT_EQ(o.normal_b_temps, 1);  // unchanged by the rejected values
  const char *old = std::getenv("XN_PACK_TRANS_B");
  const std::string saved = old ? old : "";
  for (const char *v : {"1", "0", "-1"}) {
    setenv("XN_PACK_TRANS_B", v, 1);
    EXPECT_EQ(xn::options_from_environment().normal_b_temps, std::atoll(v)) << v;
  }
  setenv("XN_PACK_TRANS_B", "2", 1);  // out of range: ignored
  EXPECT_EQ(xn::options_from_environment().normal_b_temps, -1);
  if (old)
    setenv("XN_PACK_TRANS_B", saved.c_str(), 1);
  else
    unsetenv("XN_PACK_TRANS_B");
  // Automatic: double precision with op(A) = A only; never without transb.
  EXPECT_TRUE(xn::stores_t_normal(-1, true, false, true));
  EXPECT_FALSE(xn::stores_t_normal(-1, true, true, true));
  EXPECT_FALSE(xn::stores_t_normal(-1, false, false, true));
  EXPECT_TRUE(xn::stores_t_normal(1, false, true, true));
  EXPECT_FALSE(xn::stores_t_normal(1, true, false, false));
  EXPECT_FALSE(xn::stores_t_normal(0, true, false, true));
  // The A side (XN_OPT_PACK_TRANS_A): automatic in double TN only; forced
  // on, a double TT call stores both sides non-transposed.
  EXPECT_TRUE(xn::stores_s_normal(-1, true, true, false));
  EXPECT_FALSE(xn::stores_s_normal(-1, true, true, true));
  EXPECT_FALSE(xn::stores_s_normal(-1, false, true, false));
  EXPECT_FALSE(xn::stores_s_normal(1, true, false, false));
  EXPECT_TRUE(xn::stores_s_normal(1, false, true, true));
  EXPECT_FALSE(xn::stores_s_normal(0, true, true, false));
  const xn::TempOrientation tt = xn::temp_orientation(-1, -1, true, true, true);
  EXPECT_TRUE(!tt.s_normal && !tt.t_normal && tt.a_layout);
  const xn::TempOrientation tt_forced = xn::temp_orientation(1, -1, true, true, true);
  EXPECT_TRUE(tt_forced.s_normal && tt_forced.t_normal && !tt_forced.a_layout);
}

// ---------------------------------------------------------------------------
// The public host API on the CPU (XN_DEVICE=cpu), with leaf 16 and at most 3
// levels, restoring the process-wide options and the environment after.

class HostApiOnCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = std::make_unique<xn_test::HostStateGuard>("cpu");
    // No crossover: the small leaf alone decides the depth.
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_MIN_SIZE_S, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_MIN_SIZE_D, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_S, kLeaf), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, kLeaf), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_MAX_LEVELS, kMaxLevels), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_CHECK_NONNEG, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_WORKSPACE_LIMIT, -1), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override { state_.reset(); }

  // Checks a result of the host API against the bound at the depth the
  // library chooses (always in its regime: leaf 16).
  template <class T>
  void check(const Problem<T> &p, std::vector<T> &C, const char *what) {
    Judge jd;
    jd.levels = xn::choose_levels(p.m, p.n, p.k, kLeaf, kMaxLevels);
    jd.c = kStatedC[jd.levels];
    const Measured r = measure(p, C, jd);
    EXPECT_TRUE(r.failure.empty())
        << what << " " << p.describe() << " levels " << jd.levels << ": " << r.failure
        << "; " << xn_test::describe_seed(seed_);
  }

  std::uint64_t seed_ = xn_test::fresh_seed();

 private:
  std::unique_ptr<xn_test::HostStateGuard> state_;  // every option, XN_DEVICE
};

TEST_F(HostApiOnCpu, FortranAndCblasEntryPointsMeetTheBounds) {
  std::mt19937_64 rng(seed_);
  const Shape shapes[] = {{131, 129, 133}, {40, 33, 70}, {5, 7, 3}, {1, 64, 65}};
  const char trans_chars[][2] = {{'N', 'n'}, {'T', 't'}, {'C', 'c'}};
  int turn = 0;
  for (const Shape &s : shapes)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b, ++turn) {
        const char ca = trans_chars[a][turn % 2], cb = trans_chars[b][(turn / 2) % 2];
        Problem<double> pd;
        pd.m = s.m;
        pd.n = s.n;
        pd.k = s.k;
        pd.ta = a != 0;
        pd.tb = b != 0;
        pd.alpha = turn % 3 == 0 ? 1.0 : 0.75;
        pd.beta = turn % 4 == 0 ? 0.0 : turn % 4 == 1 ? 1.0 : -1.5;
        pd.draw(rng, Dist::Uniform01);
        pd.solve();
        std::vector<double> C = pd.C0;
        const int m = s.m, n = s.n, k = s.k, lda = int(pd.lda), ldb = int(pd.ldb),
                  ldc = int(pd.ldc);
        dngemm_(&ca, &cb, &m, &n, &k, &pd.alpha, pd.A.data(), &lda, pd.B.data(), &ldb,
                &pd.beta, C.data(), &ldc);
        check(pd, C, "dngemm_");

        Problem<float> ps;
        ps.m = s.m;
        ps.n = s.n;
        ps.k = s.k;
        ps.ta = pd.ta;
        ps.tb = pd.tb;
        ps.alpha = float(pd.alpha);
        ps.beta = float(pd.beta);
        ps.draw(rng, Dist::Uniform01);
        ps.solve();
        std::vector<float> Cs = ps.C0;
        sngemm_(&ca, &cb, &m, &n, &k, &ps.alpha, ps.A.data(), &lda, ps.B.data(), &ldb,
                &ps.beta, Cs.data(), &ldc);
        check(ps, Cs, "sngemm_");
      }

  // CBLAS, both layouts. A row-major M x N product C = op(A) op(B) is the
  // column-major N x M product C^T = op(B)^T op(A)^T on the same arrays: the
  // problem below is that column-major one.
  for (int layout : {XnColMajor, XnRowMajor})
    for (bool t1 : {false, true}) {
      Problem<double> p;
      p.m = 67;
      p.n = 70;
      p.k = 69;
      p.ta = t1;
      p.tb = !t1;
      p.alpha = 0.75;
      p.beta = 1;
      p.draw(rng, Dist::Uniform01);
      p.solve();
      std::vector<double> C = p.C0;
      const int ta = p.ta ? XnTrans : XnNoTrans, tb = p.tb ? XnTrans : XnNoTrans;
      if (layout == XnColMajor)
        cblas_dngemm(layout, ta, tb, int(p.m), int(p.n), int(p.k), p.alpha, p.A.data(),
                     int(p.lda), p.B.data(), int(p.ldb), p.beta, C.data(), int(p.ldc));
      else
        cblas_dngemm(layout, tb, ta, int(p.n), int(p.m), int(p.k), p.alpha, p.B.data(),
                     int(p.ldb), p.A.data(), int(p.lda), p.beta, C.data(), int(p.ldc));
      check(p, C,
            layout == XnColMajor ? "cblas_dngemm col-major" : "cblas_dngemm row-major");
    }
}

// transb = T and C through the host API with T stored non-transposed
// (XN_OPT_PACK_TRANS_B = 1) and transposed (0): both within the bound of the
// depth the library chooses.
template <class T>
void host_normal_t_case(std::mt19937_64 &rng, std::uint64_t seed, const Shape &s, char ca,
                        char cb, T alpha, T beta,
                        void (*f77)(const char *, const char *, const int *, const int *,
                                    const int *, const T *, const T *, const int *,
                                    const T *, const int *, const T *, T *,
                                    const int *)) {
  Problem<T> p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.ta = ca != 'N';
  p.tb = true;
  p.alpha = alpha;
  p.beta = beta;
  p.draw(rng, Dist::Uniform01);
  p.solve();
  const int m = s.m, n = s.n, k = s.k, lda = int(p.lda), ldb = int(p.ldb),
            ldc = int(p.ldc);
  Judge jd;
  jd.levels = xn::choose_levels(p.m, p.n, p.k, kLeaf, kMaxLevels);
  jd.c = kStatedC[jd.levels];
  for (std::int64_t option : {1, 0}) {
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_PACK_TRANS_B, option), CUBLAS_STATUS_SUCCESS);
    std::vector<T> C = p.C0;
    f77(&ca, &cb, &m, &n, &k, &p.alpha, p.A.data(), &lda, p.B.data(), &ldb, &p.beta,
        C.data(), &ldc);
    const Measured r = measure(p, C, jd);
    EXPECT_TRUE(r.failure.empty())
        << ca << cb << " option " << option << " " << p.describe() << ": " << r.failure
        << "; " << xn_test::describe_seed(seed);
  }
}

TEST_F(HostApiOnCpu, NonTransposedBTempsThroughTheFortranAndCblasEntryPoints) {
  std::mt19937_64 rng(seed_);
  int turn = 0;
  for (const Shape &s : {Shape{131, 129, 133}, Shape{40, 33, 70}, Shape{67, 70, 69}})
    for (char ca : {'N', 'T'})
      for (char cb : {'T', 'C', 't', 'c'}) {
        const double alpha = turn % 2 ? 0.75 : 1.0;
        const double beta = turn % 3 == 0 ? 0.0 : turn % 3 == 1 ? 1.0 : -1.5;
        ++turn;
        host_normal_t_case<double>(rng, seed_, s, ca, cb, alpha, beta, dngemm_);
        host_normal_t_case<float>(rng, seed_, s, ca, cb, float(alpha), float(beta),
                                  sngemm_);
        if (HasFatalFailure()) return;
      }
  // CBLAS with CblasConjTrans for B, column-major, and row-major (where the
  // library's column-major op(B) is the caller's A: transa = ConjTrans): the
  // same column-major call, so the same bits, within the bound.
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_PACK_TRANS_B, 1), CUBLAS_STATUS_SUCCESS);
  Problem<double> p;
  p.m = 67;
  p.n = 70;
  p.k = 69;
  p.tb = true;
  p.alpha = 0.75;
  p.beta = 0;
  p.draw(rng, Dist::Uniform01);
  p.solve();
  std::vector<double> C = p.C0, Cr = p.C0;
  cblas_dngemm(XnColMajor, XnNoTrans, XnConjTrans, 67, 70, 69, p.alpha, p.A.data(),
               int(p.lda), p.B.data(), int(p.ldb), p.beta, C.data(), int(p.ldc));
  cblas_dngemm(XnRowMajor, XnConjTrans, XnNoTrans, 70, 67, 69, p.alpha, p.B.data(),
               int(p.ldb), p.A.data(), int(p.lda), p.beta, Cr.data(), int(p.ldc));
  EXPECT_TRUE(same_bits(C, Cr)) << "cblas row-major; " << xn_test::describe_seed(seed_);
  check(p, C, "cblas_dngemm ConjTrans");
}

}  // namespace

// The classification both scans apply (the device's entry_flags_kernel and
// the interposer's host scan): what each kind of IEEE value sets.
template <class T>
void expect_entry_flags() {
  using L = std::numeric_limits<T>;
  const struct {
    T x;
    int flags;
  } kinds[] = {{T(0), 0},
               {-T(0), 0},  // -0 is not negative: it breaks no contract
               {T(1.5), 0},
               {L::denorm_min(), 0},
               {L::max(), 0},
               {-L::denorm_min(), xn::kEntryNegative},
               {-L::max(), xn::kEntryNegative},
               {T(-2), xn::kEntryNegative},
               {L::infinity(), xn::kEntryNonFinite},
               {-L::infinity(), xn::kEntryNegative | xn::kEntryNonFinite},
               {L::quiet_NaN(), xn::kEntryNonFinite},
               {-L::quiet_NaN(), xn::kEntryNonFinite}};
  for (const auto &k : kinds) EXPECT_EQ(xn::ew_entry_flags(k.x), k.flags) << k.x;
}

TEST(EntryFlags, EveryKindOfValue) {
  expect_entry_flags<double>();
  expect_entry_flags<float>();
}
