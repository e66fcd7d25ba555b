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
#include <cstddef>
#include <cstdint>

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
  std::uint8_t two32[kMaxModuli] = {};  // 2^32 mod m_l
  std::uint16_t ord[kMaxModuli] = {};   // order of 2 modulo m_l
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
    T.two32[l] = std::uint8_t((std::uint64_t(1) << 32) % m);
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

// The residue of a_ip = M_ip 2^low (the row's lowest set bit `low`) modulo
// m_l, symmetric: in [-(m_l - 1)/2, (m_l - 1)/2], so |r| <= 127.
// M = mant 2^(q - low), mant < 2^53: mant mod m from its two 32-bit halves
// (hi < 2^21, so hi (2^32 mod m) + (lo mod m) < 2^30), times 2^(q - low)
// mod m; a negative shift drops only zeros (below `low` every bit of the
// row is zero).
// U gives the per-modulus constants, P the powers of two: the same tables
// on the host; on the GPU U is the constant-memory copy (every thread of a
// warp reads the same modulus: one broadcast) and P the global one, cached
// in L1 (each thread reads the power at its own exponent, which constant
// memory would serialise).
XN_HD int modular_residue(const Decoded &d, int low, int l, const ModularTables &U,
                          const ModularTables &P) {
  if (d.zero || !d.finite) return 0;
  const int m = U.m[l];
  const int shift = d.q - low;
  const std::uint64_t v = shift >= 0 ? d.mant : d.mant >> -shift;
  std::uint32_t r = mod_u32(
      std::uint32_t(v >> 32) * U.two32[l] + mod_u32(std::uint32_t(v), l, U), l, U);
  if (shift > 0) r = mod_u32(r * pow2_mod(shift, l, U, P), l, U);  // < 2^16
  const int s = int(r) > m / 2 ? int(r) - m : int(r);
  return d.neg ? -s : s;
}
XN_HD int modular_residue(const Decoded &d, int low, int l, const ModularTables &T) {
  return modular_residue(d, low, l, T, T);
}

// X from its residues, as the exact terms round_exact_terms takes: 32-bit
// limbs x_t 2^(32 t + base). Built by modular_terms().
struct ModularTerms {
  int n = 0;  // limbs, the highest nonzero last
  int base = 0;
  bool neg = false;
  std::uint32_t limb[kMaxLimbs] = {};
  XN_HD int count() const { return n; }
  XN_HD int k_top() const { return base + 32 * (n - 1); }
  XN_HD int k_bottom() const { return base; }
  template <class F>
  XN_HD void each(F &&f) const {
    for (int t = n - 1; t >= 0; --t)
      if (limb[t]) f(neg ? -double(limb[t]) : double(limb[t]), base + 32 * t);
  }
};

// The constants of the Chinese remainder theorem for the first L moduli:
// M = prod m_l, the cofactors M / m_l as limbs and their inverses modulo
// m_l. Made on the host (crt_basis) and passed by value to the kernels.
struct CrtBasis {
  int L = 0;
  int limbs = 0;  // 32-bit limbs that hold L M (so S and 2 |X| below)
  std::uint32_t M[kMaxLimbs] = {};
  std::uint32_t cofactor[kMaxModuli][kMaxLimbs] = {};  // M / m_l
  std::uint8_t inv_cofactor[kMaxModuli] = {};          // (M / m_l)^-1 mod m_l
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
  for (int l = 0; l < L; ++l) {
    B.cofactor[l][0] = 1;
    int c = 1;  // M / m_l mod m_l
    for (int j = 0; j < L; ++j)
      if (j != l) {
        mul_small(B.cofactor[l], T.m[j]);
        c = c * (T.m[j] % T.m[l]) % T.m[l];
      }
    B.inv_cofactor[l] = std::uint8_t(inverse_mod(c, T.m[l]));
    B.recip[l] = 1.0 / T.m[l];
  }
  int bits_l = 0;
  while ((1 << bits_l) <= (L > 2 ? L : 2)) ++bits_l;
  B.limbs = (bit_length(B.M) + bits_l + 31) / 32;
  return B;
}
static_assert(make_crt_basis(kMaxModuli, make_modular_tables()).limbs <= kMaxLimbs,
              "L M must fit the limbs for every L");

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

// X (|X| <= (M - 1)/2, M = prod m_l) from p_l = X mod m_l (p_l any integer
// congruent to it: the engines pass their raw int32 or double dot
// products), as limbs times 2^base. The Chinese remainder theorem as a sum:
// with y_l = p_l (M/m_l)^-1 mod m_l, S = sum y_l (M/m_l) = X + q M for an
// integer q, and q is the nearest integer to S / M = sum y_l / m_l (the
// double sum is off by less than 2^-40, so q is found within one; the
// exact comparison of 2 |S - q M| with M below settles it). O(L limbs)
// per entry, against O(L^2) for Garner's mixed radix: the 64-bit limb sums
// acc_t < L 2^40 need no carries until the end.
template <class P>
XN_HD ModularTerms modular_terms(const P *p, std::int64_t stride, int base,
                                 const CrtBasis &B, const ModularTables &T) {
  std::uint64_t acc[kMaxLimbs];
  XN_UNROLL
  for (int t = 0; t < kMaxLimbs; ++t) acc[t] = 0;
  double f = 0.0;
  for (int l = 0; l < B.L; ++l) {
    const std::uint32_t r = std::uint32_t(mod_int(std::int64_t(p[l * stride]), l, T));
    const std::uint32_t y = mod_u32(r * B.inv_cofactor[l], l, T);  // < 2^16 before
    f += double(y) * B.recip[l];
    XN_UNROLL
    for (int t = 0; t < kMaxLimbs; ++t)
      if (t < B.limbs) acc[t] += std::uint64_t(y) * B.cofactor[l][t];
  }
  const std::int64_t q = std::int64_t(f + 0.5);
  // x = S - q M in two's complement over B.limbs limbs; `carry` ends as its
  // sign (0 or -1: |x| < 2 M < 2^(32 limbs - 1)).
  std::uint32_t x[kMaxLimbs];
  std::int64_t carry = 0;
  XN_UNROLL
  for (int t = 0; t < kMaxLimbs; ++t) {
    x[t] = 0;
    if (t < B.limbs) {
      const std::int64_t v = std::int64_t(acc[t]) - q * std::int64_t(B.M[t]) + carry;
      x[t] = std::uint32_t(v);
      carry = v >> 32;  // floor division (arithmetic shift)
    }
  }
  bool neg = carry < 0;
  if (neg) {  // magnitude: two's complement negation
    std::uint64_t c = 1;
    XN_UNROLL
    for (int t = 0; t < kMaxLimbs; ++t)
      if (t < B.limbs) {
        const std::uint64_t u = std::uint64_t(~x[t]) + c;
        x[t] = std::uint32_t(u);
        c = u >> 32;
      }
  }
  // q one off: |x| > M/2 (M is odd: 2 |x| > M). Then X = -(sign) (M - |x|).
  int cmp = 0;  // sign of 2 |x| - M, from the top limb down
  XN_UNROLL
  for (int t = kMaxLimbs - 1; t >= 0; --t)
    if (t < B.limbs && cmp == 0) {
      const std::uint32_t twice = (x[t] << 1) | (t > 0 ? x[t - 1] >> 31 : 0u);
      cmp = twice > B.M[t] ? 1 : (twice < B.M[t] ? -1 : 0);
    }
  if (cmp > 0) {
    std::int64_t b = 0;
    XN_UNROLL
    for (int t = 0; t < kMaxLimbs; ++t)
      if (t < B.limbs) {
        const std::int64_t v = std::int64_t(B.M[t]) - std::int64_t(x[t]) + b;
        x[t] = std::uint32_t(v);
        b = v >> 32;
      }
    neg = !neg;
  }
  ModularTerms r;
  r.base = base;
  r.neg = neg;
  r.n = 0;
  XN_UNROLL
  for (int t = 0; t < kMaxLimbs; ++t) {
    r.limb[t] = x[t];
    if (x[t]) r.n = t + 1;
  }
  if (r.n == 0) r.neg = false;
  return r;
}

// Entry (i, j)'s terms: X 2^(low_i + low_j) from its B.L products (as
// modular_terms); nothing where the row or the column has no nonzero finite
// entry (its low is a sentinel, X is 0).
template <class P>
XN_HD ModularTerms entry_modular_terms(const P *p, std::int64_t stride,
                                       const VectorInfo &ia, const VectorInfo &ib,
                                       const CrtBasis &B, const ModularTables &T) {
  if (ia.top == kNoTop || ib.top == kNoTop) return ModularTerms{};
  return modular_terms(p, stride, ia.low + ib.low, B, T);
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
