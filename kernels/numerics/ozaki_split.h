// ozaki_split.h - the error-free split of exdgemm (Ozaki scheme), shared by
// the CPU and the GPU so CI tests the arithmetic the GPU runs.
//
// Ozaki & Ogita, SCAN'12 ("Accurate Matrix Multiplication" slide) and Mukunoki et al.,
// PMAA'18, Algorithm 1 split a row x of op(A) into slices x = x(1) + x(2) + ... by
// repeatedly extracting its leading bits with sigma = 2^(beta + ceil(log2 max|x|)), beta
// = ceil((-log2 u + log2 k) / 2). Every slice then has at most 53 - beta bits below its
// row's leading exponent, so a dot product of a slice of A with a slice of B is an
// integer (in units of the slices' grids) smaller than 2^53 and DGEMM computes it
// exactly, in any order, with or without FMA.
//
// We extract the same digits with integer operations on the significand
// instead of floating-point additions with sigma. Row i of op(A) gets an
// exponent e_i with every |a_ip| < 2^e_i; digit r of an entry is the w-bit
// integer formed by the bits of |a| at positions [e_i - (r+1)w, e_i - r w),
// with a's sign:
//     a = sum_r digit_r(a) * 2^(e_i - (r+1) w)            (exactly).
// Working on the integer significand means no scaling step can overflow or
// underflow, for any finite input from subnormal to DBL_MAX, and the slice
// count is known exactly from the row's highest and lowest set bits:
//     s_i = ceil((e_i - lowbit_i) / w),
// which is where "split until the remainder is exactly zero" stops.
//
// The slice width w is the largest with k (2^w - 1)^2 <= 2^53: every slice
// entry is an integer of magnitude <= 2^w - 1 (stored as a double), so every
// partial sum of a length-k dot product of two slices is an integer of
// magnitude <= k (2^w - 1)^2 <= 2^53, hence exactly representable. It is never
// narrower than the papers' 53 - beta (for k = 8192, 16384: 20 and 19 bits).
#pragma once

#include <cstdint>

#include "numerics/hd.h"

namespace xn::exact {

// Most slices a row or column can have: e - lowbit <= 1024 + 1074 = 2098
// bits, and w >= 11 for any k < 2^31.
inline constexpr int kMaxSlices = 192;
inline constexpr int kMaskWords = (kMaxSlices + 63) / 64;
// Exponent sentinels of an all-zero (or all non-finite) row.
inline constexpr int kNoTop = -100000;
inline constexpr int kNoLow = 100000;

// Largest w with k * (2^w - 1)^2 <= 2^53 (k >= 1).
XN_HD int slice_width(std::int64_t k) {
  if (k < 1) k = 1;
  int w = 26;  // (2^27 - 1)^2 > 2^53 already for k = 1
  while (w > 1) {
    const std::uint64_t d = (std::uint64_t(1) << w) - 1;
    // k <= 2^53 / d^2  <=>  k * d^2 <= 2^53 (d^2 < 2^53 here, no overflow).
    if (std::uint64_t(k) <= (std::uint64_t(1) << 53) / (d * d)) break;
    --w;
  }
  return w;
}

// A finite double as sign * mant * 2^q with mant an integer (< 2^53).
struct Decoded {
  bool finite = true;
  bool zero = true;
  bool neg = false;
  std::uint64_t mant = 0;
  int q = 0;    // exponent of mant's bit 0
  int top = 0;  // position of the highest set bit: 2^top <= |x| < 2^(top+1)
  int low = 0;  // position of the lowest set bit
};

XN_HD int count_leading_zeros64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return x ? __builtin_clzll(x) : 64;
#endif
}
XN_HD int count_trailing_zeros64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return x ? __ffsll(static_cast<long long>(x)) - 1 : 64;
#else
  return x ? __builtin_ctzll(x) : 64;
#endif
}

XN_HD std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  return b;
#endif
}

// Exact decoding from the bit pattern (no log2, no rounding).
XN_HD Decoded decode(double x) {
  Decoded d;
  const std::uint64_t b = bits_of(x);
  const int biased = int((b >> 52) & 0x7ff);
  std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  d.neg = (b >> 63) != 0;
  if (biased == 0x7ff) {
    d.finite = false;
    return d;
  }
  if (biased == 0 && frac == 0) return d;  // +-0
  d.zero = false;
  if (biased == 0) {
    d.mant = frac;  // subnormal: frac * 2^-1074
    d.q = -1074;
  } else {
    d.mant = frac | (std::uint64_t(1) << 52);
    d.q = biased - 1075;
  }
  d.top = d.q + 63 - count_leading_zeros64(d.mant);
  d.low = d.q + count_trailing_zeros64(d.mant);
  return d;
}

// Digit r of x (window [e - (r+1) w, e - r w)) as a signed integer-valued
// double. Requires |x| < 2^e.
XN_HD double slice_digit(const Decoded &d, int e, int r, int w) {
  if (d.zero || !d.finite) return 0.0;
  const int lo = e - (r + 1) * w;  // weight of the digit's bit 0
  std::uint64_t digit;
  const int shift = lo - d.q;
  if (shift >= 64 || -shift >= 64)
    digit = 0;
  else if (shift >= 0)
    digit = d.mant >> shift;
  else
    digit = d.mant << -shift;
  digit &= (std::uint64_t(1) << w) - 1;
  const double v = double(digit);  // < 2^26: exact
  return d.neg ? -v : v;
}

// Slices a row needs: top = highest set bit of the row, low = lowest.
// e = top + 1 is the row's exponent (every |x| < 2^e).
XN_HD int slice_count(int top, int low, int w) {
  if (top == kNoTop) return 0;
  const int span = top + 1 - low;  // bits from low to top inclusive
  return (span + w - 1) / w;
}

// Marks in mask (kMaskWords words) the digits r of x that are nonzero.
XN_HD void mark_nonzero_digits(const Decoded &d, int e, int w, std::uint64_t *mask) {
  if (d.zero || !d.finite) return;
  const int r_first = (e - 1 - d.top) / w;  // digit holding the top bit
  const int r_last = (e - 1 - d.low) / w;   // digit holding the lowest bit
  for (int r = r_first; r <= r_last && r < kMaxSlices; ++r)
    if (slice_digit(d, e, r, w) != 0.0) mask[r >> 6] |= std::uint64_t(1) << (r & 63);
}

// Slice masks are kept per group of kGroupRows rows (a multiple of the warp,
// so a warp's rows share a group).
inline constexpr std::int64_t kGroupRows = 64;

// Indices of a block's nonzero slices, passed by value to kernels.
struct SliceList {
  int n = 0;
  unsigned char idx[kMaxSlices];
};

}  // namespace xn::exact
