// error_bound.h - a first-order, rigorous normwise error bound for the
// recursive GEMMs of our exact schedules (xn?gemmStrassen, xn?gemmWinograd),
// computed mechanically from the tables.
//
// This is Brent's forward error analysis of Strassen-like algorithms
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section
// 23.2.2) carried out over the table the executor runs instead of by hand,
// so that it follows every fused step, its summation order and the use of C
// as scratch exactly. Units: magnitudes in |alpha| max|op(A)| max|op(B)|,
// errors in u times that (u the unit roundoff); everything below is first
// order in u (the O(u^2) terms are dropped).
//
// Every value v of a table gets (M, E): |v| <= M, |v^ - v| <= E u.
//  * Quadrants of op(A) and op(B): (1, 0).
//  * A Combine target summed left to right over its n nonzero terms
//    (ew_combine): M = sum M_s, E = sum E_s + sum_{j=2..n} sum_{i<=j} M_i
//    (each addition rounds once, relative to its partial sum's bound; a
//    negation is exact). A first write of a quadrant of C under a nonzero
//    beta adds beta*old by one fma (ew_fold): E += M + Mold, M += Mold,
//    with Mold = |beta| max|C0| in the units above (C0 itself is exact).
//  * A Product of X and Y at a level whose inner dimension is k_l (factors
//    of inner dimension h = k_l / 2): M = h Mx My and
//    E = h (Mx Ey + Ex My) + F(level + 1) Mx My, where F(l) is the largest
//    E over the quadrants of C of the table that runs at level l (with
//    beta = 0) for unit inputs, and F(leaf) = h^2 (+ h when alpha is not a
//    power of two: OpenBLAS rounds alpha * sum once more), the classical
//    bound gamma_h |X||Y| <= h^2 to first order, for any summation order.
// The bound of the core is the largest E over the four quadrants of C of
// the top level's table (the any-beta table when beta != 0).
//
// Peeling (core/executor.h, recursive_gemm), each part a classical product
// counted for any summation order: n terms summed in any tree take n - 1
// additions, each rounding relative to at most the sum of |terms|.
//  * The k-strip adds ks = k - k_core products into the core's value
//    (|value| <= k_core + Mold): ks additions of partial sums at most
//    ks + k_core + Mold, ks product roundings (each of one term) and ks of
//    alpha: E_core + ks (ks + k_core + Mold + 1 + [alpha]).
//  * The bottom rows and right columns: one classical GEMM over all of k
//    with beta: k additions of partial sums at most k + Mold, k product and
//    k alpha roundings and beta * c's: (k + 1)(k + Mold) + [alpha] k, or
//    k^2 + [alpha] k with beta = 0 (C0 is not read, the first term lands on
//    an exact 0).
// The result: max|C - C^| <= E u |alpha| max|op(A)| max|op(B)| + O(u^2).
//
// Only tables whose products assign (never "+=") and whose products never
// make the first write of a quadrant of C under a nonzero beta are handled:
// true of the Strassen and Winograd tables; others throw.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/plan.h"
#include "core/schedule.h"

namespace xn_test {

// |v| <= m and |v^ - v| <= e u, in the units above.
struct ValueBound {
  double m = 0, e = 0;
};

// The four quadrants of C after a table ran.
struct TableBound {
  ValueBound c[4];
  double max_e() const {
    return std::max(std::max(c[0].e, c[1].e), std::max(c[2].e, c[3].e));
  }
};

// One level of `tab` whose products have inner dimension h, each product
// below with error f_below (unit inputs). With beta_nonzero, the first write
// of each quadrant of C adds beta * C0, |beta C0| <= mold.
inline TableBound table_bound(const xn::Schedule &tab, double h, double f_below,
                              bool beta_nonzero, double mold) {
  constexpr int kOperands = static_cast<int>(xn::Operand::None);
  ValueBound v[kOperands];
  bool set[kOperands] = {};
  for (int q = 0; q < 4; ++q) {
    const int a = static_cast<int>(xn::Operand::A11) + q;
    const int b = static_cast<int>(xn::Operand::B11) + q;
    v[a] = v[b] = ValueBound{1, 0};
    set[a] = set[b] = true;
  }
  auto read = [&](xn::Operand o) {
    if (!set[static_cast<int>(o)])
      throw std::invalid_argument(tab.name + ": reads an unset operand");
    return v[static_cast<int>(o)];
  };
  for (const xn::Step &st : tab.steps) {
    if (st.kind == xn::StepKind::Product) {
      // Accumulating products or products under the caller's beta would
      // carry an old value through the recursion: not modelled.
      if (st.accumulate || (st.c_first[0] && beta_nonzero))
        throw std::invalid_argument(tab.name + ": a product adds into its target");
      const ValueBound x = read(st.src[0]), y = read(st.src[1]);
      const int d = static_cast<int>(st.dst[0]);
      v[d] = ValueBound{h * x.m * y.m, h * (x.m * y.e + x.e * y.m) + f_below * x.m * y.m};
      set[d] = true;
      continue;
    }
    // Every source is read before any target is written.
    ValueBound out[xn::kMaxDst];
    for (int d = 0; d < st.ndst; ++d) {
      double m = 0, e = 0;
      int terms = 0;
      for (int s = 0; s < st.nsrc; ++s) {
        if (st.coef[d][s] == 0) continue;
        const ValueBound x = read(st.src[s]);
        m += x.m;
        e += x.e;
        if (++terms >= 2) e += m;  // this addition rounds relative to m
      }
      if (st.c_first[d] && beta_nonzero) {  // ew_fold: one fma
        m += mold;
        e += m;
      }
      out[d] = ValueBound{m, e};
    }
    for (int d = 0; d < st.ndst; ++d) {
      v[static_cast<int>(st.dst[d])] = out[d];
      set[static_cast<int>(st.dst[d])] = true;
    }
  }
  TableBound r;
  for (int q = 0; q < 4; ++q)
    r.c[q] = read(static_cast<xn::Operand>(int(xn::Operand::C11) + q));
  return r;
}

// A classical product of inner dimension k (OpenBLAS, any summation order),
// with (beta_nonzero) or without beta * C0, |beta C0| <= mold.
inline double classical_bound(double k, bool beta_nonzero, double mold,
                              bool alpha_exact) {
  const double alpha_rounds = alpha_exact ? 0 : k;
  if (k <= 0) return beta_nonzero ? mold : 0;  // C = beta * C, one rounding
  if (!beta_nonzero) return k * k + alpha_rounds;
  return (k + 1) * (k + mold) + alpha_rounds;
}

// F: the error of `depth` levels of algo's beta = 0 tables over classical
// leaves, for a product of inner dimension k and unit inputs. A level below
// the top may run either table with beta = 0 (plan.h, level_table, by
// shape): the larger of the two.
inline double recursion_bound(const xn::GemmAlgorithm &algo, int depth, double k,
                              bool alpha_exact) {
  if (depth <= 0) return classical_bound(k, false, 0, alpha_exact);
  const double f = recursion_bound(algo, depth - 1, k / 2, alpha_exact);
  return std::max(table_bound(*algo.zero_beta, k / 2, f, false, 0).max_e(),
                  table_bound(*algo.any_beta, k / 2, f, false, 0).max_e());
}

// max|C - C^| <= fastgemm_error_bound(...) u |alpha| max|op(A)| max|op(B)|
// (+ O(u^2)) for C = alpha op(A) op(B) + beta C0, m x n x k, run by
// xn::recursive_gemm at `levels` levels with OpenBLAS leaves (peeling
// included). beta_nonzero: beta != 0 (the any-beta table runs at the top);
// beta_c0 = |beta| max|C0| / (|alpha| max|op(A)| max|op(B)|); alpha_exact:
// alpha is a power of two (or +-1), so alpha * sum does not round.
inline double fastgemm_error_bound(const xn::GemmAlgorithm &algo, int levels,
                                   std::int64_t m, std::int64_t n, std::int64_t k,
                                   bool beta_nonzero, double beta_c0,
                                   bool alpha_exact = false) {
  const double mold = beta_nonzero ? beta_c0 : 0;
  if (m <= 0 || n <= 0) return 0;
  if (levels <= 0 || k == 0)
    return classical_bound(double(k), beta_nonzero, mold, alpha_exact);
  const xn::CoreShape c = xn::core_shape(m, n, k, levels);
  double e = 0;
  if (c.m > 0 && c.n > 0) {
    const double h = double(c.k) / 2;
    const double f = recursion_bound(algo, levels - 1, h, alpha_exact);
    e = table_bound(algo.table_for(beta_nonzero), h, f, beta_nonzero, mold).max_e();
    if (!beta_nonzero)  // either table may run (plan.h, level_table)
      e = std::max(e, table_bound(*algo.any_beta, h, f, false, 0).max_e());
    const double ks = double(k - c.k);
    if (ks > 0) e += ks * (ks + double(c.k) + mold + 1 + (alpha_exact ? 0 : 1));
  }
  if (c.m < m || c.n < n)
    e = std::max(e, classical_bound(double(k), beta_nonzero, mold, alpha_exact));
  return e;
}

// Higham, ASNA 2nd ed., section 23.2.2: the textbook constants for square
// n = n0 2^L with classical leaves of size n0 (beta = 0, alpha = 1).
inline double textbook_strassen_bound(double n, double n0) {
  return std::pow(n / n0, std::log2(12.0)) * (n0 * n0 + 5 * n0) - 5 * n;
}
inline double textbook_winograd_bound(double n, double n0) {
  return std::pow(n / n0, std::log2(18.0)) * (n0 * n0 + 6 * n0) - 6 * n;
}

}  // namespace xn_test
