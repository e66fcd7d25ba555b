// modular_crt.h - the reconstruction of exdgemm's modular engine
// (docs/design.md, "exdgemm: the modular engine"): X_ij from its residues by
// the Chinese remainder theorem, as the 32-bit limbs that round_exact_terms
// takes, and their rounding where it is decided in integer arithmetic.
// Shared by the CPU and the GPU; the residues themselves are modular.h's.
#pragma once

#include <cstdint>
#include <type_traits>

#include "numerics/exdgemm_entry.h"
#include "numerics/hd.h"
#include "numerics/modular.h"

namespace xn::exact {
// x[i] for 0 <= i < N, else 0, at a run-time index: selects over the
// constant indices, so that x stays in registers on the GPU (a register
// array indexed by a variable goes to local memory).
template <int N>
XN_HD std::uint32_t limb_at(const std::uint32_t (&x)[N], int i) {
  std::uint32_t v = 0;
  XN_UNROLL
  for (int t = 0; t < N; ++t) v = t == i ? x[t] : v;
  return v;
}

// x = -x in two's complement over its N 32-bit limbs.
template <int N>
XN_HD void negate_limbs(std::uint32_t (&x)[N]) {
  std::uint64_t carry = 1;
  XN_UNROLL
  for (int t = 0; t < N; ++t) {
    const std::uint64_t u = std::uint64_t(~x[t]) + carry;
    x[t] = std::uint32_t(u);
    carry = u >> 32;
  }
}

// RN((-1)^neg W 2^e) for the unsigned integer W of N 32-bit limbs when it
// is a normal double: its top 64 bits, a round bit and a sticky bit, ties
// to even. False (nothing stored) where W is 0, or the value lies below
// 2^-1022 (the subnormal grid rounds elsewhere) or rounds to 2^1024 or
// beyond: round_exact_terms decides those.
template <int N>
XN_HD bool round_limbs_normal(const std::uint32_t (&w)[N], bool neg, int e, double *out) {
  int h = -1;  // the top nonzero limb
  XN_UNROLL
  for (int t = 0; t < N; ++t)
    if (w[t]) h = t;
  if (h < 0) return false;
  std::uint32_t sticky = 0;
  XN_UNROLL
  for (int t = 0; t < N; ++t)
    if (t < h - 2) sticky |= w[t];
  const std::uint64_t tm = (std::uint64_t(limb_at(w, h)) << 32) | limb_at(w, h - 1);
  const std::uint32_t low = limb_at(w, h - 2);
  const int lz = wide_detail::clz64(tm);  // < 32: the top limb is nonzero
  const std::uint64_t top64 = lz ? (tm << lz) | (low >> (32 - lz)) : tm;
  const std::uint32_t rest = (std::uint32_t(top64) & 0x3ffu) | (low << lz) | sticky;
  int p = e + 32 * h + 31 - lz;  // 2^p <= W 2^e < 2^(p+1)
  if (p < -1022) return false;
  std::uint64_t m = top64 >> 11;  // 53 bits
  if (((top64 >> 10) & 1u) && (rest || (m & 1u))) {
    if (++m >> 53) {
      m >>= 1;
      ++p;
    }
  }
  if (p > 1023) return false;
  *out = wide_detail::bits_to_double((std::uint64_t(neg) << 63) |
                                     (std::uint64_t(p + 1023) << 52) |
                                     (m & ((std::uint64_t(1) << 52) - 1)));
  return true;
}

// X from its residues, as the exact terms round_exact_terms takes: 32-bit
// limbs x_t 2^(32 t + base), N of them, at least the basis's limbs (the
// reconstruction is compiled for a few N, kLimbsFor of each ModuliVariants
// entry, so that its loops unroll over the limbs a call needs and no
// more). Built by modular_terms().
template <int N>
struct ModularTermsN {
  int n = 0;  // limbs, the highest nonzero last
  int base = 0;
  bool neg = false;
  std::uint32_t limb[N] = {};
  XN_HD int count() const { return n; }
  XN_HD int k_top() const { return base + 32 * (n - 1); }
  XN_HD int k_bottom() const { return base; }
  template <class F>
  XN_HD void each(F &&f) const {
    XN_UNROLL
    for (int t = N - 1; t >= 0; --t)
      if (t < n && limb[t]) f(neg ? -double(limb[t]) : double(limb[t]), base + 32 * t);
  }

  // RN(alpha X + beta c) in integer arithmetic on the limbs (exact_entry
  // has settled every other case: alpha finite and nonzero, beta and c
  // finite): |alpha| = a 2^ea with a odd (a = 1 for alpha = +-1), a |X| in
  // N + 3 limbs, beta c = b 2^eb (b < 2^106) added or subtracted where its
  // bits lie within those limbs above X's lowest, then one rounding
  // (round_limbs_normal). False where it cannot decide alone: X = 0 or a
  // zero sum (the sign of an exact zero), beta c with bits below X's
  // window or beyond the limbs, results outside the normal range.
  XN_HD bool round_fast(double alpha, double beta, double c, double *r) const {
    if (n == 0) return false;
    constexpr int W = N + 3;
    const Decoded da = decode(alpha);
    const int za = wide_detail::ctz64(da.mant);
    const std::uint64_t a = da.mant >> za;  // < 2^53
    const int e = base + da.q + za;
    bool sign = neg != da.neg;
    // alpha a power of two and no beta c (C = A B, the usual call): X's own
    // limbs rounded, no product and N limbs, not N + 3, to search (about a
    // tenth of the reconstruction's instructions).
    if (a == 1 && (beta == 0.0 || c == 0.0)) return round_limbs_normal(limb, sign, e, r);
    std::uint32_t w[W];
    std::uint64_t carry = 0;
    XN_UNROLL
    for (int t = 0; t < W; ++t) {  // |X| times a's low 32 bits
      const std::uint64_t u = (t < N ? std::uint64_t(limb[t]) * std::uint32_t(a) : 0) + carry;
      w[t] = std::uint32_t(u);
      carry = u >> 32;
    }
    if (const std::uint32_t a1 = std::uint32_t(a >> 32)) {  // plus its high 21 bits
      carry = 0;
      XN_UNROLL
      for (int t = 1; t < W; ++t) {
        const std::uint64_t u =
            (t - 1 < N ? std::uint64_t(limb[t - 1]) * a1 : 0) + w[t] + carry;
        w[t] = std::uint32_t(u);
        carry = u >> 32;
      }
    }  // a |X| < 2^(32 N + 53): the top limb stays 0
    if (beta != 0.0 && c != 0.0) {
      const Decoded db = decode(beta), dc = decode(c);
      const int zb = wide_detail::ctz64(db.mant), zc = wide_detail::ctz64(dc.mant);
      std::uint64_t hi = 0;
      const std::uint64_t lo = wide_detail::mul_64x64(db.mant >> zb, dc.mant >> zc, hi);
      const int d = db.q + zb + dc.q + zc - e;  // beta c = (hi lo) 2^(e + d)
      if (d < 0) return false;
      const int bits = hi ? 128 - wide_detail::clz64(hi) : 64 - wide_detail::clz64(lo);
      if (d + bits > 32 * (W - 1)) return false;  // the top limb keeps room for a carry
      const std::uint32_t z[4] = {std::uint32_t(lo), std::uint32_t(lo >> 32),
                                  std::uint32_t(hi), std::uint32_t(hi >> 32)};
      const int s = d >> 5, sh = d & 31;
      const bool add = (db.neg != dc.neg) == sign;
      std::int64_t cy = 0;
      XN_UNROLL
      for (int t = 0; t < W; ++t) {  // limb t of (hi lo) 2^d
        const std::uint32_t zt =
            (limb_at(z, t - s) << sh) | (sh ? limb_at(z, t - s - 1) >> (32 - sh) : 0u);
        const std::int64_t v = std::int64_t(w[t]) + (add ? std::int64_t(zt) : -std::int64_t(zt)) + cy;
        w[t] = std::uint32_t(v);
        cy = v >> 32;  // floor division: a carry (1) or a borrow (-1)
      }
      if (cy < 0) {  // |beta c| > a |X|: negate the two's complement
        negate_limbs(w);
        sign = !sign;
      }
    }
    return round_limbs_normal(w, sign, e, r);
  }
};
using ModularTerms = ModularTermsN<kMaxLimbs>;

// The reconstruction's radix (modular_terms): S = sum_l y_l M / m_l is
// summed in doubles as limbs 2^40 apart, each y_l (|y_l| <= 127) times a
// 40-bit limb of M / m_l, L <= 48 of them and then q M's limb (|q| <= 24):
// below 6120 2^40 < 2^53, so every FMA is exact. Wider limbs than the
// result's 32 bits mean fewer FMAs per modulus (3 instead of 5 for 16
// moduli, 9 instead of 11 for 48).
inline constexpr int kCrtRadixBits = 40;
inline constexpr int kMaxRadixLimbs = 9;  // 2 M for L = 48: 335 bits

// The constants of the Chinese remainder theorem for the first L moduli:
// M = prod m_l, the cofactors M / m_l as limbs and their inverses modulo
// m_l. Made on the host (crt_basis) and passed by value to the kernels.
struct CrtBasis {
  int L = 0;
  int limbs = 0;  // 32-bit limbs that hold L M (so S and 2 |X| below)
  // Radix-2^40 limbs that hold every cofactor M / m_l, and 2 M.
  int cofactor_radix_limbs = 0;
  int radix_limbs = 0;
  std::uint32_t M[kMaxLimbs] = {};
  double M_r[kMaxRadixLimbs] = {};  // M's radix-2^40 limbs
  // M / m_l as radix-2^40 limbs, each held in a double (the
  // reconstruction's FMAs take them as they are).
  double cofactor_r[kMaxModuli][kMaxRadixLimbs] = {};
  // 2^(40 t) / M within 2^-49 relative: S / M from S's limbs (for q).
  double scale_r[kMaxRadixLimbs] = {};
  std::uint8_t inv_cofactor[kMaxModuli] = {};          // (M / m_l)^-1 mod m_l
  double inv_cofactor_d[kMaxModuli] = {};              // the same, as a double
  // -(2^52 + 2^31) (M / m_l)^-1 mod m_l, exact (a 30-bit integer times
  // 2^31): crt_digit's offset for an int32 product.
  double digit_offset[kMaxModuli] = {};
  double recip[kMaxModuli] = {};  // RN(1 / m_l): ModularTables::inv_m
  double m_d[kMaxModuli] = {};    // m_l
  // M = (M_hi + M_lo) 2^M_exp (1 + eta), M_hi in [1, 2), |eta| < 2^-105:
  // M's top 106 bits as a double-double (round_by_fraction).
  double M_hi = 0.0, M_lo = 0.0;
  int M_exp = 0;
};

// Bits of the kMaxLimbs-limb number x (0 for x = 0).
constexpr int bit_length(const std::uint32_t *x) {
  for (int t = kMaxLimbs - 1; t >= 0; --t)
    for (int b = 31; b >= 0; --b)
      if ((x[t] >> b) & 1u) return 32 * t + b + 1;
  return 0;
}

// Bits [lo, lo + n) of the kMaxLimbs-limb number x (n <= 64; bits below 0
// read as 0).
constexpr std::uint64_t bits_of(const std::uint32_t *x, int lo, int n) {
  std::uint64_t v = 0;
  for (int b = n - 1; b >= 0; --b) {
    const int bit = lo + b;
    v = (v << 1) | (bit >= 0 && bit < 32 * kMaxLimbs ? (x[bit / 32] >> (bit % 32)) & 1u : 0u);
  }
  return v;
}

// Bits [40 t, 40 t + 40) of the kMaxLimbs-limb number x, as a double.
constexpr double radix_limb(const std::uint32_t *x, int t) {
  std::uint64_t v = 0;
  for (int b = kCrtRadixBits - 1; b >= 0; --b) {
    const int bit = kCrtRadixBits * t + b;
    v = (v << 1) | (bit < 32 * kMaxLimbs ? (x[bit / 32] >> (bit % 32)) & 1u : 0u);
  }
  return double(v);
}

constexpr int radix_limbs_holding(int bits) {
  return (bits + kCrtRadixBits - 1) / kCrtRadixBits;
}

constexpr CrtBasis make_crt_basis(int L, const ModularTables &T) {
  CrtBasis B;
  B.L = L;
  auto mul_small = [](std::uint32_t *x, std::uint32_t f) {
    std::uint64_t carry = 0;
    for (int t = 0; t < kMaxLimbs; ++t) {
      const std::uint64_t u = std::uint64_t(x[t]) * f + carry;
      x[t] = std::uint32_t(u);
      carry = u >> 32;
    }
  };
  B.M[0] = 1;
  for (int l = 0; l < L; ++l) mul_small(B.M, T.m[l]);
  for (int t = 0; t < kMaxRadixLimbs; ++t) B.M_r[t] = radix_limb(B.M, t);
  double M_double = 0.0;  // within kMaxLimbs 2^-53 < 2^-49 relative
  for (int t = kMaxLimbs - 1; t >= 0; --t) M_double = M_double * 0x1p32 + double(B.M[t]);
  double radix_power = 1.0;
  for (int t = 0; t < kMaxRadixLimbs; ++t) {
    B.scale_r[t] = radix_power / M_double;
    radix_power *= 0x1p40;
  }
  B.radix_limbs = radix_limbs_holding(bit_length(B.M) + 1);
  // M's top 53 bits, then the next 53, each truncated: M_hi in [1, 2).
  B.M_exp = bit_length(B.M) - 1;
  B.M_hi = double(bits_of(B.M, B.M_exp - 52, 53)) * 0x1p-52;
  B.M_lo = double(bits_of(B.M, B.M_exp - 105, 53)) * 0x1p-105;
  for (int l = 0; l < L; ++l) {
    std::uint32_t cofactor[kMaxLimbs] = {1};
    int c = 1;  // M / m_l mod m_l
    for (int j = 0; j < L; ++j)
      if (j != l) {
        mul_small(cofactor, T.m[j]);
        c = c * (T.m[j] % T.m[l]) % T.m[l];
      }
    for (int t = 0; t < kMaxRadixLimbs; ++t) B.cofactor_r[l][t] = radix_limb(cofactor, t);
    const int cofactor_limbs = radix_limbs_holding(bit_length(cofactor));
    if (cofactor_limbs > B.cofactor_radix_limbs) B.cofactor_radix_limbs = cofactor_limbs;
    B.inv_cofactor[l] = std::uint8_t(inverse_mod(c, T.m[l]));
    B.inv_cofactor_d[l] = double(B.inv_cofactor[l]);
    B.digit_offset[l] = -(0x1p52 + 0x1p31) * B.inv_cofactor_d[l];
    B.recip[l] = T.inv_m[l];
    B.m_d[l] = T.m_d[l];
  }
  int bits_l = 0;
  while ((1 << bits_l) <= (L > 2 ? L : 2)) ++bits_l;
  B.limbs = (bit_length(B.M) + bits_l + 31) / 32;
  return B;
}
static_assert(make_crt_basis(kMaxModuli, make_modular_tables()).limbs <= kMaxLimbs,
              "L M must fit the limbs for every L");
static_assert(make_crt_basis(kMaxModuli, make_modular_tables()).radix_limbs <= kMaxRadixLimbs,
              "2 M must fit the radix limbs for every L");
static_assert((127 * kMaxModuli + 24) * (double(std::uint64_t(1) << kCrtRadixBits) - 1) <
                  0x1p53,
              "S's limb sums and x's limbs must be exact in doubles");

// The moduli counts the reconstruction is compiled for (the GPU's kernels
// and the CPU's loop alike): a call with L moduli takes the first LMax >= L,
// so the loop over the moduli unrolls (the per-modulus constants become
// immediate operands on the GPU) and the limb arithmetic runs over
// kLimbsFor<LMax> limbs, no more than the product needs (16 moduli, the
// usual plan at phi = 0: 5 limbs).
template <int... Ls>
struct ModuliVariantList {};
using ModuliVariants = ModuliVariantList<16, 24, 32, kMaxModuli>;
template <int... Ls>
constexpr bool is_moduli_variant_in(int v, ModuliVariantList<Ls...>) {
  return ((Ls == v) || ...);
}
// Whether v is one of the compiled moduli counts.
constexpr bool is_moduli_variant(int v) { return is_moduli_variant_in(v, ModuliVariants{}); }
template <int LMax>
inline constexpr int kLimbsFor = make_crt_basis(LMax, make_modular_tables()).limbs;
// The radix-2^40 limbs modular_terms sums S in, and those x = S - q M
// takes, for at most LMax moduli (a smaller L's cofactors and M are
// smaller: they fit).
template <int LMax>
inline constexpr int kCofactorRadixLimbsFor =
    make_crt_basis(LMax, make_modular_tables()).cofactor_radix_limbs;
template <int LMax>
inline constexpr int kRadixLimbsFor = make_crt_basis(LMax, make_modular_tables()).radix_limbs;

template <class F, int LMax, int... Rest>
decltype(auto) with_moduli_variant_in(int L, F &&f, ModuliVariantList<LMax, Rest...>) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(std::integral_constant<int, LMax>{});
  } else {
    if (L <= LMax) return f(std::integral_constant<int, LMax>{});
    return with_moduli_variant_in(L, static_cast<F &&>(f), ModuliVariantList<Rest...>{});
  }
}
// f(std::integral_constant<int, LMax>{}) for the first variant LMax >= L
// (L <= kMaxModuli).
template <class F>
decltype(auto) with_moduli_variant(int L, F &&f) {
  return with_moduli_variant_in(L, static_cast<F &&>(f), ModuliVariants{});
}

// The basis of the first L moduli of kModularTables (0 <= L <= kMaxModuli),
// made once per process, in place. Host only.
inline const CrtBasis &crt_basis(int L) {
  static CrtBasis all[kMaxModuli + 1];
  static const bool built = [] {
    for (int n = 0; n <= kMaxModuli; ++n) all[n] = make_crt_basis(n, kModularTables);
    return true;
  }();
  (void)built;
  return all[L];
}

// Moduli needed for |X| < 2^bits: the fewest leading moduli whose product
// M is at least 2^(bits + 1), so that the symmetric range (-M/2, M/2)
// holds X; 0 for bits <= 0, -1 if more than the table holds. Host only.
inline int moduli_for_bits(int bits) {
  if (bits <= 0) return 0;
  for (int L = 1; L <= kMaxModuli; ++L)
    if (bit_length(crt_basis(L).M) - 1 >= bits + 1) return L;  // M >= 2^(bit_length-1)
  return -1;
}

// The most bits `bits` with moduli_for_bits(bits) <= L: what the first L
// moduli hold. Host only.
inline int modular_capacity_bits(int L) { return bit_length(crt_basis(L).M) - 2; }

// y_l = p_l (M/m_l)^-1 mod m_l, symmetric (|y| <= (m_l - 1)/2), from a
// product p_l on the FP64 units (symmetric_remainder): an int32 product
// (|p| < 2^31, the GPU's) times the inverse is below 2^39, one exact
// remainder; a double one (the CPU's, |p| < 2^53) is reduced first.
// The int32 product enters as the bit pattern of d = 2^52 + 2^31 + p (its
// two's complement with the sign bit flipped, under the exponent of 2^52),
// and p inv = d inv - (2^52 + 2^31) inv is one FMA with the basis's offset:
// an integer below 2^39, so exact (against a subtraction, a second one and
// a multiply: the reconstruction is instruction-bound, L of these an entry).
// The int32 case with the constants of modulus l spelled out (inv =
// (M/m_l)^-1 mod m_l and offset = B.digit_offset[l] as doubles, inv_m and
// m_d 1/m_l and m_l): what the INT8 products' epilogue calls too, with its
// basis's recip and m_d (kernels/modular_digit_kernels.cu), so its digits
// are these. (The reconstruction passes the tables' copies, which its
// kernels hold as constants: reading the basis's instead, a kernel
// parameter, cost it 4-5 % at 15 moduli on an H200.)
XN_HD double int32_crt_digit(std::int32_t p, double inv, double offset, double inv_m,
                             double m_d) {
  const double d = wide_detail::bits_to_double((std::uint64_t(0x43300000u) << 32) |
                                               (std::uint32_t(p) ^ 0x80000000u));
  return symmetric_remainder_by(fma_exact(d, inv, offset), inv_m, m_d);
}

// An int8 "product" is a digit already (the products' epilogue made it).
template <class P>
XN_HD double crt_digit(P p, int l, const CrtBasis &B, const ModularTables &T) {
  static_assert(std::is_same_v<P, std::int32_t> || std::is_same_v<P, double> ||
                    std::is_same_v<P, std::int8_t>,
                "products are int32 (GPU) or double (CPU) sums, or int8 digits (GPU)");
  if constexpr (std::is_same_v<P, std::int32_t>) {
    return int32_crt_digit(p, B.inv_cofactor_d[l], B.digit_offset[l], T.inv_m[l], T.m_d[l]);
  } else if constexpr (std::is_same_v<P, std::int8_t>) {
    // p + 128 under the exponent of 2^52, less 2^52 + 128: exact, and no
    // conversion instruction (a quarter of the FP64 rate).
    return wide_detail::bits_to_double((std::uint64_t(0x43300000u) << 32) |
                                       std::uint32_t(int(p) + 128)) -
           (0x1p52 + 128.0);
  } else {
    return symmetric_remainder(symmetric_remainder(p, l, T) * B.inv_cofactor_d[l], l, T);
  }
}

// Bits [lo, lo + 32) of D = sum_t d_t 2^(40 t) + carry 2^(40 NR) in two's
// complement (each d_t < 2^40, the carry's sign extended above it): one of
// x's 32-bit limbs (lo is a constant once the caller's loop unrolls).
template <int NR>
XN_HD std::uint32_t radix_window(const std::uint64_t (&d)[NR], std::int64_t carry, int lo) {
  const int t = lo / kCrtRadixBits, off = lo % kCrtRadixBits;
  if (t >= NR) {
    const int above = lo - kCrtRadixBits * NR;
    return std::uint32_t(carry >> (above < 63 ? above : 63));
  }
  const std::uint64_t next = t + 1 < NR ? d[t + 1] : std::uint64_t(carry);
  return std::uint32_t((d[t] >> off) | (next << (kCrtRadixBits - off)));
}

// X (|X| <= (M - 1)/2, M = prod m_l) from p_l = X mod m_l (p_l any integer
// congruent to it: the engines pass their raw int32 or double dot
// products), as limbs times 2^base. The Chinese remainder theorem as a sum:
// with the signed digits y_l = p_l (M/m_l)^-1 mod m_l (crt_digit, |y_l| <=
// (m_l - 1)/2), S = sum y_l (M/m_l) = X + q M for an integer q, the nearest
// to S / M (found within one from S's limbs; the exact comparison of 2 |S -
// q M| with M below settles it). O(L limbs) per entry, against O(L^2) for
// Garner's mixed radix. S is summed limb by limb in doubles, in radix 2^40
// (kCrtRadixBits: every FMA exact), so the digits need no conversion to
// integers (two thirds of the instructions per modulus went into that
// conversion and the 64-bit integer sums); the limbs become 32-bit
// integers once, at the end.
// Compiled for at most LMax moduli (ModuliVariants, B.L <= LMax): the loop
// over the moduli unrolls, the limbs are those LMax moduli need.
template <int LMax = kMaxModuli, class P>
XN_HD ModularTermsN<kLimbsFor<LMax>> modular_terms(const P *p, std::int64_t stride, int base,
                                                   const CrtBasis &B, const ModularTables &T) {
  constexpr int N = kLimbsFor<LMax>;                    // x's 32-bit limbs
  constexpr int NC = kCofactorRadixLimbsFor<LMax>;      // S's radix limbs
  constexpr int NR = kRadixLimbsFor<LMax>;              // x's radix limbs
  double acc[NC];
  XN_UNROLL
  for (int t = 0; t < NC; ++t) acc[t] = 0.0;
  // Every product loaded before the first is used: on the GPU the L loads
  // are then in flight together (loaded one per step, each step waited out
  // its own memory latency: 66 % of the reconstruction's stalls on an
  // H200, ncu).
  P products[LMax];
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) products[l] = l < B.L ? p[l * stride] : P(0);
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) {
    if (l >= B.L) break;
    const double y = crt_digit(products[l], l, B, T);
    XN_UNROLL
    for (int t = 0; t < NC; ++t) acc[t] = fma_exact(y, B.cofactor_r[l][t], acc[t]);
  }
  // q, the integer nearest f = S / M = sum_t acc_t 2^(40 t) / M. Each term
  // is below L/2 <= 24 in magnitude (a limb of M/m_l is at most M/m_l, and
  // |y_l| M/m_l < M/2), and its constant within 2^-49, so with the FMAs'
  // roundings f is within 2^-40 of S / M (|f| <= 24: rounded by adding
  // 1.5 2^52).
  double f = 0.0;
  XN_UNROLL
  for (int t = NC - 1; t >= 0; --t) f = fma_exact(acc[t], B.scale_r[t], f);
  constexpr double kRound = 0x1.8p52;
  const double q = (f + kRound) - kRound;
  // x = S - q M, its radix limbs exact in one FMA (kCrtRadixBits) and made
  // digits d_t in [0, 2^40) with the carries; the last carry is x's sign
  // (0 or -1: |x| < 2 M <= 2^(40 NR)). Then x in two's complement over the
  // N 32-bit limbs (|x| < 2^(32 N - 1): B.limbs hold L M).
  std::uint64_t d[NR];
  std::int64_t carry = 0;
  XN_UNROLL
  for (int t = 0; t < NR; ++t) {
    const double xt = t < NC ? fma_exact(-q, B.M_r[t], acc[t < NC ? t : 0]) : -q * B.M_r[t];
    const std::int64_t v = exact_int64_of(xt) + carry;
    d[t] = std::uint64_t(v) & ((std::uint64_t(1) << kCrtRadixBits) - 1);
    carry = v >> kCrtRadixBits;  // floor division (arithmetic shift)
  }
  std::uint32_t x[N];
  XN_UNROLL
  for (int j = 0; j < N; ++j) x[j] = radix_window(d, carry, 32 * j);
  bool neg = carry < 0;
  if (neg) negate_limbs(x);  // the magnitude
  // q one off: |x| > M/2 (M is odd: 2 |x| > M). Then X = -(sign) (M - |x|).
  // Only where f lies within its error (< 2^-40) of a half can q be off:
  // elsewhere the exact comparison is skipped (nearly every entry).
  const double from_q = f - q;  // exact: both multiples of f's ulp
  int cmp = 0;  // sign of 2 |x| - M, from the top limb down
  if (from_q > 0.5 - 0x1p-30 || from_q < -(0.5 - 0x1p-30)) {
    XN_UNROLL
    for (int t = N - 1; t >= 0; --t)
      if (cmp == 0) {
        const std::uint32_t twice = (x[t] << 1) | (t > 0 ? x[t - 1] >> 31 : 0u);
        cmp = twice > B.M[t] ? 1 : (twice < B.M[t] ? -1 : 0);
      }
  }
  if (cmp > 0) {
    std::int64_t b = 0;
    XN_UNROLL
    for (int t = 0; t < N; ++t) {
      const std::int64_t v = std::int64_t(B.M[t]) - std::int64_t(x[t]) + b;
      x[t] = std::uint32_t(v);
      b = v >> 32;
    }
    neg = !neg;
  }
  ModularTermsN<N> r;
  r.base = base;
  r.neg = neg;
  r.n = 0;
  XN_UNROLL
  for (int t = 0; t < N; ++t) {
    r.limb[t] = x[t];
    if (x[t]) r.n = t + 1;
  }
  if (r.n == 0) r.neg = false;
  return r;
}

// Entry (i, j)'s terms: X 2^(low_i + low_j) from its B.L products (as
// modular_terms); nothing where the row or the column has no nonzero finite
// entry (its low is a sentinel, X is 0).
template <int LMax = kMaxModuli, class P>
XN_HD ModularTermsN<kLimbsFor<LMax>> entry_modular_terms(const P *p, std::int64_t stride,
                                                         const VectorInfo &ia,
                                                         const VectorInfo &ib, const CrtBasis &B,
                                                         const ModularTables &T) {
  if (ia.top == kNoTop || ib.top == kNoTop) return ModularTermsN<kLimbsFor<LMax>>{};
  return modular_terms<LMax>(p, stride, ia.low + ib.low, B, T);
}

// The fraction form of the reconstruction, with a rounding certificate.
// S / M = sum_l y_l / m_l = q + X / M (|X / M| < 1/2), so 2^160 X / M is
// the centred remainder modulo 2^160 of V = sum_l y_l F_l with F_l =
// RN(2^160 / m_l) (ModularTables::crt_fraction), up to an error |Delta| <=
// sum_l |y_l| / 2 < 2^12. F_l's constants depend on the modulus alone, not
// on L, and V is four exact FMA chains (y_l F_j < 2^47, the sums below
// 48 127 2^40 < 2^53): four FP64 operations per modulus where the limbs of
// S take NC FMAs, and no 32-bit limbs, carries or searches (about 400 of
// modular_terms' 743 instructions per entry at 15 moduli, ncu). X / M is
// then a double-double (V's balanced base-2^40 digits summed by Fast2Sum:
// no integer words) times M's (CrtBasis::M_hi, M_lo), within 2^-99
// relative plus Delta's share (2^12 / |V|: 160 bits keep it below 2^-77 of
// |X| down to |X / M| = 2^-70; with 120 the batched 512 x 256^3 at phi = 1,
// |X / M| near 2^-56, declined nearly every entry), alpha X + beta c a
// double-double sum, and the result its high part wherever the error bound
// keeps the exact value inside the high part's rounding interval (Ziv's
// strategy). It declines a tie, a zero, |X / M| within 2^-32 of a half,
// |X| too small for Delta's share, a result outside the normal range (or
// alpha X's units, E, outside it), a subnormal alpha, and beta c below
// 2^-969, more than 2^900 from alpha X, or whose low part turns subnormal
// in alpha X's units; the exact limbs (modular_terms, round_fast,
// exact_entry) then decide. A decided result is the correctly rounded
// value, so the bits are the exact path's. Precondition (exact_entry's
// finite_exact_case): alpha finite and nonzero, beta and c finite.
static_assert(127.0 * kMaxModuli * 0x1p40 < 0x1p53,
              "the fraction form's sums y_l F_j must be exact in doubles");

// The exponent field of a normal double x (x = m 2^(e - 1023), m in [1, 2)).
XN_HD int biased_exponent(double x) {
  return int((wide_detail::double_to_bits(x) >> 52) & 0x7ff);
}

// Fast2Sum (Dekker): s + e = a + b exactly, for |a| >= |b| or a = 0.
XN_HD void fast_two_sum(double a, double b, double &s, double &e) {
  s = a + b;
  e = b - (s - a);
}

// The four sums of the fraction form, sums[e][j] = sum_l y_l F_j for E
// entries at once (entry e's L products from p[e], `stride` apart; an
// entry with moduli[e] = 0 reads none and sums 0): each modulus's
// constants are read once for the E entries (a 64-bit constant costs the
// GPU a load instruction of its own at every use; with one entry they
// were a third of the instructions per modulus).
template <int LMax, int E, class Q>
XN_HD void fraction_sums(Q *const (&p)[E], std::int64_t stride, const int (&moduli)[E],
                         const CrtBasis &B, const ModularTables &T, double (&sums)[E][4]) {
  using P = std::remove_const_t<Q>;
  // Every load in flight before the first use: independent addresses, no
  // branch (with the pointer stepped only under l < L, ptxas chained each
  // load behind the last and the batched 512 x 256^3 waited on them one
  // at a time, 43 % of the issue slots busy). The offset steps on
  // unconditionally (computed afresh as l stride, each address took five
  // integer instructions), and entries a constant apart (the GPU's rows
  // i and i + 128) share it. The moduli from L to LMax read as 0, whose
  // digit is 0, so the loops below run whole.
  P products[E][LMax];
  std::int64_t offset = 0;
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) {
    XN_UNROLL
    for (int e = 0; e < E; ++e) products[e][l] = l < moduli[e] ? p[e][offset] : P(0);
    offset += stride;
  }
  XN_UNROLL
  for (int e = 0; e < E; ++e)
    XN_UNROLL
    for (int j = 0; j < 4; ++j) sums[e][j] = 0.0;
  XN_UNROLL
  for (int l = 0; l < LMax; ++l)
    XN_UNROLL
    for (int e = 0; e < E; ++e) {
      const double y = crt_digit(products[e][l], l, B, T);
      XN_UNROLL
      for (int j = 0; j < 4; ++j) sums[e][j] = fma_exact(y, T.crt_fraction[j][l], sums[e][j]);
    }
}

// The same with every entry's B.L products.
template <int LMax, int E, class Q>
XN_HD void fraction_sums(Q *const (&p)[E], std::int64_t stride, const CrtBasis &B,
                         const ModularTables &T, double (&sums)[E][4]) {
  int moduli[E];
  XN_UNROLL
  for (int e = 0; e < E; ++e) moduli[e] = B.L;
  fraction_sums<LMax>(p, stride, moduli, B, T, sums);
}

// The fraction form's sums as integer dot products (the GPU's batched
// digits take them on the INT8 tensor cores: modular_round_fraction's
// digit path, exdgemm_kernels.cu). Each piece F_j (< 2^40) is five bytes,
// F_j = sum_b W_jb 2^(8 b) with 0 <= W_jb < 256, so sum_l y_l F_j =
// sum_b S_jb 2^(8 b) with the int8 x uint8 dot products S_jb = sum_l y_l
// W_jb (|S_jb| <= 48 127 255 < 2^21), assembled exactly
// (fraction_piece_of_byte_sums): the same integer, so the same double, as
// fraction_sums' FMA chain.
inline constexpr int kFractionBytes = 5;
XN_HD constexpr std::uint32_t fraction_weight_byte(const ModularTables &T, int j, int b, int l) {
  if (b < 0 || b >= kFractionBytes || l < 0 || l >= kMaxModuli) return 0;
  return std::uint32_t((std::uint64_t(T.crt_fraction[j][l]) >> (8 * b)) & 0xff);
}

// sum_b s_b 2^(8 b) for a piece's five byte sums, exactly: s0 + 2^8 s1 and
// s2 + 2^8 s3 fit in 32 bits, the whole in 64, and |sum| < 2^53 (the
// static_assert above) converts exactly.
static_assert(std::int64_t(kMaxModuli) * 127 * 255 * 257 < (std::int64_t(1) << 31),
              "a piece's byte sums, two at a time, fit in 32 bits");
XN_HD double fraction_piece_of_byte_sums(std::int32_t s0, std::int32_t s1, std::int32_t s2,
                                         std::int32_t s3, std::int32_t s4) {
  const std::int64_t v = std::int64_t(s0 + 256 * s1) + std::int64_t(s2 + 256 * s3) * 65536 +
                         std::int64_t(s4) * 4294967296;
  return double(v);
}

// RN(alpha X 2^base + beta c) from the fraction form's sums, or false.
XN_HD bool round_fraction_sums(const double (&sums)[4], int base, const CrtBasis &B,
                               double alpha, double beta, double c, double *r) {
  // V = sum_j sums_j 2^(40 (3 - j)) modulo 2^160, centred, in doubles:
  // carries make the sums balanced base-2^40 digits d_j (|d_j| <= 2^39,
  // each step exact: |sums_j| < 2^52.6 and the carries below 2^13), and
  // d_0's own carry is a multiple of 2^160, dropped.
  constexpr double kRound = 0x1.8p52;  // adding it rounds |x| < 2^51 to an integer
  double digit[4];
  double rest = sums[3];
  XN_UNROLL
  for (int j = 3; j >= 0; --j) {
    const double carry = fma_exact(rest, 0x1p-40, kRound) - kRound;
    digit[j] = fma_exact(-carry, 0x1p40, rest);
    if (j > 0) rest = sums[j - 1] + carry;
  }
  // |d_0| < 2^39 - 2^8 keeps |V| below 2^159 - 2^128, where the true 2^160
  // X / M + Delta (|.| < 2^159 + 2^12) cannot have wrapped; beyond, |X / M|
  // is within about 2^-32 of a half (data at the moduli's bound): declined.
  if (!(fabs(digit[0]) < 0x1p39 - 0x1p8)) return false;
  // V = d_0 2^120 + d_1 2^80 + d_2 2^40 + d_3 as hv + lv. A nonzero
  // balanced digit outweighs all below it, so each partial sum is zero or
  // at least the next term's unit times 2^40, above the next term
  // (Fast2Sum's condition), and within 3 |V| (|V| >= |leading term| (1 -
  // 2^-38) / 2): |V - (hv + lv)| <= 2 u (e_1 + e_2 + e_3) <= 18 u^2 |V| <
  // 2^-101 |V|.
  double hv = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
  fast_two_sum(digit[0] * 0x1p120, digit[1] * 0x1p80, hv, e1);
  fast_two_sum(hv, digit[2] * 0x1p40, hv, e2);
  fast_two_sum(hv, digit[3], hv, e3);
  double lv = 0.0;
  fast_two_sum(hv, (e1 + e2) + e3, hv, lv);
  if (hv == 0.0) return false;  // V = 0 (hv is 0 only then)
  const bool neg = hv < 0.0;
  // |V| = (vh + vl) 2^ev within 2^-101 relative, vh in [1, 2): integers
  // hv, lv scaled by a power of two (|hv| < 2^160; vl, if not 0, above
  // 2^-160), so exactly.
  const int ev = biased_exponent(hv) - 1023;
  const double unit = power_of_two(-ev);
  const double vh = fabs(hv) * unit;
  const double vl = (neg ? -lv : lv) * unit;
  // |X| ~ (vh + vl)(M_hi + M_lo) 2^(M_exp + ev - 160): the double-double
  // product (vl M_lo < 2^-104 dropped) adds under 2^-103 relative.
  double h = 0.0, l = 0.0;
  two_prod(vh, B.M_hi, h, l);
  l = fma(vh, B.M_lo, l);
  l = fma(vl, B.M_hi, l);
  two_sum(h, l, h, l);
  if (neg) {
    h = -h;
    l = -l;
  }
  // Bound on |X - (h + l) 2^(M_exp + ev - 160)| in those units: 2^-99 |h|
  // for V's approximation, the product and M's truncation (2^-101, 2^-103
  // and 2^-105 relative), and Delta's share |Delta| M 2^-160 < 2^12 2.01
  // 2^-ev (M_hi < 2).
  double err = fabs(h) * 0x1p-99 + power_of_two(14 - ev);
  // alpha = am 2^ea, |am| in [1, 2) (a subnormal alpha declines, and an
  // Inf or NaN one, outside the precondition): times am within 2^-104 more.
  const int ba = biased_exponent(alpha);
  if (ba == 0 || ba == 0x7ff) return false;
  const std::uint64_t alpha_bits = wide_detail::double_to_bits(alpha);
  const double am = wide_detail::bits_to_double((alpha_bits & ~(std::uint64_t(0x7ff) << 52)) |
                                                (std::uint64_t(1023) << 52));
  double ah = 0.0, al = 0.0;
  two_prod(h, am, ah, al);
  al = fma(l, am, al);
  two_sum(ah, al, ah, al);
  err = err * 2.0 + fabs(ah) * 0x1p-103;
  // The result's units: alpha X = (ah + al) 2^E within err 2^E.
  const int E = base + (ba - 1023) + B.M_exp + ev - 160;
  if (E < -1022 || E > 1022) return false;  // 2^E and 2^-E are normal doubles
  if (beta != 0.0 && c != 0.0) {
    // beta c = bh + bl exactly (no underflow: |beta c| >= 2^-969), then
    // 2^-E times it: bh exactly (normal), bl exactly unless it lands below
    // 2^-1022, declined (except bl 2^-E rounding up to 2^-1022 itself, an
    // error below 2^-1075 that the 2^-100 (|ah| + |bh|) term covers).
    double bh = 0.0, bl = 0.0;
    two_prod(beta, c, bh, bl);
    const int eb = biased_exponent(bh) - 1023;
    if (!(fabs(bh) >= 0x1p-969) || !(fabs(bh) < 0x1p1023) || eb - E < -900 || eb - E > 900)
      return false;
    const double down = power_of_two(-E);
    bh *= down;
    bl *= down;
    if (bl != 0.0 && !(fabs(bl) >= 0x1p-1022)) return false;
    double s = 0.0, e = 0.0;
    two_sum(ah, bh, s, e);
    const double t = (al + bl) + e;  // two roundings, each within 2^-53 of its result
    err += (fabs(ah) + fabs(bh)) * 0x1p-100;
    two_sum(s, t, ah, al);
  }
  // RN of the exact value is ah wherever [ah + al - err, ah + al + err]
  // lies strictly inside ah's rounding interval: half an ulp either side,
  // but a quarter towards zero from a power of two (the next double down
  // is half as far). (Below 2^-960 in these units, beta c cancelled alpha
  // X: err exceeds any gap there.)
  const int e_ah = biased_exponent(ah) - 1023;
  const int top_exp = e_ah + E;  // the result's exponent
  if (ah == 0.0 || e_ah < -960 || top_exp < -1021 || top_exp > 1022) return false;
  constexpr std::uint64_t kMant = (std::uint64_t(1) << 52) - 1;
  const bool at_power_of_two = (wide_detail::double_to_bits(ah) & kMant) == 0;
  const double half = power_of_two(e_ah - 53);
  const double out = ah > 0.0 ? al : -al;  // al away from zero
  const double bound = err * (1.0 + 0x1p-20);  // err's own roundings
  if (!(out + bound < half) || !(bound - out < (at_power_of_two ? 0.5 * half : half)))
    return false;
  *r = ah * power_of_two(E);
  return true;
}

// RN(alpha X 2^base + beta c) for X from its B.L products at p, `stride`
// apart, by the fraction form; false where it cannot decide.
template <int LMax = kMaxModuli, class P>
XN_HD bool round_by_fraction(const P *p, std::int64_t stride, int base, const CrtBasis &B,
                             const ModularTables &T, double alpha, double beta, double c,
                             double *r) {
  const P *const entry[1] = {p};
  double sums[1][4];
  fraction_sums<LMax>(entry, stride, B, T, sums);
  return round_fraction_sums(sums[0], base, B, alpha, beta, c, r);
}

// Entry (i, j) by the fraction form (round_by_fraction): false where it
// cannot decide, as there and where the row or the column has no nonzero
// finite entry.
template <int LMax = kMaxModuli, class P>
XN_HD bool entry_round_by_fraction(const P *p, std::int64_t stride, const VectorInfo &ia,
                                   const VectorInfo &ib, const CrtBasis &B,
                                   const ModularTables &T, double alpha, double beta, double c,
                                   double *r) {
  if (ia.top == kNoTop || ib.top == kNoTop) return false;
  return round_by_fraction<LMax>(p, stride, ia.low + ib.low, B, T, alpha, beta, c, r);
}

}  // namespace xn::exact
