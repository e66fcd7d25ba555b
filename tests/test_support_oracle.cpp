// test_support_oracle.cpp - self-tests of the MPFR oracle (support/mpfr_oracle.h) on
// cases checkable by hand: cancellations that double arithmetic gets wrong,
// double-double rounding, exponent ranges that need the precision ladder,
// BLAS alpha/beta semantics, transposes, non-finite inputs.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "support/mpfr_oracle.h"
#include "support/test_support.h"

namespace {

using xn_test::abs_error;
using xn_test::exact_gemm;
using xn_test::exact_gemm_entry;
using xn_test::ExactEntry;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The (0, 0) entry of alpha * a^T b + beta * c for vectors a, b: a is a 1 x k
// row (lda = 1), b a k x 1 column.
template <class T>
ExactEntry dot(const std::vector<T> &a, const std::vector<T> &b, T alpha = 1, T beta = 0,
               T c = 0) {
  return exact_gemm_entry<T>(false, false, std::int64_t(a.size()), alpha, a.data(), 1,
                             b.data(), std::int64_t(b.size()), beta, &c, 1, 0, 0);
}

TEST(MpfrOracle, CancellationThatDoubleArithmeticLoses) {
  const std::vector<double> a = {1e16, 1, -1e16}, b = {1, 1, 1};
  double naive = 0;
  for (int p = 0; p < 3; ++p) naive += a[p] * b[p];
  EXPECT_EQ(naive, 0.0);  // 1e16 + 1 rounds back to 1e16
  const ExactEntry e = dot(a, b);
  EXPECT_EQ(e.hi, 1.0);
  EXPECT_EQ(e.lo, 0.0);
  EXPECT_EQ(e.magnitude, 2e16);  // 2e16 + 1 rounded to double

  const std::vector<float> af = {0x1p25f, 1, -0x1p25f}, bf = {1, 1, 1};
  float naive_f = 0;
  for (int p = 0; p < 3; ++p) naive_f += af[p] * bf[p];
  EXPECT_EQ(naive_f, 0.0f);
  EXPECT_EQ(dot(af, bf).hi, 1.0);
}

TEST(MpfrOracle, DoubleDoubleRounding) {
  // 1 + 2^-60: hi is 1, the rest is in lo.
  ExactEntry e = dot<double>({1, 0x1p-30}, {1, 0x1p-30});
  EXPECT_EQ(e.hi, 1.0);
  EXPECT_EQ(e.lo, 0x1p-60);
  // Same in float: the product 2^-60 is exact, and hi is a double.
  e = dot<float>({1, 0x1p-30f}, {1, 0x1p-30f});
  EXPECT_EQ(e.hi, 1.0);
  EXPECT_EQ(e.lo, 0x1p-60);
  // 1 + 2^-53 + 2^-80: the tie at 2^-53 is broken upwards by 2^-80, so hi is
  // 1 + 2^-52 and lo negative (a left-to-right double sum gives exactly 1).
  e = dot<double>({1, 0x1p-53, 0x1p-80}, {1, 1, 1});
  EXPECT_EQ(e.hi, 1 + 0x1p-52);
  EXPECT_EQ(e.lo, -(0x1p-53 - 0x1p-80));
  // The low part of a single product (TwoProduct path).
  e = dot<double>({1 + 0x1p-52}, {1 + 0x1p-52});
  EXPECT_EQ(e.hi, 1 + 0x1p-51);
  EXPECT_EQ(e.lo, 0x1p-104);
}

TEST(MpfrOracle, WideExponentRangesNeedTheHighPrecisions) {
  // 2^1020 + 2^-1060: 2080 bits between the terms, past the first two rungs.
  ExactEntry e = dot<double>({0x1p1000, 0x1p-1000}, {0x1p20, 0x1p-60});
  EXPECT_EQ(e.hi, 0x1p1020);
  EXPECT_EQ(e.lo, 0x1p-1060);
  // A product below the TwoProduct range (computed in MPFR): 2^-920 (1 +
  // 3 2^-52 + 2^-103), whose low part 2^-1023 is subnormal.
  e = dot<double>({0x1p-460 * (1 + 0x1p-52)}, {0x1p-460 * (1 + 0x1p-51)});
  EXPECT_EQ(e.hi, 0x1p-920 * (1 + 3 * 0x1p-52));
  EXPECT_EQ(e.lo, 0x1p-1023);
  // A product that underflows in double: 2^-600 * 2^-500 = 2^-1100 is not
  // zero, and decides the rounding of the sum 2^-1074 * (1/2) + 2^-1100.
  e = dot<double>({0x1p-600, 0x1p-1074}, {0x1p-500, 0.5});
  EXPECT_EQ(e.hi, 0x1p-1074);  // above the tie at 2^-1075, so rounds up
  // alpha * the largest products: the exact value overflows double.
  e = dot<double>({0x1p1000}, {0x1p1000}, 0x1p-1000);
  EXPECT_EQ(e.hi, 0x1p1000);
  e = dot<double>({0x1p1000, 0x1p1000}, {0x1p1000, -0x1p1000});
  EXPECT_EQ(e.hi, 0.0);  // 2^2000 - 2^2000, both out of double's range
  EXPECT_EQ(e.magnitude, kInf);
}

TEST(MpfrOracle, AlphaBetaAndMagnitude) {
  // value = alpha (1*3 - 2*4) + beta c = -2 * -5 + 0.5 * -4 = 8;
  // magnitude = 2 * 11 + 0.5 * 4 = 24.
  const ExactEntry e = dot<double>({1, -2}, {3, 4}, -2, 0.5, -4);
  EXPECT_EQ(e.hi, 8.0);
  EXPECT_EQ(e.lo, 0.0);
  EXPECT_EQ(e.magnitude, 24.0);
}

TEST(MpfrOracle, BetaZeroNeverReadsCAndAlphaZeroNeverReadsAB) {
  ExactEntry e = dot<double>({2}, {3}, 1, 0, kNaN);
  EXPECT_EQ(e.hi, 6.0);
  EXPECT_EQ(e.magnitude, 6.0);
  e = dot<double>({kNaN}, {kInf}, 0, 2, 5);
  EXPECT_EQ(e.hi, 10.0);
  EXPECT_EQ(e.magnitude, 10.0);
  // k = 0: beta * C only.
  const double c = 3;
  e = exact_gemm_entry<double>(false, false, 0, 1.0, nullptr, 1, nullptr, 1, -1.5, &c, 1,
                               0, 0);
  EXPECT_EQ(e.hi, -4.5);
  EXPECT_EQ(e.magnitude, 4.5);
}

TEST(MpfrOracle, NonFiniteInputsFollowExtendedArithmetic) {
  EXPECT_TRUE(std::isnan(dot<double>({kInf}, {0}).hi));  // Inf * 0
  EXPECT_EQ(dot<double>({kInf, 1}, {2, 3}).hi, kInf);
  EXPECT_TRUE(std::isnan(dot<double>({kInf, kInf}, {1, -1}).hi));  // Inf - Inf
  EXPECT_TRUE(std::isnan(dot<double>({1, kNaN}, {1, 1}).hi));
  EXPECT_TRUE(std::isnan(dot<float>({1, 2}, {std::nanf(""), 1}).hi));
  EXPECT_EQ(dot<float>({-std::numeric_limits<float>::infinity()}, {2}).hi, -kInf);
  // abs_error: equal non-finite values have no error, different ones all of it.
  EXPECT_EQ(abs_error(kInf, ExactEntry{kInf, 0, kInf}), 0.0);
  EXPECT_EQ(abs_error(kNaN, ExactEntry{kNaN, 0, kNaN}), 0.0);
  EXPECT_EQ(abs_error(kNaN, ExactEntry{1, 0, 1}), kInf);
  EXPECT_EQ(abs_error(1, ExactEntry{kInf, 0, kInf}), kInf);
}

TEST(MpfrOracle, AbsErrorHasNoCancellationError) {
  // exact = 1 + 2^-60, c = 1 + 2^-52: the error 2^-52 - 2^-60 is exact in
  // double, but |c - (hi + lo)| would give 2^-52 as hi + lo rounds to 1.
  const ExactEntry e = dot<double>({1, 0x1p-30}, {1, 0x1p-30});
  EXPECT_EQ(abs_error(1 + 0x1p-52, e), 0x1p-52 - 0x1p-60);
  EXPECT_EQ(abs_error(1.0, e), 0x1p-60);
}

// Small integers make the naive double product exact: the oracle must agree
// bit for bit, with lo == 0, under every transpose and padded leading
// dimensions (padding NaN, so a read of it shows).
TEST(MpfrOracle, TransposesAndLeadingDimensionsOnExactIntegers) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const int m = 7, n = 5, k = 6;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
      const int lda = ar + 2, ldb = br + 3, ldc = m + 1;
      std::vector<double> A, B, C;
      xn_test::fill(A, ar, ac, lda, xn_test::Dist::SmallInt, rng, kNaN);
      xn_test::fill(B, br, bc, ldb, xn_test::Dist::SmallInt, rng, kNaN);
      xn_test::fill(C, m, n, ldc, xn_test::Dist::SmallInt, rng, kNaN);
      for (double &x : A) x = std::isnan(x) ? x : x - 4;  // mixed signs
      const double alpha = -3, beta = 2;
      std::vector<ExactEntry> out;
      exact_gemm<double>(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                         C.data(), ldc, out);
      ASSERT_EQ(out.size(), std::size_t(m * n));
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double s = 0, mag = 0;
          for (int p = 0; p < k; ++p) {
            const double a = ta ? A[p + i * lda] : A[i + p * lda];
            const double b = tb ? B[j + p * ldb] : B[p + j * ldb];
            s += a * b;
            mag += std::fabs(a * b);
          }
          const double c = C[i + j * ldc];
          const ExactEntry &e = out[i + j * m];
          ASSERT_EQ(e.hi, alpha * s + beta * c)
              << i << "," << j << " ta=" << ta << " tb=" << tb << "; "
              << xn_test::describe_seed(seed);
          ASSERT_EQ(e.lo, 0.0);
          ASSERT_EQ(e.magnitude, std::fabs(alpha) * mag + std::fabs(beta * c));
          const ExactEntry one = exact_gemm_entry<double>(
              ta, tb, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc, i, j);
          ASSERT_EQ(one.hi, e.hi);
          ASSERT_EQ(one.magnitude, e.magnitude);
        }
    }
}

// The oracle against a double-double dot product on random data: agreement
// to far below a double's rounding error (a check of the whole pipeline on
// inputs with full 53-bit fractions), and speed on the size the suites use.
TEST(MpfrOracle, AgreesWithCompensatedDotAndIsFast) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const int n = 256;
  std::vector<double> A, B;
  xn_test::fill(A, n, n, n, xn_test::Dist::UniformPm1, rng, kNaN);
  xn_test::fill(B, n, n, n, xn_test::Dist::Uniform01, rng, kNaN);
  std::vector<ExactEntry> out;
  const auto t0 = std::chrono::steady_clock::now();
  exact_gemm<double>(false, false, n, n, n, 1.0, A.data(), n, B.data(), n, 0.0, nullptr,
                     1, out);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("exact_gemm 256^3 (double): %.2f s\n", secs);
  EXPECT_LT(secs, 30.0) << "far slower than expected (about 1 s)";
  const double g = n * 0x1p-53 / (1 - n * 0x1p-53);
  for (int j = 0; j < n; j += 17)
    for (int i = 0; i < n; i += 13) {
      // Dot2 (Ogita, Rump, Oishi 2005): |error| <= u |s| + gamma_n^2 sum |a b|.
      double s = 0, c = 0;
      for (int p = 0; p < n; ++p) {
        const double a = A[i + p * n], b = B[p + j * n];
        const double x = a * b, ex = std::fma(a, b, -x);
        const double t = s + x, z = t - s, es = (s - (t - z)) + (x - z);
        s = t;
        c += es + ex;
      }
      const ExactEntry &e = out[i + j * n];
      EXPECT_LE(abs_error(s + c, e), 0x1p-52 * std::fabs(e.hi) + 2 * g * g * e.magnitude)
          << i << "," << j << "; " << xn_test::describe_seed(seed);
    }
}

}  // namespace
