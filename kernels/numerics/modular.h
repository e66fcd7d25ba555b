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
// truncation of the inputs, so no error to bound. This file: the moduli and
// the residues; the reconstruction is modular_crt.h's.
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
// 32-bit limbs of the reconstruction's result X (|X| < M < 2^335 for L <=
// 48; make_crt_basis checks that L M fits them). S itself is summed in
// 40-bit limbs (modular_crt.h, kCrtRadixBits).
inline constexpr int kMaxLimbs = 11;
// Powers of two tabulated directly: a row's shifts stay below its span,
// below 332 wherever the engine runs (L <= 48); larger ones reduce the
// exponent modulo the order of 2 first.
inline constexpr int kPow2Span = 352;
// A shifted entry (a row wider than 53 bits) is cut into at most kMaxPieces
// integers of about kPieceBits bits ("Pieces" below): rows of up to
// max_pieces_span(kMaxPieces) = 177 bits.
inline constexpr int kPieceBits = 44;
inline constexpr int kMaxPieces = 4;

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
  // piece_d[j - 1][l] = 2^(kPieceBits j) mod m_l, symmetric (|c| <= 127), as
  // a double, and piece_w the same as a 32-bit two's complement word: the
  // weights of a shifted entry's pieces (modular_residue_pieces).
  double piece_d[kMaxPieces - 1][kMaxModuli] = {};
  std::uint32_t piece_w[kMaxPieces - 1][kMaxModuli] = {};
  // crt_fraction[j][l]: F_l = RN(2^160 / m_l) = sum_j F_j 2^(40 (3 - j))
  // (0 <= F_j < 2^40), F_j as a double: the reconstruction's fraction form
  // (modular_crt.h, round_by_fraction) sums y_l F_j exactly in doubles.
  double crt_fraction[4][kMaxModuli] = {};
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
    std::uint64_t w = 1;           // 2^(kPieceBits j) mod m
    for (int j = 1; j < kMaxPieces; ++j) {
      for (int b = 0; b < kPieceBits; ++b) w = 2 * w % m;
      const int c = int(w) > int(m) / 2 ? int(w) - int(m) : int(w);
      T.piece_d[j - 1][l] = double(c);
      T.piece_w[j - 1][l] = std::uint32_t(c);
    }
    // 2^160 / m by long division in radix 2^40 (r 2^40 < 2^48), rounded
    // to nearest (m is odd: never a tie), the carry taken up the digits.
    std::uint64_t digit[4] = {}, r = 1;
    for (int j = 0; j < 4; ++j) {
      digit[j] = (r << 40) / m;
      r = (r << 40) % m;
    }
    if (2 * r > m)
      for (int j = 3; j >= 0 && ++digit[j] == (std::uint64_t(1) << 40); --j) digit[j] = 0;
    for (int j = 0; j < 4; ++j) T.crt_fraction[j][l] = double(digit[j]);
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
// The same for an integer-valued x with |x| < 2^53: the conversion
// instruction, for a few values an entry (the reconstruction's limbs), not
// per modulus.
XN_HD std::int64_t exact_int64_of(double x) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(x);
#else
  return std::int64_t(x);
#endif
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
XN_HD double symmetric_remainder_by(double x, double inv_m, double m_d) {
  constexpr double kRound = 0x1.8p52;  // adding it rounds |y| < 2^51 to an integer
  const double q = fma_exact(x, inv_m, kRound) - kRound;
  return fma_exact(-q, m_d, x);
}
XN_HD double symmetric_remainder(double x, int l, const ModularTables &U) {
  return symmetric_remainder_by(x, U.inv_m[l], U.m_d[l]);
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
// v mod 2^32 (two's complement) of an integer-valued v, |v| < 2^53: once
// per entry, for modular_residue_word at every modulus.
XN_HD std::uint32_t low_word_of_integer(double v) {
#if defined(__CUDA_ARCH__)
  return std::uint32_t(__double2ll_rz(v));
#else
  return std::uint32_t(std::int64_t(v));
#endif
}
// modular_residue_unshifted(v, l, U) as a 32-bit two's complement word, by
// one FMA and one integer multiply-add, given v_low = low_word_of_integer(v):
// RN(1.5 2^52 - v RN(1/m)) lies in [2^52, 2^53) (|v RN(1/m)| < 2^49), where
// the spacing is 1, and rounding to nearest even commutes with negation and
// with adding an even integer, so it is 1.5 2^52 - q for symmetric_remainder's
// q: its low 32 bits are -q mod 2^32, and v - q m, an integer of |r| <= 127,
// is exact modulo 2^32. The residue kernels spent four FP64 operations a
// residue on it before (the quotient's two, the remainder's FMA,
// exact_int_of's add): the FP64 pipe and the issue slots were their limit
// for small m and n.
XN_HD std::uint32_t modular_residue_word(double v, std::uint32_t v_low, int l,
                                         const ModularTables &U) {
  constexpr double kRound = 0x1.8p52;
  const auto minus_q =
      std::uint32_t(wide_detail::double_to_bits(fma_exact(-v, U.inv_m[l], kRound)));
  return v_low + minus_q * std::uint32_t(U.m[l]);
}
// Pieces: the residues of a shifted entry without its shift. In a row
// whose span (top - low + 1) exceeds 53 bits, y = a_ip 2^-low is an integer
// of up to span bits, exact as a double (one multiply by row_scale(low)),
// but not below 2^53, so modular_residue_word cannot take it whole, and
// residue_source's v 2^shift costs a table read and a second remainder
// per modulus (about 30 instructions a residue, 9 on the FP64 pipe: the
// batched 512 x 256^3 at phi = 1 spent 2.3 of 5.1 ms there on an H200).
// Cut once per entry instead, y = sum_j x_j 2^(kPieceBits j), j < P,
// each x_j the integer nearest the rest's quotient (one FMA against 1.5
// 2^52, whose bits then hold x_j mod 2^32 as well; the rest, one exact
// FMA): |x_j| <= 2^43 below the top piece, |x_(P-1)| <= 2^(span - 44 (P -
// 1)). Per modulus, z = x_0 + sum_j x_j c_j with c_j = 2^(44 j) mod m
// symmetric (|c_j| <= 127) is congruent to y, exact (every partial sum
// below 2^53: max_pieces_span), and its low word is the same sum of the
// pieces' low words modulo 2^32; modular_residue_word then gives the
// residue: P FMAs and P integer multiply-adds a residue, as the unshifted
// entries' one and one.
//
// The largest span whose P pieces keep |z| < 2^53: the lower pieces add
// at most 2^43 (1 + 127 (P - 2)), the top one 127 2^s for s = span - 44 (P
// - 1) (RN of a quotient below 2^s is at most 2^s).
XN_HD constexpr int max_pieces_span(int P) {
  if (P <= 1) return 53;
  const double lower = 0x1p43 * (1.0 + 127.0 * (P - 2));
  int s = 0;  // the largest with lower + 127 2^s < 2^53
  while (lower + 127.0 * double(std::uint64_t(1) << (s + 1)) < 0x1p53) ++s;
  return kPieceBits * (P - 1) + s;
}
static_assert(max_pieces_span(2) == 90 && max_pieces_span(3) == 133 &&
                  max_pieces_span(4) == 177,
              "the spans docs/design.md quotes for two to four pieces");
// The fewest pieces for a row of `span` bits (1 where a single integer
// below 2^53 holds it), 0 beyond kMaxPieces; the bounds are compile-time
// constants.
template <int P = 1>
XN_HD constexpr int pieces_for_span(int span) {
  if constexpr (P > kMaxPieces) {
    return 0;
  } else {
    constexpr int most = max_pieces_span(P);
    return span <= most ? P : pieces_for_span<P + 1>(span);
  }
}

// How a row's residues are taken: by P >= 2 pieces where its span needs
// them and they hold it; 0 (residue_source, or the unshifted shortcut:
// every entry of a row within 53 bits is unshifted) for narrow rows, rows
// with an Inf or NaN (counted as zero there) or without a nonzero entry,
// and rows whose 2^-low is no normal double (row_scale).
XN_HD int row_pieces(const VectorInfo &row) {
  if (row.nonfinite || row.top < row.low || row.low < -1023 || row.low > 1022) return 0;
  const int P = pieces_for_span(row.top - row.low + 1);
  return P >= 2 ? P : 0;
}

// 2^e for -1022 <= e <= 1023, from its bits.
XN_HD double power_of_two(int e) {
  return wide_detail::bits_to_double(std::uint64_t(1023 + e) << 52);
}

template <int P>
struct PieceSource {
  double x[P];
  std::uint32_t w[P];  // x[j] mod 2^32
};
// y's pieces: y integer-valued with |y| < 2^max_pieces_span(P) (a finite
// entry times its row's row_scale, a normal double).
template <int P>
XN_HD PieceSource<P> piece_source(double y) {
  constexpr double kRound = 0x1.8p52;  // its bits hold x mod 2^32 for |x| < 2^51
  PieceSource<P> s;
  double rest = y;
  XN_UNROLL
  for (int j = P - 1; j >= 1; --j) {
    const double down = power_of_two(-kPieceBits * j), up = power_of_two(kPieceBits * j);
    const double t = fma_exact(rest, down, kRound);  // 1.5 2^52 + RN(rest 2^-44j)
    s.x[j] = t - kRound;
    s.w[j] = std::uint32_t(wide_detail::double_to_bits(t));
    // Exact: rest is a multiple of u, y's lowest set bit, and so is the
    // result, |.| <= 2^(44 j - 1): at most 2^52 u where u >= 2^(44 j - 53);
    // else y's bits all lie below 2^(44 j - 1), x_j = 0, rest unchanged.
    rest = fma_exact(-s.x[j], up, rest);
  }
  s.x[0] = rest;
  s.w[0] = std::uint32_t(wide_detail::double_to_bits(rest + kRound));
  return s;
}
// A residue of y modulo m_l from its pieces (|r| <= 127, congruent), as a
// 32-bit two's complement word (modular_residue_word's).
template <int P>
XN_HD std::uint32_t modular_residue_pieces(const PieceSource<P> &s, int l,
                                           const ModularTables &U) {
  double z = s.x[0];
  std::uint32_t zw = s.w[0];
  XN_UNROLL
  for (int j = 1; j < P; ++j) {
    z = fma_exact(s.x[j], U.piece_d[j - 1][l], z);  // exact: below 2^53
    zw += s.w[j] * U.piece_w[j - 1][l];
  }
  return modular_residue_word(z, zw, l, U);
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
