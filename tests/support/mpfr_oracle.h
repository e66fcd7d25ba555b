// mpfr_oracle.h - an exact GEMM reference for the accuracy suites.
//
// Every entry of alpha * op(A) * op(B) + beta * C0 is computed exactly with
// MPFR (each operation's ternary value is checked, and the entry is redone at
// a precision that covers the whole exponent range of the type if any was
// inexact), then rounded once to a double-double. Errors of float and double
// results can then be measured without any error in the reference itself
// (Mukunoki et al., PMAA'18 check against MPFR at 2048 bits for the same reason).
#pragma once

#include <cstdint>
#include <vector>

namespace xn_test {

struct ExactEntry {
  // hi = the double nearest to the exact value, lo = the double nearest to
  // (exact - hi): hi + lo is the exact value to about 2^-106 relative.
  double hi, lo;
  // (|alpha| sum_p |op(A)(i,p)| |op(B)(p,j)| + |beta| |C0(i,j)|), rounded to
  // double: the scale of componentwise error bounds.
  double magnitude;
};

// The exact (i, j) entry of alpha op(A) op(B) + beta C0, column-major, ta/tb =
// stored transposed. BLAS semantics: beta == 0 never reads C0 (it may hold
// NaN) and alpha == 0 never reads A or B. Non-finite inputs give the value of
// the exact extended-real computation (Inf * 0 = NaN, Inf - Inf = NaN).
template <class T>
ExactEntry exact_gemm_entry(bool ta, bool tb, std::int64_t k, T alpha, const T *A,
                            std::int64_t lda, const T *B, std::int64_t ldb, T beta,
                            const T *C0, std::int64_t ldc, std::int64_t i,
                            std::int64_t j);

// All m x n entries into `out` (column-major, ld = m). Runs over columns with
// OpenMP, one set of MPFR variables per thread.
template <class T>
void exact_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                const T *A, std::int64_t lda, const T *B, std::int64_t ldb, T beta,
                const T *C0, std::int64_t ldc, std::vector<ExactEntry> &out);

// |c - exact| without cancellation in the subtraction: c - hi is exact for
// the c and hi that matter here (Sterbenz, as they are close), so the only
// rounding is that of the final addition of lo.
double abs_error(double c, const ExactEntry &e);

}  // namespace xn_test
