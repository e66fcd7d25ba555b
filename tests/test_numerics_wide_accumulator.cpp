// test_numerics_wide_accumulator.cpp - xn::exact::WideAccumulator (kernels/
// wide_accumulator.h) against an exact MPFR sum.
//
// The oracle adds the same terms in MPFR at 8000 bits, more than the 6976
// bits the accumulator spans, and checks that no operation rounded (every
// ternary value is 0); the exact sum is then rounded once by mpfr_get_d
// (MPFR_RNDN), whose rounding into the subnormal range and to Inf is checked
// by hand first (OracleRoundsLikeIeee). Every assertion compares bit patterns,
// so a wrong sign of zero or a result one ulp off fails. The random suites
// use a fixed seed (XN_TEST_SEED overrides it), printed with every failure.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numerics/wide_accumulator.h"

namespace {

using xn::exact::WideAccumulator;
__extension__ typedef unsigned __int128 u128;

static_assert(sizeof(unsigned long) == 8, "mpfr_set_ui_2exp takes 64-bit mantissas");
static_assert(WideAccumulator::kMinExp <= -3400, "range reaches down to 2^-3400");
static_assert(WideAccumulator::kMaxExp >= 3399, "range reaches up to 2^3399");

constexpr int kMinExp = WideAccumulator::kMinExp;
constexpr int kMaxExp = WideAccumulator::kMaxExp;
constexpr double kInf = HUGE_VAL;

std::uint64_t seed() {
  const char *env = std::getenv("XN_TEST_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 0) : 0x5eedc0ffee2024ull;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

std::string show(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (0x%016" PRIx64 ")", x, bits(x));
  return buf;
}

// x = (-1)^neg * mant * 2^exp, mant < 2^53 (written independently of the
// header's own decomposition).
struct Split {
  std::uint64_t mant;
  int exp;
  bool neg;
};

Split split(double x) {
  const std::uint64_t b = bits(x);
  const int field = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  if (field == 0) return {frac, -1074, (b >> 63) != 0};
  return {frac | (std::uint64_t(1) << 52), field - 1075, (b >> 63) != 0};
}

// The exact sum in MPFR.
class Oracle {
 public:
  static constexpr mpfr_prec_t kPrec = 8000;
  Oracle() {
    mpfr_init2(sum_, kPrec);
    mpfr_init2(t_, kPrec);
    mpfr_set_zero(sum_, 1);
  }
  ~Oracle() {
    mpfr_clear(sum_);
    mpfr_clear(t_);
  }
  Oracle(const Oracle &) = delete;
  Oracle &operator=(const Oracle &) = delete;

  void add(double x, int scale) {
    check(mpfr_set_d(t_, x, MPFR_RNDN));
    accumulate(scale);
  }
  void add_product(double a, double b, int scale) {
    check(mpfr_set_d(t_, a, MPFR_RNDN));
    check(mpfr_mul_d(t_, t_, b, MPFR_RNDN));
    accumulate(scale);
  }
  void add_product3(double a, double b, double c, int scale) {
    check(mpfr_set_d(t_, a, MPFR_RNDN));
    check(mpfr_mul_d(t_, t_, b, MPFR_RNDN));
    check(mpfr_mul_d(t_, t_, c, MPFR_RNDN));
    accumulate(scale);
  }
  void add_integer(std::uint64_t mant, int exp, bool neg) {
    check(mpfr_set_ui_2exp(t_, mant, exp, MPFR_RNDN));
    if (neg) check(mpfr_neg(t_, t_, MPFR_RNDN));
    accumulate(0);
  }
  double value() const { return mpfr_get_d(sum_, MPFR_RNDN); }
  int sign() const { return mpfr_sgn(sum_) > 0 ? 1 : (mpfr_sgn(sum_) < 0 ? -1 : 0); }
  bool inexact() const { return inexact_; }

 private:
  void check(int ternary) {
    if (ternary != 0) inexact_ = true;
  }
  void accumulate(int scale) {
    check(mpfr_mul_2si(t_, t_, scale, MPFR_RNDN));
    check(mpfr_add(sum_, sum_, t_, MPFR_RNDN));
  }

  mpfr_t sum_, t_;
  bool inexact_ = false;
};

// One term of every kind the accumulator takes; `kind` picks the call.
struct Term {
  enum Kind { kDouble, kProduct, kProduct3, kInteger } kind;
  double x, y, z;      // factors (kDouble: x; kProduct: x, y; kProduct3: all)
  std::uint64_t mant;  // kInteger
  bool neg;            // kInteger
  int scale;           // power of two (kInteger: the exponent)
};

// The accumulator and the oracle fed the same terms.
struct Harness {
  WideAccumulator acc;
  Oracle oracle;
  Harness() { acc.clear(); }

  void add(double x, int scale = 0) {
    acc.add(x, scale);
    oracle.add(x, scale);
  }
  void add_product(double a, double b, int scale = 0) {
    acc.add_product(a, b, scale);
    oracle.add_product(a, b, scale);
  }
  void add_integer(std::uint64_t mant, int exp, bool neg) {
    acc.add_integer(mant, exp, neg);
    oracle.add_integer(mant, exp, neg);
  }
  // a * b * c * 2^scale: the 159-bit product of the significands goes into the
  // accumulator as three 64-bit pieces through add_integer.
  void add_product3(double a, double b, double c, int scale) {
    const Split sa = split(a), sb = split(b), sc = split(c);
    const u128 p = static_cast<u128>(sa.mant) * sb.mant;
    const u128 r0 = static_cast<u128>(static_cast<std::uint64_t>(p)) * sc.mant;
    const u128 r1 =
        static_cast<u128>(static_cast<std::uint64_t>(p >> 64)) * sc.mant + (r0 >> 64);
    const int e = sa.exp + sb.exp + sc.exp + scale;
    const bool neg = sa.neg != sb.neg ? !sc.neg : sc.neg;
    acc.add_integer(static_cast<std::uint64_t>(r0), e, neg);
    acc.add_integer(static_cast<std::uint64_t>(r1), e + 64, neg);
    acc.add_integer(static_cast<std::uint64_t>(r1 >> 64), e + 128, neg);
    oracle.add_product3(a, b, c, scale);
  }
  void apply(const Term &t, bool negate = false) {
    switch (t.kind) {
      case Term::kDouble:
        add(negate ? -t.x : t.x, t.scale);
        break;
      case Term::kProduct:
        add_product(negate ? -t.x : t.x, t.y, t.scale);
        break;
      case Term::kProduct3:
        add_product3(negate ? -t.x : t.x, t.y, t.z, t.scale);
        break;
      case Term::kInteger:
        add_integer(t.mant, t.scale, t.neg != negate);
        break;
    }
  }

  // Result and sign agree bit for bit with the exact sum rounded by MPFR.
  ::testing::AssertionResult same() const {
    if (oracle.inexact()) return ::testing::AssertionFailure() << "oracle rounded";
    const double got = acc.round_to_double(), want = oracle.value();
    if (bits(got) != bits(want)) {
      return ::testing::AssertionFailure()
             << "round_to_double " << show(got) << ", exact sum rounds to " << show(want);
    }
    if (acc.sign() != oracle.sign()) {
      return ::testing::AssertionFailure()
             << "sign " << acc.sign() << ", exact " << oracle.sign();
    }
    return ::testing::AssertionSuccess();
  }
  // Same, and the result is `expected` (bit for bit).
  ::testing::AssertionResult is(double expected) const {
    ::testing::AssertionResult r = same();
    if (!r) return r;
    const double got = acc.round_to_double();
    if (bits(got) != bits(expected)) {
      return ::testing::AssertionFailure()
             << "got " << show(got) << ", expected " << show(expected);
    }
    return r;
  }
};

// ------------------------------------------------------------ random input

int uniform_int(std::mt19937_64 &rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A finite double with every exponent field equally likely at its ends:
// subnormals (down to 2^-1074), the lowest normal binades, the binades next
// to DBL_MAX and the whole range; significands random, all ones or short.
double random_double(std::mt19937_64 &rng) {
  int field;
  switch (rng() % 8) {
    case 0:
      field = 0;
      break;
    case 1:
      field = uniform_int(rng, 1, 3);
      break;
    case 2:
      field = uniform_int(rng, 2043, 2046);
      break;
    default:
      field = uniform_int(rng, 1, 2046);
  }
  std::uint64_t frac = rng() & ((std::uint64_t(1) << 52) - 1);
  switch (rng() % 6) {
    case 0:
      frac = (std::uint64_t(1) << 52) - 1;
      break;
    case 1:
      frac >>= uniform_int(rng, 0, 52);  // short (or tiny subnormal)
      break;
    case 2:
      frac &= ~std::uint64_t(0) << uniform_int(rng, 0, 52);  // trailing zeros
      break;
    default:
      break;
  }
  if (field == 0 && frac == 0) frac = 1;
  const std::uint64_t sign = rng() & 1;
  return from_bits((sign << 63) | (std::uint64_t(field) << 52) | frac);
}

int lsb(std::uint64_t m) { return __builtin_ctzll(m); }
int msb(std::uint64_t m) { return 63 - __builtin_clzll(m); }

// Weights of the lowest and (an upper bound of) the highest set bit of the
// term at scale 0; false for a zero term.
bool term_bits(const Term &t, int &lo, int &hi) {
  if (t.kind == Term::kInteger) {
    if (t.mant == 0) return false;
    lo = lsb(t.mant);
    hi = msb(t.mant);
    return true;
  }
  const int n = t.kind == Term::kDouble ? 1 : (t.kind == Term::kProduct ? 2 : 3);
  const double f[3] = {t.x, t.y, t.z};
  lo = 0;
  hi = n - 1;  // a product of n significands < 2^(h+1) each is < 2^(sum h + n)
  for (int i = 0; i < n; ++i) {
    const Split s = split(f[i]);
    if (s.mant == 0) return false;
    lo += s.exp + lsb(s.mant);
    hi += s.exp + msb(s.mant);
  }
  return true;
}

// A random term whose highest bit lies near center + [-spread, spread]
// (clamped into the accumulator's range), or unscaled (scale 0) if raw.
Term random_term(std::mt19937_64 &rng, int center, int spread, bool raw) {
  Term t{};
  t.kind = static_cast<Term::Kind>(rng() % 4);
  t.x = random_double(rng);
  t.y = random_double(rng);
  t.z = random_double(rng);
  t.mant = rng() >> uniform_int(rng, 0, 63);
  t.neg = (rng() & 1) != 0;
  int lo, hi;
  if (!term_bits(t, lo, hi)) return t;
  if (raw && t.kind != Term::kInteger) return t;  // within range by construction
  int s = center + uniform_int(rng, -spread, spread) - hi;
  s = std::min(std::max(s, kMinExp - lo), kMaxExp - hi);
  t.scale = s;
  return t;
}

bool term_covered(const Term &t) {
  int lo, hi;
  return !term_bits(t, lo, hi) || WideAccumulator::covers(lo + t.scale, hi + t.scale);
}

// ------------------------------------------------------------------ tests

// mpfr_get_d must round like IEEE round-to-nearest-even into the subnormal
// range and to Inf; checked on values whose correct results are known.
TEST(WideAccumulator, OracleRoundsLikeIeee) {
  mpfr_t x, t;
  mpfr_init2(x, 8000);
  mpfr_init2(t, 8000);
  const std::uint64_t ks[] = {0,
                              1,
                              2,
                              3,
                              4,
                              5,
                              1000,
                              1001,
                              (std::uint64_t(1) << 51) + 1,
                              (std::uint64_t(1) << 52) - 2,
                              (std::uint64_t(1) << 52) - 1};
  for (std::uint64_t k : ks) {
    for (int nudge = -1; nudge <= 1; ++nudge) {
      // (2k + 1) * 2^-1075 (+- 2^-3000): between k and k + 1 times 2^-1074.
      mpfr_set_ui_2exp(x, 2 * k + 1, -1075, MPFR_RNDN);
      mpfr_set_si_2exp(t, nudge, -3000, MPFR_RNDN);
      ASSERT_EQ(mpfr_add(x, x, t, MPFR_RNDN), 0);
      const std::uint64_t want = nudge > 0 ? k + 1 : (nudge < 0 ? k : k + (k & 1));
      EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), want) << "k " << k << " nudge " << nudge;
      mpfr_neg(x, x, MPFR_RNDN);
      EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), want | (std::uint64_t(1) << 63));
    }
  }
  mpfr_set_ui_2exp(x, 1, -1076, MPFR_RNDN);
  EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), 0u);
  mpfr_set_si_2exp(x, -1, -1076, MPFR_RNDN);
  EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), bits(-0.0));
  // 2^1024 - 2^970 (the midpoint above DBL_MAX) and just below it.
  mpfr_set_ui_2exp(x, (std::uint64_t(1) << 54) - 1, 970, MPFR_RNDN);
  EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), bits(kInf));
  mpfr_set_si_2exp(t, -1, -1000, MPFR_RNDN);
  ASSERT_EQ(mpfr_add(x, x, t, MPFR_RNDN), 0);
  EXPECT_EQ(bits(mpfr_get_d(x, MPFR_RNDN)), bits(DBL_MAX));
  mpfr_clear(x);
  mpfr_clear(t);
}

TEST(WideAccumulator, CoveredRange) {
  EXPECT_TRUE(WideAccumulator::covers(-3400, 3399));
  EXPECT_TRUE(WideAccumulator::covers(kMinExp, kMaxExp));
  EXPECT_FALSE(WideAccumulator::covers(kMinExp - 1, 0));
  EXPECT_FALSE(WideAccumulator::covers(0, kMaxExp + 1));
  EXPECT_FALSE(WideAccumulator::covers(5, 4));
  // Headroom: 64 bits above the highest term bit, then the sign bit.
  EXPECT_EQ(kMaxExp + 1 + WideAccumulator::kHeadroom + 1,
            kMinExp + 64 * WideAccumulator::kLimbs);
  EXPECT_GE(WideAccumulator::kHeadroom, 64);
  // Every product of three finite doubles, unscaled.
  EXPECT_TRUE(WideAccumulator::covers(-3 * 1074, 3 * 1023 + 2));
}

// Trailing zero bits of a term may lie below the range: only set bits count.
TEST(WideAccumulator, RangeEdges) {
  Harness h;
  // In units of 2^kMinExp: 4 + 1 + 1 + 8.
  h.add(0x1p-1000, kMinExp + 2 + 1000);  // significand from 2^(kMinExp - 50)
  h.add_integer(2, kMinExp - 1, false);
  h.add_integer(std::uint64_t(1) << 63, kMinExp - 63, false);
  h.add_product(0x1p-1074, 0x1p-600, kMinExp + 3 + 1674);
  EXPECT_TRUE(h.is(0.0));
  EXPECT_EQ(h.acc.sign(), 1);
  h.add_integer(14, kMinExp, true);
  EXPECT_TRUE(h.is(0.0));
  // Products whose integer significand starts 1 to 103 bits below the range
  // (3 * 2^103 * 2^(kMinExp - d)): the dropped low bits are zero.
  for (int d : {1, 30, 63, 64, 65, 100, 103}) {
    h.add_product(0x1.8p-1000, 0x1p-1000, kMinExp - d + 2104);
    EXPECT_EQ(h.acc.sign(), 1) << "d " << d;
    h.add_integer(3, kMinExp + 103 - d, true);
    EXPECT_EQ(h.acc.sign(), 0) << "d " << d;
  }
  EXPECT_EQ(h.acc.sign(), 0);
  // The highest bit a term may set, with all bits below it, and the lowest.
  h.add_integer(~std::uint64_t(0), kMaxExp - 63, false);
  h.add_product(0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023, kMaxExp - 2047);
  h.add(1.0, kMinExp);
  EXPECT_TRUE(h.is(kInf));
  h.add_integer(~std::uint64_t(0), kMaxExp - 63, true);
  h.add_product(-0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023, kMaxExp - 2047);
  EXPECT_TRUE(h.is(0.0));
  EXPECT_EQ(h.acc.sign(), 1);
}

TEST(WideAccumulator, ZeroAndSign) {
  {
    Harness h;
    EXPECT_TRUE(h.is(0.0));
    EXPECT_EQ(h.acc.sign(), 0);
    h.add(-0.0);
    h.add_product(-0.0, 5.0);
    h.add_integer(0, 7, true);
    EXPECT_TRUE(h.is(0.0));
  }
  {
    Harness h;
    h.add(-3.5);
    EXPECT_EQ(h.acc.sign(), -1);
    h.add(3.5);
    EXPECT_TRUE(h.is(0.0));  // +0, not -0
    EXPECT_EQ(h.acc.sign(), 0);
  }
  {
    // Borrow through every limb and back: -2^kMinExp is all ones.
    Harness h;
    h.add(1.0, kMinExp);
    EXPECT_EQ(h.acc.sign(), 1);
    h.add(-1.0, kMinExp + 1);
    EXPECT_TRUE(h.is(-0.0));
    EXPECT_EQ(h.acc.sign(), -1);
    h.add(1.0, kMinExp + 1);
    EXPECT_TRUE(h.is(0.0));
    EXPECT_EQ(h.acc.sign(), 1);
    h.add(-1.0, kMinExp);
    EXPECT_TRUE(h.is(0.0));
    EXPECT_EQ(h.acc.sign(), 0);
  }
  {
    // The top of the range and the bottom together.
    Harness h;
    h.add_integer(~std::uint64_t(0), kMaxExp - 63, true);
    h.add(1.0, kMinExp);
    EXPECT_EQ(h.acc.sign(), -1);
    EXPECT_TRUE(h.is(-kInf));
    h.add_integer(~std::uint64_t(0), kMaxExp - 63, false);
    EXPECT_EQ(h.acc.sign(), 1);
    EXPECT_TRUE(h.is(0.0));  // 2^-3456 underflows to +0
  }
  {
    // Negative sums -2^(kMinExp + 64 j): all limbs from j up are all ones
    // and all below are zero (the magnitude's leading limb is above the
    // highest limb that is not all sign bits).
    const struct {
      int j;
      double want;
    } cases[] = {{1, -0.0}, {17, -0.0}, {38, -0x1p-1024}, {64, -0x1p640}, {70, -kInf}};
    for (const auto &k : cases) {
      Harness h;
      h.add_integer(1, kMinExp + 64 * k.j, true);
      EXPECT_TRUE(h.is(k.want)) << "j " << k.j;
      EXPECT_EQ(h.acc.sign(), -1);
      h.add(1.0, kMinExp);
      EXPECT_TRUE(h.same()) << "j " << k.j;
      EXPECT_EQ(h.acc.sign(), -1);
    }
  }
}

// Single terms: x * 2^s is x itself for s = 0 and the correctly rounded
// scaled value otherwise.
TEST(WideAccumulator, SingleTerms) {
  const std::uint64_t s0 = seed();
  std::mt19937_64 rng(s0);
  for (int c = 0; c < 10000; ++c) {
    const double x = random_double(rng);
    {
      Harness h;
      h.add(x);
      ASSERT_TRUE(h.is(x)) << "seed " << s0 << " case " << c;
    }
    {
      const Split sx = split(x);
      const int lo = sx.exp + lsb(sx.mant), hi = sx.exp + msb(sx.mant);
      const int s = uniform_int(rng, kMinExp - lo, kMaxExp - hi);
      Harness h;
      h.add(x, s);
      ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c << " scale " << s;
    }
    {
      const double y = random_double(rng);
      Harness h;
      h.add_product(x, y);
      ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c;
    }
    {
      const std::uint64_t m = rng() >> uniform_int(rng, 0, 63);
      const int e = uniform_int(rng, kMinExp, kMaxExp - 63);
      Harness h;
      h.add_integer(m, e, (rng() & 1) != 0);
      ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c;
    }
  }
}

// Random sums of every kind of term across the whole range: the terms'
// leading bits are spread around a centre chosen so that results land in the
// normal range, the subnormal range, around the overflow threshold or
// anywhere, or the terms are unscaled products of three doubles. A quarter of
// the cases cancel all but a few terms again.
TEST(WideAccumulator, RandomSums) {
  const std::uint64_t s0 = seed() + 1;
  std::mt19937_64 rng(s0);
  const int spreads[] = {0, 3, 60, 300, 2500, 7000};
  int counts[3] = {0, 0, 0};  // subnormal/zero, normal, Inf results
  for (int c = 0; c < 30000; ++c) {
    const int zone = static_cast<int>(rng() % 5);
    const int center = zone == 0   ? uniform_int(rng, -1000, 1000)
                       : zone == 1 ? uniform_int(rng, -1140, -1010)
                       : zone == 2 ? uniform_int(rng, 1000, 1030)
                                   : uniform_int(rng, -3300, 3300);
    const int spread = spreads[rng() % 6];
    const int n = uniform_int(rng, 1, 24);
    std::vector<Term> terms;
    for (int i = 0; i < n; ++i) {
      terms.push_back(random_term(rng, center, spread, zone == 4));
      ASSERT_TRUE(term_covered(terms.back())) << "seed " << s0 << " case " << c;
    }
    Harness h;
    for (const Term &t : terms) h.apply(t);
    if (rng() % 4 == 0) {
      const int keep = std::min(uniform_int(rng, 0, 2), n - 1);
      std::vector<Term> back(terms.begin(), terms.end() - keep);
      std::shuffle(back.begin(), back.end(), rng);
      for (const Term &t : back) h.apply(t, true);
    }
    ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c << " zone " << zone
                          << " centre " << center << " spread " << spread;
    const double r = std::fabs(h.acc.round_to_double());
    ++counts[r < DBL_MIN ? 0 : (r == kInf ? 2 : 1)];
  }
  // The zones do reach every kind of result.
  EXPECT_GT(counts[0], 1500);
  EXPECT_GT(counts[1], 7500);
  EXPECT_GT(counts[2], 1500);
}

// Terms spread over the whole range, then their negatives in another order:
// exactly +0; with a small remainder added anywhere in between, exactly the
// remainder (a subnormal, or a signed zero if below half of 2^-1074).
TEST(WideAccumulator, MassiveCancellation) {
  const std::uint64_t s0 = seed() + 2;
  std::mt19937_64 rng(s0);
  for (int c = 0; c < 3000; ++c) {
    std::vector<Term> terms;
    const int n = uniform_int(rng, 1, 30);
    for (int i = 0; i < n; ++i) terms.push_back(random_term(rng, 0, 3400, false));
    std::vector<Term> back = terms;
    std::shuffle(back.begin(), back.end(), rng);
    const int mode = c % 3;
    // Remainder: a subnormal double, a tiny scaled value, or none.
    const double rem = mode == 0   ? from_bits(rng() & ((std::uint64_t(1) << 53) - 1))
                       : mode == 1 ? std::ldexp(uniform_int(rng, -9, 9), -1080)
                                   : 0.0;
    const int rem_scale = mode == 1 ? uniform_int(rng, -2200, 0) : 0;
    const std::size_t where = rng() % (2 * terms.size() + 1);
    Harness h;
    std::size_t step = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (const Term &t : pass == 0 ? terms : back) {
        if (step++ == where && mode != 2) h.add(rem, rem_scale);
        h.apply(t, pass == 1);
      }
    }
    if (step == where && mode != 2) h.add(rem, rem_scale);
    double want = 0.0;
    if (mode == 0) want = rem;
    if (mode == 1) {
      // |rem| * 2^rem_scale <= 9 * 2^-1080 < 2^-1075, so it rounds to zero.
      want = rem == 0 ? 0.0 : std::copysign(0.0, rem);
    }
    ASSERT_TRUE(h.is(want)) << "seed " << s0 << " case " << c << " mode " << mode;
  }
}

// d and its neighbour d' away from zero; the exact midpoint rounds to the one
// with an even significand, and a term 2000 binades (or a random 1 to 2000
// binades) below the midpoint's last bit decides it either way. d runs over normals and
// subnormals (up to the largest subnormal, whose midpoint rounds up to the smallest
// normal), with even and odd significands; in a third of the cases the midpoint is hidden
// among large terms that cancel.
TEST(WideAccumulator, Ties) {
  const std::uint64_t s0 = seed() + 3;
  std::mt19937_64 rng(s0);
  for (int c = 0; c < 12000; ++c) {
    double d = random_double(rng);
    if (c % 2 == 0) d = from_bits(bits(d) & ~std::uint64_t(1));  // even
    if (c % 4 == 1) d = from_bits(bits(d) | 1);                  // odd
    if (std::fabs(d) == DBL_MAX) d = std::nextafter(d, 0.0);
    const double away = std::nextafter(d, std::copysign(kInf, d));
    const double even = (bits(d) & 1) == 0 ? d : away;
    const Split sd = split(d);
    const double unit = std::copysign(1.0, d);
    const int half_exp = sd.exp - 1;  // the midpoint's last bit
    const bool hide = c % 3 == 0;
    const double p = random_double(rng), q = random_double(rng);
    for (int nudge = -1; nudge <= 1; ++nudge) {
      Harness h;
      if (hide) {
        h.add_product(p, q, 200);
        h.add(1.0, 3000);
      }
      h.add(d);
      h.add(unit, half_exp);
      const int below = c % 2 == 0 ? 2000 : uniform_int(rng, 1, 2000);
      if (nudge != 0) h.add(nudge * unit, half_exp - below);
      if (hide) {
        h.add(-1.0, 3000);
        h.add_product(-p, q, 200);
      }
      const double want = nudge > 0 ? away : (nudge < 0 ? d : even);
      ASSERT_TRUE(h.is(want)) << "seed " << s0 << " case " << c << " d " << show(d)
                              << " nudge " << nudge << " below " << below;
    }
  }
}

// Subnormal results by hand: ties at 2^-1075 and at odd multiples of it,
// rounding up to the smallest normal, normals rounded at 2^-1074, and
// subnormals left over from cancellation of normal terms.
TEST(WideAccumulator, SubnormalResults) {
  const double tiny = 0x1p-1074;  // 2^-1074
  const double minn = DBL_MIN;    // 2^-1022
  const double maxsub = minn - tiny;
  struct Case {
    std::uint64_t mant;  // value mant * 2^exp (+ nudge * 2^-3400)
    int exp;
    int nudge;
    double want;
  };
  const Case cases[] = {
      {1, -1075, 0, 0.0},  // the tie at 2^-1075: to 0 (even)
      {1, -1075, 1, tiny},
      {1, -1075, -1, 0.0},
      {1, -1076, 0, 0.0},
      {3, -1076, 0, tiny},  // 0.75 ulp
      {3, -1075, 0, 2 * tiny},
      {5, -1075, 0, 2 * tiny},
      {5, -1075, 1, 3 * tiny},
      {7, -1075, 0, 4 * tiny},
      {7, -1075, -1, 3 * tiny},
      {(std::uint64_t(1) << 53) - 1, -1075, 0, minn},  // odd maxsub: up
      {(std::uint64_t(1) << 53) - 1, -1075, -1, maxsub},
      {(std::uint64_t(1) << 53) - 3, -1075, 0, maxsub - tiny},  // to even
      {(std::uint64_t(1) << 54) - 1, -1076, 0, minn},
      {(std::uint64_t(1) << 53) + 1, -1075, 0, minn},  // 2^-1022 + half ulp: even
      {(std::uint64_t(1) << 53) + 3, -1075, 0, minn + 2 * tiny},
      {(std::uint64_t(1) << 53) + 1, -1075, 1, minn + tiny},
      {~std::uint64_t(0), -1138, 0, tiny},  // 2^-1074 - 2^-1138
  };
  int i = 0;
  for (const Case &k : cases) {
    for (int neg = 0; neg < 2; ++neg) {
      Harness h;
      h.add_integer(k.mant, k.exp, neg != 0);
      if (k.nudge != 0) h.add(neg != 0 ? -k.nudge : k.nudge, -3400);
      ASSERT_TRUE(h.is(neg != 0 ? -k.want : k.want)) << "case " << i << " neg " << neg;
    }
    ++i;
  }
  // The last case by pieces.
  {
    Harness h;
    h.add(1.0, -1074);
    h.add(-1.0, -1138);
    EXPECT_TRUE(h.is(tiny));
  }
  // Subnormal remainders of normal terms, and the smallest normal reached by
  // a carry out of the subnormal significand.
  {
    Harness h;
    h.add(1.0);
    h.add_product(maxsub, 3.0);
    h.add(-1.0);
    h.add(-2.0 * maxsub);
    EXPECT_TRUE(h.is(maxsub));
    h.add(1.0, -1075);
    EXPECT_TRUE(h.is(minn));
  }
  {
    Harness h;
    h.add(0x1p-1000);
    h.add(-0x1p-1000);
    h.add(-0x1.8p-1074);  // -1.5 * 2^-1074 = -3 * 2^-1075: to -2 * 2^-1074
    h.add(1.0, 2000);
    h.add(-1.0, 2000);
    EXPECT_TRUE(h.is(-2 * tiny));
  }
}

// The threshold 2^1024 - 2^970 (midpoint of DBL_MAX and 2^1024) gives Inf,
// anything below it DBL_MAX.
TEST(WideAccumulator, Overflow) {
  for (int sgn = 1; sgn >= -1; sgn -= 2) {
    const double s = sgn;
    {
      Harness h;
      h.add(s * DBL_MAX);
      h.add(s * 0x1p970);
      EXPECT_TRUE(h.is(s * kInf));
      h.add(-s, -1000);
      EXPECT_TRUE(h.is(s * DBL_MAX));
      h.add(s, -3400);
      h.add(s, -1000);
      EXPECT_TRUE(h.is(s * kInf));
    }
    {
      Harness h;
      h.add_integer((std::uint64_t(1) << 54) - 1, 970, sgn < 0);
      EXPECT_TRUE(h.is(s * kInf));
      h.add_integer(1, 969 - 2000, sgn > 0);
      EXPECT_TRUE(h.is(s * DBL_MAX));
    }
    {
      Harness h;
      h.add(s, 1024);
      h.add(-s, 971);  // exactly DBL_MAX
      EXPECT_TRUE(h.is(s * DBL_MAX));
      h.add(s, 969);  // a quarter ulp above
      EXPECT_TRUE(h.is(s * DBL_MAX));
      h.add(s, 969);  // the midpoint
      EXPECT_TRUE(h.is(s * kInf));
    }
    {
      Harness h;
      h.add(s * DBL_MAX);
      h.add(s * DBL_MAX);
      EXPECT_TRUE(h.is(s * kInf));
      h.add(-s * DBL_MAX);
      EXPECT_TRUE(h.is(s * DBL_MAX));
      h.add_product(s * DBL_MAX, DBL_MAX);  // far above any double
      EXPECT_TRUE(h.is(s * kInf));
      h.add_product(-s * DBL_MAX, DBL_MAX);
      EXPECT_TRUE(h.is(s * DBL_MAX));
    }
    {
      Harness h;
      h.add_product(s * DBL_MAX, DBL_MAX, -1024);
      EXPECT_TRUE(h.same());
      h.add(s, 3400);
      h.add(-s, 3400);
      EXPECT_TRUE(h.same());
    }
  }
}

// 10^4 copies of values with all-ones significands, at offsets that straddle
// limb boundaries, carry through many limbs; removing them again restores
// the sum of the other terms exactly.
TEST(WideAccumulator, CarriesAcrossLimbs) {
  const std::uint64_t s0 = seed() + 4;
  std::mt19937_64 rng(s0);
  const double ones = 0x1.fffffffffffffp0;  // 2 - 2^-52
  const int limb_offsets[] = {0, 1, 3, 17, 40, 53, 54, 55, 60, 61, 66, 67, 68};
  for (int c = 0; c < 24; ++c) {
    const int off = limb_offsets[c % 13];
    // Leading bit of the copies: the top bit of a limb plus a few, anywhere.
    const int top =
        kMinExp + 64 * uniform_int(rng, 1, WideAccumulator::kLimbs - 4) - 1 + (c % 3) - 1;
    const int lead = std::min(top + off % 8, kMaxExp - 14);
    Harness h;
    const double base = random_double(rng);
    h.add(base, c % 2 == 0 ? 0 : -200);
    for (int i = 0; i < 10000; ++i) {
      switch (i % 3) {
        case 0:
          h.add(ones, lead);
          break;
        case 1:
          h.add_integer(~std::uint64_t(0), lead - 63, false);
          break;
        default:
          h.add_product(ones, ones, lead - 1);
      }
    }
    ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c << " lead " << lead;
    for (int i = 0; i < 10000; ++i) {
      switch (i % 3) {
        case 0:
          h.add(-ones, lead);
          break;
        case 1:
          h.add_integer(~std::uint64_t(0), lead - 63, true);
          break;
        default:
          h.add_product(-ones, ones, lead - 1);
      }
    }
    ASSERT_TRUE(h.same()) << "seed " << s0 << " case " << c << " lead " << lead;
    Harness alone;
    alone.add(base, c % 2 == 0 ? 0 : -200);
    ASSERT_EQ(bits(h.acc.round_to_double()), bits(alone.acc.round_to_double()));
  }
  // Negative copies first: borrows through the limbs above.
  {
    Harness h;
    for (int i = 0; i < 10000; ++i) h.add(-ones, -1020 - 64);
    h.add(1.0, 2000);
    EXPECT_TRUE(h.same());
    h.add(-1.0, 2000);
    EXPECT_TRUE(h.same());
    EXPECT_EQ(h.acc.sign(), -1);
  }
}

}  // namespace
