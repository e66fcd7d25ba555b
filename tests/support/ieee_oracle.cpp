// ieee_oracle.cpp - see ieee_oracle.h.
//
// Exactness. A finite result is a sum of terms f0 * f1 * f2 of doubles
// (alpha a b, or beta c 1). Each term is a multiple of 2^-3222 below 2^3072
// (three factors of 2^-1074 .. 2^1024), so the sum of fewer than 2^63 terms
// needs fewer than 3222 + 3072 + 63 < 6400 bits: at kSumPrec MPFR sums
// exactly (every ternary value is checked anyway), and GMP holds it as an
// integer times 2^e_min.
//
// Rounding, first way (MPFR): the exact value is rounded to 53 bits in
// MPFR's default (huge) exponent range, then the range is narrowed to
// binary64's (emin = -1073, emax = 1024 in MPFR's [0.5, 1) convention) and
// mpfr_check_range + mpfr_subnormalize finish the rounding from the first
// rounding's ternary value, which is what lets MPFR avoid double rounding
// below 2^-1022. The range is restored before returning; in a build without
// thread-local storage the range is process-wide, so exact_gemm_ieee then
// stays on one thread.
// Second way (GMP): N 2^e with N an integer; ulp = 2^max(top - 52, -1074);
// round half to even by the remainder; overflow exactly when
// |N 2^e| >= 2^1024 - 2^970 = (2^54 - 1) 2^970.
#include "support/ieee_oracle.h"

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace xn_test {

namespace {

constexpr mpfr_prec_t kSumPrec = 6400;
constexpr mpfr_prec_t kTermPrec = 3 * 53;  // a product of three doubles, exact

std::atomic<std::uint64_t> g_cross_checks{0};

class Mpz {
 public:
  Mpz() { mpz_init(v); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz &) = delete;
  Mpz &operator=(const Mpz &) = delete;
  mpz_t v;
};

[[noreturn]] void die(const char *why, const std::vector<std::array<double, 3>> &terms,
                      double mpfr_value, double gmp_value) {
  std::fprintf(stderr, "ieee_oracle: %s\n  MPFR %a  GMP %a\n  terms (f0 * f1 * f2):\n",
               why, mpfr_value, gmp_value);
  for (const auto &t : terms)
    std::fprintf(stderr, "    %a * %a * %a\n", t[0], t[1], t[2]);
  std::abort();
}

// x = mant * 2^exp exactly, |mant| < 2^53 (also for subnormals).
void decompose(double x, std::int64_t *mant, long *exp) {
  int e = 0;
  const double f = std::frexp(x, &e);
  *mant = std::int64_t(std::ldexp(f, 53));
  *exp = long(e) - 53;
}

// The exact sum as n * 2^e (n = 0, e = 0 for an empty or zero sum): each
// term's integer product M0 M1 M2 at 2^(E0 + E1 + E2), aligned to the
// smallest exponent. (The temporaries are per thread and keep their limbs:
// the oracle runs this for every entry.)
void exact_sum_gmp(const std::vector<std::array<double, 3>> &terms, mpz_t n, long *e) {
  mpz_set_ui(n, 0);
  *e = 0;
  if (terms.empty()) return;
  thread_local std::vector<long> exps;
  thread_local std::vector<std::array<std::int64_t, 3>> mants;
  exps.resize(terms.size());
  mants.resize(terms.size());
  for (std::size_t t = 0; t < terms.size(); ++t) {
    long sum = 0;
    for (int f = 0; f < 3; ++f) {
      long x = 0;
      decompose(terms[t][std::size_t(f)], &mants[t][std::size_t(f)], &x);
      sum += x;
    }
    exps[t] = sum;
  }
  const long emin = *std::min_element(exps.begin(), exps.end());
  thread_local Mpz prod;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    mpz_set_si(prod.v, long(mants[t][0]));
    mpz_mul_si(prod.v, prod.v, long(mants[t][1]));
    mpz_mul_si(prod.v, prod.v, long(mants[t][2]));
    mpz_mul_2exp(prod.v, prod.v, static_cast<mp_bitcnt_t>(exps[t] - emin));
    mpz_add(n, n, prod.v);
  }
  *e = emin;
}

double round_gmp(const mpz_t n, long e) {
  const int sign = mpz_sgn(n);
  if (sign == 0) return 0.0;
  Mpz mag, bound;
  mpz_abs(mag.v, n);
  // Overflow: |n| 2^e >= (2^54 - 1) 2^970, compared as integers.
  mpz_set_ui(bound.v, 1);
  mpz_mul_2exp(bound.v, bound.v, 54);
  mpz_sub_ui(bound.v, bound.v, 1);
  bool overflow;
  if (e <= 970) {
    mpz_mul_2exp(bound.v, bound.v, static_cast<mp_bitcnt_t>(970 - e));
    overflow = mpz_cmp(mag.v, bound.v) >= 0;
  } else {
    Mpz scaled;
    mpz_mul_2exp(scaled.v, mag.v, static_cast<mp_bitcnt_t>(e - 970));
    overflow = mpz_cmp(scaled.v, bound.v) >= 0;
  }
  if (overflow) return sign < 0 ? -HUGE_VAL : HUGE_VAL;
  // The value lies in [2^top, 2^(top+1)); its last place on the double grid.
  const long top = e + long(mpz_sizeinbase(mag.v, 2)) - 1;
  const long q = std::max(top - 52, -1074L);
  double value;
  if (q <= e) {
    value = std::ldexp(mpz_get_d(mag.v), int(e));  // < 2^53 at 2^e: exact
  } else {
    const mp_bitcnt_t shift = static_cast<mp_bitcnt_t>(q - e);
    Mpz r, rem, half;
    mpz_fdiv_q_2exp(r.v, mag.v, shift);
    mpz_fdiv_r_2exp(rem.v, mag.v, shift);
    mpz_setbit(half.v, shift - 1);
    const int c = mpz_cmp(rem.v, half.v);
    if (c > 0 || (c == 0 && mpz_odd_p(r.v))) mpz_add_ui(r.v, r.v, 1);
    value = std::ldexp(mpz_get_d(r.v), int(q));  // r <= 2^53 at 2^q: exact
  }
  return sign < 0 ? -value : value;  // a nonzero value rounding to 0 keeps its sign
}

class MpfrVar {
 public:
  explicit MpfrVar(mpfr_prec_t p) { mpfr_init2(v, p); }
  ~MpfrVar() { mpfr_clear(v); }
  MpfrVar(const MpfrVar &) = delete;
  MpfrVar &operator=(const MpfrVar &) = delete;
  mpfr_t v;
};

// Bits that hold the exact sum: every term lies in [2^lsb, 2^top) with
// top <= sum of (ilogb + 1) and lsb >= sum of max(ilogb - 52, -1074) over
// its factors; the sum of n terms needs top - lsb + log2(n) + 1 bits. (Only
// a speed-up over kSumPrec: exactness is checked by the ternary values.)
mpfr_prec_t exact_precision(const std::vector<std::array<double, 3>> &terms) {
  long top = std::numeric_limits<long>::min(), lsb = std::numeric_limits<long>::max();
  for (const auto &t : terms) {
    if (t[0] == 0.0 || t[1] == 0.0 || t[2] == 0.0) continue;  // adds nothing
    long hi = 0, lo = 0;
    for (double f : t) {
      hi += std::ilogb(f) + 1;
      lo += std::max(std::ilogb(f) - 52, -1074);
    }
    top = std::max(top, hi);
    lsb = std::min(lsb, lo);
  }
  long n = 1;
  while ((1L << n) < long(terms.size()) + 1) ++n;
  if (top < lsb) return 64;  // no nonzero term
  return std::min<mpfr_prec_t>(kSumPrec, std::max<long>(64, top - lsb + n + 2));
}

// The exact sum in `sum`; aborts if any step rounded. The term variables
// are a per-thread pool, kept between calls.
void exact_sum_mpfr(const std::vector<std::array<double, 3>> &terms, mpfr_t sum) {
  mpfr_set_prec(sum, exact_precision(terms));
  thread_local std::vector<std::unique_ptr<MpfrVar>> pool;
  thread_local std::vector<mpfr_ptr> ptrs;
  while (pool.size() < terms.size()) pool.push_back(std::make_unique<MpfrVar>(kTermPrec));
  ptrs.clear();
  int inexact = 0;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    mpfr_ptr x = pool[t]->v;
    inexact |= mpfr_set_d(x, terms[t][0], MPFR_RNDN);
    inexact |= mpfr_mul_d(x, x, terms[t][1], MPFR_RNDN);
    inexact |= mpfr_mul_d(x, x, terms[t][2], MPFR_RNDN);
    ptrs.push_back(x);
  }
  inexact |= mpfr_sum(sum, ptrs.data(), ptrs.size(), MPFR_RNDN);
  if (inexact) die("MPFR sum not exact (precision argument broken)", terms, 0, 0);
}

double round_mpfr(mpfr_srcptr exact) {
  MpfrVar r(53);
  // 53 bits in the default exponent range: no overflow or underflow yet.
  int t = mpfr_set(r.v, exact, MPFR_RNDN);
  const mpfr_exp_t saved_min = mpfr_get_emin(), saved_max = mpfr_get_emax();
  const mpfr_flags_t saved_flags = mpfr_flags_save();
  if (mpfr_set_emin(-1073) != 0 || mpfr_set_emax(1024) != 0) {
    std::fprintf(stderr, "ieee_oracle: cannot set binary64's exponent range\n");
    std::abort();
  }
  t = mpfr_check_range(r.v, t, MPFR_RNDN);
  mpfr_subnormalize(r.v, t, MPFR_RNDN);
  double d = mpfr_get_d(r.v, MPFR_RNDN);  // r is a double now: exact
  mpfr_set_emin(saved_min);
  mpfr_set_emax(saved_max);
  mpfr_flags_restore(saved_flags, MPFR_FLAGS_ALL);
  // The sign of a nonzero value that rounded to zero, stated explicitly.
  if (d == 0.0) d = mpfr_sgn(exact) < 0 ? -0.0 : 0.0;
  return d;
}

std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

// ---------------------------------------------------------------- classes

// An extended real with IEEE's classes; a finite nonzero value is kept as
// its exact terms (sum of f0 f1 f2).
struct Ext {
  enum Kind { NaN, Inf, Zero, Finite } kind = Zero;
  bool negative = false;                     // Inf and Zero: the sign
  std::vector<std::array<double, 3>> terms;  // Finite: the exact value
};

// Sign of an exact nonzero-or-zero sum of terms: -1, 0, +1 (GMP).
int exact_sign(const std::vector<std::array<double, 3>> &terms) {
  Mpz n;
  long e = 0;
  exact_sum_gmp(terms, n.v, &e);
  return mpz_sgn(n.v);
}

// Contract, rule 1: X = sum_p op(A)(i,p) op(B)(p,j) in the extended reals.
template <class GetA, class GetB>
Ext exact_dot(std::int64_t k, GetA &&a_of, GetB &&b_of) {
  bool nan = false, pos_inf = false, neg_inf = false, all_negative_zeros = true;
  Ext x;
  for (std::int64_t p = 0; p < k; ++p) {
    const double a = a_of(p), b = b_of(p);
    const bool neg = std::signbit(a) != std::signbit(b);
    if (std::isnan(a) || std::isnan(b)) {
      nan = true;
    } else if (std::isinf(a) || std::isinf(b)) {
      if (a == 0.0 || b == 0.0)
        nan = true;  // 0 * Inf
      else
        (neg ? neg_inf : pos_inf) = true;
    } else if (a == 0.0 || b == 0.0) {
      if (neg) continue;  // a zero of negative sign: keeps "all -0" true
    } else {
      x.terms.push_back({a, b, 1.0});
    }
    all_negative_zeros = false;
  }
  if (nan || (pos_inf && neg_inf)) {
    x.kind = Ext::NaN;
  } else if (pos_inf || neg_inf) {
    x.kind = Ext::Inf;
    x.negative = neg_inf;
  } else {
    const int s = exact_sign(x.terms);
    if (s == 0) {
      // IEEE 754 section 6.3: -0 only when every addend is -0.
      x.kind = Ext::Zero;
      x.negative = all_negative_zeros;
      x.terms.clear();
    } else {
      x.kind = Ext::Finite;
      x.negative = s < 0;
    }
  }
  return x;
}

// f * y exactly with IEEE's special rules (Inf * 0 = NaN, signs XOR).
// Every finite term carries the placeholder factor 1.0 in its last slot
// (a b 1 for a product, c 1 1 for C's entry): f takes that slot.
Ext scale(double f, const Ext &y) {
  Ext r;
  if (std::isnan(f) || y.kind == Ext::NaN) {
    r.kind = Ext::NaN;
    return r;
  }
  r.negative = std::signbit(f) != y.negative;
  if (std::isinf(f) || y.kind == Ext::Inf) {
    const bool other_zero = std::isinf(f) ? y.kind == Ext::Zero : f == 0.0;
    r.kind = other_zero ? Ext::NaN : Ext::Inf;
    return r;
  }
  if (f == 0.0 || y.kind == Ext::Zero) {
    r.kind = Ext::Zero;
    return r;
  }
  r.kind = Ext::Finite;
  for (auto t : y.terms) {
    if (t[2] != 1.0) die("scale: a term without its placeholder factor", y.terms, 0, 0);
    t[2] = f;
    r.terms.push_back(t);
  }
  return r;
}

Ext from_double(double c) {
  Ext r;
  if (std::isnan(c)) {
    r.kind = Ext::NaN;
  } else if (std::isinf(c)) {
    r.kind = Ext::Inf;
    r.negative = c < 0;
  } else if (c == 0.0) {
    r.kind = Ext::Zero;
    r.negative = std::signbit(c);
  } else {
    r.kind = Ext::Finite;
    r.negative = c < 0;
    r.terms.push_back({c, 1.0, 1.0});
  }
  return r;
}

// RN of an extended value (rule 3's rounding; a zero keeps its sign).
double round_ext(const Ext &v) {
  switch (v.kind) {
    case Ext::NaN:
      return std::numeric_limits<double>::quiet_NaN();
    case Ext::Inf:
      return v.negative ? -HUGE_VAL : HUGE_VAL;
    case Ext::Zero:
      return v.negative ? -0.0 : 0.0;
    case Ext::Finite:
      break;
  }
  const double r = round_sum_of_products(v.terms);
  if (r == 0.0 && std::signbit(r) != v.negative)
    die("zero sign of an underflowed value disagrees with the exact sign", v.terms, r, r);
  return r;
}

// Rule 3 with beta != 0: RN(P + Q).
double round_sum(const Ext &p, const Ext &q) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (p.kind == Ext::NaN || q.kind == Ext::NaN) return nan;
  if (p.kind == Ext::Inf && q.kind == Ext::Inf && p.negative != q.negative) return nan;
  if (p.kind == Ext::Inf) return round_ext(p);
  if (q.kind == Ext::Inf) return round_ext(q);
  if (p.kind == Ext::Zero && q.kind == Ext::Zero)
    return p.negative && q.negative ? -0.0 : 0.0;
  Ext s;
  s.kind = Ext::Finite;
  s.terms = p.terms;
  s.terms.insert(s.terms.end(), q.terms.begin(), q.terms.end());
  const int sign = exact_sign(s.terms);
  if (sign == 0) return 0.0;  // exact cancellation of nonzero parts: +0
  s.negative = sign < 0;
  return round_ext(s);
}

}  // namespace

double round_sum_of_products_gmp(const std::vector<std::array<double, 3>> &terms) {
  Mpz n;
  long e = 0;
  exact_sum_gmp(terms, n.v, &e);
  return round_gmp(n.v, e);
}

double round_sum_of_products_mpfr(const std::vector<std::array<double, 3>> &terms) {
  MpfrVar sum(64);  // exact_sum_mpfr sets the precision the sum needs
  exact_sum_mpfr(terms, sum.v);
  if (mpfr_zero_p(sum.v)) return 0.0;
  return round_mpfr(sum.v);
}

double round_sum_of_products(const std::vector<std::array<double, 3>> &terms) {
  for (const auto &t : terms)
    for (double f : t)
      if (!std::isfinite(f)) die("non-finite factor in a finite sum", terms, 0, 0);
  const double by_mpfr = round_sum_of_products_mpfr(terms);
  const double by_gmp = round_sum_of_products_gmp(terms);
  if (bits_of(by_mpfr) != bits_of(by_gmp))
    die("MPFR and GMP roundings disagree", terms, by_mpfr, by_gmp);
  g_cross_checks.fetch_add(1, std::memory_order_relaxed);
  return by_mpfr;
}

std::uint64_t ieee_oracle_cross_checks() { return g_cross_checks.load(); }

double exact_gemm_entry_ieee(bool ta, bool tb, std::int64_t k, double alpha,
                             const double *A, std::int64_t lda, const double *B,
                             std::int64_t ldb, double beta, const double *C0,
                             std::int64_t ldc, std::int64_t i, std::int64_t j) {
  // Rule 0: k == 0 or alpha == 0 (either zero) only scales C, in one IEEE
  // multiplication; beta == 0 gives +0 without reading C.
  if (k == 0 || alpha == 0.0) {
    if (beta == 0.0) return 0.0;
    const double c = C0[i + j * ldc];
    const double hw = beta * c;
    // The hardware product is the correctly rounded one (unless the host
    // flushes subnormals): confirm it with the exact rounding.
    const double want = round_ext(scale(beta, from_double(c)));
    if (bits_of(hw) != bits_of(want) && !(std::isnan(hw) && std::isnan(want)))
      die("hardware beta * c differs from its exact rounding", {{beta, c, 1.0}}, hw,
          want);
    return want;
  }
  // Rule 1: X exactly; rule 2: P = alpha X exactly.
  const Ext x = exact_dot(
      k, [&](std::int64_t p) { return ta ? A[p + i * lda] : A[i + p * lda]; },
      [&](std::int64_t p) { return tb ? B[j + p * ldb] : B[p + j * ldb]; });
  const Ext p = scale(alpha, x);
  // Rule 3.
  if (beta == 0.0) return round_ext(p);
  const Ext q = scale(beta, from_double(C0[i + j * ldc]));
  return round_sum(p, q);
}

void exact_gemm_ieee(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                     double alpha, const double *A, std::int64_t lda, const double *B,
                     std::int64_t ldb, double beta, const double *C0, std::int64_t ldc,
                     std::vector<double> &out) {
  out.assign(std::size_t(m * n), 0.0);
  const bool threads = mpfr_buildopt_tls_p() && m * n * k > 4096;
#pragma omp parallel for schedule(dynamic, 1) if (threads)
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      out[std::size_t(i + j * m)] =
          exact_gemm_entry_ieee(ta, tb, k, alpha, A, lda, B, ldb, beta, C0, ldc, i, j);
}

}  // namespace xn_test
