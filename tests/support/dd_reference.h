// dd_reference.h - double-double (hi + lo) arithmetic for reference results,
// written once as __host__ __device__ functions (XN_HD): the benchmark's CPU
// reference loops and its GPU reference kernels call exactly these.
//
//   two_sum(a, b)   TwoSum (Knuth): s = fl(a + b) and e with s + e == a + b
//                   exactly; no precondition on the order of |a|, |b|.
//   two_prod(a, b)  TwoProd with one fused multiply-add: p = fl(a * b) and
//                   e = fma(a, b, -p), so p + e == a * b exactly.
//   dd_add(x, y)    accurate double-double addition (QD's "ieee_add", Li et
//                   al.): relative error about 2 * 2^-104 of |x + y| (plus
//                   2^-104 * (|x| + |y|) under cancellation).
//   dd_dot(k, x, incx, y, incy)
//                   sum_p x[p*incx] * y[p*incy] with every product formed
//                   exactly (TwoProd) and accumulated in double-double. The
//                   error is about k * 2^-104 * sum_p |x_p| |y_p|, far below
//                   that of any float or double GEMM (about k * 2^-53 or
//                   k * 2^-24 times the same sum in the worst case).
//
// Preconditions: finite inputs and no overflow of a partial sum (a non-finite
// value turns the low part into NaN). Increments are element strides >= 0
// (the BLAS convention for negative increments is not supported). float
// inputs are widened to double first; a product of two floats is then exact.
//
// None of these functions may be compiled with -ffast-math or any other
// option that lets the compiler reassociate floating-point additions. FMA
// contraction is harmless: the only product is the explicit one in two_prod.
#pragma once

#include <cmath>
#include <cstdint>

#include "numerics/hd.h"

namespace xn {

// An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2 (after normalisation).
struct DD {
  double hi;
  double lo;
};

XN_HD DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return DD{s, e};
}

// Requires |a| >= |b| (or a == 0): three additions instead of six.
XN_HD DD fast_two_sum(double a, double b) {
  const double s = a + b;
  const double e = b - (s - a);
  return DD{s, e};
}

XN_HD DD two_prod(double a, double b) {
  const double p = a * b;
  const double e = fma(a, b, -p);
  return DD{p, e};
}

XN_HD DD dd_add(DD x, DD y) {
  DD s = two_sum(x.hi, y.hi);
  const DD t = two_sum(x.lo, y.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}

// hi + lo rounded to one double.
XN_HD double dd_to_double(DD a) { return a.hi + a.lo; }

// Four independent accumulators (terms p = 0, 1, 2, 3 mod 4) so that the
// loop is not one long chain of dependent additions; they are added at the
// end. Accuracy is that of one accumulator (each sees a quarter of the terms).
template <class T>
XN_HD DD dd_dot(std::int64_t k, const T *x, std::int64_t incx, const T *y,
                std::int64_t incy) {
  DD a0{0.0, 0.0}, a1{0.0, 0.0}, a2{0.0, 0.0}, a3{0.0, 0.0};
  std::int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const T *xp = x + p * incx;
    const T *yp = y + p * incy;
    a0 = dd_add(a0, two_prod(double(xp[0]), double(yp[0])));
    a1 = dd_add(a1, two_prod(double(xp[incx]), double(yp[incy])));
    a2 = dd_add(a2, two_prod(double(xp[2 * incx]), double(yp[2 * incy])));
    a3 = dd_add(a3, two_prod(double(xp[3 * incx]), double(yp[3 * incy])));
  }
  for (; p < k; ++p) a0 = dd_add(a0, two_prod(double(x[p * incx]), double(y[p * incy])));
  return dd_add(dd_add(a0, a1), dd_add(a2, a3));
}

}  // namespace xn
