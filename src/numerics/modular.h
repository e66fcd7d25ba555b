// modular.h - the exact multi-modular product of exdgemm's integer engine
// (docs/design.md, "exdgemm: the modular engine"), shared by the CPU and the
// GPU so CI tests the arithmetic the GPU runs.
//
// Row i of op(A) is an integer vector times a power of two: with low_i the
// lowest set bit over the row (VectorInfo), every a_ip = M_ip 2^low_i with
// M_ip an integer, |M_ip| < 2^span_i, span_i = top_i - low_i + 1. Columns of
// op(B) likewise (N_pj, low_j). Then
//     (op(A) op(B))_ij = X_ij 2^(low_i + low_j),  X_ij = sum_p M_ip N_pj,
// an integer with |X_ij| < k 2^(span_i + span_j). We compute X_ij modulo L
// pairwise coprime odd moduli m_l <= 255 (one integer GEMM each: residues
// fit int8 as |r| <= 127, and a length-k dot product of them fits int32 for
// k <= 2^17, a double exactly for any k < 2^39), reconstruct it from its
// residues by the Chinese remainder theorem (exact, since prod m_l >
// 2 |X_ij|), and hand its 32-bit limbs, exact doubles, to
// round_exact_terms: RN(alpha X 2^(low_i + low_j) + beta c), rounded once.
// This is Ozaki scheme II's idea (products in small moduli) made exact: no
// truncation of the inputs, so no error to bound.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "numerics/exdgemm_entry.h"
#include "numerics/hd.h"
#include "numerics/ozaki_split.h"

namespace xn::exact {

// Most moduli a call may use: all 48 odd pairwise coprime numbers below 256
// that make_modular_tables finds (from 255 down), 332 bits of range, enough
// for rows and columns whose spans add up to about 315 bits (data of
// (u - 0.5) exp(phi randn) up to phi of about 6 at k = 8192: docs/design.md).
inline constexpr int kMaxModuli = 48;
// Longest k whose residue dot products fit an int32 accumulator exactly:
// 2^17 * 127^2 = 2,114,060,288 < 2^31, also on top of a residue |r| <= 127
// carried from an earlier chunk of k (symmetric_residue).
inline constexpr std::int64_t kInt32ChunkK = std::int64_t(1) << 17;
// 32-bit limbs of the reconstruction: S = sum_l y_l M / m_l < L M < 2^340
// for L <= 48 (make_crt_basis checks it), and X itself.
inline constexpr int kMaxLimbs = 11;
// Powers of two tabulated directly: a row's shifts stay below its span,
// below 332 wherever the engine runs (L <= 48); larger ones reduce the
// exponent modulo the order of 2 first.
inline constexpr int kPow2Span = 352;

struct ModularTables {
  int count = 0;
  std::uint8_t m[kMaxModuli] = {};
  // magic[l] = floor(2^32 / m_l): x mod m_l by one multiply-high (mod_u32).
  std::uint32_t magic[kMaxModuli] = {};
  std::uint8_t two31[kMaxModuli] = {};  // 2^31 mod m_l
  std::uint16_t ord[kMaxModuli] = {};   // order of 2 modulo m_l
  // m_l and RN(1/m_l) as doubles: the residues' remainders on the FP64
  // units (modular_residue).
  double m_d[kMaxModuli] = {};
  double inv_m[kMaxModuli] = {};
  // pow2[l][e] = 2^e mod m_l for e < kPow2Span.
  std::uint8_t pow2[kMaxModuli][kPow2Span] = {};
};

constexpr int gcd_int(int a, int b) {
  while (b) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

constexpr int inverse_mod(int a, int m) {
  int t = 0, nt = 1, r = m, nr = a % m;
  while (nr) {
    const int q = r / nr, t2 = t - q * nt, r2 = r - q * nr;
    t = nt;
    nt = t2;
    r = nr;
    nr = r2;
  }
  return t < 0 ? t + m : t;
}

// The moduli: odd numbers from 255 down, each coprime to those before it
// (255, 253, 251, 247, 241, ...): the largest first, so that few cover the
// range.
constexpr ModularTables make_modular_tables() {
  ModularTables T;
  for (int x = 255; x >= 3 && T.count < kMaxModuli; x -= 2) {
    bool coprime = true;
    for (int l = 0; l < T.count; ++l) coprime = coprime && gcd_int(x, T.m[l]) == 1;
    if (coprime) T.m[T.count++] = std::uint8_t(x);
  }
  for (int l = 0; l < T.count; ++l) {
    const std::uint64_t m = T.m[l];
    T.magic[l] = std::uint32_t((std::uint64_t(1) << 32) / m);
    T.two31[l] = std::uint8_t((std::uint64_t(1) << 31) % m);
    T.m_d[l] = double(m);
    T.inv_m[l] = 1.0 / double(m);  // correctly rounded (IEEE division)
    std::uint64_t p = 1;
    for (int e = 0; e < kPow2Span; ++e) {
      T.pow2[l][e] = std::uint8_t(p);
      if (p == 1 && e > 0 && T.ord[l] == 0) T.ord[l] = std::uint16_t(e);
      p = 2 * p % m;
    }
  }
  return T;
}

inline constexpr ModularTables kModularTables = make_modular_tables();

// a b + c rounded once (the FMA instruction on the GPU, std::fma on the
// host: the same value).
XN_HD double fma_exact(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Conversions between small integers and doubles by the bit pattern, not
// the conversion instructions (a quarter of the FP64 rate or less on the
// GPU): x + 1.5 2^52 holds the integer x (|x| < 2^31) in its low 32 bits
// as two's complement, and 2^52 + u has u (< 2^32) as its low bits.
XN_HD int exact_int_of(double x) {
  return int(std::uint32_t(wide_detail::double_to_bits(x + 0x1.8p52)));
}
// The same for an integer-valued x with |x| < 2^51: x + 1.5 2^52 is in
// [2^52, 2^53), its 52 fraction bits are x + 2^51.
XN_HD std::int64_t exact_int64_of(double x) {
  return std::int64_t(wide_detail::double_to_bits(x + 0x1.8p52) & ((std::uint64_t(1) << 52) - 1)) -
         (std::int64_t(1) << 51);
}
XN_HD double exact_double_of(std::uint32_t u) {
  return wide_detail::bits_to_double((std::uint64_t(0x43300000u) << 32) | u) - 0x1p52;
}

XN_HD std::uint32_t mulhi_u32(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return std::uint32_t((std::uint64_t(a) * b) >> 32);
#endif
}

// x mod m_l in [0, m_l) for any 32-bit x, without a division: q =
// mulhi(x, floor(2^32/m)) is floor(x/m) or one less (x/m - q < x/2^32 +
// 1 < 2), so x - q m is below 2 m.
XN_HD std::uint32_t mod_u32(std::uint32_t x, int l, const ModularTables &T) {
  const std::uint32_t m = T.m[l];
  const std::uint32_t r = x - mulhi_u32(x, T.magic[l]) * m;
  return r >= m ? r - m : r;
}

// x mod m_l in [0, m_l) for any integer-valued x (the engines' raw int32
// or double dot products): 32-bit arithmetic where x fits (x + 2^31 is
// then an unsigned 32-bit number), a 64-bit division otherwise (only CPU
// products of k > 2^17 reach it).
XN_HD int mod_int(std::int64_t x, int l, const ModularTables &T) {
  const int m = T.m[l];
  if (x >= -2147483647 - 1 && x <= 2147483647) {
    const int r = int(mod_u32(std::uint32_t(x) ^ 0x80000000u, l, T)) - T.two31[l];
    return r < 0 ? r + m : r;
  }
  const std::int64_t r = x % m;
  return int(r < 0 ? r + m : r);
}

// 2^e mod m_l for e >= 0 (the table's powers; its orders beyond them).
XN_HD std::uint32_t pow2_mod(int e, int l, const ModularTables &T) {
  return T.pow2[l][e < kPow2Span ? e : e % T.ord[l]];
}
XN_HD std::uint32_t pow2_mod(int e, int l, const ModularTables &U, const ModularTables &P) {
  return P.pow2[l][e < kPow2Span ? e : e % U.ord[l]];
}

// What the residues of a_ip = M_ip 2^low (the row's lowest set bit `low`)
// are taken of: M_ip = v 2^shift with |v| < 2^53 an integer-valued double
// carrying a_ip's sign, shift >= 0 (M = mant 2^(q - low), mant < 2^53; a
// negative shift drops only zeros: below `low` every bit of the row is
// zero). Once per entry, for all its moduli.
struct ResidueSource {
  double v = 0.0;
  int shift = 0;
};
XN_HD ResidueSource residue_source(const Decoded &d, int low) {
  if (d.zero || !d.finite) return {};
  const int shift = d.q - low;
  const double v = double(shift >= 0 ? d.mant : d.mant >> -shift);  // exact: < 2^53
  return {d.neg ? -v : v, shift > 0 ? shift : 0};
}

// The same source without decoding the entry, where it is unshifted:
// with scale = row_scale(low) = 2^-low, v = x scale is exact (x = mant
// 2^q with q >= low: v = mant 2^(q - low), an integer) and |v| < 2^53
// exactly when residue_source's shift is 0 (a normal x with q > low has
// mant >= 2^52, so |v| >= 2^53; a subnormal x has q = -1074 <= low), v
// then being its source's v. A shifted, infinite or NaN entry, or a row
// whose 2^-low is no normal double (scale NaN), gives false: the kernels
// take residue_source then. One multiply and a compare per entry, not a
// decode (the fused tiles of small m and n spent more instructions on
// decoding than on the residues).
XN_HD double row_scale(int low) {
  const int biased = 1023 - low;  // of 2^-low
  if (biased < 1 || biased > 2046) return wide_detail::bits_to_double(0x7ff8000000000000ull);
  return wide_detail::bits_to_double(std::uint64_t(biased) << 52);
}
XN_HD bool unshifted_value(double x, double scale, double *v) {
  *v = x * scale;
  return *v < 0x1p53 && *v > -0x1p53;  // false for NaN
}

// The symmetric remainder of the integer-valued double x, |x| < 2^53,
// modulo m_l, in [-(m_l - 1)/2, (m_l - 1)/2] (so |r| <= 127), on the FP64
// units: q = RN(x RN(1/m) + 1.5 2^52) - 1.5 2^52 is the integer nearest
// x RN(1/m) (|x RN(1/m)| < 2^49 for m >= 29), which differs from x / m by
// at most |x| 2^-53 / m < 1 / m, and x - q m is exact in one FMA (an
// integer of at most 8 bits). Exactly symmetric where |x| < 2^50 (x RN(1/m)
// is then within 1/(8m) of x / m, which lies at least 1/(2m) from any half
// for odd m: q is its nearest integer); otherwise |r| < m/2 + 2^53 d with
// d = |m RN(1/m) - 1|, still at most 127 (one_remainder_fits_int8).
XN_HD double symmetric_remainder(double x, int l, const ModularTables &U) {
  constexpr double kRound = 0x1.8p52;  // adding it rounds |y| < 2^51 to an integer
  const double q = fma_exact(x, U.inv_m[l], kRound) - kRound;
  return fma_exact(-q, U.m_d[l], x);
}

// One remainder of any |x| < 2^53 lies in int8: the quotient estimate
// RN(x RN(1/m)) is within 1/2 + |x| d / m of x / m, d = |m RN(1/m) - 1|, so
// |r| < m/2 + 2^53 d, which is at most 127 when 2^53 d <= 128 - m/2. That
// holds for every modulus (d <= 2^-53 makes it 1 <= 1.5 for m <= 253, and
// RN(1/255) = 2^-8 (1 + 2^-8 + ... + 2^-48) is within 2^-56 relative: 1/8
// <= 1/2). Checked here in exact integer arithmetic: with RN(1/m) = M 2^-s,
// 2^52 <= M < 2^53 (s >= 54 as RN(1/m) < 1/2), d = |m M - 2^s| 2^-s and the
// condition is |m M - 2^s| <= (256 - m) 2^(s - 54).
constexpr bool one_remainder_fits_int8(const ModularTables &T) {
  for (int l = 0; l < T.count; ++l) {
    const std::uint64_t m = T.m[l];
    double scaled = T.inv_m[l];
    int s = 0;
    while (scaled < 0x1p52) {  // exact: doubling
      scaled *= 2;
      ++s;
    }
    if (s < 54) return false;
    const std::uint64_t M = std::uint64_t(scaled), one = std::uint64_t(1) << (s - 54);
    const std::uint64_t mM = m * M, two_s = std::uint64_t(1) << s;  // s <= 61
    const std::uint64_t gap = mM > two_s ? mM - two_s : two_s - mM;
    if (gap > (256 - m) * one) return false;
  }
  return true;
}
static_assert(one_remainder_fits_int8(kModularTables),
              "a single FP64 remainder of a 53-bit integer must fit int8 for every modulus");

// The residue of a_ip modulo m_l (|r| <= 127, congruent; not always the
// symmetric one), from its source (residue_source): v's remainder (one is
// enough in int8: one_remainder_fits_int8), and where shift > 0 that times
// 2^shift mod m_l (|r p| < 2^15) and its remainder: four FP64 operations
// per modulus where shift = 0 (an entry within 53 bits of its row's lowest
// bit), nine and a table read otherwise; the 32-bit integer version (two
// multiply-high reductions and the table's product) took 2.4x as long on
// an H100 (docs/performance.md). Every consumer needs only the congruence
// and |r| <= 127 (the int32 products' bound, kInt32ChunkK).
// U gives the per-modulus constants, P the powers of two: the same tables
// on the host; on the GPU U is the constant-memory copy (every thread of a
// warp reads the same modulus: one broadcast) and P the global one, cached
// in L1 (each thread reads the power at its own exponent, which constant
// memory would serialise). modular_residue_unshifted is the shift = 0
// case alone: the GPU's kernels take it for a run of entries none of which
// is shifted (data within 53 bits of its row's lowest bit: all of it at phi
// = 0), so that the run's residues are straight-line code the scheduler
// interleaves (with a branch per entry and modulus, ncu counted 16
// instructions per residue at 12 cycles each on an H100).
XN_HD int modular_residue_unshifted(double v, int l, const ModularTables &U) {
  return exact_int_of(symmetric_remainder(v, l, U));
}
XN_HD int modular_residue_of(const ResidueSource &s, int l, const ModularTables &U,
                             const ModularTables &P) {
  const double r = symmetric_remainder(s.v, l, U);
  if (s.shift == 0) return exact_int_of(r);
  return exact_int_of(
      symmetric_remainder(r * exact_double_of(pow2_mod(s.shift, l, U, P)), l, U));
}
XN_HD int modular_residue(const Decoded &d, int low, int l, const ModularTables &U,
                          const ModularTables &P) {
  return modular_residue_of(residue_source(d, low), l, U, P);
}
XN_HD int modular_residue(const Decoded &d, int low, int l, const ModularTables &T) {
  return modular_residue(d, low, l, T, T);
}

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

// The constants of the Chinese remainder theorem for the first L moduli:
// M = prod m_l, the cofactors M / m_l as limbs and their inverses modulo
// m_l. Made on the host (crt_basis) and passed by value to the kernels.
struct CrtBasis {
  int L = 0;
  int limbs = 0;  // 32-bit limbs that hold L M (so S and 2 |X| below)
  std::uint32_t M[kMaxLimbs] = {};
  double M_d[kMaxLimbs] = {};  // the same limbs as doubles
  // M / m_l as 32-bit limbs, each held in a double (the reconstruction's
  // FMAs take them as they are).
  double cofactor_d[kMaxModuli][kMaxLimbs] = {};
  std::uint8_t inv_cofactor[kMaxModuli] = {};          // (M / m_l)^-1 mod m_l
  double inv_cofactor_d[kMaxModuli] = {};              // the same, as a double
  // -(2^52 + 2^31) (M / m_l)^-1 mod m_l, exact (a 30-bit integer times
  // 2^31): crt_digit's offset for an int32 product.
  double digit_offset[kMaxModuli] = {};
  double recip[kMaxModuli] = {};                       // 1 / m_l, rounded
};

// Bits of the kMaxLimbs-limb number x (0 for x = 0).
constexpr int bit_length(const std::uint32_t *x) {
  for (int t = kMaxLimbs - 1; t >= 0; --t)
    for (int b = 31; b >= 0; --b)
      if ((x[t] >> b) & 1u) return 32 * t + b + 1;
  return 0;
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
  for (int t = 0; t < kMaxLimbs; ++t) B.M_d[t] = double(B.M[t]);
  for (int l = 0; l < L; ++l) {
    std::uint32_t cofactor[kMaxLimbs] = {1};
    int c = 1;  // M / m_l mod m_l
    for (int j = 0; j < L; ++j)
      if (j != l) {
        mul_small(cofactor, T.m[j]);
        c = c * (T.m[j] % T.m[l]) % T.m[l];
      }
    for (int t = 0; t < kMaxLimbs; ++t) B.cofactor_d[l][t] = double(cofactor[t]);
    B.inv_cofactor[l] = std::uint8_t(inverse_mod(c, T.m[l]));
    B.inv_cofactor_d[l] = double(B.inv_cofactor[l]);
    B.digit_offset[l] = -(0x1p52 + 0x1p31) * B.inv_cofactor_d[l];
    B.recip[l] = 1.0 / T.m[l];
  }
  int bits_l = 0;
  while ((1 << bits_l) <= (L > 2 ? L : 2)) ++bits_l;
  B.limbs = (bit_length(B.M) + bits_l + 31) / 32;
  return B;
}
static_assert(make_crt_basis(kMaxModuli, make_modular_tables()).limbs <= kMaxLimbs,
              "L M must fit the limbs for every L");

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
template <class P>
XN_HD double crt_digit(P p, int l, const CrtBasis &B, const ModularTables &T) {
  static_assert(std::is_same_v<P, std::int32_t> || std::is_same_v<P, double>,
                "products are int32 (GPU) or double (CPU)");
  if constexpr (std::is_same_v<P, std::int32_t>) {
    const double d = wide_detail::bits_to_double((std::uint64_t(0x43300000u) << 32) |
                                                 (std::uint32_t(p) ^ 0x80000000u));
    return symmetric_remainder(fma_exact(d, B.inv_cofactor_d[l], B.digit_offset[l]), l, T);
  } else {
    return symmetric_remainder(symmetric_remainder(p, l, T) * B.inv_cofactor_d[l], l, T);
  }
}

// X (|X| <= (M - 1)/2, M = prod m_l) from p_l = X mod m_l (p_l any integer
// congruent to it: the engines pass their raw int32 or double dot
// products), as limbs times 2^base. The Chinese remainder theorem as a sum:
// with the signed digits y_l = p_l (M/m_l)^-1 mod m_l (crt_digit, |y_l| <=
// (m_l - 1)/2), S = sum y_l (M/m_l) = X + q M for an integer q, and q is
// the nearest integer to S / M = sum y_l / m_l (the double sum is off by
// less than 2^-40, so q is found within one; the exact comparison of 2 |S -
// q M| with M below settles it). O(L limbs) per entry, against O(L^2) for
// Garner's mixed radix. S is summed limb by limb in doubles: each y_l
// times a 32-bit limb of M/m_l is below 2^39 in magnitude and the L <= 48
// of them below 2^45, so every FMA is exact and the digits need no
// conversion to integers (two thirds of the instructions per modulus went
// into that conversion and the 64-bit integer sums); the limbs become
// integers once, at the end.
// Compiled for at most LMax moduli (ModuliVariants, B.L <= LMax): the loop
// over the moduli unrolls, the limbs are kLimbsFor<LMax>.
template <int LMax = kMaxModuli, class P>
XN_HD ModularTermsN<kLimbsFor<LMax>> modular_terms(const P *p, std::int64_t stride, int base,
                                                   const CrtBasis &B, const ModularTables &T) {
  constexpr int N = kLimbsFor<LMax>;
  double acc[N];
  XN_UNROLL
  for (int t = 0; t < N; ++t) acc[t] = 0.0;
  double f = 0.0;  // sum of the signed digits over their moduli
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
    f = fma_exact(y, B.recip[l], f);
    XN_UNROLL
    for (int t = 0; t < N; ++t) acc[t] = fma_exact(y, B.cofactor_d[l][t], acc[t]);
  }
  // q, the integer nearest f (|f| <= 24: rounded by adding 1.5 2^52).
  constexpr double kRound = 0x1.8p52;
  const double q = (f + kRound) - kRound;
  // x = S - q M in two's complement over the N >= B.limbs limbs (those
  // above B.limbs are zero in M and the cofactors); `carry` ends as its
  // sign (0 or -1: |x| < 2 M < 2^(32 B.limbs - 1)). Limb t of S - q M is
  // exact in one FMA (|q M_t| < 2^38, |acc_t| < 2^45).
  std::uint32_t x[N];
  std::int64_t carry = 0;
  XN_UNROLL
  for (int t = 0; t < N; ++t) {
    const std::int64_t v = exact_int64_of(fma_exact(-q, B.M_d[t], acc[t])) + carry;
    x[t] = std::uint32_t(v);
    carry = v >> 32;  // floor division (arithmetic shift)
  }
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

// A product's value reduced to the symmetric range [-(m_l - 1)/2, (m_l -
// 1)/2] (|r| <= 127): between two rounds of chunks accumulated into the
// same slot, so that the next chunk's exact accumulation range holds.
XN_HD int symmetric_residue(std::int64_t x, int l, const ModularTables &T) {
  const int r = mod_int(x, l, T), m = T.m[l];
  return r > m / 2 ? r - m : r;
}

// The sum of one modulus's products over the `slots` parts of k they were
// split into, p[s stride] (s < slots), as a symmetric residue: where k was
// split for parallelism the parts are folded into the first before the
// reconstruction, which then reads one product per modulus. Each part is
// reduced in 32-bit arithmetic first (their residues' sum stays below 2^32
// for up to 2^24 parts).
template <class P>
XN_HD int fold_slots(const P *p, int slots, std::int64_t stride, int l,
                     const ModularTables &T) {
  std::uint32_t r = 0;
  for (int s = 0; s < slots; ++s)
    r += std::uint32_t(mod_int(std::int64_t(p[s * stride]), l, T));
  r = mod_u32(r, l, T);
  const int m = T.m[l];
  return int(r) > m / 2 ? int(r) - m : int(r);
}

}  // namespace xn::exact
