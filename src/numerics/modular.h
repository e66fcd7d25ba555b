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
// residues by Garner's algorithm in a symmetric mixed radix (exact, since
// prod m_l > 2 |X_ij|), and hand its 32-bit limbs, exact doubles, to
// round_exact_terms: RN(alpha X 2^(low_i + low_j) + beta c), rounded once.
// This is Ozaki scheme II's idea (products in small moduli) made exact: no
// truncation of the inputs, so no error to bound.
#pragma once

#include <cstdint>

#include "numerics/exdgemm_entry.h"
#include "numerics/hd.h"
#include "numerics/ozaki_split.h"

namespace xn::exact {

// Most moduli a call may use: 40 odd moduli give 289 bits of range, enough
// for rows and columns whose spans add up to about 270 bits.
inline constexpr int kMaxModuli = 40;
// Longest k whose residue dot products fit an int32 accumulator exactly:
// 2^17 * 127^2 = 2,114,060,288 < 2^31.
inline constexpr std::int64_t kInt32ChunkK = std::int64_t(1) << 17;
// 32-bit limbs of a reconstructed X: 289 bits of range plus the sign.
inline constexpr int kMaxLimbs = 10;

struct ModularTables {
  int count = 0;
  std::uint8_t m[kMaxModuli] = {};
  // inv[j][l] = m_j^-1 mod m_l (j < l), Garner's constants.
  std::uint8_t inv[kMaxModuli][kMaxModuli] = {};
  // pow2[l][e] = 2^e mod m_l for e < ord[l], the order of 2 mod m_l.
  std::uint8_t pow2[kMaxModuli][256] = {};
  std::uint16_t ord[kMaxModuli] = {};
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
    for (int j = 0; j < l; ++j) T.inv[j][l] = std::uint8_t(inverse_mod(T.m[j], T.m[l]));
    int p = 1, e = 0;
    do {
      T.pow2[l][e++] = std::uint8_t(p);
      p = 2 * p % T.m[l];
    } while (p != 1);
    T.ord[l] = std::uint16_t(e);
  }
  return T;
}

inline constexpr ModularTables kModularTables = make_modular_tables();

// x mod m in [0, m) for 0 < m < 2^8: 32-bit division where x fits (the
// GPU's 64-bit one is several times slower).
XN_HD int mod_small(std::int64_t x, int m) {
  if (x >= -2147483647 && x <= 2147483647) {
    const int r = int(x) % m;
    return r < 0 ? r + m : r;
  }
  const std::int64_t r = x % m;
  return int(r < 0 ? r + m : r);
}

// The residue of a_ip = M_ip 2^low (the row's lowest set bit `low`) modulo
// m_l, symmetric: in [-(m_l - 1)/2, (m_l - 1)/2], so |r| <= 127.
XN_HD int modular_residue(const Decoded &d, int low, int l, const ModularTables &T) {
  if (d.zero || !d.finite) return 0;
  const int m = T.m[l];
  // M = mant 2^(q - low); below `low` every bit of the row is zero, so a
  // negative shift drops only zeros.
  const int shift = d.q - low;
  int r;
  if (shift >= 0) {
    const int mant_mod = mod_small(std::int64_t(d.mant % std::uint64_t(m)), m);
    r = mant_mod * T.pow2[l][shift % T.ord[l]] % m;
  } else {
    r = int((d.mant >> -shift) % std::uint64_t(m));
  }
  if (r > m / 2) r -= m;
  return d.neg ? -r : r;
}

// Moduli needed for |X| < 2^bits: the fewest leading moduli whose product
// exceeds 2^(bits + 1) (symmetric range); 0 for bits <= 0, -1 if more than
// the table holds.
inline int moduli_for_bits(int bits, const ModularTables &T = kModularTables) {
  if (bits <= 0) return 0;
  // Exact: a running product in 32-bit limbs compared with 2^(bits + 1).
  std::uint32_t prod[kMaxLimbs + 1] = {1};
  for (int L = 1; L <= T.count; ++L) {
    std::uint64_t carry = 0;
    for (int t = 0; t <= kMaxLimbs; ++t) {
      const std::uint64_t v = std::uint64_t(prod[t]) * T.m[L - 1] + carry;
      prod[t] = std::uint32_t(v);
      carry = v >> 32;
    }
    int top = -1;  // highest set bit of the product
    for (int t = kMaxLimbs; t >= 0 && top < 0; --t)
      if (prod[t]) top = 32 * t + 31 - __builtin_clz(prod[t]);
    if (top >= bits + 1 && top > 0) return L;  // prod >= 2^top >= 2^(bits+1)
  }
  return -1;
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

// X (|X| <= (prod m_l - 1)/2) from p_l = X mod m_l (p_l any integer
// congruent to it: the engines pass their raw int32 or double dot
// products), as limbs times 2^base. Garner's algorithm with symmetric
// digits v_l in [-(m_l-1)/2, (m_l-1)/2]: X = v_0 + m_0 (v_1 + m_1 (v_2 +
// ...)), evaluated in two's complement 32-bit limbs.
template <class P>
XN_HD ModularTerms modular_terms(const P *p, std::int64_t stride, int L, int base,
                                 const ModularTables &T) {
  int v[kMaxModuli];
  for (int l = 0; l < L; ++l) {
    const int m = T.m[l];
    int t = mod_small(std::int64_t(p[l * stride]), m);
    for (int j = 0; j < l; ++j) {
      const int u = (t - v[j]) * int(T.inv[j][l]) % m;  // |t - v_j| < 2^9: fits int
      t = u < 0 ? u + m : u;
    }
    v[l] = t > m / 2 ? t - m : t;
  }
  // Horner from the top digit, in two's complement over kMaxLimbs limbs.
  std::uint32_t x[kMaxLimbs];
  for (int t = 0; t < kMaxLimbs; ++t) x[t] = 0;
  for (int l = L - 1; l >= 0; --l) {
    // x = x * m_l (mod 2^(32 kMaxLimbs)), then + v_l sign-extended.
    if (l < L - 1) {
      std::uint64_t carry = 0;
      for (int t = 0; t < kMaxLimbs; ++t) {
        const std::uint64_t u = std::uint64_t(x[t]) * T.m[l] + carry;
        x[t] = std::uint32_t(u);
        carry = u >> 32;
      }
    }
    const std::uint32_t ext = v[l] < 0 ? 0xffffffffu : 0u;
    std::uint64_t carry = 0;
    for (int t = 0; t < kMaxLimbs; ++t) {
      const std::uint64_t add = t == 0 ? std::uint32_t(v[l]) : ext;
      const std::uint64_t u = std::uint64_t(x[t]) + add + carry;
      x[t] = std::uint32_t(u);
      carry = u >> 32;
    }
  }
  ModularTerms r;
  r.base = base;
  r.neg = (x[kMaxLimbs - 1] >> 31) != 0;
  if (r.neg) {  // magnitude = two's complement negation
    std::uint64_t carry = 1;
    for (int t = 0; t < kMaxLimbs; ++t) {
      const std::uint64_t u = std::uint64_t(~x[t]) + carry;
      x[t] = std::uint32_t(u);
      carry = u >> 32;
    }
  }
  r.n = 0;
  for (int t = 0; t < kMaxLimbs; ++t) {
    r.limb[t] = x[t];
    if (x[t]) r.n = t + 1;
  }
  return r;
}

// Entry (i, j)'s terms: X 2^(low_i + low_j) from its L products (p, stride
// as modular_terms); nothing where the row or the column has no nonzero
// finite entry (its low is a sentinel, X is 0).
template <class P>
XN_HD ModularTerms entry_modular_terms(const P *p, std::int64_t stride, int L,
                                       const VectorInfo &ia, const VectorInfo &ib,
                                       const ModularTables &T) {
  const bool empty = ia.top == kNoTop || ib.top == kNoTop;
  return modular_terms(p, stride, empty ? 0 : L, empty ? 0 : ia.low + ib.low, T);
}

}  // namespace xn::exact
