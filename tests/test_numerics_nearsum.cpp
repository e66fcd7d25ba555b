// test_numerics_nearsum.cpp - NearSum (kernels/numerics/nearsum.h) against an exact MPFR oracle.
//
// Every check is bitwise: near_sum(p) must have the bit pattern of the double
// nearest (ties to even, IEEE subnormals and overflow) to the exact sum, and
// an exact zero sum must give +0.0. The oracle adds the terms exactly in MPFR
// (4500 bits; every addition's ternary value is checked to be 0) and rounds
// once, twice over: with mpfr_get_d and with a 53-bit MPFR number under the
// double exponent range plus mpfr_subnormalize; the two must agree.
//
// Random inputs come from std::mt19937_64 with fixed seeds; a failure prints
// the seed, the case index and the terms (hex floats).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "numerics/nearsum.h"

namespace {

using xn::exact::near_sum;
using xn::exact::nearsum_detail::Stats;

constexpr double kEta = 0x1p-1074;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr mpfr_prec_t kPrec = 4500;  // > 1024 + 1074 + log2(n) + 1 for any test

std::uint64_t bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

std::string hex(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

std::string show(const std::vector<double> &v) {
  std::string s = "{";
  const std::size_t shown = std::min<std::size_t>(v.size(), 40);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + hex(v[i]);
  if (shown < v.size()) s += ", ... (" + std::to_string(v.size()) + " terms)";
  return s + "}";
}

// RAII MPFR number.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t prec = kPrec) {
    mpfr_init2(v, prec);
    mpfr_set_zero(v, 1);
  }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp &) = delete;
  Mp &operator=(const Mp &) = delete;
};

// acc += x exactly (fails the test if MPFR had to round).
void add_exact(mpfr_t acc, double x) {
  const int t = mpfr_add_d(acc, acc, x, MPFR_RNDN);
  ASSERT_EQ(t, 0) << "MPFR rounded while adding " << hex(x);
}

// The double nearest to x by the double exponent range (emin -1073, emax 1024
// in MPFR's convention x = m 2^e, 1/2 <= |m| < 1), via mpfr_subnormalize.
double round_subnormalize(mpfr_srcptr x) {
  if (mpfr_zero_p(x)) return 0.0;
  const mpfr_exp_t e = mpfr_get_exp(x);
  const int sign = mpfr_sgn(x);
  if (e > 1024) return sign > 0 ? kInf : -kInf;  // |x| >= 2^1024
  if (e < -1073) {  // |x| < 2^-1074: outside the range, decide by hand
    Mp half(64);
    mpfr_set_ui_2exp(half.v, 1, -1075, MPFR_RNDN);
    const int c = mpfr_cmpabs(x, half.v);
    const double mag = c > 0 ? kEta : 0.0;  // the tie eta/2 goes to even (0)
    return sign > 0 ? mag : -mag;
  }
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(-1073);
  mpfr_set_emax(1024);
  Mp y(53);
  int t = mpfr_set(y.v, x, MPFR_RNDN);
  t = mpfr_check_range(y.v, t, MPFR_RNDN);
  mpfr_subnormalize(y.v, t, MPFR_RNDN);
  const double d = mpfr_get_d(y.v, MPFR_RNDN);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return d;
}

// The correctly rounded double of x; both roundings must agree.
double round_oracle(mpfr_srcptr x) {
  const double a = round_subnormalize(x);
  double b = mpfr_get_d(x, MPFR_RNDN);
  if (b == 0.0) b = 0.0;  // +0 convention for the sign of zero
  EXPECT_EQ(bits(a), bits(b)) << "mpfr_get_d " << hex(b) << " vs subnormalize " << hex(a);
  return a == 0.0 ? 0.0 : a;
}

// The double nearest to the exact sum of v (+0.0 for an exact zero).
double oracle(const std::vector<double> &v) {
  Mp acc;
  for (double x : v) add_exact(acc.v, x);
  return round_oracle(acc.v);
}

// near_sum on a copy of v.
double run(const std::vector<double> &v, Stats *st = nullptr) {
  std::vector<double> w = v;
  return xn::exact::nearsum_detail::near_sum_impl(w.data(), static_cast<int>(w.size()),
                                                  st);
}

// Bitwise check; returns false (and reports) on a mismatch.
bool check(const std::vector<double> &v, const std::string &what, Stats *st = nullptr) {
  const double want = oracle(v);
  const double got = run(v, st);
  if (bits(got) == bits(want)) return true;
  ADD_FAILURE() << what << ": near_sum = " << hex(got)
                << ", exact rounding = " << hex(want) << "\n  terms " << show(v);
  return false;
}

// Same with a known expected value (and the oracle must agree with it).
void check_value(const std::vector<double> &v, double expected, const std::string &what,
                 Stats *st = nullptr) {
  const double want = oracle(v);
  EXPECT_EQ(bits(want), bits(expected))
      << what << ": oracle " << hex(want) << " expected " << hex(expected);
  const double got = run(v, st);
  EXPECT_EQ(bits(got), bits(expected))
      << what << ": near_sum " << hex(got) << " expected " << hex(expected)
      << "\n  terms " << show(v);
}

// A random double with random sign and exponent in [elo, ehi] (the value is
// rounded by ldexp where that range reaches the subnormals).
double rand_double(std::mt19937_64 &rng, int elo, int ehi) {
  const std::uint64_t m = (rng() >> 11) | (std::uint64_t{1} << 52);
  const int e = std::uniform_int_distribution<int>(elo, ehi)(rng);
  const double x = std::ldexp(static_cast<double>(m), e - 52);
  return (rng() & 1) ? -x : x;
}

// Terms whose exact sum is the exact midpoint between the double nearest to
// sum(v) and one of its neighbours (if the spacing there is >= 2 eta and both
// are finite): appended to v. Returns false if no such midpoint exists.
bool append_midpoint(std::vector<double> &v, std::mt19937_64 &rng) {
  Mp s;
  for (double x : v) add_exact(s.v, x);
  const double d = round_oracle(s.v);
  if (!std::isfinite(d)) return false;
  const double nb = std::nextafter(d, (rng() & 1) ? kInf : -kInf);
  if (!std::isfinite(nb) || std::fabs(nb - d) < 2 * kEta) return false;
  Mp diff;  // (d + nb) / 2 - s, exact
  mpfr_set_d(diff.v, d, MPFR_RNDN);
  add_exact(diff.v, nb);
  mpfr_div_2ui(diff.v, diff.v, 1, MPFR_RNDN);
  EXPECT_EQ(mpfr_sub(diff.v, diff.v, s.v, MPFR_RNDN), 0);
  for (int it = 0; !mpfr_zero_p(diff.v); ++it) {
    if (it > 60) {
      ADD_FAILURE() << "midpoint decomposition did not terminate";
      return false;
    }
    const double x = mpfr_get_d(diff.v, MPFR_RNDN);
    v.push_back(x);
    const int t = mpfr_sub_d(diff.v, diff.v, x, MPFR_RNDN);
    EXPECT_EQ(t, 0);
  }
  return true;
}

// ------------------------------------------------------------------ oracle

TEST(NearSumOracle, RoundsSubnormalsTiesAndOverflowCorrectly) {
  struct Case {
    double a;  // value = a * 2^ea + b * 2^eb (exact in MPFR)
    int ea;
    double b;
    int eb;
    double want;
  } cases[] = {
      {1.0, -1075, 0.0, 0, 0.0},                        // eta/2: tie to even 0
      {1.0, -1075, 1.0, -1100, kEta},                   // just above eta/2
      {-1.0, -1075, -1.0, -1100, -kEta},                // and negative
      {1.0, -1075, -1.0, -1100, 0.0},                   // just below eta/2
      {3.0, -1075, 0.0, 0, 2 * kEta},                   // 1.5 eta: even 2 eta
      {5.0, -1075, 0.0, 0, 2 * kEta},                   // 2.5 eta: even 2 eta
      {7.0, -1075, 0.0, 0, 4 * kEta},                   // 3.5 eta: even 4 eta
      {1.0, -1022, -1.0, -1075, 0x1p-1022},             // realmin - eta/2: even
      {1.0, -1022, -3.0, -1075, 0x1p-1022 - 2 * kEta},  // realmin - 3eta/2: even
      {1.0, -1021, kEta, 0, 0x1p-1021},                 // 2^-1021 + eta: tie
      {1.0, -1021, 3 * kEta, 0, 0x1p-1021 + 4 * kEta},  // tie to even, upward
      {DBL_MAX, 0, 0x1p970, 0, kInf},                   // DBL_MAX + ulp/2: Inf
      {DBL_MAX, 0, 0x1p970 - 0x1p917, 0, DBL_MAX},      // just below: DBL_MAX
      {DBL_MAX, 0, 1.0, 970, kInf},                     //
      {DBL_MAX, 0, 0x1p970, 0, kInf},                   //
      {-DBL_MAX, 0, -0x1p970, 0, -kInf},                //
      {1.0, 1024, 0.0, 0, kInf},                        // 2^1024
      {1.0, 1024, -1.0, 970, kInf},                     // 2^1024 - 2^970: tie
      {1.0, 1024, -3.0, 969, DBL_MAX},                  // below the tie
      {1.0, 0, 0x1p-53, 0, 1.0},                        // 1 + ulp/2: even
      {1.0 + 0x1p-52, 0, 0x1p-53, 0, 1.0 + 0x1p-51},    // odd neighbour: up
  };
  for (const Case &c : cases) {
    Mp x, y;
    mpfr_set_d(x.v, c.a, MPFR_RNDN);
    mpfr_mul_2si(x.v, x.v, c.ea, MPFR_RNDN);
    mpfr_set_d(y.v, c.b, MPFR_RNDN);
    mpfr_mul_2si(y.v, y.v, c.eb, MPFR_RNDN);
    ASSERT_EQ(mpfr_add(x.v, x.v, y.v, MPFR_RNDN), 0);
    EXPECT_EQ(bits(round_oracle(x.v)), bits(c.want))
        << hex(c.a) << " * 2^" << c.ea << " + " << hex(c.b) << " * 2^" << c.eb;
  }
}

// ------------------------------------------------------------------ basics

TEST(NearSum, EmptyOneAndTwoTerms) {
  EXPECT_EQ(bits(near_sum(nullptr, 0)), bits(0.0));
  const double singles[] = {0.0,      -0.0,     1.0,      -1.0,    kEta,
                            -kEta,    DBL_MIN,  -DBL_MIN, DBL_MAX, -DBL_MAX,
                            0x1p1023, 3 * kEta, M_PI,     -1e-300, 0x1p-1022 - kEta};
  for (double x : singles) check_value({x}, x == 0.0 ? 0.0 : x, "n=1 " + hex(x));
  check_value({-0.0, -0.0}, 0.0, "-0 + -0");
  check_value({-0.0, -0.0, -0.0}, 0.0, "three -0");
  check_value({1.0, -1.0}, 0.0, "1 - 1");
  check_value({DBL_MAX, DBL_MAX}, kInf, "DBL_MAX + DBL_MAX");
  check_value({-DBL_MAX, -DBL_MAX}, -kInf, "-DBL_MAX - DBL_MAX");
  check_value({DBL_MAX, -DBL_MAX}, 0.0, "DBL_MAX - DBL_MAX");
}

// With two terms NearSum is IEEE addition (except that -0 + -0 gives +0).
TEST(NearSum, TwoTermsEqualHardwareAddition) {
  const std::uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int i = 0; i < 20000 && failures < 5; ++i) {
    const int kind = i % 4;
    double a, b;
    if (kind == 0) {  // anywhere
      a = rand_double(rng, -1074, 1023);
      b = rand_double(rng, -1074, 1023);
    } else if (kind == 1) {  // close exponents: cancellation and ties
      const int e = std::uniform_int_distribution<int>(-1074, 1023)(rng);
      a = rand_double(rng, e, e);
      b = rand_double(rng, std::max(-1074, e - 60), e);
    } else if (kind == 2) {  // huge: overflow
      a = rand_double(rng, 1010, 1023);
      b = rand_double(rng, 960, 1023);
    } else {  // tiny: subnormal results
      a = rand_double(rng, -1074, -1015);
      b = rand_double(rng, -1074, -1015);
    }
    double want = a + b;
    if (want == 0.0) want = 0.0;
    const double got = run({a, b});
    if (bits(got) != bits(want)) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << " case " << i << ": " << hex(a) << " + "
                    << hex(b) << " = " << hex(want) << ", near_sum " << hex(got);
    }
    if (i % 50 == 0) failures += !check({a, b}, "two terms (oracle)");
  }
}

// ------------------------------------------------------------------ random

TEST(NearSum, RandomVectorsOfManyLengthsAndSpreads) {
  const std::uint64_t seed = 12345;
  std::mt19937_64 rng(seed);
  const int lengths[] = {1,  2,  3,  4,  5,   7,   8,   13,   16,  17,
                         31, 62, 63, 64, 100, 200, 255, 1000, 4096};
  const int spreads[] = {0, 3, 20, 60, 200, 1000, 2097};
  int failures = 0, idx = 0;
  for (int n : lengths)
    for (int spread : spreads)
      for (int rep = 0; rep < (n >= 1000 ? 2 : 6); ++rep, ++idx) {
        const int hi = std::uniform_int_distribution<int>(-1074 + spread, 1023)(rng);
        std::vector<double> v(n);
        for (double &x : v) x = rand_double(rng, hi - spread, hi);
        if (!check(v, "seed " + std::to_string(seed) + " case " + std::to_string(idx) +
                          " n=" + std::to_string(n) +
                          " spread=" + std::to_string(spread)) &&
            ++failures > 5)
          return;
      }
}

TEST(NearSum, LongVectors) {
  std::mt19937_64 rng(777);
  for (int n : {4096, 70000}) {
    std::vector<double> v(n);
    for (double &x : v) x = rand_double(rng, -40, 40);
    for (int i = 0; i < n / 2; ++i) v[n / 2 + i] = -v[i] * (1 + 0x1p-30);
    check(v, "long cancelling vector n=" + std::to_string(n));
    for (double &x : v) x = rand_double(rng, 1000, 1023);  // large path, overflows
    check(v, "long huge vector n=" + std::to_string(n));
  }
}

// ------------------------------------------------------------------ cancellation

TEST(NearSum, ExactZeroSumsGivePlusZero) {
  std::mt19937_64 rng(99);
  for (int rep = 0; rep < 200; ++rep) {
    const int pairs = std::uniform_int_distribution<int>(1, 60)(rng);
    std::vector<double> v;
    for (int i = 0; i < pairs; ++i) {
      const double x = rand_double(rng, -1074, rep % 2 ? 1023 : 500);
      v.push_back(x);
      v.push_back(-x);
    }
    if (rep % 3 == 0) v.push_back(-0.0);
    std::shuffle(v.begin(), v.end(), rng);
    check_value(v, 0.0, "pairs x, -x, rep " + std::to_string(rep));
  }
  check_value({-0.0, 0.0, -0.0}, 0.0, "signed zeros");
  check_value({0x1p1023, 0x1p1023, -DBL_MAX, -0x1p971}, 0.0, "huge exact zero");
}

TEST(NearSum, MassiveCancellationWithTinyTerms) {
  const std::uint64_t seed = 4242;
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int rep = 0; rep < 400 && failures < 5; ++rep) {
    std::vector<double> v;
    const int top = std::uniform_int_distribution<int>(-900, 1023)(rng);
    const int pairs = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < pairs; ++i) {
      const double x = rand_double(rng, top - 100, top);
      v.push_back(x);
      v.push_back(-x);
    }
    const int tiny = std::uniform_int_distribution<int>(1, 5)(rng);
    const int tlo = std::uniform_int_distribution<int>(-1074, top - 60)(rng);
    for (int i = 0; i < tiny; ++i) v.push_back(rand_double(rng, tlo, tlo + 30));
    std::shuffle(v.begin(), v.end(), rng);
    failures += !check(v, "seed " + std::to_string(seed) + " rep " + std::to_string(rep));
  }
  // Specific: the tiny remainder is all that is left.
  check_value({0x1p600, 1.0, -0x1p600, kEta}, 1.0, "1 + eta after cancellation");
  check_value({0x1p600, 0x1p-1021, kEta, -0x1p600}, 0x1p-1021, "tie at 2^-1021");
  check_value({0x1p-1000, -0x1p-1000, 3 * kEta}, 3 * kEta, "subnormal remainder");
}

// ------------------------------------------------------------------ ties

TEST(NearSum, ExactMidpointsRoundToEven) {
  Stats st{};
  // 1 + ulp/2: even neighbour 1; (1 + ulp) + ulp/2: even neighbour 1 + 2 ulp.
  check_value({1.0, 0x1p-53}, 1.0, "1 + 2^-53", &st);
  check_value({1.0 + 0x1p-52, 0x1p-53}, 1.0 + 0x1p-51, "(1+u) + 2^-53", &st);
  check_value({-1.0, -0x1p-53}, -1.0, "-(1 + 2^-53)", &st);
  check_value({0x1p600, 1.0, -0x1p600, 0x1p-54, 0x1p-54}, 1.0, "split midpoint", &st);
  check_value({0x1p600, 1.0 + 0x1p-52, -0x1p600, 0x1p-54, 0x1p-55, 0x1p-55},
              1.0 + 0x1p-51, "split midpoint, odd", &st);
  // Perturbed by a tiny term of either sign far below.
  check_value({1.0, 0x1p-53, kEta}, 1.0 + 0x1p-52, "1 + 2^-53 + eta", &st);
  check_value({1.0 + 0x1p-52, 0x1p-53, -kEta}, 1.0 + 0x1p-52, "(1+u) + 2^-53 - eta", &st);
  check_value({1.0, 0x1p-53, -0x1p-1000, 0x1p-1000, 0x1p-1060}, 1.0 + 0x1p-52,
              "midpoint + 2^-1060", &st);
  // Ties where the doubles are 2 eta apart (just above the subnormals).
  check_value({0x1p-1021, kEta}, 0x1p-1021, "2^-1021 + eta", &st);
  check_value({0x1p-1021 + 2 * kEta, kEta}, 0x1p-1021 + 4 * kEta, "odd + eta", &st);
  check_value({0x1p-1021, kEta, 0x1p-900, -0x1p-900}, 0x1p-1021, "with cancellation",
              &st);
  // Ties near DBL_MAX and at the overflow threshold.
  check_value({DBL_MAX, 0x1p969, 0x1p969}, kInf, "DBL_MAX + ulp/2 in halves", &st);
  check_value({0x1p1023, 0x1p969}, 0x1p1023, "2^1023 + ulp/2", &st);
  check_value({0x1p1023 + 0x1p971, 0x1p970}, 0x1p1023 + 0x1p972, "odd + ulp/2", &st);
  EXPECT_GT(st.ties, 0) << "the exact-tie branch of NearSum was not reached";
  EXPECT_GT(st.second_pass, 0);
}

TEST(NearSum, ConstructedMidpointsWithAndWithoutPerturbation) {
  const std::uint64_t seed = 31337;
  std::mt19937_64 rng(seed);
  Stats st{};
  int failures = 0, made = 0;
  for (int rep = 0; rep < 6000 && failures < 5; ++rep) {
    const int n = std::uniform_int_distribution<int>(1, 30)(rng);
    const int spread = std::uniform_int_distribution<int>(0, 200)(rng);
    const int hi = std::uniform_int_distribution<int>(-1000, 1020)(rng);
    std::vector<double> v(n);
    for (double &x : v) x = rand_double(rng, std::max(-1074, hi - spread), hi);
    if (!append_midpoint(v, rng)) continue;
    ++made;
    const int mode = rep % 3;  // exact tie, tie + tiny, tie - tiny
    if (mode) {
      const int e = std::uniform_int_distribution<int>(-1074, -1074 + 400)(rng);
      v.push_back((mode == 1 ? 1.0 : -1.0) * std::ldexp(1.0, e));
    }
    std::shuffle(v.begin(), v.end(), rng);
    failures +=
        !check(v, "seed " + std::to_string(seed) + " rep " + std::to_string(rep), &st);
  }
  EXPECT_GT(made, 4000);
  EXPECT_GT(st.ties, 500);
}

// ------------------------------------------------------------------ underflow

TEST(NearSum, SubnormalTermsAndResults) {
  const std::uint64_t seed = 1074;
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int rep = 0; rep < 5000 && failures < 5; ++rep) {
    const int n = std::uniform_int_distribution<int>(1, 80)(rng);
    const int hi = std::uniform_int_distribution<int>(-1074, -990)(rng);
    std::vector<double> v(n);
    for (double &x : v) x = rand_double(rng, -1074, hi);
    if (rep % 2) {  // large cancelling pair on top
      const double big = rand_double(rng, -1000, 1023);
      v.push_back(big);
      v.push_back(-big);
    }
    std::shuffle(v.begin(), v.end(), rng);
    failures += !check(v, "seed " + std::to_string(seed) + " rep " + std::to_string(rep));
  }
  check_value({0x1p-1022, -kEta}, 0x1p-1022 - kEta, "largest subnormal");
  check_value({kEta, kEta, kEta}, 3 * kEta, "3 eta");
  check_value({-0x1p-1022, 0x1p-1023, -kEta}, -0x1p-1023 - kEta, "negative subnormal");
  check_value({0x1p-1021, -0x1p-1021, 0x1p-1074, -0x1p-1073}, -kEta, "-eta");
}

// ------------------------------------------------------------------ overflow

TEST(NearSum, OverflowAndNearOverflow) {
  Stats st{};
  check_value({DBL_MAX, 0x1p970}, kInf, "DBL_MAX + ulp/2", &st);
  check_value({DBL_MAX, 0x1p970, -kEta}, DBL_MAX, "DBL_MAX + ulp/2 - eta", &st);
  check_value({DBL_MAX, 0x1p970 - 0x1p917}, DBL_MAX, "DBL_MAX + just under ulp/2", &st);
  check_value({DBL_MAX, 0x1p969, 0x1p968, 0x1p967, kEta, -kEta}, DBL_MAX, "7/8 ulp/2",
              &st);
  check_value({-DBL_MAX, -0x1p970, kEta}, -DBL_MAX, "negative, just under", &st);
  check_value({-DBL_MAX, -0x1p970}, -kInf, "negative overflow", &st);
  check_value({0x1p1023, 0x1p1023}, kInf, "2^1024", &st);
  check_value({DBL_MAX, DBL_MAX, -DBL_MAX}, DBL_MAX, "intermediate overflow", &st);
  check_value({DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, 3 * kEta}, 3 * kEta,
              "huge cancellation to subnormal", &st);
  check_value({0x1p1023, 1.0, -0x1p1023, 0x1p-53}, 1.0, "huge + tie", &st);
  check_value({0x1p1023, 1.0, -0x1p1023, 0x1p-53, kEta}, 1.0 + 0x1p-52,
              "huge + perturbed tie", &st);
  std::vector<double> many(200, 0x1p1017);
  check_value(many, kInf, "200 x 2^1017", &st);
  many.assign(128, 0x1p1017);  // 2^1024 exactly
  check_value(many, kInf, "128 x 2^1017", &st);
  many.assign(127, 0x1p1017);
  check_value(many, 127 * 0x1p1017, "127 x 2^1017", &st);
  many.assign(64, 0x1p1017);
  check_value(many, 0x1p1023, "64 x 2^1017", &st);
  EXPECT_GT(st.large, 0);
  EXPECT_GT(st.large_tiny, 0);

  const std::uint64_t seed = 1024;
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int rep = 0; rep < 5000 && failures < 5; ++rep) {
    const int n = std::uniform_int_distribution<int>(1, 64)(rng);
    std::vector<double> v(n);
    const int lo = std::uniform_int_distribution<int>(-1074, 1015)(rng);
    for (double &x : v) x = rand_double(rng, rep % 2 ? 1000 : lo, 1023);
    if (rep % 3 == 0) {  // same signs: overflow likely
      for (double &x : v) x = std::fabs(x);
    }
    if (rep % 5 == 0) {  // DBL_MAX-ish plus small pieces
      v.push_back(DBL_MAX);
      v.push_back(0x1p969);
      v.push_back(-std::ldexp(1.0, std::uniform_int_distribution<int>(-1074, 960)(rng)));
    }
    std::shuffle(v.begin(), v.end(), rng);
    failures += !check(v, "seed " + std::to_string(seed) + " rep " + std::to_string(rep));
  }
}

// Huge terms (beyond the paper's domain: the scaled path) with the exact sum
// near the scaled path's thresholds: small terms around the split bound
// 2^(S-1021) and sums around 2^(S-1018), S = ceil(log2(n + 4)) + 4, exact
// midpoints included.
TEST(NearSum, ScaledPathAroundItsThresholds) {
  const std::uint64_t seed = 1018;
  std::mt19937_64 rng(seed);
  Stats st{};
  int failures = 0;
  for (int rep = 0; rep < 20000 && failures < 5; ++rep) {
    std::vector<double> v;
    const int pairs = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int i = 0; i < pairs; ++i) {
      const double x = rand_double(rng, 1000, 1023);
      v.push_back(x);
      v.push_back(-x);
    }
    const int small = std::uniform_int_distribution<int>(1, 12)(rng);
    const int S = xn::exact::nearsum_detail::ceil_log2(2 * pairs + small + 2 + 4) + 4;
    const int e0 = S - 1021 + std::uniform_int_distribution<int>(-6, 6)(rng);
    for (int i = 0; i < small; ++i)
      v.push_back(rand_double(rng, std::max(-1074, e0 - 60), e0));
    if (rep % 3 == 0) append_midpoint(v, rng);
    if (rep % 6 == 0) v.push_back(rep % 12 ? kEta : -kEta);
    std::shuffle(v.begin(), v.end(), rng);
    failures +=
        !check(v, "seed " + std::to_string(seed) + " rep " + std::to_string(rep), &st);
  }
  EXPECT_GT(st.large_tiny, 1000);
  EXPECT_GT(st.large - st.large_tiny, 1000);
}

// ------------------------------------------------------------------ restart

// The first extraction of {2^60, -2^60, 1, 2^-30} gives t' = 0: Transform must
// restart on the remaining vector (Part II, Algorithm 3.3).
TEST(NearSum, ZeroSumRestartPath) {
  Stats st{};
  check_value({0x1p60, -0x1p60, 1.0, 0x1p-30}, 1.0 + 0x1p-30, "one restart", &st);
  EXPECT_GT(st.restarts, 0);
  st = Stats{};
  check_value({0x1p900, -0x1p900, 0x1p400, -0x1p400, 0x1p-100, -0x1p-100, 3.0, kEta}, 3.0,
              "restarts at two levels", &st);
  EXPECT_GE(st.restarts, 2);
  st = Stats{};
  check_value({0x1p900, -0x1p900, 0x1p400, -0x1p400, 0x1p-100, -0x1p-100}, 0.0,
              "restart down to all zero", &st);
  EXPECT_GE(st.restarts, 3);
  // Random levels of cancelling pairs.
  std::mt19937_64 rng(606);
  st = Stats{};
  for (int rep = 0; rep < 200; ++rep) {
    std::vector<double> v;
    int e = std::uniform_int_distribution<int>(-500, 1015)(rng);
    while (e > -1074) {
      const double x = rand_double(rng, e, e);
      v.push_back(x);
      v.push_back(-x);
      e -= std::uniform_int_distribution<int>(60, 300)(rng);
    }
    v.push_back(rand_double(rng, -1074, std::max(-1074, e + 300)));
    if (rep % 2) v.push_back(rand_double(rng, -1074, -1074));
    std::shuffle(v.begin(), v.end(), rng);
    check(v, "restart levels rep " + std::to_string(rep), &st);
  }
  EXPECT_GT(st.restarts, 100);
}

// ------------------------------------------------------------------ hard

// Ill-conditioned sums in the style of Ogita-Rump-Oishi's GenSum, cancelling
// pairs, full-range vectors and constructed midpoints, mixed.
std::vector<double> hard_vector(std::mt19937_64 &rng) {
  const int n = std::uniform_int_distribution<int>(2, 200)(rng);
  const int kind = std::uniform_int_distribution<int>(0, 4)(rng);
  const int top = std::uniform_int_distribution<int>(-1000, 1023)(rng);
  const int spread = std::uniform_int_distribution<int>(1, 1000)(rng);
  const int lo = std::max(-1074, top - spread);
  std::vector<double> v;
  if (kind == 0) {  // GenSum-like: the second half cancels the naive running sum
    for (int i = 0; i < n / 2; ++i) v.push_back(rand_double(rng, lo, top));
    for (int i = n / 2; i < n; ++i) {
      double naive = 0.0;
      for (double x : v) naive += x;
      const int e = top - (top - lo) * (i - n / 2) / std::max(1, n - n / 2);
      const double t = rand_double(rng, std::max(-1074, e - 5), e) - naive;
      if (std::isfinite(t)) v.push_back(t);
    }
  } else if (kind == 1) {  // cancelling pairs plus a few stragglers
    for (int i = 0; i < n / 2; ++i) {
      const double x = rand_double(rng, lo, top);
      v.push_back(x);
      v.push_back(-x);
    }
    for (int i = 0; i < 3; ++i) v.push_back(rand_double(rng, -1074, top));
  } else if (kind == 2) {  // anything
    for (int i = 0; i < n; ++i) v.push_back(rand_double(rng, -1074, 1023));
  } else if (kind == 3) {  // huge cancelling pairs, tiny remainder (scaled path)
    for (int i = 0; i < n / 2; ++i) {
      const double x = rand_double(rng, 1000, 1023);
      v.push_back(x);
      v.push_back(-x);
    }
    for (int i = 0; i < 3; ++i) v.push_back(rand_double(rng, -1074, -900));
  } else {  // midpoint, maybe perturbed
    for (int i = 0; i < n / 4 + 1; ++i) v.push_back(rand_double(rng, lo, top));
    if (append_midpoint(v, rng) && (rng() & 1))
      v.push_back(rand_double(rng, -1074, std::max(-1074, lo - 60)));
  }
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(NearSum, TensOfThousandsOfHardRandomVectors) {
  const std::uint64_t seed = 0x5eed2008;
  std::mt19937_64 rng(seed);
  Stats st{};
  int failures = 0;
  const int count = 30000;
  for (int i = 0; i < count && failures < 5; ++i) {
    const std::vector<double> v = hard_vector(rng);
    if (!check(v, "seed " + std::to_string(seed) + " vector " + std::to_string(i), &st))
      ++failures;
  }
  // Every path was exercised.
  EXPECT_GT(st.restarts, 0);
  EXPECT_GT(st.second_pass, 0);
  EXPECT_GT(st.ties, 0);
  EXPECT_GT(st.large, 0);
  EXPECT_GT(st.large_tiny, 0);
}

// ------------------------------------------------------------------ helpers

TEST(NearSum, TwoSumAndTwoProdAreErrorFree) {
  std::mt19937_64 rng(55);
  for (int i = 0; i < 5000; ++i) {
    const double a = rand_double(rng, -900, 900), b = rand_double(rng, -900, 900);
    double s, e;
    xn::exact::two_sum(a, b, s, e);
    EXPECT_EQ(bits(s), bits(a + b));
    Mp x, y;
    add_exact(x.v, a);
    add_exact(x.v, b);
    add_exact(y.v, s);
    add_exact(y.v, e);
    EXPECT_TRUE(mpfr_equal_p(x.v, y.v)) << "two_sum " << hex(a) << " " << hex(b);

    const double c = rand_double(rng, -400, 400), d = rand_double(rng, -400, 400);
    double p, f;
    xn::exact::two_prod(c, d, p, f);
    EXPECT_EQ(bits(p), bits(c * d));
    Mp prod;
    mpfr_set_d(prod.v, c, MPFR_RNDN);
    EXPECT_EQ(mpfr_mul_d(prod.v, prod.v, d, MPFR_RNDN), 0);
    Mp pe;
    add_exact(pe.v, p);
    add_exact(pe.v, f);
    EXPECT_TRUE(mpfr_equal_p(prod.v, pe.v)) << "two_prod " << hex(c) << " " << hex(d);
  }
}

// NearSum of TwoProd terms: the correctly rounded dot product, as exdgemm uses it.
TEST(NearSum, DotProductsFromTwoProd) {
  std::mt19937_64 rng(2718);
  for (int rep = 0; rep < 300; ++rep) {
    const int k = std::uniform_int_distribution<int>(1, 60)(rng);
    std::vector<double> terms, ref;
    Mp exact;
    for (int i = 0; i < k; ++i) {
      const double a = rand_double(rng, -300, 300), b = rand_double(rng, -300, 300);
      double p, e;
      xn::exact::two_prod(a, b, p, e);
      terms.push_back(p);
      terms.push_back(e);
      Mp prod;
      mpfr_set_d(prod.v, a, MPFR_RNDN);
      mpfr_mul_d(prod.v, prod.v, b, MPFR_RNDN);
      EXPECT_EQ(mpfr_add(exact.v, exact.v, prod.v, MPFR_RNDN), 0);
    }
    const double got = run(terms);
    EXPECT_EQ(bits(got), bits(round_oracle(exact.v))) << "dot rep " << rep;
  }
}

}  // namespace
