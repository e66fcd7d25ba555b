// test_numerics_modular_round.cpp - the modular engine's own roundings
// (kernels/numerics/modular_crt.h): ModularTermsN<N>::round_fast,
// RN(alpha X + beta c) by integer arithmetic on X's limbs, and below the
// fraction form (round_by_fraction, fraction_sums), RN from X's products
// with a rounding certificate; first round_fast, for every limb count the
// engine is compiled for (kLimbsFor of each ModuliVariants entry). Wherever it decides, its result must be MPFR's correctly
// rounded value; wherever it declines, the general rounding
// (round_exact_terms) takes the entry, and the pair must give the same bits
// as the general rounding alone. Inputs are drawn to reach the boundaries:
// ties and their neighbours, carries to the next power of two, cancellation
// of beta c against alpha X, results at the edges of the normal range, c
// below and far above X's window, subnormal alpha, beta and c.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <array>
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

// ---- The fraction form (round_by_fraction) ----

const xn::exact::ModularTables &kT = xn::exact::kModularTables;

// X mod m for X = (-1)^neg sum limb_t 2^(32 t), in [0, m).
template <int N>
std::uint32_t residue_of(const ModularTermsN<N> &X, std::uint32_t m) {
  std::uint64_t r = 0;
  for (int t = X.n - 1; t >= 0; --t) r = ((r << 32) | X.limb[t]) % m;
  return X.neg && r ? std::uint32_t(m - r) : std::uint32_t(r);
}

// Whether |X| lies within 2^-68 of its top bit from a midpoint of the
// 53-bit grid (a tie of RN(X 2^k) or close to one): its bits from 53 to
// 68 places below the top are 10...0 or 01...1.
template <int N>
bool near_tie(const ModularTermsN<N> &X) {
  int top = 32 * X.n - 1;
  while (!((X.limb[top / 32] >> (top % 32)) & 1u)) --top;
  std::uint32_t w = 0;
  for (int b = top - 53; b >= top - 68; --b)
    w = (w << 1) | (b >= 0 ? (X.limb[b / 32] >> (b % 32)) & 1u : 0u);
  return w == 0x8000u || w == 0x7fffu;
}

// |X| += v 2^shift or |X| -= v 2^shift (v < 2^32, no borrow past the top),
// then X.n recounted: the draws' small steps from a midpoint or a bound.
template <int N>
void step_magnitude(ModularTermsN<N> &X, std::uint64_t v, int shift, bool up) {
  std::uint64_t carry = v << (shift % 32);
  for (int k = shift / 32; k < N && carry; ++k) {
    const std::uint64_t w = std::uint64_t(X.limb[k]);
    const std::uint64_t part = carry & 0xffffffffu;
    const std::uint64_t r = up ? w + part : w - part;
    X.limb[k] = std::uint32_t(r);
    carry = (carry >> 32) + (up ? r >> 32 : (r >> 63) & 1u);
  }
  X.n = 0;
  for (int k = 0; k < N; ++k)
    if (X.limb[k]) X.n = k + 1;
}

// X's residues as every kind of product the reconstruction reads: int32
// sums and doubles congruent to X (a random multiple of m_l added, as raw
// dot products are), and int8 digits y_l = X (M / m_l)^-1 mod m_l.
template <int N>
void products_of(const ModularTermsN<N> &X, const xn::exact::CrtBasis &B, Draw &d,
                 std::int32_t *p32, double *p64, std::int8_t *digits) {
  const auto &T = xn::exact::kModularTables;
  for (int l = 0; l < B.L; ++l) {
    const std::int64_t m = T.m[l], r = residue_of(X, std::uint32_t(m));
    p32[l] = std::int32_t(r + m * (std::int64_t(d.u64() % (std::uint64_t(1) << 23)) - (1 << 22)));
    p64[l] = double(r + m * (std::int64_t(d.u64() % (std::uint64_t(1) << 44)) - (std::int64_t(1) << 43)));
    const std::int64_t y = r * B.inv_cofactor[l] % m;
    digits[l] = std::int8_t(y > m / 2 ? y - m : y);
  }
}

template <int LMax>
void check_fraction_variant(std::uint64_t seed, int trials) {
  constexpr int N = xn::exact::kLimbsFor<LMax>;
  Draw d(seed);
  long decided = 0, must = 0, must_decided = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int L = d.coin(3) ? LMax : d.range(1, LMax);
    const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
    const int cap = xn::exact::modular_capacity_bits(L);  // |X| < 2^cap <= M / 2
    const int edge = d.range(0, 11);
    ModularTermsN<N> X = edge == 0   ? d.terms<N>(-1200, -1000)
                         : edge == 1 ? d.terms<N>(1000 - cap, 1030 - cap)
                                     : d.terms<N>(-300, 200);
    // |X| < 2^width: mostly within 2^-60 of M's scale (the engine's M
    // covers the products' bound over a whole block or batch, 2^-56 above
    // the usual |X| at phi = 1), else anywhere.
    const int width = d.coin(4) ? d.range(1, cap) : d.range(std::max(1, cap - 60), cap);
    for (int b = width; b < 32 * N; ++b) X.limb[b / 32] &= ~(1u << (b % 32));
    if (d.coin(2)) X.limb[(width - 1) / 32] |= 1u << ((width - 1) % 32);
    if (edge == 2 && L >= 3) {  // |X| = (M - 1)/2 - small (< 1000 < M / 2): where V may wrap
      for (int t = 0; t < N; ++t) X.limb[t] = t < xn::exact::kMaxLimbs ? B.M[t] : 0u;
      for (int t = 0; t < N; ++t)  // M >> 1
        X.limb[t] = (X.limb[t] >> 1) | (t + 1 < N ? X.limb[t + 1] << 31 : 0u);
      step_magnitude(X, d.u64() % 1000, 0, false);
    }
    X.n = 0;
    for (int t = 0; t < N; ++t)
      if (X.limb[t]) X.n = t + 1;
    if (X.n == 0) continue;
    double alpha = 1.0, beta = 0.0, c = 0.0;
    switch (d.range(0, 5)) {
      case 0: alpha = -1.0; break;
      case 1: alpha = std::ldexp(1.0, d.range(-60, 60)); break;
      case 2: alpha = d.finite(-60, 60); break;
      case 3: alpha = d.finite(-1074, -1023); break;
      default: break;
    }
    if (alpha == 0.0) alpha = 0x1p-1074;
    const int xtop = top_bit(X) + std::ilogb(alpha);
    switch (d.range(0, 5)) {
      case 0: {  // cancellation against alpha X
        beta = d.coin(2) ? 1.0 : -1.0;
        c = -beta * general_rounding(X, alpha, 0.0, 0.0);
        if (d.coin(2)) c = std::nextafter(c, d.coin(2) ? INFINITY : -INFINITY);
        break;
      }
      case 1:
        beta = d.finite(-20, 20);
        c = d.finite(std::max(-1070, xtop - 60), std::min(1000, xtop + 20));
        break;
      case 2:
        beta = 1.0;
        c = d.finite(-1074, std::max(-1074, xtop - 200));
        break;
      default: break;
    }
    if (!std::isfinite(c)) c = 1.0;
    std::int32_t p32[LMax];
    double p64[LMax];
    std::int8_t digits[LMax];
    products_of(X, B, d, p32, p64, digits);
    const double want = mpfr_reference(X, alpha, beta, c);
    double got[3];
    bool ok[3];
    ok[0] = xn::exact::round_by_fraction<LMax>(p32, 1, X.base, B, kT, alpha, beta, c, &got[0]);
    ok[1] = xn::exact::round_by_fraction<LMax>(p64, 1, X.base, B, kT, alpha, beta, c, &got[1]);
    ok[2] = xn::exact::round_by_fraction<LMax>(digits, 1, X.base, B, kT, alpha, beta, c, &got[2]);
    for (int f = 0; f < 3; ++f) {
      ASSERT_EQ(ok[f], ok[0]) << "the same digits from every kind of product";
      if (ok[f]) {
        ASSERT_EQ(bits(got[f]), bits(want))
            << "LMax = " << LMax << " L = " << L << " trial " << trial << " form " << f
            << ": n = " << X.n << " neg = " << X.neg << " base = " << X.base
            << " alpha = " << alpha << " beta = " << beta << " c = " << c
            << " got = " << got[f] << " want = " << want;
      }
    }
    decided += ok[0];
    // It must decide the usual entry: C = A B up to a power of two, a
    // normal result, |X| >= 2^-60 M (Delta's share then below 2^-87 of
    // |X|), |X / M| not near 1/2, and X not within 2^-68 of a midpoint.
    const bool plain = beta == 0.0 && std::fabs(alpha) >= 0x1p-900 && edge > 2 &&
                       std::ldexp(1.0, std::ilogb(alpha)) == std::fabs(alpha) &&
                       top_bit(X) - X.base >= B.M_exp - 60 && !near_tie(X) &&
                       std::isnormal(want) && std::fabs(want) < 0x1p1020 &&
                       std::fabs(want) > 0x1p-1000;
    must += plain;
    must_decided += plain && ok[0];
    if (plain && !ok[0] && must - must_decided <= 3) {
      ADD_FAILURE() << "declined: LMax = " << LMax << " L = " << L << " trial " << trial
                    << " n = " << X.n << " top " << top_bit(X) - X.base << " M_exp " << B.M_exp
                    << " base = " << X.base << " alpha = " << alpha << " want = " << want;
    }
  }
  // Every usual entry decided; over all these deliberately hard draws
  // (a quarter of |X| far below M, subnormal alpha, beta c cancelling or
  // far from alpha X, the range's edges) more than 30 %.
  EXPECT_EQ(must_decided, must) << "LMax = " << LMax;
  EXPECT_GT(must, trials / 10) << "LMax = " << LMax;
  EXPECT_GT(decided, trials * 3 / 10) << "LMax = " << LMax;
}

TEST(ModularRoundByFraction, MatchesMpfrForEveryModuliVariant) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  check_fraction_variant<16>(seed, 200000);
  check_fraction_variant<24>(seed + 1, 100000);
  check_fraction_variant<32>(seed + 2, 100000);
  check_fraction_variant<xn::exact::kMaxModuli>(seed + 3, 100000);
}

// Ties decline (the exact path rounds them to even); their neighbours one
// unit either side are decided, and correctly, while that unit is above
// the error bound (2^-99 of |X|, and Delta's share: |X| near M's scale).
TEST(ModularRoundByFraction, TiesDeclineAndTheirNeighboursDecide) {
  constexpr int LMax = 16;
  constexpr int N = xn::exact::kLimbsFor<LMax>;
  const int L = xn::exact::moduli_for_bits(90);
  const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
  Draw d(7);
  for (int top = 60; top < xn::exact::modular_capacity_bits(L); ++top) {
    for (int delta = -1; delta <= 1; ++delta) {
      ModularTermsN<N> X;
      X.base = 0;
      X.neg = d.coin(2);
      X.limb[top / 32] |= 1u << (top % 32);
      X.limb[(top - 53) / 32] |= 1u << ((top - 53) % 32);  // the half unit
      X.limb[(top - 20) / 32] |= 1u << ((top - 20) % 32);  // an odd 53-bit head
      step_magnitude(X, delta != 0 ? 1u : 0u, 0, delta > 0);
      std::int32_t p32[LMax];
      double p64[LMax];
      std::int8_t digits[LMax];
      products_of(X, B, d, p32, p64, digits);
      double r = NAN;
      const bool ok = xn::exact::round_by_fraction<LMax>(digits, 1, 0, B, kT, 1.0, 0.0, 0.0, &r);
      if (delta == 0) {
        EXPECT_FALSE(ok) << "a tie at bit " << top;
      } else {
        if (top <= 90) {
          EXPECT_TRUE(ok) << "one unit from a tie at bit " << top << ", " << delta;
        }
        if (ok) {
          EXPECT_EQ(bits(r), bits(mpfr_reference(X, 1.0, 0.0, 0.0))) << "top " << top;
        }
      }
    }
  }
}

// Below a power of two the next double down is half as far: around the
// midpoint 2^t - 2^(t - 54) between 2^t and its predecessor, X a few
// units either side rounds to the right one or declines, and the
// midpoint itself declines. (An approximation above the exact value with
// 2^t as its high part is what the quarter gap guards against: widening
// the gap to a half fails this test and the random draws above.)
TEST(ModularRoundByFraction, MidpointsBelowPowersOfTwo) {
  Draw d(11);
  for (const int L : {16, 24, 32, 48}) {
    const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
    const int cap = xn::exact::modular_capacity_bits(L);
    long decided = 0;
    // |X| within 2^-40 of M (Delta's share small); delta's step 1 (below
    // the error bound at these sizes: mostly declined) or 2^-85 of X
    // (above the bound: decided).
    for (int t = std::max(60, cap - 40); t < cap; t += 2)
      for (int delta = -39; delta <= 39; ++delta)
        for (const bool far : {false, true}) {
        constexpr int N = xn::exact::kLimbsFor<xn::exact::kMaxModuli>;
        const int step = far ? std::max(0, t - 85) : 0;
        ModularTermsN<N> X;  // 2^t - 2^(t - 54) + delta 2^step
        X.base = 0;
        X.neg = delta % 2 != 0;
        for (int b = t - 54; b < t; ++b) X.limb[b / 32] |= 1u << (b % 32);
        step_magnitude(X, std::uint64_t(delta < 0 ? -delta : delta), step, delta > 0);
        std::int32_t p32[xn::exact::kMaxModuli];
        double p64[xn::exact::kMaxModuli];
        std::int8_t digits[xn::exact::kMaxModuli];
        products_of(X, B, d, p32, p64, digits);
        double r = NAN;
        const bool ok = xn::exact::round_by_fraction<xn::exact::kMaxModuli>(
            p32, 1, 0, B, kT, 1.0, 0.0, 0.0, &r);
        if (delta == 0) {
          EXPECT_FALSE(ok) << "the midpoint below 2^" << t << ", L = " << L;
        } else if (ok) {
          ++decided;
          ASSERT_EQ(bits(r), bits(mpfr_reference(X, 1.0, 0.0, 0.0)))
              << "2^" << t << " - 2^" << t - 54 << " + " << delta << " 2^" << step
              << ", L = " << L;
        }
      }
    EXPECT_GT(decided, 1000) << "L = " << L;
  }
}

// The GPU's first pass sums two entries at once (fraction_sums with E = 2,
// each modulus's constants read once for both): the same sums as one at a
// time, for every moduli variant and product kind; and an entry given no
// moduli (a row past the block's end) sums 0 beside one that has them.
template <int LMax, class P>
void check_two_entries(int L, P *(&products)[2]) {
  const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
  double pair[2][4], one[1][4];
  xn::exact::fraction_sums<LMax>(products, 1, B, kT, pair);
  for (int e = 0; e < 2; ++e) {
    P *const single[1] = {products[e]};
    xn::exact::fraction_sums<LMax>(single, 1, B, kT, one);
    for (int j = 0; j < 4; ++j) ASSERT_EQ(bits(pair[e][j]), bits(one[0][j])) << "entry " << e;
  }
  const int moduli[2] = {L, 0};
  double first_only[2][4];
  xn::exact::fraction_sums<LMax>(products, 1, moduli, B, kT, first_only);
  for (int j = 0; j < 4; ++j) {
    ASSERT_EQ(bits(first_only[0][j]), bits(pair[0][j])) << "the entry with its moduli";
    ASSERT_EQ(first_only[1][j], 0.0) << "the entry without";
  }
}

TEST(ModularRoundByFraction, TwoEntriesAtOnceAreEachAlone) {
  Draw d(13);
  constexpr int LMax = xn::exact::kMaxModuli;
  for (int trial = 0; trial < 2000; ++trial) {
    const int L = d.range(1, LMax);
    const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
    std::int32_t p32[2][LMax];
    double p64[2][LMax];
    std::int8_t digits[2][LMax];
    for (int e = 0; e < 2; ++e) {
      ModularTermsN<xn::exact::kLimbsFor<LMax>> X =
          d.terms<xn::exact::kLimbsFor<LMax>>(-10, 10);
      for (int b = xn::exact::modular_capacity_bits(L); b < 32 * X.n; ++b)
        X.limb[b / 32] &= ~(1u << (b % 32));
      products_of(X, B, d, p32[e], p64[e], digits[e]);
    }
    std::int32_t *a[2] = {p32[0], p32[1]};
    double *b[2] = {p64[0], p64[1]};
    std::int8_t *c[2] = {digits[0], digits[1]};
    if (L <= 16) check_two_entries<16>(L, a);
    if (L <= 24) check_two_entries<24>(L, c);
    check_two_entries<LMax>(L, a);
    check_two_entries<LMax>(L, b);
    check_two_entries<LMax>(L, c);
  }
}

// The GPU's batched digits take the fraction form's sums as int8 x uint8
// dot products with F_j's bytes (fraction_weight_byte), assembled by
// fraction_piece_of_byte_sums: the bytes make F_j, and the assembly gives
// fraction_sums' bits for random digits and for the extremes (every digit
// +-127 at 48 moduli: the byte sums' and the pieces' largest magnitudes).
std::array<double, 4> sums_by_bytes(int L, const std::int8_t *y) {
  std::array<double, 4> out{};
  for (int j = 0; j < 4; ++j) {
    std::int32_t s[xn::exact::kFractionBytes] = {};
    for (int b = 0; b < xn::exact::kFractionBytes; ++b)
      for (int l = 0; l < L; ++l)
        s[b] += std::int32_t(y[l]) * std::int32_t(xn::exact::fraction_weight_byte(kT, j, b, l));
    out[j] = xn::exact::fraction_piece_of_byte_sums(s[0], s[1], s[2], s[3], s[4]);
  }
  return out;
}

void check_sums_by_bytes(int L, std::int8_t *y) {
  const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
  constexpr int LMax = xn::exact::kMaxModuli;
  std::int8_t *const entry[1] = {y};
  double fma_chain[1][4];
  xn::exact::fraction_sums<LMax>(entry, 1, B, kT, fma_chain);
  const std::array<double, 4> by_bytes = sums_by_bytes(L, y);
  for (int j = 0; j < 4; ++j)
    ASSERT_EQ(bits(by_bytes[j]), bits(fma_chain[0][j])) << "L = " << L << ", piece " << j;
}

TEST(ModularRoundByFraction, ByteSumsAreTheFmaChain) {
  for (int l = 0; l < xn::exact::kMaxModuli; ++l)
    for (int j = 0; j < 4; ++j) {
      std::uint64_t f = 0;
      for (int b = 0; b < xn::exact::kFractionBytes; ++b)
        f |= std::uint64_t(xn::exact::fraction_weight_byte(kT, j, b, l)) << (8 * b);
      ASSERT_EQ(double(f), kT.crt_fraction[j][l]) << "modulus " << l << ", piece " << j;
    }
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  Draw d(seed);
  std::int8_t y[xn::exact::kMaxModuli];
  for (int trial = 0; trial < 4000; ++trial) {
    const int L = d.range(1, xn::exact::kMaxModuli);
    for (int l = 0; l < L; ++l) y[l] = std::int8_t(d.range(-127, 127));
    check_sums_by_bytes(L, y);
  }
  for (const int v : {127, -127}) {
    for (int l = 0; l < xn::exact::kMaxModuli; ++l) y[l] = std::int8_t(v);
    check_sums_by_bytes(xn::exact::kMaxModuli, y);
  }
}

// Declines, each for its reason.
TEST(ModularRoundByFraction, DeclinesWhatItCannotCertify) {
  constexpr int LMax = 16;
  // Two moduli: M = 64515, so that X = 3 is not lost below Delta's share
  // (with 16 moduli, M ~ 2^126, it is: the exact limbs decide it).
  const xn::exact::CrtBasis &B = xn::exact::crt_basis(2);
  std::int32_t p[LMax] = {};  // X = 0
  double r = 0.0;
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 0, B, kT, 1.0, 0.0, 0.0, &r)) << "X = 0";
  for (int l = 0; l < LMax; ++l) p[l] = 3;  // X = 3
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 0, xn::exact::crt_basis(16), kT, 1.0,
                                                  0.0, 0.0, &r))
      << "X far below M";
  EXPECT_TRUE(xn::exact::round_by_fraction<LMax>(p, 1, 0, B, kT, 1.0, 0.0, 0.0, &r));
  EXPECT_EQ(r, 3.0);
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 0, B, kT, 1.0, 1.0, -3.0, &r))
      << "an exact zero sum";
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, -1100, B, kT, 1.0, 0.0, 0.0, &r))
      << "a subnormal result";
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 1023, B, kT, 1.0, 0.0, 0.0, &r))
      << "an overflow";
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 0, B, kT, 0x1p-1060, 0.0, 0.0, &r))
      << "a subnormal alpha";
  EXPECT_FALSE(xn::exact::round_by_fraction<LMax>(p, 1, 0, B, kT, INFINITY, 0.0, 0.0, &r))
      << "an infinite alpha (outside the precondition)";
  EXPECT_TRUE(xn::exact::round_by_fraction<LMax>(p, 1, 1021, B, kT, 1.0, 0.0, 0.0, &r));
  EXPECT_EQ(r, 0x1.8p1022);
}

}  // namespace
