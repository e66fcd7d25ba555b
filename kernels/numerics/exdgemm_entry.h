// exdgemm_entry.h - one entry of the correctly rounded product, from its
// exact slice products. Shared by the CPU and the GPU backends (one thread per
// entry on the GPU), so CI tests the arithmetic the GPU runs.
//
// With the split of ozaki_split.h, entry (i, j) of op(A) op(B) is exactly
//     X = sum_{r,q} P_rq * 2^(e_i + f_j - (r + q + 2) w),
// P_rq the (exact, integer-valued) (i, j) entry of slice product r x q. We
// return RN(alpha X + beta c), rounded once (docs/design.md, "exdgemm"):
//  * NearSum path (Rump, Ogita, Oishi 2008, Algorithm 7.3): the terms
//    TwoProd(alpha, P_rq) and TwoProd(beta, c) are scaled by one power of two
//    into a window where every one of them is an exact double and NearSum
//    cannot overflow; the correctly rounded scaled sum scaled back is the
//    answer when it is a normal number or overflows (decided on the scaled
//    value, before scaling back: below DBL_MIN rounding is at 2^-1074, not at
//    53 bits, and scaling back would round a second time).
//  * Wide path: when the terms do not fit one window (rows spanning more than
//    ~1000 binades, beta*c far from alpha*X), when there are too many terms
//    for the scratch space, or when the result is subnormal, the terms are
//    accumulated exactly in a long fixed-point integer and rounded once.
#pragma once

#include <cmath>
#include <cstdint>

#include "numerics/hd.h"
#include "numerics/nearsum.h"
#include "numerics/ozaki_split.h"
#include "numerics/wide_accumulator.h"

namespace xn::exact {

// Per-row (of op(A)) or per-column (of op(B)) exponent summary.
struct VectorInfo {
  std::int32_t top;         // highest set bit over the finite entries, kNoTop if none
  std::int32_t low;         // lowest set bit, kNoLow if none
  std::uint32_t nonfinite;  // 1 if any entry is Inf or NaN
  std::uint32_t signs;      // kSignClear | kSignSet: the sign bits seen (zeros too)
};
// VectorInfo::signs: some entry has its sign bit clear / set. Only the
// sign of an exact-zero dot product needs it (zero_dot_is_negative).
inline constexpr std::uint32_t kSignClear = 1, kSignSet = 2;

XN_HD void vector_info_init(VectorInfo &v) {
  v.top = kNoTop;
  v.low = kNoLow;
  v.nonfinite = 0;
  v.signs = 0;
}

XN_HD void vector_info_add(VectorInfo &v, const Decoded &d) {
  v.signs |= d.neg ? kSignSet : kSignClear;
  if (!d.finite) {
    v.nonfinite = 1;
  } else if (!d.zero) {
    v.top = d.top > v.top ? d.top : v.top;
    v.low = d.low < v.low ? d.low : v.low;
  }
}

// v combined with w: the summary of both vectors' entries (the sentinels
// kNoTop and kNoLow lose every comparison).
XN_HD void vector_info_merge(VectorInfo &v, const VectorInfo &w) {
  v.top = w.top > v.top ? w.top : v.top;
  v.low = w.low < v.low ? w.low : v.low;
  v.nonfinite |= w.nonfinite;
  v.signs |= w.signs;
}

// The exponent scans' step without a decode: every entry of both operands
// passes through the scan once, and decode + vector_info_add cost about 67
// instructions an entry (ncu on an H200: the batched scan issue-bound at 2
// TB/s). From the bit pattern alone, with integer max/min: the largest
// biased exponent e (top = e - 1023 for a normal number), the smallest
// max(e, 1) + ctz(significand) over the nonzero entries (low = that - 1075:
// q + ctz(mant), q = max(e, 1) - 1075), and the high words OR-ed and AND-ed
// (their sign bits: the signs seen). Exact unless a run holds an Inf or NaN
// (e = 2047) or subnormal numbers without a normal one (top then needs the
// significand's leading zeros): vector_bits_exact says so, and the caller
// decodes that run's entries instead (vector_info_add).
inline constexpr std::int32_t kNoLowKey = 0x7fffffff;
struct VectorBits {
  std::uint32_t e_max = 0;
  std::int32_t low_key = kNoLowKey;
  std::uint32_t hi_or = 0, hi_and = 0xffffffffu;
};

XN_HD int count_trailing_zeros32(std::uint32_t x) {  // 32 for x = 0
#if defined(__CUDA_ARCH__)
  return __clz(int(__brev(x)));
#else
  return x ? __builtin_ctz(x) : 32;
#endif
}

XN_HD void vector_bits_add(VectorBits &s, double x) {
  const std::uint64_t b = bits_of(x);
  const std::uint32_t hi = std::uint32_t(b >> 32), lo = std::uint32_t(b);
  const std::uint32_t e = (hi >> 20) & 0x7ffu;
  s.e_max = e > s.e_max ? e : s.e_max;
  s.hi_or |= hi;
  s.hi_and &= hi;
  // The significand's trailing zeros (with a normal number's hidden bit);
  // +-0 has none set and no key.
  const std::uint32_t m_hi = (hi & 0xfffffu) | (e ? 0x100000u : 0u);
  const int tz = lo ? count_trailing_zeros32(lo) : 32 + count_trailing_zeros32(m_hi);
  const std::int32_t key = (lo | m_hi) ? std::int32_t(e ? e : 1u) + tz : kNoLowKey;
  s.low_key = key < s.low_key ? key : s.low_key;
}

XN_HD bool vector_bits_exact(const VectorBits &s) {
  return s.e_max < 0x7ffu && (s.e_max > 0 || s.low_key == kNoLowKey);
}

// v merged with the run's summary (vector_bits_exact(s) holds): what
// vector_info_add gives for the same entries.
XN_HD void vector_bits_merge(VectorInfo &v, const VectorBits &s) {
  if (s.low_key != kNoLowKey) {
    const std::int32_t top = std::int32_t(s.e_max) - 1023, low = s.low_key - 1075;
    v.top = top > v.top ? top : v.top;
    v.low = low < v.low ? low : v.low;
  }
  v.signs |= ((s.hi_or >> 31) ? kSignSet : 0u) | ((s.hi_and >> 31) ? 0u : kSignClear);
}

// The summary of n elements of a vector with stride inc (> 0 or < 0 as a
// signed element stride from p): exponent range, Inf/NaN, signs. From the
// bit patterns (vector_bits_add), the elements decoded again only where
// those cannot decide (an Inf or NaN, subnormal numbers without a normal
// one: rare). The GPU's exponent scans run it on each thread's run.
XN_HD VectorInfo vector_summary(const double *p, std::int64_t n, std::int64_t inc) {
  VectorBits s;
  XN_UNROLL8
  for (std::int64_t i = 0; i < n; ++i) vector_bits_add(s, p[i * inc]);
  VectorInfo v;
  vector_info_init(v);
  if (vector_bits_exact(s)) {
    vector_bits_merge(v, s);
  } else {
    for (std::int64_t i = 0; i < n; ++i) vector_info_add(v, decode(p[i * inc]));
  }
  return v;
}

// The slice products of one entry: P(a, b) = p[a * stride_a + b * stride_b]
// for the a-th listed slice of op(A)'s row and the b-th of op(B)'s column.
struct EntryProducts {
  const double *p;
  std::int64_t stride_a, stride_b;
  int ns, nt;
  const unsigned char *slices_a;  // slice indices r, increasing
  const unsigned char *slices_b;  // slice indices q, increasing
  XN_HD double operator()(int a, int b) const { return p[a * stride_a + b * stride_b]; }
};

XN_HD int ceil_log2_int(int n) {
  int m = 0;
  while ((1 << m) < n) ++m;
  return m;
}

// Scratch doubles the NearSum path needs at most for ns x nt products.
XN_HD int entry_terms_needed(int ns, int nt) { return 2 * ns * nt + 2; }

// The exact terms of one entry from the slice engine: X = sum x_t 2^(k_t)
// with x_t the slice products (integers below 2^53 in magnitude) and
// k_t = e_i + f_j - (r + q + 2) w. Every engine hands its entry to
// round_exact_terms in this form:
//   int count()     most terms (nonzero ones are visited)
//   int k_top()     an exponent >= every k_t (the window's anchor)
//   int k_bottom()  an exponent <= every k_t
//   each(f)         f(x_t, k_t) for every nonzero term, largest weight first
//   round_fast(alpha, beta, c, &r)  RN(alpha X + beta c) by the engine's own
//                   exact arithmetic where it can decide alone (finite
//                   nonzero alpha, finite beta c); false hands the entry to
//                   round_exact_terms
struct SliceTerms {
  EntryProducts P;
  int e_i, f_j, w;
  XN_HD int count() const { return P.ns * P.nt; }
  XN_HD int k_top() const { return e_i + f_j - 2 * w; }
  XN_HD int k_bottom() const {
    return e_i + f_j - (P.slices_a[P.ns - 1] + P.slices_b[P.nt - 1] + 2) * w;
  }
  // No rounding of its own: round_exact_terms sums the slice products.
  XN_HD bool round_fast(double, double, double, double *) const { return false; }
  template <class F>
  XN_HD void each(F &&f) const {
    for (int a = 0; a < P.ns; ++a)
      for (int b = 0; b < P.nt; ++b) {
        const double p = P(a, b);
        if (p != 0.0) f(p, e_i + f_j - (P.slices_a[a] + P.slices_b[b] + 2) * w);
      }
  }
};

// Row i of op(A) and column j of op(B) as read for one entry, with their
// exponent summaries: what the entry needs beyond its exact terms (an Inf
// or NaN among them, the sign of an exact-zero dot product, the direct
// terms below).
struct EntryOperands {
  VectorInfo ia, ib;
  const double *a;
  std::int64_t sa;
  const double *b;
  std::int64_t sb;
  std::int64_t k;
};

// The exact terms of one entry read straight from its operands, for an
// entry no engine's products cover (a graph-captured call's modular plan,
// whose moduli are fixed before the data is seen: modular_over_range).
// Each product a_p b_p = (ma mb) 2^(qa + qb) has a 106-bit integer
// significand, given as two integer doubles below 2^53: its high and low
// 53 bits. O(k) per entry; there are 2k terms, so round_exact_terms sums
// them in the wide accumulator unless k is tiny. Finite operands only
// (an Inf or NaN sends the entry to nonfinite_dot first).
struct DirectTerms {
  EntryOperands E;
  // (Capped: any count above the scratch capacity sends the sum to the wide
  // path, which needs no count.)
  XN_HD int count() const {
    if (E.ia.top == kNoTop || E.ib.top == kNoTop) return 0;
    return E.k < (std::int64_t(1) << 28) ? int(2 * E.k) : 1 << 29;
  }
  // q >= low - 52 and q <= top for any finite double's mantissa exponent q.
  XN_HD int k_top() const { return E.ia.top + E.ib.top + 53; }
  XN_HD int k_bottom() const { return E.ia.low + E.ib.low - 104; }
  XN_HD bool round_fast(double, double, double, double *) const { return false; }
  template <class F>
  XN_HD void each(F &&f) const {
    for (std::int64_t p = 0; p < E.k; ++p) {
      const Decoded x = decode(E.a[p * E.sa]), y = decode(E.b[p * E.sb]);
      if (x.zero || y.zero) continue;
      std::uint64_t hi = 0;
      const std::uint64_t lo = wide_detail::mul_64x64(x.mant, y.mant, hi);  // 106 bits
      const std::uint64_t top53 = (hi << 11) | (lo >> 53);
      const std::uint64_t low53 = lo & ((std::uint64_t(1) << 53) - 1);
      const bool neg = x.neg != y.neg;
      const int q = x.q + y.q;
      if (top53) f(neg ? -double(top53) : double(top53), q + 53);
      if (low53) f(neg ? -double(low53) : double(low53), q);
    }
  }
};

// Whether entry (i, j)'s exact integer product may exceed what the moduli
// of a modular plan hold: |X| < k 2^(span_i + span_j) (modular.h) needs
// 1 + ceil(log2 k) + span_i + span_j bits, the plan's moduli cover
// `cap_bits`. Never for a zero row or column (X = 0).
XN_HD bool modular_over_range(const VectorInfo &ia, const VectorInfo &ib, int log2_k,
                              int cap_bits) {
  if (ia.top == kNoTop || ib.top == kNoTop) return false;
  return 1 + log2_k + (ia.top - ia.low + 1) + (ib.top - ib.low + 1) > cap_bits;
}

// The wide path of round_exact_terms: alpha X + beta c in the long
// accumulator, rounded once (alpha = 0: no X; beta = 0: no c).
template <class Terms>
XN_HD double round_terms_wide(const Terms &T, double alpha, double beta, double c,
                                   bool *zero) {
  WideAccumulator acc;
  acc.clear();
  if (alpha != 0.0) T.each([&](double x, int k) { acc.add_product(alpha, x, k); });
  if (beta != 0.0) acc.add_product(beta, c, 0);
  *zero = acc.sign() == 0;
  return acc.round_to_double();
}

// RN(alpha X + beta c) for finite alpha, beta, c and finite X given by its
// exact terms (SliceTerms above, ModularTerms in modular.h): the exact value
// rounded once to the double grid (ties to even, gradual underflow, overflow
// to +-Inf). This is the library's one rounding of a finite result; both
// engines and both backends come through it. beta == 0 never reads c (pass
// 0). `scratch` holds `cap` doubles; *wide is set to true if the wide path
// was taken, *zero to true if the exact value is zero (then +0 is returned:
// the sign of an exact zero is the caller's, exact_entry).
template <class Terms>
XN_HD double round_exact_terms(const Terms &T, double alpha, double beta, double c,
                               double *scratch, int cap, bool *wide, bool *zero) {
  const bool has_x = alpha != 0.0 && T.count() > 0;
  const bool has_c = beta != 0.0 && c != 0.0;
  *wide = false;
  *zero = false;
  if (!has_x && !has_c) {
    *zero = true;
    return 0.0;
  }

  int alpha_exp = 0, c_exp = 0;
  double alpha_m = 0.0, bc_hi = 0.0, bc_lo = 0.0;
  if (has_x) {
    alpha_m = 2.0 * std::frexp(alpha, &alpha_exp);  // alpha = alpha_m 2^alpha_exp,
    --alpha_exp;                                    // alpha_m in [1, 2)
  }
  int beta_exp = 0;
  if (has_c) {
    const double bm = 2.0 * std::frexp(beta, &beta_exp);
    int ce = 0;
    const double cm = 2.0 * std::frexp(c, &ce);
    two_prod(bm, cm, bc_hi, bc_lo);  // exact: both in [1, 2)
    c_exp = beta_exp - 1 + ce - 1;
  }

  // Window: true value = scaled * 2^(G - Z).
  const int k_top = T.k_top();
  const int G = alpha_exp + k_top;
  int top = -1000000, bottom = 1000000;
  if (has_x) {
    top = 54;                               // |alpha_m * x_t| < 2 * 2^53
    bottom = -52 - (k_top - T.k_bottom());  // TwoProd's low part is a multiple of this
  }
  const int D = c_exp - G;  // the c term's exponent relative to the window
  if (has_c) {
    top = top > D + 2 ? top : D + 2;
    bottom = bottom < D - 104 ? bottom : D - 104;
  }
  const int n_max = 2 * T.count() + 2;
  const int headroom = ceil_log2_int(n_max + 2) + 4;
  const int Z = (1018 - headroom) - top;
  bool fits = bottom + Z >= -1074 && n_max <= cap;

  // The scaled terms, in the engine's order (largest weight first):
  // TwoProd(alpha_m, x_t) 2^(Z + k_t - k_top), then TwoProd(beta_m, c_m)
  // 2^(D+Z); zero parts are skipped.
  auto for_each_term = [&](auto &&sink) {
    if (has_x)
      T.each([&](double x, int k) {
        double h, l;
        two_prod(alpha_m, x, h, l);
        const int sh = Z + k - k_top;
        sink(std::ldexp(h, sh));
        if (l != 0.0) sink(std::ldexp(l, sh));
      });
    if (has_c) {
      sink(std::ldexp(bc_hi, D + Z));
      if (bc_lo != 0.0) sink(std::ldexp(bc_lo, D + Z));
    }
  };
  if (fits) {
    // Fast path (certificate before NearSum): cascaded TwoSum over the terms
    // as they are produced (Ogita, Rump, Oishi 2005, Sum2) leaves the exact
    // sum as sigma + sum(e_i); fl(sum e_i) is within B of sum(e_i), so with
    // (r, t) = TwoSum(sigma, fl(sum e_i)) the exact sum is r + t + err,
    // |err| <= B. If |t| + B is well inside half the smaller spacing of
    // doubles at r, r is the correctly rounded sum. Otherwise (near ties,
    // heavy cancellation) the terms are formed again into scratch and NearSum
    // decides. The certificate needs no scratch, so the usual case stays in
    // registers.
    double sigma = 0.0, qsum = 0.0, qabs = 0.0;
    int count = 0;
    auto feed = [&](double x) {
      double sum, err;
      two_sum(sigma, x, sum, err);
      sigma = sum;
      qsum += err;
      qabs += std::fabs(err);
      ++count;
    };
    for_each_term(feed);
    double r0, t0;
    two_sum(sigma, qsum, r0, t0);
    bool certified = false;
    if (qabs == 0.0 && t0 == 0.0) {
      certified = true;  // every TwoSum was exact: the sum is r0
    } else if (std::fabs(r0) >= 0x1p-1000) {
      // |error of fl(sum e_i)| <= gamma_{n-1} sum|e_i| <= 2 n u qabs (n u < 1/4).
      const double B = 2.0 * count * 0x1p-53 * qabs + count * 0x1p-1074;
      int ex = 0;
      std::frexp(r0, &ex);                                  // 2^(ex-1) <= |r0| < 2^ex
      const double spacing_low = std::ldexp(1.0, ex - 54);  // below 2^(ex-1)
      certified = std::fabs(t0) + 2.0 * B <= 0.25 * spacing_low;
    }
    double scaled = r0;
    if (!certified) {
      int n = 0;
      for_each_term([&](double x) { scratch[n++] = x; });
      scaled = near_sum(scratch, n);
    }
    if (scaled == 0.0) {  // the window holds no underflow: an exact zero
      *zero = true;
      return 0.0;
    }
    // scaled = RN53(exact sum in the window). Scaling back is exact, and
    // RN53 is the IEEE rounding, when the result is normal (or overflows:
    // RN53 reaches 2^1024 exactly from [2^1024 - 2^970, ...)), i.e. when
    // |scaled| >= 2^(-1022 - (G - Z)); that is decided here, on scaled,
    // before scaling back. A value RN53 rounded up to exactly 2^-1022 also
    // rounds there on the subnormal grid (it lies above the grid's midpoint
    // 2^-1022 - 2^-1075). Anything smaller lies in the subnormal range,
    // where rounding is at 2^-1074, not at 53 bits: scaling back would round
    // a second time (2^-1022 - 2^-1075 - 2^-1130 would become 2^-1022), so
    // it takes the wide path and is rounded once from the exact value.
    int ex = 0;
    std::frexp(scaled, &ex);  // 2^(ex-1) <= |scaled| < 2^ex
    if (ex - 1 + (G - Z) >= -1022) return std::ldexp(scaled, G - Z);
  }

  *wide = true;
  return round_terms_wide(T, has_x ? alpha : 0.0, has_c ? beta : 0.0, c, zero);
}

// The operands of entry (gi, gj) from the views of op(A) and op(B) (any view
// with p, cols, ld, trans: the core's MatView, the kernels' ExView) and
// their exponent summaries.
template <class View>
XN_HD EntryOperands entry_operands(const View &A, const View &B, const VectorInfo &ia,
                                   const VectorInfo &ib, std::int64_t gi, std::int64_t gj) {
  return EntryOperands{ia,
                       ib,
                       A.trans ? A.p + gi * A.ld : A.p + gi,
                       A.trans ? 1 : A.ld,
                       B.trans ? B.p + gj : B.p + gj * B.ld,
                       B.trans ? B.ld : 1,
                       A.cols};
}

// The IEEE value of sum_p a_p b_p when row a or column b holds an Inf or NaN
// (then no finite term matters): NaN if any term is NaN (NaN operand, 0*Inf)
// or if +Inf and -Inf terms meet, else the infinity.
XN_HD double nonfinite_dot(const EntryOperands &E) {
  bool pos = false, neg = false;
  for (std::int64_t p = 0; p < E.k; ++p) {
    const double x = E.a[p * E.sa], y = E.b[p * E.sb];
    if (std::isnan(x) || std::isnan(y)) return NAN;
    if (std::isinf(x) || std::isinf(y)) {
      if (x == 0.0 || y == 0.0) return NAN;
      ((x < 0) != (y < 0) ? neg : pos) = true;
    }
  }
  if (pos && neg) return NAN;
  return pos ? INFINITY : (neg ? -INFINITY : 0.0);
}

// The sign of a finite dot product whose exact value is zero: -0 exactly
// when every product a_p b_p is a zero of negative sign (IEEE 754-2019,
// §6.3: a sum is -0 only when all its addends are -0; exact cancellation
// gives +0). A row (or column) of zeros of one sign settles it from the
// summaries; otherwise the operands are read until a product that is not -0
// (at once for nearly all data).
XN_HD bool zero_dot_is_negative(const EntryOperands &E) {
  auto uniform = [](std::uint32_t s) { return s == kSignClear || s == kSignSet; };
  // All products are zeros; each is -0 iff the other operand's sign differs.
  const std::uint32_t sa = E.ia.signs, sb = E.ib.signs;
  if (E.ia.top == kNoTop && uniform(sa)) return sb == (sa ^ (kSignClear | kSignSet));
  if (E.ib.top == kNoTop && uniform(sb)) return sa == (sb ^ (kSignClear | kSignSet));
  for (std::int64_t p = 0; p < E.k; ++p) {
    const double x = E.a[p * E.sa], y = E.b[p * E.sb];
    if (x != 0.0 && y != 0.0) return false;  // a nonzero product: X = 0 cancelled
    if (std::signbit(x) == std::signbit(y)) return false;  // a +0 product
  }
  return true;
}

// exact_entry's case P = alpha X is NaN or an infinity (an Inf or NaN
// operand in the row or column, or alpha itself).
template <class Terms>
XN_HD double nonfinite_entry(const Terms &T, const EntryOperands &E, double alpha,
                                  bool x_nonfinite, bool q_special, double q_special_value,
                                  double *scratch, int cap, bool *wide) {
  double p;
  if (x_nonfinite) {
    p = alpha * nonfinite_dot(E);  // X is NaN or +-Inf, alpha != 0
  } else if (std::isnan(alpha)) {
    p = alpha;
  } else {
    // alpha = +-Inf, X finite: NaN when X is exactly zero, else the
    // infinity of sign(alpha) sign(X), however small X is (2^-1200 too).
    bool zero = false;
    const double x = round_exact_terms(T, 1.0, 0.0, 0.0, scratch, cap, wide, &zero);
    p = zero ? NAN : (std::signbit(x) ? -alpha : alpha);
  }
  // A finite Q changes no infinity; a special Q meets P in IEEE addition.
  return q_special ? p + q_special_value : p;
}

// Whether alpha X + beta c is a sum of finite exact reals, the case an
// engine's round_fast decides (exact_entry below reaches its general
// rounding for it after every IEEE special case): alpha finite and nonzero,
// no Inf or NaN in the row or the column, beta c finite (c = 0 unread when
// beta = 0).
XN_HD bool finite_exact_case(const VectorInfo &ia, const VectorInfo &ib, double alpha,
                             double beta, double c) {
  return alpha != 0.0 && std::isfinite(alpha) && ia.nonfinite == 0 && ib.nonfinite == 0 &&
         (beta == 0.0 || (std::isfinite(beta) && std::isfinite(c)));
}

// RN(beta c), BLAS's value where alpha = 0: 0 for beta = 0 (c unread by the
// caller), c itself for beta = 1 (reference BLAS leaves it untouched, so a
// signalling NaN stays signalling; 1 c would quiet it), else one IEEE product.
XN_HD double beta_times_c(double beta, double c) {
  return beta == 0.0 ? 0.0 : beta == 1.0 ? c : beta * c;
}

// C(i,j) under the library's IEEE contract (include/xngemm.h, xnExdgemm;
// docs/design.md, "IEEE contract"): BLAS first (alpha == 0 never reads A or
// B and gives RN(beta c); beta == 0 never reads C), then IEEE 754 applied to
// alpha X + beta c with X the exact dot product and every finite quantity
// exact, rounded once. X comes as an engine's exact terms (finite part) and
// the operands (E: Inf/NaN, the sign of a zero). `c_ptr` is read only if
// beta != 0. Returns the value to store; *wide as in round_exact_terms.
template <class Terms>
XN_HD double exact_entry(const Terms &T, const EntryOperands &E, double alpha, double beta,
                         const double *c_ptr, double *scratch, int cap, bool *wide) {
  *wide = false;
  const double c = beta != 0.0 ? *c_ptr : 0.0;
  double fast = 0.0;  // the engine's own exact rounding, where it decides
  if (finite_exact_case(E.ia, E.ib, alpha, beta, c) && T.round_fast(alpha, beta, c, &fast))
    return fast;
  if (alpha == 0.0) return beta_times_c(beta, c);
  const bool has_q = beta != 0.0;
  // Q = beta c. With an Inf or NaN operand its IEEE product is its exact
  // class (Inf * 0 = NaN); with finite ones Q is an exact real, which no
  // overflow of a double product may turn into an infinity.
  const bool q_special = has_q && !(std::isfinite(beta) && std::isfinite(c));
  const double q_special_value = beta * c;

  const bool x_nonfinite = E.ia.nonfinite != 0 || E.ib.nonfinite != 0;
  if (x_nonfinite || !std::isfinite(alpha))
    return nonfinite_entry(T, E, alpha, x_nonfinite, q_special, q_special_value, scratch,
                           cap, wide);
  // alpha finite and nonzero, X finite: P is an exact real.
  if (q_special) return q_special_value;  // Inf or NaN outweighs any finite P
  bool zero = false;
  const double r = round_exact_terms(T, alpha, beta, c, scratch, cap, wide, &zero);
  if (!zero) return r;
  // An exact zero. With Q nonzero, P + Q cancelled: +0. Otherwise X is
  // zero, P = alpha X a zero of sign(alpha) sign(X), and P + Q (Q a zero) is
  // -0 only if both are -0.
  if (has_q && c != 0.0) return 0.0;
  const bool p_neg = zero_dot_is_negative(E) != std::signbit(alpha);
  const bool q_neg = !has_q || std::signbit(beta) != std::signbit(c);
  return p_neg && q_neg ? -0.0 : 0.0;
}

}  // namespace xn::exact
