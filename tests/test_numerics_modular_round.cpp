// test_numerics_modular_round.cpp - the modular engine's own rounding
// (ModularTermsN<N>::round_fast, kernels/numerics/modular.h): RN(alpha X + beta c)
// by integer arithmetic on X's limbs, for every limb count the engine is
// compiled for (kLimbsFor of each ModuliVariants entry). Wherever it decides, its result must be MPFR's correctly
// rounded value; wherever it declines, the general rounding
// (round_exact_terms) takes the entry, and the pair must give the same bits
// as the general rounding alone. Inputs are drawn to reach the boundaries:
// ties and their neighbours, carries to the next power of two, cancellation
// of beta c against alpha X, results at the edges of the normal range, c
// below and far above X's window, subnormal alpha, beta and c.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "numerics/modular_crt.h"
#include "support/test_support.h"

namespace {

using xn::exact::ModularTermsN;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// RN(alpha X + beta c), X = (-1)^neg sum limb_t 2^(32 t + base), by MPFR
// (every quantity exact at 8000 bits; ranges here stay far below that).
template <int N>
double mpfr_reference(const ModularTermsN<N> &X, double alpha, double beta, double c) {
  mpfr_t x, t;
  mpfr_init2(x, 8000);
  mpfr_init2(t, 8000);
  mpfr_set_ui(x, 0, MPFR_RNDN);
  for (int i = X.n - 1; i >= 0; --i) {
    mpfr_mul_2ui(x, x, 32, MPFR_RNDN);
    mpfr_add_ui(x, x, X.limb[i], MPFR_RNDN);
  }
  mpfr_mul_2si(x, x, X.base, MPFR_RNDN);
  if (X.neg) mpfr_neg(x, x, MPFR_RNDN);
  mpfr_mul_d(x, x, alpha, MPFR_RNDN);
  mpfr_set_d(t, beta, MPFR_RNDN);
  mpfr_mul_d(t, t, c, MPFR_RNDN);
  mpfr_add(x, x, t, MPFR_RNDN);
  // Round to 53 bits in MPFR's own exponent range, then to the double
  // format's (subnormals included: emin/emax of binary64).
  mpfr_t d;
  mpfr_init2(d, 53);
  int inex = mpfr_set(d, x, MPFR_RNDN);
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(-1073);
  mpfr_set_emax(1024);
  inex = mpfr_check_range(d, inex, MPFR_RNDN);
  mpfr_subnormalize(d, inex, MPFR_RNDN);
  const double r = mpfr_get_d(d, MPFR_RNDN);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  mpfr_clears(x, t, d, static_cast<mpfr_ptr>(nullptr));
  return r;
}

// The general rounding alone (what the engines did before round_fast).
template <int N>
double general_rounding(const ModularTermsN<N> &X, double alpha, double beta, double c) {
  double scratch[2 * N + 2];
  bool wide = false, zero = false;
  return xn::exact::round_exact_terms(X, alpha, beta, c, scratch, 2 * N + 2, &wide, &zero);
}

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t u64() { return rng_(); }
  int range(int lo, int hi) { return lo + int(rng_() % std::uint64_t(hi - lo + 1)); }
  bool coin(int one_in) { return rng_() % std::uint64_t(one_in) == 0; }

  // X with n <= N limbs, in one of several shapes.
  template <int N>
  ModularTermsN<N> terms(int base_lo, int base_hi) {
    ModularTermsN<N> X;
    X.n = range(1, N);
    X.base = range(base_lo, base_hi);
    X.neg = coin(2);
    for (int t = 0; t < X.n; ++t) X.limb[t] = std::uint32_t(u64());
    switch (range(0, 5)) {
      case 0: {  // 54 significant bits with a tie or a neighbour of one at the end
        for (int t = 0; t < X.n; ++t) X.limb[t] = 0;
        const int top = 32 * (X.n - 1) + range(0, 31);
        const int lowbit = top - 53;
        for (int b = lowbit; b <= top; ++b)
          if (b >= 0 && (b == top || b == lowbit || coin(2))) X.limb[b / 32] |= 1u << (b % 32);
        if (coin(2) && lowbit > 0) {  // one unit away from the tie, either way
          std::uint64_t borrow = 1;
          if (coin(2)) {
            for (int t = 0; t < X.n && borrow; ++t) {
              borrow = X.limb[t] == 0;
              X.limb[t] -= 1;
            }
          } else {
            for (int t = 0; t < X.n && borrow; ++t) {
              X.limb[t] += 1;
              borrow = X.limb[t] == 0;
            }
          }
        }
        break;
      }
      case 1:  // a run of ones that rounds up into the next power of two
        for (int t = 0; t < X.n; ++t) X.limb[t] = 0xffffffffu;
        X.limb[X.n - 1] = 0xffffffffu >> range(0, 31);
        break;
      case 2:  // few bits: exact results
        for (int t = 0; t < X.n; ++t) X.limb[t] = t == X.n - 1 ? std::uint32_t(u64() | 1) : 0;
        break;
      case 3:  // sparse limbs
        for (int t = 0; t < X.n; ++t)
          if (coin(2)) X.limb[t] = 0;
        break;
      default:
        break;
    }
    if (X.limb[X.n - 1] == 0) X.limb[X.n - 1] = 1;
    return X;
  }

  double finite(int e_lo, int e_hi) {
    if (e_lo > e_hi) e_lo = e_hi;
    const double m = double(u64() >> 11) * 0x1p-53 + 0.5;  // [0.5, 1.5), rounded
    const double x = std::ldexp(m, range(e_lo, e_hi));
    return coin(2) ? -x : x;
  }

 private:
  std::mt19937_64 rng_;
};

// log2 of |X| (its top bit), for placing alpha and c near it.
template <int N>
int top_bit(const ModularTermsN<N> &X) {
  int b = 31;
  while (!((X.limb[X.n - 1] >> b) & 1u)) --b;
  return X.base + 32 * (X.n - 1) + b;
}

template <int N>
void check_variant(std::uint64_t seed, int trials) {
  Draw d(seed);
  long decided = 0, decided_plain = 0, plain = 0;
  for (int trial = 0; trial < trials; ++trial) {
    // Mostly results of moderate size; some at the edges of the range.
    const int edge = d.range(0, 9);
    ModularTermsN<N> X = edge == 0   ? d.terms<N>(-1200, -1000)
                         : edge == 1 ? d.terms<N>(1000 - 32 * N, 1030 - 32 * N)
                                     : d.terms<N>(-300, 200);
    double alpha = 1.0;
    switch (d.range(0, 6)) {
      case 0: alpha = 1.0; break;
      case 1: alpha = -1.0; break;
      case 2: alpha = std::ldexp(1.0, d.range(-60, 60)); break;
      case 3: alpha = d.finite(-60, 60); break;
      case 4: alpha = d.finite(-1074, -1023); break;  // subnormal or tiny
      default: alpha = d.finite(-4, 4); break;
    }
    if (alpha == 0.0) alpha = 0x1p-1074;
    double beta = 0.0, c = 0.0;
    const int xtop = top_bit(X) + std::ilogb(alpha);
    switch (d.range(0, 7)) {
      case 0:
      case 1: break;  // beta = 0 (c is never read)
      case 2:  // C = C - A B: c of X's size
        beta = 1.0;
        c = d.finite(std::max(-1070, xtop - 8), std::min(1020, xtop + 8));
        break;
      case 3: {  // cancellation: c close to -alpha X
        beta = d.coin(2) ? 1.0 : -1.0;
        const double x = general_rounding(X, alpha, 0.0, 0.0);
        c = -beta * x;
        if (d.coin(2)) c = std::nextafter(c, d.coin(2) ? INFINITY : -INFINITY);
        if (!std::isfinite(c)) c = 1.0;
        break;
      }
      case 4:  // c far below X (bits below X's window)
        beta = d.finite(-10, 10);
        c = d.finite(-1074, std::max(-1074, xtop - 200));
        break;
      case 5:  // c far above X
        beta = d.finite(-10, 10);
        c = d.finite(std::min(1000, xtop + 60), 1010);
        break;
      case 6:  // subnormal c
        beta = d.finite(-3, 3);
        c = std::ldexp(double(d.u64() >> 12), -1074);
        break;
      default:
        beta = d.finite(-20, 20);
        c = d.finite(std::max(-1070, xtop - 60), std::min(1000, xtop + 20));
        break;
    }
    if (!std::isfinite(c)) c = 1.0;  // (round_fast's callers settle Inf and NaN first)
    const double want = mpfr_reference(X, alpha, beta, c);
    const double general = general_rounding(X, alpha, beta, c);
    ASSERT_EQ(bits(general), bits(want))
        << "the general rounding, N = " << N << " trial " << trial << ": n = " << X.n
        << " neg = " << X.neg << " base = " << X.base << " alpha = " << alpha
        << " beta = " << beta << " c = " << c << " general = " << general
        << " want = " << want;
    double fast = NAN;
    const bool ok = X.round_fast(alpha, beta, c, &fast);
    const bool is_plain = std::fabs(alpha) >= 0x1p-900 && beta == 0.0 && edge > 1;
    plain += is_plain;
    if (ok) {
      ++decided;
      decided_plain += is_plain;
      ASSERT_EQ(bits(fast), bits(want))
          << "N = " << N << " trial " << trial << ": n = " << X.n << " base = " << X.base
          << " alpha = " << alpha << " beta = " << beta << " c = " << c << " fast = " << fast
          << " want = " << want;
      ASSERT_TRUE(std::isnormal(fast));
    }
  }
  // The point of round_fast: it decides the usual entries. beta = 0 and a
  // result of moderate size: every one; over these deliberately hard
  // draws (a third decline by design: c below X's window or far above it,
  // subnormal or overflowing results), more than 40 %.
  EXPECT_EQ(decided_plain, plain) << "N = " << N;
  EXPECT_GT(decided, trials * 2 / 5) << "N = " << N;
}

TEST(ModularRoundFast, MatchesMpfrForEveryLimbVariant) {
  using xn::exact::kLimbsFor;
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  check_variant<kLimbsFor<16>>(seed, 400000);
  check_variant<kLimbsFor<24>>(seed + 1, 200000);
  check_variant<kLimbsFor<32>>(seed + 2, 200000);
  check_variant<kLimbsFor<xn::exact::kMaxModuli>>(seed + 3, 200000);
}

// At the limbs' bound: a |X| at its largest (every limb set, a = 2^53 - 1)
// plus a same-sign beta c whose top bit reaches the last limb below the
// one kept for a carry (accepted: MPFR's value) or that limb itself
// (declined: the sum might not fit).
TEST(ModularRoundFast, BetaCAtTheLimbsBound) {
  constexpr int N = 5, W = N + 3;
  ModularTermsN<N> X;
  X.n = N;
  X.base = 0;
  for (int t = 0; t < N; ++t) X.limb[t] = 0xffffffffu;
  const double alpha = 0x1.fffffffffffffp52;  // odd: a = 2^53 - 1, e = 0
  const double cm = 0x1.fffffffffffffp52;     // 53 bits, odd
  for (int top = 32 * (W - 1) - 2; top <= 32 * (W - 1) + 32; ++top) {
    const double c = std::ldexp(cm, top - 53);  // beta c's bits end at `top`
    for (double beta : {1.0, -1.0}) {
      double r = NAN;
      const bool ok = X.round_fast(alpha, beta, c, &r);
      EXPECT_EQ(ok, top <= 32 * (W - 1)) << "top " << top << " beta " << beta;
      if (ok) {
        EXPECT_EQ(bits(r), bits(mpfr_reference(X, alpha, beta, c))) << "top " << top;
      }
    }
  }
}

// Declines, each for its reason (the general rounding then decides those
// entries: the IEEE families' tests cover them through both engines).
TEST(ModularRoundFast, DeclinesWhatItCannotDecideAlone) {
  ModularTermsN<5> X;
  double r = 0.0;
  EXPECT_FALSE(X.round_fast(1.0, 0.0, 0.0, &r)) << "X = 0: the sign of a zero";
  X.n = 1;
  X.limb[0] = 3;
  X.base = 0;
  EXPECT_TRUE(X.round_fast(1.0, 0.0, 0.0, &r));
  EXPECT_EQ(r, 3.0);
  EXPECT_FALSE(X.round_fast(1.0, 1.0, -3.0, &r)) << "an exact zero sum";
  EXPECT_FALSE(X.round_fast(1.0, 1.0, 0.5, &r)) << "c below X's window";
  EXPECT_FALSE(X.round_fast(1.0, 1.0, 0x1p300, &r)) << "c beyond the limbs";
  X.base = -1100;
  EXPECT_FALSE(X.round_fast(1.0, 0.0, 0.0, &r)) << "a subnormal result";
  X.base = 1023;
  EXPECT_FALSE(X.round_fast(1.0, 0.0, 0.0, &r)) << "an overflow";
  X.base = 1022;
  EXPECT_TRUE(X.round_fast(1.0, 0.0, 0.0, &r));
  EXPECT_EQ(r, 0x1.8p1023);
}

}  // namespace
