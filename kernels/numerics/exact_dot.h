// exact_dot.h - correctly rounded dot products in one pass over their
// operands, for xnExdgemv and xnExddot (docs/design.md, "exdgemv and
// exddot: one pass"). Written once as __host__ __device__ code: the CUDA
// kernels and the CPU tests run exactly these functions.
//
// Each part of a dot product is accumulated as in Dot2 (Ogita, Rump, Oishi,
// SISC 2005, Algorithm 5.3): products split exactly by TwoProd, their high
// parts summed by TwoSum, every low part and every TwoSum error summed in a
// plain running sum, and their magnitudes in another. Parts merge in any
// (fixed) order by one more TwoSum. The result (s, c) carries a rigorous
// bound on |X - (s + c)| from the errors' magnitudes (below), and
// dot2_round decides RN(alpha X + beta y) from it when the bound leaves no
// doubt (Inf, NaN and exact zeros follow IEEE there, from the products'
// flags and the sign of d.s); for the rest (near a tie, heavy
// cancellation, products outside the range where TwoProd is exact,
// subnormal or huge results) exact_dot_entry computes the value exactly
// from the operands under xnExdgemm's IEEE contract (exdgemm_entry.h, exact_entry). Either
// way the value is the exact one rounded once, so the order of parts never
// shows in the bits.
//
// The bound. Let the n products be p_i + e_i exactly (TwoProd, exact while
// |fl(a b)| >= 2^-968 or a product is an exact zero, and |p_i| <= 2^1000),
// and let N >= n + (parts merged) count every TwoSum. The TwoSums are exact,
// so X = s + sum(t_j) + sum(e_i) exactly. The computed c is a sum of those
// at most 2N leaves in some tree, so |c - sum(leaves)| <= gamma_2N
// sum|leaves| (Higham, Accuracy and Stability, 2nd ed., eq. (4.4), any
// order); cabs, the computed sum of |leaves| in the same way, is at least
// (1 - gamma_2N) sum|leaves|. Hence |X - (s + c)| <= gamma_2N / (1 -
// gamma_2N) cabs <= 2.01 N u cabs for N u <= 2^-20 (a sum that lands in the
// subnormal range is exact, so gamma holds there too).
// dot2_error_bound returns 3 (N + 1) u cabs + (4 N + 4) 2^-1074, the last
// term a margin for the bound's own arithmetic near underflow. It
// follows the rounding errors that actually happened: zero when every
// product and sum was exact (integers, short sums), about sqrt(n) u |X|
// times n u for random data, where a bound from sum |p_i| alone would be
// sqrt(n) times larger and leave more values undecided.
#pragma once

#include <cmath>
#include <cstdint>

#include "numerics/exdgemm_entry.h"
#include "numerics/hd.h"
#include "numerics/nearsum.h"

namespace xn::exact {

// One part of a dot product (trivial type: lives in registers, shared or
// global memory).
struct Dot2 {
  double s;     // TwoSum-accumulated sum of the products' high parts
  double c;     // plain sum of the low parts and the TwoSum errors
  double cabs;  // plain sum of their magnitudes: the error bound's scale
  std::uint32_t flags;  // kDot2* below: what the products were besides finite
  std::uint32_t pad_;
};

// Dot2::flags. kDot2Uncovered: a product of finite factors outside the range
// where TwoProd is exact and sums cannot overflow (the bound does not hold;
// dot2_round declines). The others record the IEEE classes of products with
// an Inf or NaN factor, which decide X without the finite sum: a NaN factor
// or Inf * 0 makes X NaN, and so do infinite products of both signs.
constexpr std::uint32_t kDot2Uncovered = 1;
constexpr std::uint32_t kDot2NaN = 2;
constexpr std::uint32_t kDot2PosInf = 4;
constexpr std::uint32_t kDot2NegInf = 8;
constexpr std::uint32_t kDot2Nonfinite = kDot2NaN | kDot2PosInf | kDot2NegInf;

// s starts at -0: IEEE addition keeps it -0 exactly while every product
// added is -0 (-0 + -0 = -0; +0, a nonzero and any exact cancellation give
// +0 under round to nearest), so an exactly zero X carries IEEE 754's sign
// of the sum of its products (-0 only when all are -0) in d.s. Merging an
// empty part changes nothing.
XN_HD void dot2_clear(Dot2 &d) {
  d.s = -0.0;
  d.c = 0.0;
  d.cabs = 0.0;
  d.flags = 0;
  d.pad_ = 0;
}

// Products below this (and not exactly zero) may have an inexact TwoProd
// low part; above kDot2MaxProduct sums of 2^20 of them could overflow.
constexpr double kDot2MinProduct = 0x1p-968;
constexpr double kDot2MaxProduct = 0x1p1000;

// The flag of a product a x = p outside the covered range (dot2_add).
XN_HD std::uint32_t dot2_product_class(double a, double x, double p) {
  if (std::isfinite(a) && std::isfinite(x)) return kDot2Uncovered;
  if (std::isnan(p)) return kDot2NaN;  // a NaN factor, or Inf * 0
  return p > 0.0 ? kDot2PosInf : kDot2NegInf;
}

// d += a * x. A product that is not finite or lies outside [kDot2MinProduct,
// kDot2MaxProduct] (exact zeros excepted) sets its flag; the sums are
// meaningless then and dot2_round reads the flags first.
XN_HD void dot2_add(Dot2 &d, double a, double x) {
  double p, e;
  two_prod(a, x, p, e);
  double s, t;
  two_sum(d.s, p, s, t);
  d.s = s;
  d.c += t + e;
  d.cabs += std::fabs(t) + std::fabs(e);
  const double ap = std::fabs(p);
  if (!(ap <= kDot2MaxProduct) || (ap < kDot2MinProduct && a != 0.0 && x != 0.0))
    d.flags |= dot2_product_class(a, x, p);
}

// d += other (one TwoSum: exact while the sums stay finite).
XN_HD void dot2_merge(Dot2 &d, const Dot2 &other) {
  double s, t;
  two_sum(d.s, other.s, s, t);
  d.s = s;
  d.c += other.c + t;
  d.cabs += other.cabs + std::fabs(t);
  d.flags |= other.flags;
}

// The bound on |X - (d.s + d.c)| (file comment) for at most `ops` TwoSums
// (products plus merged parts).
XN_HD double dot2_error_bound(double cabs, double ops) {
  return 3.0 * (ops + 1.0) * 0x1p-53 * cabs + (4.0 * ops + 4.0) * 0x1p-1074;
}

// Half the spacing of doubles away from zero and toward zero at a normal,
// nonzero r (toward zero it halves at a power of two).
XN_HD void half_spacings(double r, double *away, double *toward) {
  int ex = 0;
  const double m = std::frexp(std::fabs(r), &ex);  // |r| = m 2^ex, m in [0.5, 1)
  *away = std::ldexp(1.0, ex - 54);
  *toward = m == 0.5 ? std::ldexp(1.0, ex - 55) : *away;
}

// RN(alpha X + beta c) for finite nonzero alpha, finite X (not exactly
// zero) and finite beta c, when the bound decides it (dot2_round).
XN_HD bool dot2_round_finite(const Dot2 &d, double ops, double alpha, double beta,
                             double c, double *out) {
  double h, l;
  two_sum(d.s, d.c, h, l);  // X = h + l + err, |err| <= bound
  if (h == 0.0) return false;
  const double bound = dot2_error_bound(d.cabs, ops);
  // alpha (h + l) + beta c as at most six exact doubles (each TwoProd exact
  // inside the range checked), summed by cascaded TwoSum into r + t with
  // the error of the plain sum of the TwoSum errors bounded as in the
  // file comment.
  double terms[6];
  int n = 0;
  auto push_product = [&](double a, double b) {
    double p, e;
    two_prod(a, b, p, e);
    terms[n++] = p;
    terms[n++] = e;
    const double ap = std::fabs(p);
    return ap <= kDot2MaxProduct && (ap >= kDot2MinProduct || a == 0.0 || b == 0.0);
  };
  bool exact = push_product(alpha, h) && push_product(alpha, l);
  if (beta != 0.0) exact = exact && push_product(beta, c);
  if (!exact) return false;
  double sigma = 0.0, q = 0.0, qabs = 0.0;
  for (int i = 0; i < n; ++i) {
    double sum, err;
    two_sum(sigma, terms[i], sum, err);
    sigma = sum;
    q += err;
    qabs += std::fabs(err);
  }
  double r, t;
  two_sum(sigma, q, r, t);
  const double ar = std::fabs(r);
  if (!(ar >= 0x1p-1000 && ar <= 0x1p1022)) return false;
  // Everything r + t may be off by: the terms' sum (6 terms, gamma_6 qabs)
  // and alpha times X's bound, each rounded up generously.
  const double slack = 8.0 * 0x1p-53 * qabs + 16.0 * 0x1p-1074 +
                       std::fabs(alpha) * bound * (1.0 + 0x1p-40);
  double away, toward;
  half_spacings(r, &away, &toward);
  const double t_away = r > 0.0 ? t : -t;  // t in the direction away from zero
  if (t_away + slack < away && t_away - slack > -toward) {
    *out = r;
    return true;
  }
  return false;
}

// RN(alpha X + beta c) from a finished accumulation of `ops` TwoSums, under
// xnExdgemm's IEEE contract (exdgemm_entry.h, exact_entry), when the parts
// decide it: returns true with *out set. BLAS first: alpha == 0 gives
// RN(beta c) (0 when beta == 0; c unread then). Inf and NaN (in the
// products' flags, alpha, beta or c) and an exactly zero X (no rounding
// error anywhere and d.s == 0, its sign in d.s) follow IEEE here. Returns
// false, for the caller's exact_dot_entry, on kDot2Uncovered (without an Inf
// or NaN product, which decides X alone), an X the bound
// cannot separate from zero, results outside [2^-1000, 2^1022], and values
// within the bound of a rounding boundary.
XN_HD bool dot2_round(const Dot2 &d, double ops, double alpha, double beta, double c,
                      double *out) {
  if (alpha == 0.0) {
    *out = beta_times_c(beta, c);
    return true;
  }
  const bool has_q = beta != 0.0;
  // Q = beta c: an Inf or NaN operand makes it its IEEE class; otherwise it
  // is an exact real (no overflow of the double product counts).
  const bool q_special = has_q && !(std::isfinite(beta) && std::isfinite(c));
  const double q_special_value = beta * c;
  // X exactly: every rounding error zero (cabs sums their magnitudes).
  const bool x_exact = d.cabs == 0.0;
  double p;  // P = alpha X, where it is Inf or NaN
  if ((d.flags & kDot2Nonfinite) != 0) {
    // An Inf or NaN product decides X whatever the finite ones are (their
    // exact sum is finite), uncovered ones included.
    const bool nan = (d.flags & kDot2NaN) != 0 ||
                     (d.flags & (kDot2PosInf | kDot2NegInf)) == (kDot2PosInf | kDot2NegInf);
    p = alpha * (nan ? NAN : ((d.flags & kDot2PosInf) != 0 ? INFINITY : -INFINITY));
  } else if ((d.flags & kDot2Uncovered) != 0) {
    return false;  // a finite X the bound does not cover
  } else if (std::isnan(alpha)) {
    p = alpha;
  } else if (std::isinf(alpha)) {
    // Inf times a finite X: NaN for X exactly zero, else the infinity of
    // sign(alpha) sign(X), however small X is; the sign must be certain.
    if (x_exact) {
      p = d.s == 0.0 ? NAN : (std::signbit(d.s) ? -alpha : alpha);
    } else {
      double h, l;
      two_sum(d.s, d.c, h, l);
      if (!(std::fabs(h) * (1.0 - 0x1p-50) > dot2_error_bound(d.cabs, ops))) return false;
      p = std::signbit(h) ? -alpha : alpha;
    }
  } else {
    // alpha finite and nonzero, X finite: P is an exact real.
    if (q_special) {
      *out = q_special_value;  // Inf or NaN outweighs any finite P
      return true;
    }
    if (x_exact && d.s == 0.0) {
      // X is exactly zero: RN(beta c), or with Q zero too the sign rule
      // (P + Q is -0 only when both are -0).
      if (has_q && c != 0.0) {
        *out = beta * c;
        return true;
      }
      const bool p_neg = std::signbit(d.s) != std::signbit(alpha);
      const bool q_neg = !has_q || std::signbit(beta) != std::signbit(c);
      *out = p_neg && q_neg ? -0.0 : 0.0;
      return true;
    }
    return dot2_round_finite(d, ops, alpha, beta, c, out);
  }
  // A finite Q changes no infinity; a special Q meets P in IEEE addition.
  *out = q_special ? p + q_special_value : p;
  return true;
}

// RN(alpha sum_i a[i sa] b[i sb] + beta *c_ptr) under xnExdgemm's IEEE
// contract, exactly from the operands (the wide accumulator; O(n) per call,
// for the values dot2_round leaves). *c_ptr is read only when beta != 0.
XN_HD double exact_dot_entry(const double *a, std::int64_t sa, const double *b,
                             std::int64_t sb, std::int64_t n, double alpha, double beta,
                             const double *c_ptr) {
  if (alpha == 0.0) return beta_times_c(beta, beta != 0.0 ? *c_ptr : 0.0);
  const EntryOperands E{vector_summary(a, n, sa), vector_summary(b, n, sb), a, sa, b, sb,
                        n};
  bool wide = false;
  return exact_entry(DirectTerms{E}, E, alpha, beta, c_ptr, nullptr, 0, &wide);
}

}  // namespace xn::exact
