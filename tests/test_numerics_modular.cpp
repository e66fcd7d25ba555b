// test_numerics_modular.cpp - the arithmetic of exdgemm's modular engine
// (src/numerics/modular.h) against GMP's exact integers: the moduli table
// (pairwise coprime, inverses, powers of two), the residue of a double,
// the number of moduli a range needs, and the Garner reconstruction of
// random integers of up to 289 bits from their residues, from int32-style
// and double-style dot products alike.
#include <gmp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "numerics/modular.h"
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

TEST(ModularTables, PairwiseCoprimeOddWithInversesAndPowers) {
  ASSERT_EQ(T.count, xn::exact::kMaxModuli);
  for (int l = 0; l < T.count; ++l) {
    EXPECT_EQ(T.m[l] % 2, 1) << "modulus " << int(T.m[l]) << " is even";
    EXPECT_LE(T.m[l], 255);
    if (l) {
      EXPECT_LT(T.m[l], T.m[l - 1]);
    }
    for (int j = 0; j < l; ++j) {
      EXPECT_EQ(std::gcd(int(T.m[j]), int(T.m[l])), 1)
          << int(T.m[j]) << " " << int(T.m[l]);
      EXPECT_EQ(int(T.m[j]) * T.inv[j][l] % T.m[l], 1);
    }
    // pow2 is 2^e mod m for e below the order, and 2^ord = 1.
    long p = 1;
    for (int e = 0; e < T.ord[l]; ++e) {
      EXPECT_EQ(T.pow2[l][e], p);
      p = 2 * p % T.m[l];
    }
    EXPECT_EQ(p, 1);
  }
}

TEST(ModularTables, ModuliForBitsIsTheFewestThatCover) {
  for (int bits = 1; bits <= 300; ++bits) {
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
                            0x1.8p-1060};
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
      for (int l = 0; l < T.count; ++l) {
        const int r = xn::exact::modular_residue(d, low, l, T);
        ASSERT_LE(std::abs(r), 127);
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

// Random X with |X| <= (prod m_l - 1)/2 for L moduli: its residues (offset by
// random multiples of m_l, as a dot product leaves them, in int32 and
// double form) give back X exactly as limbs.
TEST(ModularTerms, GarnerRebuildsEveryIntegerInRange) {
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
      else {
        mpz_urandomm(X.v, gr, half.v);
        mpz_fdiv_q_2exp(X.v, X.v, unsigned(rng() % (mpz_sizeinbase(half.v, 2) + 1)));
        if (rng() & 1) mpz_neg(X.v, X.v);
      }
      std::int32_t p32[xn::exact::kMaxModuli];
      double p64[xn::exact::kMaxModuli];
      for (int l = 0; l < L; ++l) {
        const long r = long(mpz_fdiv_ui(X.v, T.m[l]));  // in [0, m)
        const long off = long(rng() % 8000000) - 4000000;
        p32[l] = std::int32_t(r + off * T.m[l]);
        p64[l] = double(r + off * 1000 * T.m[l]);
      }
      const int base = int(rng() % 200) - 100;
      for (int form = 0; form < 2; ++form) {
        const xn::exact::ModularTerms t =
            form == 0 ? xn::exact::modular_terms(p32, 1, L, base, T)
                      : xn::exact::modular_terms(p64, 1, L, base, T);
        EXPECT_EQ(t.base, base);
        mpz_set_ui(got.v, 0);
        for (int i = t.n - 1; i >= 0; --i) {
          mpz_mul_2exp(got.v, got.v, 32);
          mpz_add_ui(got.v, got.v, t.limb[i]);
        }
        if (t.neg) mpz_neg(got.v, got.v);
        ASSERT_EQ(mpz_cmp(got.v, X.v), 0) << "L = " << L << " trial " << trial;
        ASSERT_TRUE(t.n == 0 || t.limb[t.n - 1] != 0);
      }
    }
  }
  gmp_randclear(gr);
}

}  // namespace
