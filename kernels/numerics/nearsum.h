// nearsum.h - the double nearest to the exact sum of a vector of doubles
// (Rump-Ogita-Oishi NearSum), written once as __host__ __device__ code (XN_HD).
//
// Reference: S. M. Rump, T. Ogita, S. Oishi, "Accurate floating-point
// summation part II: Sign, K-fold faithful and rounding to nearest", SIAM J.
// Sci. Comput. 31(2):1269-1302, 2008 ("Part II"), Algorithm 7.3 (NearSum),
// built on Algorithm 3.3 (Transform with an initial value rho, including the
// restart when the running sum becomes zero) and Algorithm 6.2 (TransformK), and
// on part I of the same paper (SIAM J. Sci. Comput. 31(1):189-224, 2008,
// "Part I": ExtractVector, Transform, the stopping criterion of AccSum). The
// code below is our own; the comments name the paper's steps and variables.
// eps = 2^-53 is the paper's relative rounding error unit, eta = 2^-1074 the
// smallest positive (subnormal) double, realmin = 2^-1022 the smallest normal.
//
// API (namespace xn::exact):
//
//   double near_sum(double *p, int n)
//     The double nearest to s = p[0] + ... + p[n-1] (exact sum), ties to even,
//     with IEEE overflow: +-Inf when |s| >= 2^1024 - 2^970 (DBL_MAX plus half
//     an ulp). An exact zero sum (including n == 0 and all-(-0.0) input)
//     returns +0.0. p[0..n-1] is scratch: it is overwritten.
//   void two_sum(a, b, s, e)   s = fl(a + b), s + e == a + b exactly (Knuth).
//   void two_prod(a, b, p, e)  p = fl(a * b), p + e == a * b exactly (one FMA;
//                              exact as long as a * b does not underflow or
//                              overflow).
//
// Preconditions (not checked, no asserts, so that the device code is the same):
//   * every p[i] is finite (no Inf, no NaN);
//   * 0 <= n <= 2^24 - 4 (16,777,212; callers pass ~10-200 terms);
//   * IEEE binary64 arithmetic rounding to nearest-even (the default mode),
//     no -ffast-math or any other option that lets the compiler reassociate
//     or simplify additions (x87 extended precision is not supported). FMA
//     contraction is harmless here: every product is by a power of two
//     (exact) except two_prod's, whose product is never contracted (mul_rn).
//     GPUs never flush FP64 subnormals.
// Any magnitudes are allowed: subnormal terms, terms up to DBL_MAX and sums that
// overflow. Cost: O(n) per extraction level, no allocation, no recursion, a
// few dozen bytes of stack.
//
// How it works.
//  1. Main path (paper's domain): when max|p_i| <= 2^(1020 - M), M =
//     ceil(log2(n + 2)), the first extraction unit sigma_0 = 2^M *
//     2^ceil(log2 max|p_i|) <= 2^1020 is finite and |s| < 2^1020, so no
//     operation of the algorithm can overflow; this is exactly the paper's
//     Algorithm 7.3 (see near_sum_finish() for its steps). The paper proves
//     its results "also in the presence of underflow": all extractions are
//     exact with gradual underflow (a sum of multiples of eta that is below
//     2^-1021 in magnitude is exactly representable), and the stopping test
//     "sigma <= realmin" ends the extraction once everything left is exact.
//     Every sum of doubles is a multiple of eta, so a nonzero exact sum is
//     never below eta and an exact sum below 2^-1021 in magnitude is itself a
//     double: nothing rounds to zero, tiny sums are returned exactly, and ties
//     can occur only where the spacing of doubles is >= 2 eta.
//  2. Large path (max|p_i| > 2^(1020 - M), outside the paper's domain): the
//     terms are scaled by 2^-S (S = ceil(log2(n + 4)) + 4) into the paper's
//     domain. A term >= 2^(S-1021) in magnitude is a multiple of 2^c, c =
//     S - 1073, and scales exactly to a multiple of 2 eta. A smaller term p_i
//     is split exactly as p_i = h_i + l_i, h_i = 2^c floor(p_i / 2^c), l_i in
//     [0, 2^c): h_i scales exactly, and L = sum l_i (exact: a multiple of eta
//     below 2^-1021) is split again as L = 2^c floor(L / 2^c) + r, r in
//     [0, 2^c). The scaled vector V (n + 2 terms) is the n scaled terms, the
//     scaled 2^c floor(L / 2^c), and a sticky term eta if r > 0 (else 0), so
//     sum V = X + eta [r > 0] where s 2^-S = X + r 2^-S, X a multiple of
//     2 eta and r 2^-S in [0, 2 eta). Wherever the doubles are 4 eta apart
//     or more (magnitudes >= 2^-1020), rounding X + r 2^-S and X + eta give
//     the same double, as (X, X + 2 eta) holds no double and no midpoint.
//     Transform(V) tells which case holds: if its tau1 is >= 2^-1018 in
//     magnitude, |sum V| >= |tau1| / 2 >= 2^-1019 (Transform's stopping
//     criterion bounds tau2 and the remaining terms), NearSum(V) is finished
//     in the scaled domain and the result scaled back by 2^S (exact, or
//     +-Inf exactly when the correctly rounded sum overflows: IEEE overflow is
//     decided on the rounding with unbounded exponent, which is what the
//     scaled rounding computes). Otherwise the sum is tiny (< 2^(S-1016)),
//     every quantity Transform left is tiny too, and the error-free
//     transformation is undone exactly: the n + 2 remaining terms, tau1 and
//     tau2 scaled back by 2^S, plus r - 2^(S-1074) [r > 0] (removing the
//     sticky, adding the dropped r) form a vector of n + 5 tiny terms with
//     sum exactly s, summed by the main path.
#pragma once

#include <cfloat>
#include <cmath>

#include "numerics/hd.h"

namespace xn::exact {

// TwoSum (Knuth): s = fl(a + b) and s + e == a + b exactly, for any finite a, b
// whose sum does not overflow.
XN_HD void two_sum(double a, double b, double &s, double &e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// a * b rounded on its own. Error-free transformations need each operation
// rounded as written: a product the compiler contracts with the addition
// that follows into one FMA (nvcc's default -fmad=true) silently changes
// TwoSum's inputs. On the device the intrinsic is never contracted; host
// code is built with -ffp-contract=off (CMakeLists.txt), and so are the
// exact kernels with -fmad=false.
XN_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// TwoProd with one FMA: p = fl(a * b) and p + e == a * b exactly, provided
// a * b neither overflows nor underflows (|a * b| >= 2^-969 suffices).
XN_HD void two_prod(double a, double b, double &p, double &e) {
  p = mul_rn(a, b);
  e = fma(a, b, -p);
}

namespace nearsum_detail {

constexpr double kEta = 0x1p-1074;      // smallest positive double (paper's eta)
constexpr double kRealmin = 0x1p-1022;  // smallest normal double

// Which paths one call took (for the tests; pass nullptr otherwise).
struct Stats {
  int transforms;   // calls of Transform (first and TransformK calls)
  int restarts;     // zero-sum restarts inside Transform (t' == 0)
  int second_pass;  // NearSum needed TransformK on s - midpoint
  int ties;         // ... and s was exactly the midpoint
  int large;        // max|p| above the paper's domain: scaled path
  int large_tiny;   // ... and the sum was tiny: unscaled again
};

// The vector summed: a[0..na-1] followed by b[0..nb-1] (b: up to a few extra
// terms held by the caller, so the large path needs no extra scratch).
struct Terms {
  double *a;
  int na;
  double *b;
  int nb;
  XN_HD int size() const { return na + nb; }
  XN_HD double &operator[](int i) const { return i < na ? a[i] : b[i - na]; }
};

// Smallest M >= 0 with 2^M >= m.
XN_HD int ceil_log2(int m) {
  int k = 0;
  while ((1 << k) < m) ++k;
  return k;
}

// Smallest power of two >= mu, for finite mu > 0 (subnormal included).
XN_HD double next_power_two(double mu) {
  int e = 0;
  const double f = frexp(mu, &e);  // mu = f 2^e, f in [0.5, 1)
  return ldexp(1.0, f == 0.5 ? e - 1 : e);
}

XN_HD double max_abs(const Terms &p) {
  double mu = 0.0;
  for (int i = 0; i < p.size(); ++i) {
    const double a = fabs(p[i]);
    mu = a > mu ? a : mu;
  }
  return mu;
}

XN_HD double plain_sum(const Terms &p) {
  double acc = 0.0;
  for (int i = 0; i < p.size(); ++i) acc += p[i];
  return acc;
}

// Part II Algorithm 3.3 (Transform with rho; Part I Algorithm 4.1 plus the
// restart), error-free: on return tau1 + tau2 + sum(p) equals rho + sum(p) on
// entry, tau1 = fl(tau1 + tau2), and the stopping criterion of Part I
// Algorithm 4.5 (AccSum) holds: |tau1| >= 2^(2M) eps sigma or sigma <= realmin,
// with every remaining |p_i| <= eps sigma.
//
// resume == false: the standard call. mu = max|p_i|; mu == 0 returns tau1 =
// rho, tau2 = 0, sigma = 0, M = 0; else M = ceil(log2(n + 2)) and sigma_0 =
// 2^M 2^ceil(log2 mu).
// resume == true: the call of TransformK with known sigma and M from a
// previous Transform of the same (transformed) vector (NearSum's second
// pass; INTLAB's Transform(p, rho, 0, sigma, Ms)): extraction continues at
// sigma_0 = 2^M eps sigma, the next unit below the previous stop (|p_i| <=
// eps sigma = 2^-M sigma_0 already holds).
//
// The loop (paper's repeat-until, with kPhi = 0, Phi = 2^(2M) eps):
//   t' = rho
//   repeat
//     t = t'; sigma = sigma'
//     [tau, p] = ExtractVector(sigma, p)   (Part I Alg. 3.3: q_i = fl((sigma +
//                                           p_i) - sigma), p_i = p_i - q_i,
//                                           tau = sum q_i, all exact)
//     t' = fl(t + tau)
//     if t' = 0: restart: Transform(p, 0)  (the part extracted so far sums to
//                                           exactly zero; start over on the
//                                           remaining vector; a loop here)
//     sigma' = 2^M eps sigma
//   until |t'| >= 2^(2M) eps sigma or sigma <= 1/2 eps^-1 eta (= realmin)
//   [tau1, tau2] = FastTwoSum(t, tau)
XN_HD void transform(const Terms &p, double rho, bool resume, double &sigma, int &M,
                     double &tau1, double &tau2, Stats *st) {
  if (st) ++st->transforms;
  const int n = p.size();
  for (;;) {  // one pass per (re)start
    double sig;
    if (resume) {
      if (sigma == 0.0) {  // previous Transform saw only zeros: p is all zero
        tau1 = rho;
        tau2 = 0.0;
        return;
      }
      sig = ldexp(sigma, M - 53);  // 2^M eps sigma
    } else {
      const double mu = max_abs(p);
      if (mu == 0.0) {
        tau1 = rho;
        tau2 = 0.0;
        sigma = 0.0;
        M = 0;
        return;
      }
      M = ceil_log2(n + 2);
      sig = ldexp(next_power_two(mu), M);
    }
    double t = rho;
    for (;;) {
      double tau = 0.0;  // ExtractVector(sig, p)
      for (int i = 0; i < n; ++i) {
        const double q = (sig + p[i]) - sig;
        p[i] = p[i] - q;
        tau += q;
      }
      const double tn = t + tau;  // t'
      if (tn == 0.0) break;       // restart below
      if (fabs(tn) >= ldexp(sig, 2 * M - 53) || sig <= kRealmin) {
        tau1 = tn;  // FastTwoSum(t, tau)
        tau2 = tau - (tn - t);
        sigma = sig;
        return;
      }
      t = tn;
      sig = ldexp(sig, M - 53);
    }
    // t' == 0: Transform(p, 0) on the remaining vector.
    if (st) ++st->restarts;
    rho = 0.0;
    resume = false;
  }
}

XN_HD double pred(double x) { return nextafter(x, -DBL_MAX); }
XN_HD double succ(double x) { return nextafter(x, DBL_MAX); }

// Part II Algorithm 7.3 (NearSum) after its first Transform (p already
// transformed: s = tau1 + tau2 + sum p). Requires the paper's domain (no
// overflow anywhere: |s| < 2^1020 and sigma finite).
//   tau2' = fl(tau2 + sum p_i)
//   [res, delta] = FastTwoSum(tau1, tau2')     res = AccSum(p), faithful
//   if delta = 0: return res                    (res = fl(s))
//   R = fl(tau2 - (res - tau1))                 s - res = R + sum p_i exactly
//   if delta < 0:                               fl(s) in {pred(res), res}
//     gamma = pred(res) - res
//     if gamma = -eta: return res               (s = res: no double between)
//     delta' = gamma / 2                        mu = res + delta' = midpoint
//     delta'' = TransformK(p, R - delta')       faithful, sign(s - mu)
//     delta'' > 0: res;  delta'' < 0: pred(res);  delta'' = 0: fl(res + delta')
//   else symmetric with succ(res):
//     delta'' > 0: succ(res);  delta'' < 0: res;  delta'' = 0: fl(res + delta')
// On a tie (delta'' = 0) fl(res + delta') is the exact midpoint rounded by the
// hardware: ties to even.
XN_HD double near_sum_finish(const Terms &p, double tau1, double tau2, double sigma,
                             int M, Stats *st) {
  const double tau2s = tau2 + plain_sum(p);
  const double res = tau1 + tau2s;
  const double delta = tau2s - (res - tau1);
  if (delta == 0.0) return res;
  const double R = tau2 - (res - tau1);
  const bool below = delta < 0.0;
  const double nb = below ? pred(res) : succ(res);
  const double gamma = nb - res;
  if (fabs(gamma) == kEta) return res;
  const double deltas = 0.5 * gamma;
  if (st) ++st->second_pass;
  // TransformK(p, R - delta', sigma, M): res' = fl(tau1' + fl(tau2' + sum p)).
  double t1 = 0.0, t2 = 0.0, sig2 = sigma;
  int M2 = M;
  transform(p, R - deltas, true, sig2, M2, t1, t2, st);
  const double deltass = t1 + (t2 + plain_sum(p));
  if (deltass == 0.0) {
    if (st) ++st->ties;
    return res + deltas;
  }
  if (below) return deltass > 0.0 ? res : nb;
  return deltass > 0.0 ? nb : res;
}

// NearSum in the paper's domain: max|p_i| <= 2^(1020 - ceil(log2(n + 2))).
XN_HD double near_sum_main(const Terms &p, Stats *st) {
  double sigma = 0.0, tau1 = 0.0, tau2 = 0.0;
  int M = 0;
  transform(p, 0.0, false, sigma, M, tau1, tau2, st);
  return near_sum_finish(p, tau1, tau2, sigma, M, st);
}

// max|p_i| > 2^(1020 - ceil(log2(n + 2))): see "Large path" above.
XN_HD double near_sum_large(double *p, int n, Stats *st) {
  if (st) ++st->large;
  const int S = ceil_log2(n + 4) + 4;  // V has n + 2 terms
  const int c = S - 1073;              // split unit 2^c; 2^(c - S) = 2 eta
  const double small_bound = ldexp(1.0, c + 52);
  double L = 0.0;  // sum of the low parts l_i, exact (< n 2^c <= 2^-1021)
  for (int i = 0; i < n; ++i) {
    if (fabs(p[i]) >= small_bound) {
      p[i] = ldexp(p[i], -S);  // a multiple of 2^c: exact
    } else {
      const double hq = floor(ldexp(p[i], -c));  // |hq| <= 2^52
      L += p[i] - ldexp(hq, c);                  // l_i in [0, 2^c), exact
      p[i] = ldexp(hq, -1073);                   // h_i 2^-S, exact
    }
  }
  const double Lq = floor(ldexp(L, -c));  // < n
  const double r = L - ldexp(Lq, c);      // in [0, 2^c)
  double x[5];
  x[0] = ldexp(Lq, -1073);
  x[1] = r > 0.0 ? kEta : 0.0;  // sticky
  const Terms V{p, n, x, 2};
  double sigma = 0.0, tau1 = 0.0, tau2 = 0.0;
  int M = 0;
  transform(V, 0.0, false, sigma, M, tau1, tau2, st);
  if (fabs(tau1) >= 0x1p-1018)
    return ldexp(near_sum_finish(V, tau1, tau2, sigma, M, st), S);
  // Tiny sum: undo the scaling of the error-free transformation exactly.
  if (st) ++st->large_tiny;
  for (int i = 0; i < V.size(); ++i) V[i] = ldexp(V[i], S);
  x[2] = ldexp(tau1, S);
  x[3] = ldexp(tau2, S);
  x[4] = r > 0.0 ? r - ldexp(1.0, S - 1074) : 0.0;
  return near_sum_main(Terms{p, n, x, 5}, st);
}

XN_HD double near_sum_impl(double *p, int n, Stats *st) {
  if (n <= 0) return 0.0;
  const Terms all{p, n, nullptr, 0};
  const double mu = max_abs(all);
  const double res = mu <= ldexp(1.0, 1020 - ceil_log2(n + 2)) ? near_sum_main(all, st)
                                                               : near_sum_large(p, n, st);
  return res == 0.0 ? 0.0 : res;  // an exact zero is +0.0
}

}  // namespace nearsum_detail

// The double nearest to the exact sum p[0] + ... + p[n-1] (ties to even, +-Inf
// on overflow, +0.0 for an exact zero). p is overwritten. Preconditions: see
// the top of this file (finite terms, n <= 2^24 - 4, IEEE round to nearest).
XN_HD double near_sum(double *p, int n) {
  return nearsum_detail::near_sum_impl(p, n, nullptr);
}

}  // namespace xn::exact
