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
// doubt; for the rest (near a tie, heavy cancellation, an Inf or NaN,
// products outside the range where TwoProd is exact, subnormal or huge
// results) exact_dot_entry computes the value exactly from the operands
// under xnExdgemm's IEEE contract (exdgemm_entry.h, exact_entry). Either
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
  std::uint32_t trouble;  // nonzero: the bound does not hold (see dot2_add)
  std::uint32_t pad_;
};

XN_HD void dot2_clear(Dot2 &d) {
  d.s = 0.0;
  d.c = 0.0;
  d.cabs = 0.0;
  d.trouble = 0;
  d.pad_ = 0;
}

// Products below this (and not exactly zero) may have an inexact TwoProd
// low part; above kDot2MaxProduct sums of 2^20 of them could overflow.
constexpr double kDot2MinProduct = 0x1p-968;
constexpr double kDot2MaxProduct = 0x1p1000;

// d += a * x. Sets d.trouble when the product is NaN or infinite, larger
// than kDot2MaxProduct, or nonzero factors give a product below
// kDot2MinProduct (TwoProd may then be inexact).
XN_HD void dot2_add(Dot2 &d, double a, double x) {
  const double p = a * x;
  const double e = fma(a, x, -p);
  const double ap = std::fabs(p);
  double s, t;
  two_sum(d.s, p, s, t);
  d.s = s;
  d.c += t + e;
  d.cabs += std::fabs(t) + std::fabs(e);
  d.trouble |= static_cast<std::uint32_t>(!(ap <= kDot2MaxProduct)) |
               static_cast<std::uint32_t>(ap < kDot2MinProduct && a != 0.0 && x != 0.0);
}

// d += other (one TwoSum: exact while the sums stay finite).
XN_HD void dot2_merge(Dot2 &d, const Dot2 &other) {
  double s, t;
  two_sum(d.s, other.s, s, t);
  d.s = s;
  d.c += other.c + t;
  d.cabs += other.cabs + std::fabs(t);
  d.trouble |= other.trouble;
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

// RN(alpha X + beta c) from a finished accumulation of `ops` TwoSums, when
// the bound decides it: returns true with *out set. BLAS first: alpha == 0
// gives RN(beta c) (0 when beta == 0; c unread then). Returns false (the
// caller then calls exact_dot_entry) for trouble, Inf or NaN in alpha, beta
// or c, an exact or near zero X, results outside [2^-1000, 2^1022], and
// values within the bound of a rounding boundary.
XN_HD bool dot2_round(const Dot2 &d, double ops, double alpha, double beta, double c,
                      double *out) {
  if (alpha == 0.0) {
    *out = beta != 0.0 ? beta * c : 0.0;
    return true;
  }
  if (d.trouble != 0 || !std::isfinite(alpha) || !std::isfinite(d.s) ||
      !std::isfinite(d.c) || !std::isfinite(d.cabs))
    return false;
  if (beta != 0.0 && !(std::isfinite(beta) && std::isfinite(c))) return false;
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

// The summary of n elements of a vector with stride inc (> 0 or < 0 as a
// signed element stride from p): exponent range, Inf/NaN, signs.
XN_HD VectorInfo vector_summary(const double *p, std::int64_t n, std::int64_t inc) {
  VectorInfo v;
  vector_info_init(v);
  for (std::int64_t i = 0; i < n; ++i) vector_info_add(v, decode(p[i * inc]));
  return v;
}

// RN(alpha sum_i a[i sa] b[i sb] + beta *c_ptr) under xnExdgemm's IEEE
// contract, exactly from the operands (the wide accumulator; O(n) per call,
// for the values dot2_round leaves). *c_ptr is read only when beta != 0.
XN_HD double exact_dot_entry(const double *a, std::int64_t sa, const double *b,
                             std::int64_t sb, std::int64_t n, double alpha, double beta,
                             const double *c_ptr) {
  if (alpha == 0.0) return beta != 0.0 ? beta * *c_ptr : 0.0;
  const EntryOperands E{vector_summary(a, n, sa), vector_summary(b, n, sb), a, sa, b, sb,
                        n};
  bool wide = false;
  return exact_entry(DirectTerms{E}, E, alpha, beta, c_ptr, nullptr, 0, &wide);
}

}  // namespace xn::exact
