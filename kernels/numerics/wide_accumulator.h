// wide_accumulator.h - an exact fixed-point accumulator for the rare entries of
// xnExdgemm, written once as __host__ __device__ code (XN_HD).
//
// Most entries of exdgemm are summed by NearSum. An entry whose terms span too
// wide an exponent range to be held by doubles in one scale, or whose result
// is subnormal, is summed here instead: every term is added exactly into one
// long two's-complement integer, and the sum is rounded once at the end.
//
// Layout. The value is the signed integer
//
//   V = sum_{j < kLimbs} limb[j] * 2^(64 j)   (two's complement over all
//                                             64 * kLimbs bits)
//
// times 2^kMinExp: bit b of limb j has weight 2^(kMinExp + 64 j + b). With
// kMinExp = -3456 and kLimbs = 109 (6976 bits, 872 bytes) the bits run from
// 2^-3456 to 2^3519 (the sign bit). A term may have set bits from 2^kMinExp
// to 2^kMaxExp = 2^3454 (covers() checks a range), which leaves 64 bits of
// headroom: any sum of fewer than 2^64 such terms is represented exactly,
// whatever the order and signs. This covers every term exdgemm can produce
// (alpha * a * b of three finite doubles, from 2^-3222 to below 2^3072,
// times the powers of two its scaling applies), i.e. at least the range
// [2^-3400, 2^3400) with 64 bits to spare.
//
// Adding a term touches only the (at most three) limbs its bits fall in, plus
// carry or borrow propagation; round_to_double() scans limbs from the bottom
// (for the lowest set bit: the sticky bit) and from the top (for the first
// limb that is not all sign bits) and reads two limbs of the magnitude.
//
// Preconditions (not checked; no asserts so that the code is the same on the
// device): every operand is finite (no Inf or NaN), every set bit of every
// term lies inside [2^kMinExp, 2^kMaxExp] (trailing zero bits of a term do not
// count: add(0x1p-1000, -2454) sets only the bit 2^-3454 although the 53-bit
// significand of 2^-1000 formally reaches down to 2^-3506), and fewer than
// 2^64 terms are added. Breaking them never writes out of bounds (bits below
// 2^kMinExp are dropped, bits and carries beyond the top limb are discarded)
// but the result is then unspecified.
//
// The type is trivial (no constructor), so it can live in shared memory or in
// a union; call clear() before the first add. It contains no exceptions,
// allocation or library containers. In device code a local WideAccumulator
// lives in local memory (872 bytes per thread).
#pragma once

#include <cstdint>
#include <cstring>

#include "numerics/hd.h"

namespace xn {
namespace exact {

namespace wide_detail {

#if defined(__CUDA_ARCH__)

// 64 x 64 -> 128-bit unsigned product: returns the low half, stores the high.
XN_HD std::uint64_t mul_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t &hi) {
  hi = __umul64hi(a, b);
  return a * b;
}
// Leading / trailing zero bits of x != 0.
XN_HD int clz64(std::uint64_t x) { return __clzll(static_cast<long long>(x)); }
XN_HD int ctz64(std::uint64_t x) { return __ffsll(static_cast<long long>(x)) - 1; }
XN_HD std::uint64_t double_to_bits(double x) {
  return static_cast<std::uint64_t>(__double_as_longlong(x));
}
XN_HD double bits_to_double(std::uint64_t b) {
  return __longlong_as_double(static_cast<long long>(b));
}

#else

XN_HD std::uint64_t mul_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t &hi) {
  __extension__ typedef unsigned __int128 u128;
  const u128 p = static_cast<u128>(a) * b;
  hi = static_cast<std::uint64_t>(p >> 64);
  return static_cast<std::uint64_t>(p);
}
XN_HD int clz64(std::uint64_t x) { return __builtin_clzll(x); }
XN_HD int ctz64(std::uint64_t x) { return __builtin_ctzll(x); }
XN_HD std::uint64_t double_to_bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
XN_HD double bits_to_double(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

#endif

// x = (-1)^sign * mant * 2^exp with mant < 2^53 (0 for a zero), for finite x.
XN_HD bool split_double(double x, std::uint64_t &mant, int &exp) {
  const std::uint64_t b = double_to_bits(x);
  const std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  const int field = static_cast<int>((b >> 52) & 0x7ff);
  if (field == 0) {  // zero or subnormal
    mant = frac;
    exp = -1074;
  } else {
    mant = frac | (std::uint64_t(1) << 52);
    exp = field - 1075;
  }
  return (b >> 63) != 0;
}

}  // namespace wide_detail

struct WideAccumulator {
  static constexpr int kLimbs = 109;
  static constexpr int kBits = 64 * kLimbs;  // 6976
  // Weight of bit 0 of limb 0.
  static constexpr int kMinExp = -3456;
  // Carry headroom above the highest bit a term may set (plus the sign bit).
  static constexpr int kHeadroom = 64;
  // Highest bit weight a term may set: kMinExp + kBits - 1 is the sign bit.
  static constexpr int kMaxExp = kMinExp + kBits - 2 - kHeadroom;  // 3454

  // True if a term whose set bits have weights within [2^exp_lo, 2^exp_hi]
  // may be added (exp_lo <= exp_hi).
  static XN_HD bool covers(int exp_lo, int exp_hi) {
    return exp_lo >= kMinExp && exp_hi <= kMaxExp && exp_lo <= exp_hi;
  }

  XN_HD void clear() {
    for (int j = 0; j < kLimbs; ++j) limb_[j] = 0;
  }

  // Adds (neg ? -1 : 1) * mant * 2^exp exactly.
  XN_HD void add_integer(std::uint64_t mant, int exp, bool neg) {
    add_bits(mant, 0, exp, neg);
  }

  // Adds x * 2^scale exactly (x finite, possibly subnormal or zero).
  XN_HD void add(double x, int scale = 0) {
    std::uint64_t m;
    int e;
    const bool neg = wide_detail::split_double(x, m, e);
    add_bits(m, 0, e + scale, neg);
  }

  // Adds a * b * 2^scale exactly (a, b finite): the 53 x 53-bit integer
  // product of the significands is formed in 128 bits, without rounding.
  XN_HD void add_product(double a, double b, int scale = 0) {
    std::uint64_t ma, mb, hi;
    int ea, eb;
    const bool na = wide_detail::split_double(a, ma, ea);
    const bool nb = wide_detail::split_double(b, mb, eb);
    const std::uint64_t lo = wide_detail::mul_64x64(ma, mb, hi);
    add_bits(lo, hi, ea + eb + scale, na != nb);
  }

  // -1, 0 or +1: the sign of the exact sum.
  XN_HD int sign() const {
    if ((limb_[kLimbs - 1] >> 63) != 0) return -1;
    for (int j = kLimbs - 1; j >= 0; --j) {
      if (limb_[j] != 0) return 1;
    }
    return 0;
  }

  // The exact sum rounded once to the nearest double, ties to even, with
  // gradual underflow (the last place of a subnormal result is 2^-1074; a
  // nonzero sum that rounds to zero gives a zero of its sign) and overflow to
  // +-Inf when |sum| >= 2^1024 - 2^970 (the midpoint between DBL_MAX and
  // 2^1024). An exact zero gives +0.0.
  //
  // Method: the magnitude's leading bit (position `lead`) and the 64 bits
  // from it down are read from at most two limbs (negating on the fly for a
  // negative sum: -V = ~V + 1, where the +1 only reaches the lowest nonzero
  // limb); every bit below that window only matters as a sticky bit, which
  // is set iff the lowest set bit of V (the same for V and -V) lies below
  // the window. The window is rounded to 53 bits (normal result) or to the
  // bits at or above 2^-1074 (subnormal result) and the double is assembled
  // from the integer significand, so that a carry out of the significand
  // moves into the exponent field by itself (up to the smallest normal, or
  // up to the Inf pattern past DBL_MAX).
  XN_HD double round_to_double() const {
    int low = 0;
    while (low < kLimbs && limb_[low] == 0) ++low;
    if (low == kLimbs) return 0.0;

    const bool neg = (limb_[kLimbs - 1] >> 63) != 0;
    const std::uint64_t fill = neg ? ~std::uint64_t(0) : 0;
    int top = kLimbs - 1;
    while (top > low && limb_[top] == fill) --top;

    const std::uint64_t mt = mag_limb(top, low, neg);  // != 0
    const int lz = wide_detail::clz64(mt);
    std::uint64_t m = mt << lz;  // the window: bit 63 is the leading bit
    if (lz != 0 && top > 0) m |= mag_limb(top - 1, low, neg) >> (64 - lz);
    const int lead = 64 * top + 63 - lz;
    const int lowest = 64 * low + wide_detail::ctz64(limb_[low]);
    const bool sticky = lowest < lead - 63;
    const int e = lead + kMinExp;  // 2^e <= |sum| < 2^(e+1)

    std::uint64_t bits;
    if (e > 1023) {
      bits = std::uint64_t(0x7ff) << 52;  // Inf
    } else {
      // Significand bits kept: 53, or those at or above 2^-1074.
      const int keep = e >= -1022 ? 53 : e + 1075;
      std::uint64_t q;
      if (keep > 0) {
        const int sh = 64 - keep;  // 11 .. 63
        q = m >> sh;
        const std::uint64_t rem = m & ((std::uint64_t(1) << sh) - 1);
        const std::uint64_t half = std::uint64_t(1) << (sh - 1);
        if (rem > half || (rem == half && (sticky || (q & 1) != 0))) ++q;
      } else if (keep == 0) {
        // 2^-1075 <= |sum| < 2^-1074: up to 2^-1074 unless exactly the tie.
        q = (m != (std::uint64_t(1) << 63) || sticky) ? 1 : 0;
      } else {
        q = 0;  // |sum| < 2^-1075
      }
      // Normal: q in [2^52, 2^53]; subnormal: q * 2^-1074 with q <= 2^52.
      bits = e >= -1022 ? (std::uint64_t(e + 1022) << 52) + q : q;
    }
    if (neg) bits |= std::uint64_t(1) << 63;
    return wide_detail::bits_to_double(bits);
  }

 private:
  // Limb j of |V| for a sum whose lowest nonzero limb is `low`.
  XN_HD std::uint64_t mag_limb(int j, int low, bool neg) const {
    if (!neg) return limb_[j];
    if (j < low) return 0;
    if (j == low) return std::uint64_t(0) - limb_[j];
    return ~limb_[j];
  }

  // Adds (neg ? -1 : 1) * (hi * 2^64 + lo) * 2^exp.
  XN_HD void add_bits(std::uint64_t lo, std::uint64_t hi, int exp, bool neg) {
    if ((lo | hi) == 0) return;
    int off = exp - kMinExp;
    if (off < 0) {
      // Bits below 2^kMinExp are dropped: by the precondition they are zero
      // (a term's trailing zeros may reach below the range).
      const int d = -off;
      if (d >= 128) return;
      if (d >= 64) {
        lo = hi >> (d - 64);
        hi = 0;
      } else {
        lo = (lo >> d) | (hi << (64 - d));
        hi >>= d;
      }
      off = 0;
    }
    if (off >= kBits) return;

    const int i = off >> 6;
    const int s = off & 63;
    std::uint64_t w[3];
    w[0] = lo << s;
    w[1] = s != 0 ? (hi << s) | (lo >> (64 - s)) : hi;
    w[2] = s != 0 ? hi >> (64 - s) : 0;
    const int n = w[2] != 0 ? 3 : (w[1] != 0 ? 2 : 1);

    int j = i;
    std::uint64_t c = 0;  // carry or borrow
    if (!neg) {
      for (int k = 0; k < n && j < kLimbs; ++k, ++j) {
        const std::uint64_t t = limb_[j] + w[k];
        const std::uint64_t r = t + c;
        c = static_cast<std::uint64_t>(t < w[k]) | static_cast<std::uint64_t>(r < t);
        limb_[j] = r;
      }
      for (; c != 0 && j < kLimbs; ++j) c = (++limb_[j] == 0) ? 1 : 0;
    } else {
      for (int k = 0; k < n && j < kLimbs; ++k, ++j) {
        const std::uint64_t x = limb_[j];
        const std::uint64_t t = x - w[k];
        const std::uint64_t r = t - c;
        c = static_cast<std::uint64_t>(t > x) | static_cast<std::uint64_t>(r > t);
        limb_[j] = r;
      }
      for (; c != 0 && j < kLimbs; ++j) c = (limb_[j]-- == 0) ? 1 : 0;
    }
  }

  std::uint64_t limb_[kLimbs];
};

}  // namespace exact
}  // namespace xn
