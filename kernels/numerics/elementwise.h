// elementwise.h - the elementwise numerics of the recursive schedules, written
// once as __host__ __device__ functions. The CPU backend's loops and the CUDA
// kernels call exactly these, so CI (no GPU) tests the arithmetic the GPU runs.
#pragma once

#include <cmath>

#include "numerics/hd.h"

namespace xn {

// What a scale factor is known to be when the step is planned. The schedule
// executor only ever needs 0 (first write of a temporary), 1 (accumulation)
// or the caller's beta (first write of a quadrant of C).
enum class ScalarKind : int { Zero = 0, One = 1, User = 2 };

// Sum and difference of two operands (the pre-additions S = X +/- Y,
// T = X +/- Y of Badin et al., ICS'13, Table 1).
template <class T>
XN_HD T ew_add(T x, T y) {
  return x + y;
}
template <class T>
XN_HD T ew_sub(T x, T y) {
  return x - y;
}

// Explicitly single-rounded multiply-add in the operand's own precision
// (fmaf for float: a double fma followed by a conversion would round twice).
XN_HD float xn_fma(float a, float b, float c) { return fmaf(a, b, c); }
XN_HD double xn_fma(double a, double b, double c) { return fma(a, b, c); }

// d <- x + beta * d, the "store into C" step. beta == 0 never reads d (BLAS:
// C need not hold a number when beta is 0), beta == 1 is a plain addition, so
// the only rounding is that of the addition. A general beta uses one fused
// multiply-add on both backends, so the CPU and the GPU round identically.
template <class T>
XN_HD T ew_fold(T x, T beta, T d) {
  if (beta == T(0)) return x;
  if (beta == T(1)) return x + d;
  return xn_fma(beta, d, x);
}

// One target of a fused elementwise step (core/executor.h, CombineOp): the
// signed sum of the source values whose coefficient (+1 or -1) is nonzero,
// added left to right in source order. The schedule's order of summation is
// the order its text writes each target's expression in
// (core/schedule.h). Each term is sign * v with sign = +-1, an exact
// negation, so the first term is v or -v and every later one r + v or
// r - v bit for bit (x - y is x + (-y) in IEEE arithmetic; a contraction
// of r + sign * v into one fma is exact too): ew_combine below, one value
// at a time (the GPU kernel), and the CPU backend's column loops over
// ew_combine_first / ew_combine_next give the same bits (tested, NaN's sign
// aside).
template <class T>
XN_HD T ew_combine_first(T sign, T v) {
  return sign * v;
}
template <class T>
XN_HD T ew_combine_next(T r, T sign, T v) {
  return r + sign * v;
}
template <class T>
XN_HD T ew_combine(const T *v, const signed char *coef, int n) {
  T r = T(0);
  bool started = false;
  for (int s = 0; s < n; ++s) {
    if (coef[s] == 0) continue;
    if (!started)
      r = coef[s] > 0 ? v[s] : -v[s];
    else
      r = coef[s] > 0 ? ew_add(r, v[s]) : ew_sub(r, v[s]);
    started = true;
  }
  return r;
}

// d <- beta * d, the quick return for alpha == 0 or k == 0 (BLAS semantics:
// beta == 0 sets d to zero without reading it; beta == 1 leaves d as it is,
// a signalling NaN included, which 1 d would quiet).
template <class T>
XN_HD T ew_scale(T beta, T d) {
  return beta == T(0) ? T(0) : beta == T(1) ? d : beta * d;
}

// True for an entry that breaks the non-negative contract. NaN is not
// negative: it propagates through either algorithm.
template <class T>
XN_HD bool ew_is_negative(T x) {
  return x < T(0);
}

// What an operand's entry holds that a routine may refuse, as bits to OR
// over a matrix: a negative number (ew_is_negative: -Inf is, NaN and -0 are
// not) and a NaN or Inf (which the recursive algorithms spread to more
// entries than the classical product does).
enum EntryFlags : int { kEntryNegative = 1, kEntryNonFinite = 2 };
template <class T>
XN_HD int ew_entry_flags(T x) {
  return (ew_is_negative(x) ? kEntryNegative : 0) | (x - x == T(0) ? 0 : kEntryNonFinite);
}

}  // namespace xn
