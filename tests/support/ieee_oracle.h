// ieee_oracle.h - the exact IEEE reference of the correctly rounded DGEMM's
// contract (xnExdgemm, exdgemm_, cblas_exdgemm, xn::cpu_exdgemm): one double
// per entry, bit for bit, including the sign of zero and the class of
// Inf/NaN results.
//
// The special classes (NaN, +-Inf, signed zeros, the BLAS quick returns) are
// decided explicitly, rule by rule. A finite nonzero result is the exact real
// value rounded once to binary64 (to nearest, ties to even, gradual
// underflow, overflow at 2^1024 - 2^970), computed twice: with MPFR's own
// emulation of binary64 (exponent range, mpfr_check_range,
// mpfr_subnormalize) and with plain GMP integers. The two must agree bit for
// bit, or the oracle aborts: a wrong reference can never pass silently.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace xn_test {

// The contract's value of entry (i, j) of alpha op(A) op(B) + beta C0
// (column-major; ta/tb = stored transposed). k == 0 or alpha == 0 does not
// read A or B; beta == 0 does not read C0 (either may then be null).
double exact_gemm_entry_ieee(bool ta, bool tb, std::int64_t k, double alpha,
                             const double *A, std::int64_t lda, const double *B,
                             std::int64_t ldb, double beta, const double *C0,
                             std::int64_t ldc, std::int64_t i, std::int64_t j);

// All m x n entries into `out` (column-major, ld = m). Parallel over columns
// only where MPFR keeps its exponent range per thread (a TLS build).
void exact_gemm_ieee(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                     double alpha, const double *A, std::int64_t lda, const double *B,
                     std::int64_t ldb, double beta, const double *C0, std::int64_t ldc,
                     std::vector<double> &out);

// The rounding core, exposed for the oracle's self-test: the exact real
// sum over t of terms[t][0] * terms[t][1] * terms[t][2] (finite doubles),
// rounded once to binary64 by both implementations (cross-checked). An
// exact zero sum gives +0 (zero signs are the caller's rule to apply).
double round_sum_of_products(const std::vector<std::array<double, 3>> &terms);

// The same rounding by each implementation alone (for the self-test, which
// also checks that the two agree on random values near every boundary).
double round_sum_of_products_mpfr(const std::vector<std::array<double, 3>> &terms);
double round_sum_of_products_gmp(const std::vector<std::array<double, 3>> &terms);

// Finite roundings cross-checked so far by this process (all threads).
std::uint64_t ieee_oracle_cross_checks();

}  // namespace xn_test
