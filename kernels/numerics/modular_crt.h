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
};

// Bits of the kMaxLimbs-limb number x (0 for x = 0).
constexpr int bit_length(const std::uint32_t *x) {
  for (int t = kMaxLimbs - 1; t >= 0; --t)
    for (int b = 31; b >= 0; --b)
      if ((x[t] >> b) & 1u) return 32 * t + b + 1;
  return 0;
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

}  // namespace xn::exact
