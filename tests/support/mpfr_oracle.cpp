// mpfr_oracle.cpp - see mpfr_oracle.h.
//
// Exactness. Every MPFR operation returns a ternary value that is 0 exactly
// when its result was not rounded. An entry is first tried at a small
// precision (enough for inputs of moderate exponent range, e.g. uniform
// [0,1]: products of 53-bit fractions summed over k < 2^10 need < 128 bits);
// if any operation was inexact the entry is recomputed at kMaxPrec, which
// covers every finite input: for double, alpha * a * b is a multiple of
// 2^-3222 below 2^3072, so the sum of < 2^63 such terms and beta * c need
// fewer than 3222 + 3072 + 63 < 6400 bits (float: 447 + 384 + 63 < 1024).
// A fixed 2048 bits, as Mukunoki et al., PMAA'18 use, would also be exact for the ranges
// the suites draw, but not for every double.
//
// Speed. The products are formed in hardware without error: a float product
// is exact in double, a double product is p + e with e = fma(a, b, -p) when
// nothing underflows. Only additions into the MPFR accumulators remain.
#include "support/mpfr_oracle.h"

#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace xn_test {

namespace {

constexpr mpfr_prec_t kFirstPrec = 128;
constexpr mpfr_prec_t kSecondPrec = 512;
template <class T>
constexpr mpfr_prec_t max_prec() {
  return sizeof(T) == sizeof(double) ? 6400 : 1024;
}

// Below this a double product's low part e may underflow (TwoProduct via FMA
// is exact when the exponents of a and b sum to at least about -970).
constexpr double kTwoProdMin = 0x1p-900;

// The MPFR variables of one thread at one precision: sums of the positive and
// of the negative products kept apart, so that the signed sum and the sum of
// absolute values come from one addition per term.
class Workspace {
 public:
  explicit Workspace(mpfr_prec_t prec) {
    mpfr_inits2(prec, pos_, neg_, sum_, abs_, nullptr);
    mpfr_inits2(prec + 128, val_, mag_, rem_, nullptr);
    mpfr_init2(d_, 53);
    mpfr_init2(x_, 53);
    mpfr_init2(prod_, 106);
  }
  ~Workspace() {
    mpfr_clears(pos_, neg_, sum_, abs_, val_, mag_, rem_, d_, x_, prod_, nullptr);
  }
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  // Computes one entry; false if some operation rounded (then `out` is not
  // trustworthy and the caller retries at a higher precision).
  template <class T>
  bool entry(bool ta, bool tb, std::int64_t k, T alpha, const T *A, std::int64_t lda,
             const T *B, std::int64_t ldb, T beta, const T *C0, std::int64_t ldc,
             std::int64_t i, std::int64_t j, ExactEntry &out) {
    inexact_ = 0;
    mpfr_set_zero(pos_, 1);
    mpfr_set_zero(neg_, 1);
    if (alpha != T(0)) {  // BLAS: alpha == 0 does not read A or B
      for (std::int64_t p = 0; p < k; ++p) {
        const T a = ta ? A[p + i * lda] : A[i + p * lda];
        const T b = tb ? B[j + p * ldb] : B[p + j * ldb];
        add_product(a, b);
      }
    }
    inexact_ |= mpfr_sub(sum_, pos_, neg_, MPFR_RNDN);
    inexact_ |= mpfr_add(abs_, pos_, neg_, MPFR_RNDN);
    // val = alpha * sum + beta * c, mag = |alpha| * abs + |beta * c|; the
    // extra 128 bits hold alpha's 53 bits and beta * c's 106.
    set_d(d_, double(alpha));
    inexact_ |= mpfr_mul(val_, sum_, d_, MPFR_RNDN);
    inexact_ |= mpfr_mul(mag_, abs_, d_, MPFR_RNDN);
    mpfr_abs(mag_, mag_, MPFR_RNDN);
    if (beta != T(0)) {  // BLAS: beta == 0 does not read C0
      set_d(d_, double(beta));
      set_d(x_, double(C0[i + j * ldc]));
      inexact_ |= mpfr_mul(prod_, d_, x_, MPFR_RNDN);
      inexact_ |= mpfr_add(val_, val_, prod_, MPFR_RNDN);
      mpfr_abs(prod_, prod_, MPFR_RNDN);
      inexact_ |= mpfr_add(mag_, mag_, prod_, MPFR_RNDN);
    }
    out.hi = mpfr_get_d(val_, MPFR_RNDN);
    out.lo = 0;
    if (std::isfinite(out.hi)) {
      inexact_ |= mpfr_sub_d(rem_, val_, out.hi, MPFR_RNDN);
      out.lo = mpfr_get_d(rem_, MPFR_RNDN);
    }
    out.magnitude = mpfr_get_d(mag_, MPFR_RNDN);
    return inexact_ == 0;
  }

 private:
  void set_d(mpfr_t dst, double v) { inexact_ |= mpfr_set_d(dst, v, MPFR_RNDN); }

  // Adds the exact value of x (a double) to pos_ or, negated, to neg_.
  void accumulate(double x, bool positive) {
    set_d(d_, x);
    inexact_ |= positive ? mpfr_add(pos_, pos_, d_, MPFR_RNDN)
                         : mpfr_sub(neg_, neg_, d_, MPFR_RNDN);
  }

  void add_product(float a, float b) {
    // 24 + 24 bits: the double product is exact (no overflow or underflow
    // for finite floats); NaN and Inf fall through MPFR's own rules.
    const double p = double(a) * double(b);
    if (p == 0) return;
    accumulate(p, !(p < 0));
  }

  void add_product(double a, double b) {
    const double p = a * b;
    if (p == 0 && (a == 0 || b == 0)) return;  // an exact zero term
    if (std::isfinite(p) && std::fabs(p) >= kTwoProdMin) {
      const double e = std::fma(a, b, -p);  // a * b = p + e exactly
      accumulate(p, p > 0);
      if (e != 0) accumulate(e, p > 0);
      return;
    }
    // Underflow, overflow, Inf or NaN: multiply in MPFR (106 bits is exact).
    set_d(d_, a);
    set_d(x_, b);
    inexact_ |= mpfr_mul(prod_, d_, x_, MPFR_RNDN);
    inexact_ |= mpfr_sgn(prod_) < 0 ? mpfr_sub(neg_, neg_, prod_, MPFR_RNDN)
                                    : mpfr_add(pos_, pos_, prod_, MPFR_RNDN);
  }

  int inexact_ = 0;
  mpfr_t pos_, neg_, sum_, abs_;  // the workspace's precision
  mpfr_t val_, mag_, rem_;        // that plus 128
  mpfr_t d_, x_, prod_;           // one double; a product of two doubles
};

// The thread's workspaces for the three precisions, created on first use.
struct Ladder {
  Workspace first{kFirstPrec};
  Workspace *second = nullptr, *last = nullptr;
  ~Ladder() {
    delete second;
    delete last;
  }
};

template <class T>
ExactEntry entry_with(Ladder &l, bool ta, bool tb, std::int64_t k, T alpha, const T *A,
                      std::int64_t lda, const T *B, std::int64_t ldb, T beta, const T *C0,
                      std::int64_t ldc, std::int64_t i, std::int64_t j) {
  ExactEntry e{};
  if (l.first.entry(ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j, e)) return e;
  if (!l.second) l.second = new Workspace(kSecondPrec);
  if (l.second->entry(ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j, e)) return e;
  if (!l.last) l.last = new Workspace(max_prec<T>());
  if (l.last->entry(ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j, e)) return e;
  // Impossible for finite inputs (see the top of this file).
  std::fprintf(stderr, "mpfr_oracle: entry (%lld, %lld) inexact at %ld bits\n",
               (long long)i, (long long)j, (long)max_prec<T>());
  std::abort();
}

}  // namespace

template <class T>
ExactEntry exact_gemm_entry(bool ta, bool tb, std::int64_t k, T alpha, const T *A,
                            std::int64_t lda, const T *B, std::int64_t ldb, T beta,
                            const T *C0, std::int64_t ldc, std::int64_t i,
                            std::int64_t j) {
  Ladder l;
  return entry_with(l, ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j);
}

template <class T>
void exact_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                const T *A, std::int64_t lda, const T *B, std::int64_t ldb, T beta,
                const T *C0, std::int64_t ldc, std::vector<ExactEntry> &out) {
  out.assign(std::size_t(m * n), ExactEntry{});
  // MPFR's state (flags, exponent range) is per thread only in a build with
  // thread-local storage.
  const bool threads = mpfr_buildopt_tls_p() && m * n * k > 4096;
#pragma omp parallel if (threads)
  {
    Ladder l;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        out[std::size_t(i + j * m)] =
            entry_with(l, ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j);
  }
}

double abs_error(double c, const ExactEntry &e) {
  if (!std::isfinite(c) || !std::isfinite(e.hi)) {
    // Non-finite on either side: no error only if both are the same.
    if (std::isnan(c) && std::isnan(e.hi)) return 0;
    return c == e.hi ? 0 : INFINITY;
  }
  return std::fabs((c - e.hi) - e.lo);
}

template ExactEntry exact_gemm_entry<float>(bool, bool, std::int64_t, float,
                                            const float *, std::int64_t, const float *,
                                            std::int64_t, float, const float *,
                                            std::int64_t, std::int64_t, std::int64_t);
template ExactEntry exact_gemm_entry<double>(bool, bool, std::int64_t, double,
                                             const double *, std::int64_t, const double *,
                                             std::int64_t, double, const double *,
                                             std::int64_t, std::int64_t, std::int64_t);
template void exact_gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                float, const float *, std::int64_t, const float *,
                                std::int64_t, float, const float *, std::int64_t,
                                std::vector<ExactEntry> &);
template void exact_gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 double, const double *, std::int64_t, const double *,
                                 std::int64_t, double, const double *, std::int64_t,
                                 std::vector<ExactEntry> &);

}  // namespace xn_test
