// test_support_ieee_oracle.cpp - self-tests of the IEEE oracle
// (support/ieee_oracle.h) on values computed by hand: both sides of 2^-1022,
// midpoints of the subnormal grid (ties to even both ways, and ties nudged
// by 2^-1200), 2^-1074, 2^-1075 (a tie to zero that keeps its sign), DBL_MAX
// and the overflow threshold 2^1024 - 2^970, signed zeros and every special
// class; then the two rounding implementations (MPFR, GMP) against each
// other on random values near every boundary, and the exponent range of
// MPFR left as it was.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/ieee_oracle.h"
#include "support/test_support.h"

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kMax = std::numeric_limits<double>::max();
const double kMaxSub = 0x0.fffffffffffffp-1022;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

// The same double, zero signs included; NaN matches any NaN.
::testing::AssertionResult Same(double got, double want) {
  if (std::isnan(want) ? std::isnan(got) : bits(got) == bits(want))
    return ::testing::AssertionSuccess();
  char s[96];
  std::snprintf(s, sizeof s, "got %a, want %a", got, want);
  return ::testing::AssertionFailure() << s;
}

// alpha a^T b + beta c for a row a and a column b (1 x 1 x k).
double dot(const std::vector<double> &a, const std::vector<double> &b, double alpha = 1,
           double beta = 0, double c = kNaN) {
  return xn_test::exact_gemm_entry_ieee(false, false, std::int64_t(a.size()), alpha,
                                        a.data(), 1, b.data(), std::int64_t(b.size()),
                                        beta, &c, 1, 0, 0);
}

TEST(IeeeOracle, BothSidesOfTheSmallestNormal) {
  // 2^-1022 itself, and 2^-1022 -+ 2^-1200: DBL_MIN.
  EXPECT_TRUE(Same(dot({0x1p-511}, {0x1p-511}), 0x1p-1022));
  EXPECT_TRUE(Same(dot({0x1p-511, 0x1p-600}, {0x1p-511, -0x1p-600}), 0x1p-1022));
  EXPECT_TRUE(Same(dot({0x1p-511, 0x1p-600}, {0x1p-511, 0x1p-600}), 0x1p-1022));
  // The midpoint 2^-1022 - 2^-1075 between the largest subnormal (odd) and
  // DBL_MIN (even): DBL_MIN.
  EXPECT_TRUE(Same(dot({0x1p-511, -0x1p-537}, {0x1p-511, 0x1p-538}), 0x1p-1022));
  // Just below it (the example): the largest subnormal; negated too.
  EXPECT_TRUE(Same(dot({0x1p-511, -0x1p-537, -0x1p-565}, {0x1p-511, 0x1p-538, 0x1p-565}),
                   kMaxSub));
  EXPECT_TRUE(Same(dot({-0x1p-511, 0x1p-537, 0x1p-565}, {0x1p-511, 0x1p-538, 0x1p-565}),
                   -kMaxSub));
  // Just above the midpoint: DBL_MIN.
  EXPECT_TRUE(Same(dot({0x1p-511, -0x1p-537, 0x1p-565}, {0x1p-511, 0x1p-538, 0x1p-565}),
                   0x1p-1022));
  // 2^-1022 - 3 2^-1076 (the far end of the interval) and
  // 2^-1022 - 2^-1074 (exactly the largest subnormal).
  EXPECT_TRUE(Same(dot({0x1p-511, -0x1.8p-537}, {0x1p-511, 0x1p-538}), kMaxSub));
  EXPECT_TRUE(Same(dot({0x1p-511, -0x1p-537}, {0x1p-511, 0x1p-537}), kMaxSub));
  // Above DBL_MIN: 2^-1022 + 2^-1075 ties down to DBL_MIN (even); + 2^-1200
  // more goes up; + 2^-1074 is the next double.
  EXPECT_TRUE(Same(dot({0x1p-511, 0x1p-537}, {0x1p-511, 0x1p-538}), 0x1p-1022));
  EXPECT_TRUE(Same(dot({0x1p-511, 0x1p-537, 0x1p-600}, {0x1p-511, 0x1p-538, 0x1p-600}),
                   0x1.0000000000001p-1022));
  EXPECT_TRUE(
      Same(dot({0x1p-511, 0x1p-537}, {0x1p-511, 0x1p-537}), 0x1.0000000000001p-1022));
}

TEST(IeeeOracle, SubnormalGridAndItsMidpoints) {
  // 2^-1074 exactly; 2^-1075 ties to 0 keeping its sign; a hair above goes
  // to 2^-1074; a hair below to 0.
  EXPECT_TRUE(Same(dot({0x1p-537}, {0x1p-537}), 0x1p-1074));
  EXPECT_TRUE(Same(dot({0x1p-537}, {0x1p-538}), 0.0));
  EXPECT_TRUE(Same(dot({-0x1p-537}, {0x1p-538}), -0.0));
  EXPECT_TRUE(Same(dot({0x1p-537, 0x1p-600}, {0x1p-538, 0x1p-600}), 0x1p-1074));
  EXPECT_TRUE(Same(dot({0x1p-537, 0x1p-600}, {0x1p-538, -0x1p-600}), 0.0));
  EXPECT_TRUE(Same(dot({-0x1p-537, -0x1p-600}, {0x1p-538, -0x1p-600}), -0.0));
  // 3 2^-1075: between 1 (odd) and 2 (even) units: 2^-1073. 5 2^-1075:
  // between 2 (even) and 3: 2^-1073. 7 2^-1075: between 3 and 4 (even).
  EXPECT_TRUE(Same(dot({0x1.8p-537}, {0x1p-537}), 0x1p-1073));
  EXPECT_TRUE(Same(dot({0x1.4p-536}, {0x1p-537}), 0x1p-1073));
  EXPECT_TRUE(Same(dot({0x1.cp-536}, {0x1p-537}), 0x1p-1072));
  // Ties nudged by 2^-1200 either way: 5 2^-1075 + tiny -> 3 units, 7 2^-1075 -
  // tiny -> 3 units.
  EXPECT_TRUE(Same(dot({0x1.4p-536, 0x1p-600}, {0x1p-537, 0x1p-600}), 0x1.8p-1073));
  EXPECT_TRUE(Same(dot({0x1.cp-536, 0x1p-600}, {0x1p-537, -0x1p-600}), 0x1.8p-1073));
  // A large odd mantissa: (2^51 + 1) units + half a unit ties up to 2^51 + 2.
  EXPECT_TRUE(Same(dot({0x1p-512, 0x1p-537, 0x1p-537}, {0x1p-511, 0x1p-537, 0x1p-538}),
                   std::ldexp(double((1ULL << 51) + 2), -1074)));
  // 2^-1076 and 3 2^-1076 (a quarter and three quarters of a unit).
  EXPECT_TRUE(Same(dot({0x1p-538}, {0x1p-538}), 0.0));
  EXPECT_TRUE(Same(dot({0x1.8p-537}, {0x1p-538}), 0x1p-1074));
  // Far below: 2^-2100 rounds to a zero of its sign.
  EXPECT_TRUE(Same(dot({-0x1p-1050}, {0x1p-1050}), -0.0));
}

TEST(IeeeOracle, LargestFiniteAndTheOverflowThreshold) {
  EXPECT_TRUE(Same(dot({0x1.fffffffffffffp+511}, {0x1p+512}), kMax));
  // 2^1024 - 2^970: the midpoint between DBL_MAX and 2^1024 overflows.
  EXPECT_TRUE(Same(dot({0x1p512, -0x1p485}, {0x1p512, 0x1p485}), kInf));
  EXPECT_TRUE(Same(dot({-0x1p512, 0x1p485}, {0x1p512, 0x1p485}), -kInf));
  // Just below it: DBL_MAX; just above: Inf.
  EXPECT_TRUE(
      Same(dot({0x1p512, -0x1p485, -0x1p-500}, {0x1p512, 0x1p485, 0x1p-500}), kMax));
  EXPECT_TRUE(
      Same(dot({0x1p512, -0x1p485, 0x1p-500}, {0x1p512, 0x1p485, 0x1p-500}), kInf));
  // DBL_MAX + 2^969 (a quarter unit up): DBL_MAX. 2^1024 exactly: Inf.
  EXPECT_TRUE(Same(dot({0x1.fffffffffffffp+511, 0x1p484}, {0x1p+512, 0x1p485}), kMax));
  EXPECT_TRUE(Same(dot({0x1p512}, {0x1p512}), kInf));
  // Through alpha: 2^1200 * 2^-200 is 2^1000, not Inf (P is an exact real).
  EXPECT_TRUE(Same(dot({0x1p600}, {0x1p600}, 0x1p-200), 0x1p1000));
  // Through beta c: 2^1023 + 2^1023 overflows; 2^2000 - 2^2000 + 1 is 1.
  EXPECT_TRUE(Same(dot({0x1p600}, {0x1p423}, 1, 2, 0x1p1022), kInf));
  EXPECT_TRUE(Same(dot({0x1p1000, 1}, {0x1p1000, 1}, 1, -0x1p1000, 0x1p1000), 1.0));
}

TEST(IeeeOracle, SignedZeros) {
  // alpha = -1, X = +0, beta = 0: -0.
  EXPECT_TRUE(Same(dot({0.0}, {1}, -1), -0.0));
  // X = -0 only when every product is -0.
  EXPECT_TRUE(Same(dot({-0.0, -0.0}, {1, 2}), -0.0));
  EXPECT_TRUE(Same(dot({-0.0, 0.0}, {1, 2}), 0.0));
  EXPECT_TRUE(Same(dot({-0.0, -0.0}, {1, -0.0}), 0.0));  // -0 * -0 = +0
  EXPECT_TRUE(Same(dot({-0.0}, {1}, -1), 0.0));
  // Exact cancellation of nonzero products: +0; times alpha = -1: -0.
  EXPECT_TRUE(Same(dot({1, 1}, {1, -1}), 0.0));
  EXPECT_TRUE(Same(dot({1, 1}, {1, -1}, -1), -0.0));
  // beta != 0: -0 only if P and Q are both -0.
  EXPECT_TRUE(Same(dot({-0.0}, {1}, 1, 1, -0.0), -0.0));
  EXPECT_TRUE(Same(dot({-0.0}, {1}, 1, 1, 0.0), 0.0));
  EXPECT_TRUE(Same(dot({0.0}, {1}, -1, -1, 0.0), -0.0));
  EXPECT_TRUE(Same(dot({1}, {1}, 1, -1, 1), 0.0));  // P + Q cancel: +0
  EXPECT_TRUE(Same(dot({-1}, {1}, 1, 1, 1), 0.0));
  // A nonzero value that rounds to zero keeps its sign.
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, -1), -0.0));
  EXPECT_TRUE(Same(dot({0x1p-600}, {-0x1p-600}, 1, 1, 0.0), -0.0));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, 1, -0.5, 0x1p-1074), -0.0));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, 1, -1, 0x1p-1074), -0x1p-1074));
  // beta = 0 does not read C; beta = -0 is zero too.
  EXPECT_TRUE(Same(dot({-0.0}, {1}, 1, -0.0, kNaN), -0.0));
  // k = 0 or alpha = 0: one IEEE product beta c (beta = 0: +0).
  const double c = 0.0, nan_c = kNaN;
  EXPECT_TRUE(Same(xn_test::exact_gemm_entry_ieee(false, false, 0, 1, nullptr, 1, nullptr,
                                                  1, -1, &c, 1, 0, 0),
                   -0.0));
  EXPECT_TRUE(Same(xn_test::exact_gemm_entry_ieee(false, false, 0, 1, nullptr, 1, nullptr,
                                                  1, -0.0, &nan_c, 1, 0, 0),
                   0.0));
  EXPECT_TRUE(Same(dot({kNaN}, {kInf}, -0.0, -1, 0.0), -0.0));
}

TEST(IeeeOracle, EverySpecialClass) {
  EXPECT_TRUE(Same(dot({kInf}, {0.0}), kNaN));  // Inf * 0
  EXPECT_TRUE(Same(dot({kInf, kInf}, {1, -1}), kNaN));
  EXPECT_TRUE(Same(dot({kInf, 1}, {2, 0x1p1000}), kInf));
  EXPECT_TRUE(Same(dot({kInf, kNaN}, {2, 1}), kNaN));
  EXPECT_TRUE(Same(dot({-kInf}, {kInf}), -kInf));
  // alpha infinite: X zero -> NaN, X tiny nonzero -> Inf of sign XOR.
  EXPECT_TRUE(Same(dot({0.0}, {1}, kInf), kNaN));
  EXPECT_TRUE(Same(dot({1, 1}, {1, -1}, kInf), kNaN));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, kInf), kInf));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, kInf, 1, 1), kInf));
  EXPECT_TRUE(Same(dot({0x1p-600}, {-0x1p-600}, kInf), -kInf));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, -kInf), -kInf));
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-600}, kNaN), kNaN));
  // Q infinite against finite P, however large: the infinity.
  EXPECT_TRUE(Same(dot({0x1p750}, {0x1p750}, 0x1p-1000, 1, -kInf), -kInf));
  EXPECT_TRUE(Same(dot({0x1p1000}, {0x1p1000}, 0x1p1000, kInf, 1), kInf));
  EXPECT_TRUE(Same(dot({kInf}, {1}, 1, 1, -kInf), kNaN));
  EXPECT_TRUE(Same(dot({kInf}, {1}, 1, -1, -kInf), kInf));
  EXPECT_TRUE(Same(dot({1}, {1}, 1, kInf, 0.0), kNaN));  // Q = Inf * 0
  EXPECT_TRUE(Same(dot({1}, {1}, 1, kNaN, 1), kNaN));
  EXPECT_TRUE(Same(dot({1}, {1}, 1, 1, kNaN), kNaN));
  // alpha = 0: A and B not read.
  EXPECT_TRUE(Same(dot({kNaN}, {kInf}, 0.0, 2, 3), 6.0));
  EXPECT_TRUE(Same(dot({kNaN}, {kInf}, 0.0, 0, kNaN), 0.0));
}

// Random exact values around every boundary, rounded by MPFR and by GMP
// separately: they must agree (the suite relies on the cross-check; this
// shows it runs and that the two are not trivially the same code).
TEST(IeeeOracle, MpfrAndGmpRoundingsAgreeNearEveryBoundary) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const double anchors[] = {0x1p-1022, 0x1p-1074, 0x1p-1073, kMaxSub,  kMax,
                            0x1p1023,  1.0,       0x1p-1050, 0x1p-1060};
  const std::uint64_t before = xn_test::ieee_oracle_cross_checks();
  int n = 0;
  for (int t = 0; t < 3000; ++t) {
    const double anchor = anchors[rng() % 9];
    std::vector<std::array<double, 3>> terms;
    terms.push_back({anchor, rng() % 2 ? 1.0 : -1.0, 1.0});
    // Perturbations of up to 3 terms at random depths below the anchor's
    // last place, each a product of up to three doubles.
    const int extra = int(rng() % 4);
    for (int e = 0; e < extra; ++e) {
      const double m = double((rng() >> 11) | 1) * 0x1p-53;
      const int depth = -int(rng() % 200);
      const int ex = std::max(-1074, std::min(1000, std::ilogb(anchor) - 52 + depth));
      terms.push_back(
          {std::ldexp(m, ex / 2), std::ldexp(1.0, ex - ex / 2), rng() % 2 ? 1.0 : -1.0});
    }
    const double a = xn_test::round_sum_of_products_mpfr(terms);
    const double b = xn_test::round_sum_of_products_gmp(terms);
    ASSERT_TRUE(Same(a, b)) << "term 0: " << anchor << "; "
                            << xn_test::describe_seed(seed);
    EXPECT_TRUE(Same(xn_test::round_sum_of_products(terms), a));
    ++n;
  }
  EXPECT_EQ(xn_test::ieee_oracle_cross_checks() - before, std::uint64_t(n));
}

// The oracle narrows MPFR's exponent range only inside a rounding.
TEST(IeeeOracle, LeavesMpfrExponentRangeAlone) {
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  EXPECT_TRUE(Same(dot({0x1p-600}, {0x1p-500}), 0.0));
  EXPECT_TRUE(Same(dot({0x1p600}, {0x1p500}), kInf));
  EXPECT_EQ(mpfr_get_emin(), emin);
  EXPECT_EQ(mpfr_get_emax(), emax);
}

// Transposes and leading dimensions: the whole-matrix form agrees with the
// entry form and, on small integers (exact in double), with plain double
// arithmetic.
TEST(IeeeOracle, WholeMatrixFormAndTransposes) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const int m = 5, n = 4, k = 6;
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 1;
    std::vector<double> A(std::size_t(lda * (ta ? m : k)), kNaN),
        B(std::size_t(ldb * (tb ? k : n)), kNaN), C(std::size_t(ldc * n), kNaN);
    for (int i = 0; i < (ta ? k : m); ++i)
      for (int j = 0; j < (ta ? m : k); ++j)
        A[std::size_t(i + j * lda)] = double(rng() % 9) - 4;
    for (int i = 0; i < (tb ? n : k); ++i)
      for (int j = 0; j < (tb ? k : n); ++j)
        B[std::size_t(i + j * ldb)] = double(rng() % 9) - 4;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) C[std::size_t(i + j * ldc)] = double(rng() % 9) - 4;
    std::vector<double> out;
    xn_test::exact_gemm_ieee(ta, tb, m, n, k, -2.0, A.data(), lda, B.data(), ldb, 3.0,
                             C.data(), ldc, out);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p) {
          const double a = ta ? A[std::size_t(p + i * lda)] : A[std::size_t(i + p * lda)];
          const double b = tb ? B[std::size_t(j + p * ldb)] : B[std::size_t(p + j * ldb)];
          s += a * b;
        }
        const double want = -2.0 * s + 3.0 * C[std::size_t(i + j * ldc)];
        const double got = out[std::size_t(i + j * m)];
        EXPECT_EQ(got, want) << i << "," << j << " t=" << t;  // == : zeros of either sign
        EXPECT_TRUE(Same(
            got, xn_test::exact_gemm_entry_ieee(ta, tb, k, -2.0, A.data(), lda, B.data(),
                                                ldb, 3.0, C.data(), ldc, i, j)));
      }
  }
}

}  // namespace
