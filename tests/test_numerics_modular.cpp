// test_numerics_modular.cpp - the arithmetic of exdgemm's modular engine
// (kernels/numerics/modular.h) against GMP's exact integers: the moduli table
// (pairwise coprime, reciprocals, powers of two), the division-free
// remainders, the CRT constants, the residue of a double, the number of
// moduli a range needs, and the reconstruction of
// random integers of up to 334 bits from their residues, from int32-style
// and double-style dot products alike, in every compiled variant.
#include <gmp.h>
#include <mpfr.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "numerics/modular_crt.h"
#include "support/test_support.h"

namespace {

using xn::exact::kModularTables;
const xn::exact::ModularTables &T = kModularTables;

// The integer sign * mag as an mpz.
struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz &) = delete;
  Mpz &operator=(const Mpz &) = delete;
};

// prod_{l < L} m_l.
void product_of_moduli(int L, Mpz &out) {
  mpz_set_ui(out.v, 1);
  for (int l = 0; l < L; ++l) mpz_mul_ui(out.v, out.v, T.m[l]);
}

TEST(ModularTables, PairwiseCoprimeOddWithTheirConstants) {
  ASSERT_EQ(T.count, xn::exact::kMaxModuli);
  for (int l = 0; l < T.count; ++l) {
    const std::uint64_t m = T.m[l];
    EXPECT_EQ(m % 2, 1u) << "modulus " << m << " is even";
    EXPECT_LE(m, 255u);
    if (l) {
      EXPECT_LT(T.m[l], T.m[l - 1]);
    }
    for (int j = 0; j < l; ++j)
      EXPECT_EQ(std::gcd(int(T.m[j]), int(T.m[l])), 1) << int(T.m[j]) << " " << m;
    EXPECT_EQ(T.magic[l], (std::uint64_t(1) << 32) / m);
    EXPECT_EQ(T.two31[l], (std::uint64_t(1) << 31) % m);
    // pow2 is 2^e mod m over the whole table; ord is the order of 2.
    std::uint64_t p = 1;
    for (int e = 0; e < xn::exact::kPow2Span; ++e) {
      EXPECT_EQ(T.pow2[l][e], p) << "m " << m << " e " << e;
      if (e > 0 && e < T.ord[l]) {
        EXPECT_NE(p, 1u) << "order of 2 mod " << m;
      }
      p = 2 * p % m;
    }
    ASSERT_GT(T.ord[l], 0);
    EXPECT_EQ(T.pow2[l][T.ord[l]], 1);
  }
}

// x mod m_l for every modulus: the 32-bit path (multiply-high) at its
// edges and at random, and the 64-bit one beyond, against the % operator.
TEST(ModularTables, ModIntMatchesTheRemainderEverywhere) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::vector<std::int64_t> xs = {0,          1,           -1,           254,
                                  255,        -255,        2147483647,   -2147483647 - 1,
                                  2147483646, -2147483647, 2147483648LL, -2147483649LL,
                                  1LL << 40,  -(1LL << 52)};
  for (int i = 0; i < 20000; ++i) {
    xs.push_back(std::int64_t(std::int32_t(rng())));
    xs.push_back(std::int64_t(rng() >> 12) - (std::int64_t(1) << 51));
  }
  for (int l = 0; l < T.count; ++l) {
    const std::int64_t m = T.m[l];
    for (std::int64_t x : xs) {
      const std::int64_t want = ((x % m) + m) % m;
      ASSERT_EQ(xn::exact::mod_int(x, l, T), want) << x << " mod " << m;
      if (x >= 0 && x <= 0xffffffffLL) {
        ASSERT_EQ(std::int64_t(xn::exact::mod_u32(std::uint32_t(x), l, T)), want);
      }
    }
    ASSERT_EQ(xn::exact::mod_u32(0xffffffffu, l, T), 0xffffffffu % std::uint32_t(m));
  }
}

// The reduction between two rounds of k's chunks: a value congruent to x,
// at most (m_l - 1)/2 = 127 in magnitude, so that the next chunk's int32
// accumulation stays exact.
TEST(ModularTables, SymmetricResidueIsCongruentAndSmall) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  for (int trial = 0; trial < 20000; ++trial) {
    const std::int64_t x = trial < 4 ? std::int64_t(INT32_MAX) * (trial - 2)
                                     : std::int64_t(rng()) >> (rng() % 60);
    for (int l = 0; l < T.count; ++l) {
      const std::int64_t m = T.m[l], r = xn::exact::symmetric_residue(x, l, T);
      ASSERT_LE(2 * std::abs(r), m - 1) << x << " mod " << m;
      ASSERT_EQ((x - r) % m, 0) << x << " mod " << m;
    }
  }
}

// The CRT constants of every L against GMP: M, the cofactors M / m_l and
// their inverses, and limbs that hold L M.
TEST(ModularTables, CrtBasisOfEveryLengthAgainstGmp) {
  for (int L = 0; L <= T.count; ++L) {
    const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
    ASSERT_EQ(B.L, L);
    Mpz M, got, q, bound;
    product_of_moduli(L, M);
    auto limbs_to = [&](const std::uint32_t *x, Mpz &out) {
      mpz_set_ui(out.v, 0);
      for (int t = xn::exact::kMaxLimbs - 1; t >= 0; --t) {
        mpz_mul_2exp(out.v, out.v, 32);
        mpz_add_ui(out.v, out.v, x[t]);
      }
    };
    limbs_to(B.M, got);
    EXPECT_EQ(mpz_cmp(got.v, M.v), 0) << "L = " << L;
    ASSERT_LE(B.limbs, xn::exact::kMaxLimbs);
    mpz_mul_ui(bound.v, M.v, unsigned(std::max(L, 2)));
    EXPECT_LE(mpz_sizeinbase(bound.v, 2), std::size_t(32 * B.limbs)) << "L = " << L;
    // Radix-2^40 limbs (the reconstruction's), each an integer below 2^40.
    auto radix_limbs_to = [&](const double *x, Mpz &out) {
      mpz_set_ui(out.v, 0);
      for (int t = xn::exact::kMaxRadixLimbs - 1; t >= 0; --t) {
        ASSERT_GE(x[t], 0.0);
        ASSERT_LT(x[t], 0x1p40);
        ASSERT_EQ(x[t], double(std::uint64_t(x[t]))) << "an integer limb";
        mpz_mul_2exp(out.v, out.v, 40);
        mpz_add_ui(out.v, out.v, std::uint64_t(x[t]));
      }
    };
    radix_limbs_to(B.M_r, got);
    EXPECT_EQ(mpz_cmp(got.v, M.v), 0) << "L = " << L;
    mpz_mul_2exp(bound.v, M.v, 1);
    EXPECT_LE(mpz_sizeinbase(bound.v, 2), std::size_t(40 * B.radix_limbs)) << "L = " << L;
    // 2^(40 t) / M within 2^-49 relative (modular_terms finds q from it).
    for (int t = 0; t < xn::exact::kMaxRadixLimbs; ++t) {
      mpfr_t exact, err;
      mpfr_inits2(256, exact, err, (mpfr_ptr)0);
      mpfr_set_ui_2exp(exact, 1, 40 * t, MPFR_RNDN);
      mpfr_div_z(exact, exact, M.v, MPFR_RNDN);
      mpfr_set_d(err, B.scale_r[t], MPFR_RNDN);
      mpfr_sub(err, err, exact, MPFR_RNDN);
      mpfr_div(err, err, exact, MPFR_RNDN);
      EXPECT_LT(std::fabs(mpfr_get_d(err, MPFR_RNDN)), 0x1p-49) << "L = " << L << " t = " << t;
      mpfr_clears(exact, err, (mpfr_ptr)0);
    }
    for (int l = 0; l < L; ++l) {
      mpz_divexact_ui(q.v, M.v, T.m[l]);
      radix_limbs_to(B.cofactor_r[l], got);
      EXPECT_EQ(mpz_cmp(got.v, q.v), 0) << "L = " << L << " l = " << l;
      EXPECT_LE(mpz_sizeinbase(q.v, 2), std::size_t(40 * B.cofactor_radix_limbs));
      EXPECT_EQ(mpz_fdiv_ui(q.v, T.m[l]) * B.inv_cofactor[l] % T.m[l], 1u);
      EXPECT_EQ(B.recip[l], 1.0 / T.m[l]);
      EXPECT_EQ(B.m_d[l], double(T.m[l]));
    }
    // M's double-double (round_by_fraction): M_hi in [1, 2), and
    // 0 <= M - (M_hi + M_lo) 2^M_exp < 2^(M_exp - 105).
    if (L > 0) {
      EXPECT_EQ(B.M_exp, int(mpz_sizeinbase(M.v, 2)) - 1) << "L = " << L;
      EXPECT_GE(B.M_hi, 1.0);
      EXPECT_LT(B.M_hi, 2.0);
      mpfr_t hl, diff;
      mpfr_inits2(400, hl, diff, (mpfr_ptr)0);
      mpfr_set_d(hl, B.M_hi, MPFR_RNDN);
      mpfr_add_d(hl, hl, B.M_lo, MPFR_RNDN);  // exact at 400 bits
      mpfr_mul_2si(hl, hl, B.M_exp, MPFR_RNDN);
      mpfr_set_z(diff, M.v, MPFR_RNDN);
      mpfr_sub(diff, diff, hl, MPFR_RNDN);
      EXPECT_GE(mpfr_sgn(diff), 0) << "L = " << L;
      mpfr_mul_2si(diff, diff, 105 - B.M_exp, MPFR_RNDN);
      EXPECT_LT(mpfr_get_d(diff, MPFR_RNDN), 1.0) << "L = " << L;
      mpfr_clears(hl, diff, (mpfr_ptr)0);
    }
  }
}

// F_l = RN(2^160 / m_l) as four 40-bit digits (the fraction form of the
// reconstruction): sum_j F_j 2^(40 (3 - j)) within 1/2 of 2^160 / m_l.
TEST(ModularTables, CrtFractionsAreTheRoundedReciprocals) {
  for (int l = 0; l < T.count; ++l) {
    Mpz F, want, rem;
    mpz_set_ui(F.v, 0);
    for (int j = 0; j < 4; ++j) {
      const double d = T.crt_fraction[j][l];
      ASSERT_GE(d, 0.0);
      ASSERT_LT(d, 0x1p40);
      ASSERT_EQ(d, double(std::uint64_t(d)));
      mpz_mul_2exp(F.v, F.v, 40);
      mpz_add_ui(F.v, F.v, std::uint64_t(d));
    }
    mpz_set_ui(want.v, 1);
    mpz_mul_2exp(want.v, want.v, 160);
    mpz_fdiv_qr_ui(want.v, rem.v, want.v, T.m[l]);
    if (2 * mpz_get_ui(rem.v) > T.m[l]) mpz_add_ui(want.v, want.v, 1);
    EXPECT_EQ(mpz_cmp(F.v, want.v), 0) << "m = " << int(T.m[l]);
  }
}

TEST(ModularTables, ModuliForBitsIsTheFewestThatCover) {
  for (int bits = 1; bits <= 340; ++bits) {
    const int L = xn::exact::moduli_for_bits(bits);
    Mpz need, prod;
    mpz_ui_pow_ui(need.v, 2, unsigned(bits + 1));
    if (L < 0) {
      product_of_moduli(T.count, prod);
      EXPECT_LT(mpz_cmp(prod.v, need.v), 0) << bits << " bits fit but -1 returned";
      continue;
    }
    product_of_moduli(L, prod);
    EXPECT_GE(mpz_cmp(prod.v, need.v), 0) << bits << " bits, L = " << L;
    product_of_moduli(L - 1, prod);
    EXPECT_LT(mpz_cmp(prod.v, need.v), 0) << bits << " bits, L = " << L << " not fewest";
  }
  EXPECT_EQ(xn::exact::moduli_for_bits(0), 0);
}

// The FP64 remainder behind every residue (symmetric_remainder), for every
// modulus, at the ends of its range (|x| up to 2^53 - 1, where the quotient
// estimate may be one off and the remainder not the symmetric one) and where x / m
// is nearest a half (the only place the nearest integer is delicate): the
// value is congruent, within [-(m-1)/2, (m-1)/2] for |x| < 2^50, and fits
// int8 (|r| <= 127, one_remainder_fits_int8) for every |x| < 2^53. And the
// bit-pattern conversions it relies on.
TEST(ModularResidue, Fp64RemainderIsExactAtTheEdges) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  for (int l = 0; l < T.count; ++l) {
    const std::int64_t m = T.m[l];
    std::vector<std::int64_t> xs = {0, 1, -1, m, -m, (m - 1) / 2, (m + 1) / 2, -(m + 1) / 2,
                                    (std::int64_t(1) << 53) - 1, -((std::int64_t(1) << 53) - 1),
                                    (std::int64_t(1) << 50) - 1, std::int64_t(1) << 50};
    // The largest |x| < 2^53 whose x / m lies a hair from a half: where the
    // quotient estimate errs the most.
    const std::int64_t top = (std::int64_t(1) << 53) - 1;
    for (std::int64_t h : {(m - 1) / 2, (m + 1) / 2}) {
      const std::int64_t x = (top - h) / m * m + h;
      xs.push_back(x);
      xs.push_back(-x);
    }
    for (int i = 0; i < 4000; ++i) {
      const int bits = int(rng() % 54);
      const std::int64_t base = bits ? std::int64_t(rng() >> (64 - bits)) : 0;
      // k m + (m - 1)/2 or (m + 1)/2: x / m a hair from a half.
      const std::int64_t near_half =
          (base / m) * m + (m - 1) / 2 + std::int64_t(rng() & 1);
      for (std::int64_t x : {base, near_half})
        if (x < (std::int64_t(1) << 53)) {
          xs.push_back(x);
          xs.push_back(-x);
        }
    }
    for (std::int64_t x : xs) {
      const double r = xn::exact::symmetric_remainder(double(x), l, T);
      ASSERT_EQ(r, std::floor(r));
      const std::int64_t ri = std::int64_t(r);
      ASSERT_EQ(((x - ri) % m + m) % m, 0) << "x " << x << " modulus " << m;
      const std::int64_t ax = x < 0 ? -x : x;
      if (ax < (std::int64_t(1) << 50))
        ASSERT_LE(2 * std::abs(ri), m - 1) << "x " << x << " modulus " << m;
      else  // one_remainder_fits_int8's bound, and never past (m + 1)/2
        ASSERT_LE(std::abs(ri), std::min<std::int64_t>(127, (m + 1) / 2))
            << "x " << x << " modulus " << m;
      ASSERT_EQ(xn::exact::exact_int_of(r), int(ri));
      // The kernels' integer form: the same remainder, from x's low word.
      const std::uint32_t low = xn::exact::low_word_of_integer(double(x));
      ASSERT_EQ(low, std::uint32_t(std::uint64_t(x)));
      ASSERT_EQ(int(xn::exact::modular_residue_word(double(x), low, l, T)), int(ri))
          << "x " << x << " modulus " << m;
    }
  }
  for (std::uint32_t u : {0u, 1u, 255u, 65535u, 0x7fffffffu, 0xffffffffu})
    EXPECT_EQ(xn::exact::exact_double_of(u), double(u));
  for (int v : {0, 1, -1, 127, -127, 32767, -32768, INT_MAX, INT_MIN + 1})
    EXPECT_EQ(xn::exact::exact_int_of(double(v)), v);
}

// a = mant 2^q for a row whose lowest set bit is `low`: the residue of
// a 2^-low, symmetric, against GMP.
TEST(ModularResidue, EveryKindOfDoubleAgainstGmp) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            3.0,
                            0x1p-1074,
                            -0x1p-1074,
                            0x1.fffffffffffffp+1023,
                            -0x1.fffffffffffffp+1023,
                            0x1p-1022,
                            0x1.8p-1060,
                            0x1p52,
                            0x1.fffffffffffffp52,
                            -0x1p53,
                            0x1.0000000000001p53,
                            INFINITY,
                            -INFINITY,
                            NAN};
  for (int i = 0; i < 2000; ++i) {
    const double mant = double(rng() >> 11) * 0x1p-53 + 0.5;
    xs.push_back((rng() & 1 ? -1 : 1) * std::ldexp(mant, int(rng() % 2090) - 1070));
  }
  for (double x : xs) {
    const xn::exact::Decoded d = xn::exact::decode(x);
    // Any row low at or below the entry's lowest set bit (down to -1074).
    const int lows[] = {d.zero ? 0 : d.low, d.zero ? 0 : d.low - 1,
                        d.zero ? -1074 : std::max(-1074, d.low - 700)};
    for (int low : lows) {
      Mpz M;  // x 2^-low
      if (!d.zero) {
        mpz_set_ui(M.v, 0);
        mpz_import(M.v, 1, 1, sizeof(d.mant), 0, 0, &d.mant);
        const int shift = d.q - low;
        if (shift >= 0)
          mpz_mul_2exp(M.v, M.v, unsigned(shift));
        else
          mpz_fdiv_q_2exp(M.v, M.v, unsigned(-shift));
        if (d.neg) mpz_neg(M.v, M.v);
      }
      const xn::exact::ResidueSource src = xn::exact::residue_source(d, low);
      // The kernels' shortcut (one multiply by 2^-low) claims exactly the
      // unshifted entries, with their source's value.
      double v = 0;
      const double scale = xn::exact::row_scale(low);
      const bool claimed = d.finite && low >= -1023 && low <= 1022 && src.shift == 0;
      ASSERT_EQ(xn::exact::unshifted_value(x, scale, &v), claimed)
          << std::hexfloat << x << " low " << low;
      if (claimed) {
        ASSERT_EQ(v, src.v) << std::hexfloat << x << " low " << low;
      }
      for (int l = 0; l < T.count; ++l) {
        const int r = xn::exact::modular_residue(d, low, l, T);
        ASSERT_LE(std::abs(r), 127);
        // The GPU's straight-line case (runs of unshifted entries) agrees.
        if (src.shift == 0) {
          ASSERT_EQ(xn::exact::modular_residue_unshifted(src.v, l, T), r);
          ASSERT_EQ(int(xn::exact::modular_residue_word(
                        src.v, xn::exact::low_word_of_integer(src.v), l, T)),
                    r);
        }
        Mpz diff;
        mpz_sub_ui(diff.v, M.v, 0);
        if (r >= 0)
          mpz_sub_ui(diff.v, diff.v, unsigned(r));
        else
          mpz_add_ui(diff.v, diff.v, unsigned(-r));
        ASSERT_TRUE(mpz_divisible_ui_p(diff.v, T.m[l]))
            << std::hexfloat << x << " low " << low << " modulus " << int(T.m[l]);
      }
    }
  }
}

// A shifted entry's pieces (modular.h, "Pieces"): for every piece count
// and modulus, integers y up to the count's largest span, at the edges
// (the span's extremes, halves at every piece boundary where the rounding
// of a quotient ties, zeros of either sign) and at random: the pieces sum
// to y exactly with the stated bounds and low words, and the residue is
// congruent to y and within int8, against GMP.
template <int P>
void check_pieces(std::mt19937_64 &rng) {
  namespace ex = xn::exact;
  const int span = ex::max_pieces_span(P);
  std::vector<double> ys = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0x1p53,
                            -0x1p53,
                            std::ldexp(0x1.fffffffffffffp0, span - 1),
                            -std::ldexp(0x1.fffffffffffffp0, span - 1),
                            std::ldexp(1.0, span - 1)};
  for (int j = 1; j < P; ++j)
    for (int odd : {1, 3, -1, -5}) {  // odd 2^(44 j - 1): a quotient exactly at a half
      const double half = double(odd) * std::ldexp(1.0, ex::kPieceBits * j - 1);
      // and its neighbours (integers: y's spacing there, at least 1)
      const double step =
          std::max(1.0, std::nextafter(std::fabs(half), INFINITY) - std::fabs(half));
      for (double y : {half, half + step, half - step}) ys.push_back(y);
    }
  for (int i = 0; i < 3000; ++i) {
    const int top = int(rng() % std::uint64_t(span));  // y's highest bit
    const int bits = std::min(53, top + 1);
    const std::uint64_t mant =
        (std::uint64_t(1) << (bits - 1)) | (bits > 1 ? rng() >> (65 - bits) : 0);
    const double y = std::ldexp(double(mant), top - bits + 1);  // an integer
    ys.push_back(rng() & 1 ? -y : y);
  }
  for (double y : ys) {
    ASSERT_LT(std::fabs(y), std::ldexp(1.0, span)) << std::hexfloat << y;
    const ex::PieceSource<P> s = ex::piece_source<P>(y);
    Mpz want, sum, part;
    mpz_set_d(want.v, y);
    for (int j = P - 1; j >= 0; --j) {
      ASSERT_EQ(s.x[j], std::floor(s.x[j])) << std::hexfloat << y;
      if (j < P - 1) {
        ASSERT_LE(std::fabs(s.x[j]), 0x1p43) << std::hexfloat << y << " piece " << j;
      }
      ASSERT_EQ(s.w[j], std::uint32_t(std::int64_t(s.x[j]))) << std::hexfloat << y;
      mpz_set_d(part.v, s.x[j]);
      mpz_mul_2exp(part.v, part.v, unsigned(ex::kPieceBits * j));
      mpz_add(sum.v, sum.v, part.v);
    }
    ASSERT_EQ(mpz_cmp(sum.v, want.v), 0) << std::hexfloat << y;
    const int top_bits = span - ex::kPieceBits * (P - 1);  // the top piece's bound
    ASSERT_LE(std::fabs(s.x[P - 1]), std::ldexp(1.0, top_bits)) << std::hexfloat << y;
    for (int l = 0; l < T.count; ++l) {
      // z = x_0 + sum_j x_j c_j, what the residue is taken of: below 2^53
      // in magnitude, or its one remainder might leave int8.
      Mpz z, term;
      mpz_set_d(z.v, s.x[0]);
      for (int j = 1; j < P; ++j) {
        mpz_set_d(term.v, s.x[j]);
        mpz_mul_si(term.v, term.v, long(T.piece_d[j - 1][l]));
        mpz_add(z.v, z.v, term.v);
      }
      mpz_abs(z.v, z.v);
      ASSERT_LE(mpz_sizeinbase(z.v, 2), 53u)
          << std::hexfloat << y << " modulus " << int(T.m[l]) << " pieces " << P;
      const int r = int(ex::modular_residue_pieces(s, l, T));
      ASSERT_LE(std::abs(r), 127) << std::hexfloat << y << " modulus " << int(T.m[l]);
      Mpz diff;
      if (r >= 0)
        mpz_sub_ui(diff.v, want.v, unsigned(r));
      else
        mpz_add_ui(diff.v, want.v, unsigned(-r));
      ASSERT_TRUE(mpz_divisible_ui_p(diff.v, T.m[l]))
          << std::hexfloat << y << " modulus " << int(T.m[l]) << " pieces " << P;
    }
  }
}

TEST(ModularResidue, PiecesOfWideRowsAgainstGmp) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  for (int l = 0; l < T.count; ++l)
    for (int j = 1; j < xn::exact::kMaxPieces; ++j) {
      const int c = int(T.piece_w[j - 1][l]);
      ASSERT_EQ(double(c), T.piece_d[j - 1][l]);
      ASSERT_LE(2 * std::abs(c), int(T.m[l]) - 1);
      Mpz w;  // 2^(44 j) - c divisible by m
      mpz_ui_pow_ui(w.v, 2, unsigned(xn::exact::kPieceBits * j));
      if (c >= 0)
        mpz_sub_ui(w.v, w.v, unsigned(c));
      else
        mpz_add_ui(w.v, w.v, unsigned(-c));
      ASSERT_TRUE(mpz_divisible_ui_p(w.v, T.m[l]))
          << "modulus " << int(T.m[l]) << " j " << j;
    }
  check_pieces<2>(rng);
  check_pieces<3>(rng);
  check_pieces<4>(rng);
  // Which rows take pieces: wider than 53 bits, within four pieces, finite,
  // with a normal 2^-low.
  using xn::exact::VectorInfo;
  const auto row = [](int top, int low, unsigned nonfinite) {
    return VectorInfo{top, low, nonfinite, xn::exact::kSignClear};
  };
  EXPECT_EQ(xn::exact::row_pieces(row(52, 0, 0)), 0);
  EXPECT_EQ(xn::exact::row_pieces(row(53, 0, 0)), 2);
  EXPECT_EQ(xn::exact::row_pieces(row(89, 0, 0)), 2);
  EXPECT_EQ(xn::exact::row_pieces(row(90, 0, 0)), 3);
  EXPECT_EQ(xn::exact::row_pieces(row(132, 0, 0)), 3);
  EXPECT_EQ(xn::exact::row_pieces(row(133, 0, 0)), 4);
  EXPECT_EQ(xn::exact::row_pieces(row(100, -76, 0)), 4);
  EXPECT_EQ(xn::exact::row_pieces(row(177, 1, 0)), 4);
  EXPECT_EQ(xn::exact::row_pieces(row(177, 0, 0)), 0);
  EXPECT_EQ(xn::exact::row_pieces(row(90, 0, 1)), 0);
  EXPECT_EQ(xn::exact::row_pieces(row(-1000, -1074, 0)), 0);
  EXPECT_EQ(xn::exact::row_pieces(row(1023, 960, 0)), 2);
  EXPECT_EQ(xn::exact::row_pieces(row(-963, -1023, 0)), 2);
  EXPECT_EQ(xn::exact::row_pieces(row(-964, -1024, 0)), 0);  // 2^-low no normal double
  EXPECT_EQ(xn::exact::row_pieces(row(xn::exact::kNoTop, xn::exact::kNoLow, 0)), 0);
}

// Random X with |X| <= (prod m_l - 1)/2 for L moduli: its residues (offset by
// random multiples of m_l, as a dot product leaves them, in int32 and
// double form, folded from slots, and as the int8 CRT digits the batched
// products' epilogue makes of the int32 ones) give back X exactly as limbs. The extremes +-(M - 1)/2 and
// values near them (+-M/2, where the estimate of q can be one off in either
// direction) are among the trials, with values near +-M/4, the engine's
// largest.
TEST(ModularTerms, CrtRebuildsEveryIntegerInRange) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(xn_test::describe_seed(seed));
  gmp_randstate_t gr;
  gmp_randinit_mt(gr);
  gmp_randseed_ui(gr, static_cast<unsigned long>(seed));
  for (int L = 1; L <= T.count; ++L) {
    Mpz M, half, X, got, limb;
    product_of_moduli(L, M);
    mpz_sub_ui(half.v, M.v, 1);
    mpz_fdiv_q_2exp(half.v, half.v, 1);  // (M - 1) / 2
    for (int trial = 0; trial < 60; ++trial) {
      // Extremes first, then random values of random bit lengths.
      if (trial == 0)
        mpz_set(X.v, half.v);
      else if (trial == 1)
        mpz_neg(X.v, half.v);
      else if (trial == 2)
        mpz_set_ui(X.v, 0);
      else if (trial < 11) {  // +-(M-1)/2 - d, +-(M/4 +- d) for small d
        const unsigned d = unsigned(rng() % 1000);
        if (trial < 7) {
          mpz_sub_ui(X.v, half.v, d);
        } else {
          mpz_fdiv_q_2exp(X.v, M.v, 2);
          if (rng() & 1)
            mpz_add_ui(X.v, X.v, d);
          else
            mpz_sub_ui(X.v, X.v, d);
        }
        if (trial & 1) mpz_neg(X.v, X.v);
        if (mpz_cmpabs(X.v, half.v) > 0) mpz_set(X.v, half.v);
      } else {
        mpz_urandomm(X.v, gr, half.v);
        mpz_fdiv_q_2exp(X.v, X.v, unsigned(rng() % (mpz_sizeinbase(half.v, 2) + 1)));
        if (rng() & 1) mpz_neg(X.v, X.v);
      }
      std::int32_t p32[xn::exact::kMaxModuli];
      double p64[xn::exact::kMaxModuli];
      for (int l = 0; l < L; ++l) {
        const long r = long(mpz_fdiv_ui(X.v, T.m[l]));  // in [0, m)
        const long off = long(rng() % 8000000) - 4000000;
        // int32 products anywhere in +-2^30, or at int32's very ends.
        const std::int64_t top = (std::int64_t(INT32_MAX) - r) / T.m[l],
                           bottom = -((std::int64_t(INT32_MAX) + 1 + r) / T.m[l]);
        const std::int64_t off32 = trial % 4 == 3 ? (rng() & 1 ? top : bottom) : off;
        p32[l] = std::int32_t(r + off32 * T.m[l]);
        // Doubles (the CPU's products, up to 2^52 and more): small, anywhere
        // below 2^53, or at its edge.
        const std::int64_t kmax = ((std::int64_t(1) << 53) - 256) / T.m[l];
        const std::int64_t k64 =
            trial % 3 == 0 ? off * 1000
            : trial % 3 == 1 ? std::int64_t(rng() % std::uint64_t(2 * kmax + 1)) - kmax
                             : (rng() & 1 ? kmax : -kmax);
        p64[l] = double(r + k64 * T.m[l]);
      }
      // The int32 products also split into parts of k (slots, as the
      // engine's split products leave them): int32 parts summing to p32[l],
      // folded (fold_slots) into one symmetric residue per modulus.
      constexpr int kSlots = 5;
      std::int32_t parts[kSlots * xn::exact::kMaxModuli];
      for (int l = 0; l < L; ++l) {
        std::int64_t rest = p32[l];
        for (int sl = 0; sl < kSlots - 1; ++sl) {
          const std::int32_t part = std::int32_t(p32[l] / kSlots +
                                                 std::int64_t(rng() % 400000001) - 200000000);
          parts[sl * L + l] = part;
          rest -= part;
        }
        ASSERT_LE(std::abs(rest), std::int64_t(INT32_MAX));
        parts[(kSlots - 1) * L + l] = std::int32_t(rest);
      }
      std::int32_t folded[xn::exact::kMaxModuli];
      for (int l = 0; l < L; ++l) {
        folded[l] = xn::exact::fold_slots(parts + l, kSlots, L, l, T);
        ASSERT_LE(2 * std::abs(folded[l]), T.m[l] - 1) << "symmetric";
      }
      // The int32 products as the batched products' epilogue leaves them:
      // their signed CRT digits, int8 (kernels/modular_digit_kernels.cu).
      std::int8_t digits[xn::exact::kMaxModuli];
      {
        const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
        for (int l = 0; l < L; ++l) {
          const double y = xn::exact::int32_crt_digit(p32[l], B.inv_cofactor_d[l],
                                                      B.digit_offset[l], T.inv_m[l], T.m_d[l]);
          ASSERT_LE(2 * std::abs(y), T.m[l] - 1) << "a symmetric digit";
          digits[l] = std::int8_t(y);
          ASSERT_EQ(xn::exact::crt_digit(digits[l], l, B, T), y) << "an int8 digit is itself";
        }
      }
      const int base = int(rng() % 200) - 100;
      for (int form = 0; form < 4; ++form) {
        const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
        const xn::exact::ModularTerms t =
            form == 0   ? xn::exact::modular_terms(p32, 1, base, B, T)
            : form == 1 ? xn::exact::modular_terms(p64, 1, base, B, T)
            : form == 2 ? xn::exact::modular_terms(folded, 1, base, B, T)
                        : xn::exact::modular_terms(digits, 1, base, B, T);
        EXPECT_EQ(t.base, base);
        mpz_set_ui(got.v, 0);
        for (int i = t.n - 1; i >= 0; --i) {
          mpz_mul_2exp(got.v, got.v, 32);
          mpz_add_ui(got.v, got.v, t.limb[i]);
        }
        if (t.neg) mpz_neg(got.v, got.v);
        ASSERT_EQ(mpz_cmp(got.v, X.v), 0) << "L = " << L << " trial " << trial;
        ASSERT_TRUE(t.n == 0 || t.limb[t.n - 1] != 0);
        ASSERT_TRUE(t.n > 0 || !t.neg);
        // The variant the engines compile for L moduli: the same X.
        xn::exact::with_moduli_variant(L, [&](auto moduli) {
          constexpr int LMax = decltype(moduli)::value;
          ASSERT_GE(LMax, L);
          ASSERT_GE(xn::exact::kLimbsFor<LMax>, B.limbs);
          const auto v = form == 0   ? xn::exact::modular_terms<LMax>(p32, 1, base, B, T)
                         : form == 1 ? xn::exact::modular_terms<LMax>(p64, 1, base, B, T)
                         : form == 2 ? xn::exact::modular_terms<LMax>(folded, 1, base, B, T)
                                     : xn::exact::modular_terms<LMax>(digits, 1, base, B, T);
          ASSERT_EQ(v.n, t.n);
          ASSERT_EQ(v.neg, t.neg);
          ASSERT_EQ(v.base, t.base);
          for (int i = 0; i < t.n; ++i) ASSERT_EQ(v.limb[i], t.limb[i]);
        });
      }
    }
  }
  gmp_randclear(gr);
}

}  // namespace
