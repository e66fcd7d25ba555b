// test_api_host.cpp - the host BLAS extension (dngemm_, sngemm_,
// cblas_dngemm, cblas_sngemm) on the CPU path: xerbla reporting, results
// against OpenBLAS, quick returns, XN_OPT_CHECK_NONNEG, the options API and
// concurrent callers.
//
// Error bound used for results (u = unit roundoff of T, k >= 1):
//   |C - C_ref|_ij <= 8 k u (|alpha| max(|A||B|) + |beta| |C0_ij|).
// It is normwise in the product term (the max over all entries of |A||B|)
// because Winograd's cancellations (S2 = S1 - A11, ...) make an entry's error
// depend on other rows and columns: the fast algorithm is normwise, not
// componentwise, stable. It is per entry in the beta term, which both
// algorithms apply in one operation. On these inputs (uniform [0,1), all
// entries of |A||B| within a small factor of each other) it is about as tight
// as the entrywise k u |alpha||A||B| form.
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/bad_gemm_args.h"
#include "support/host_state.h"
#include "support/test_support.h"
#include "support/xerbla_log.h"
#include "xngemm.h"

namespace {

using xn_test::g_xerbla;
using xn_test::XerblaLog;

// The host API reads XN_DEVICE on every call; force the CPU path before any
// test runs so results do not depend on the machine.
const bool kCpuForced = [] { return setenv("XN_DEVICE", "cpu", 1) == 0; }();
// The tests force recursion with small leaves: no crossover size on top.
const bool kNoCrossover = [] {
  return xnSetOption(nullptr, XN_OPT_MIN_SIZE_S, 0) == CUBLAS_STATUS_SUCCESS &&
         xnSetOption(nullptr, XN_OPT_MIN_SIZE_D, 0) == CUBLAS_STATUS_SUCCESS;
}();

using xn_test::Dist;

constexpr int kRow = CblasRowMajor, kCol = CblasColMajor;
constexpr int kN = CblasNoTrans, kT = CblasTrans, kC = CblasConjTrans;

// Saves every process-wide option and restores it on scope exit, so a failing
// test cannot leak a small leaf or the non-negative check into the next one.
using OptionGuard = xn_test::HostStateGuard;

// Per-precision entry points, names and the OpenBLAS oracle.
template <class T>
struct Api;
template <>
struct Api<double> {
  static constexpr const char *f77_name = "DNGEMM";
  static constexpr const char *cblas_name = "cblas_dngemm";
  static constexpr xnOption_t leaf_option = XN_OPT_LEAF_SIZE_D;
  static void f77(char ta, char tb, int m, int n, int k, double alpha, const double *A,
                  int lda, const double *B, int ldb, double beta, double *C, int ldc) {
    dngemm_(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
  }
  static void cblas(int layout, int ta, int tb, int m, int n, int k, double alpha,
                    const double *A, int lda, const double *B, int ldb, double beta,
                    double *C, int ldc) {
    cblas_dngemm(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  static void ref(int layout, int ta, int tb, int m, int n, int k, double alpha,
                  const double *A, int lda, const double *B, int ldb, double beta,
                  double *C, int ldc) {
    cblas_dgemm(CBLAS_ORDER(layout), CBLAS_TRANSPOSE(ta), CBLAS_TRANSPOSE(tb), m, n, k,
                alpha, A, lda, B, ldb, beta, C, ldc);
  }
};
template <>
struct Api<float> {
  static constexpr const char *f77_name = "SNGEMM";
  static constexpr const char *cblas_name = "cblas_sngemm";
  static constexpr xnOption_t leaf_option = XN_OPT_LEAF_SIZE_S;
  static void f77(char ta, char tb, int m, int n, int k, float alpha, const float *A,
                  int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    sngemm_(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
  }
  static void cblas(int layout, int ta, int tb, int m, int n, int k, float alpha,
                    const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc) {
    cblas_sngemm(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  }
  static void ref(int layout, int ta, int tb, int m, int n, int k, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta, float *C,
                  int ldc) {
    cblas_sgemm(CBLAS_ORDER(layout), CBLAS_TRANSPOSE(ta), CBLAS_TRANSPOSE(tb), m, n, k,
                alpha, A, lda, B, ldb, beta, C, ldc);
  }
};

// Which host entry point a case goes through.
enum class Entry { F77, CblasCol, CblasRow };
const char *entry_name(Entry e) {
  return e == Entry::F77 ? "f77" : e == Entry::CblasCol ? "cblas-col" : "cblas-row";
}

template <class U>
bool same_bytes(const std::vector<U> &a, const std::vector<U> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(U)) == 0;
}

// One gemm problem with its storage, in the layout its entry point expects.
// "Stored rows" is the contiguous dimension of each array (column-major
// rows; for row-major, the row length), padded with NaN up to ld.
template <class T>
struct Problem {
  Entry entry;
  bool ta, tb;
  int m, n, k, lda, ldb, ldc;
  T alpha, beta;
  std::vector<T> A, B, C;

  bool row() const { return entry == Entry::CblasRow; }
  int sr_a() const { return row() ? (ta ? m : k) : (ta ? k : m); }
  int sc_a() const { return row() ? (ta ? k : m) : (ta ? m : k); }
  int sr_b() const { return row() ? (tb ? k : n) : (tb ? n : k); }
  int sc_b() const { return row() ? (tb ? n : k) : (tb ? k : n); }
  int sr_c() const { return row() ? n : m; }
  int sc_c() const { return row() ? m : n; }

  // op(A)(i, p), op(B)(p, j), C(i, j) in the logical (m x k, k x n, m x n)
  // sense, whatever the storage.
  std::size_t ia(int i, int p) const {
    const bool contiguous_i = row() ? ta : !ta;  // i runs along the stored rows
    return contiguous_i ? std::size_t(i) + std::size_t(p) * lda
                        : std::size_t(p) + std::size_t(i) * lda;
  }
  std::size_t ib(int p, int j) const {
    const bool contiguous_p = row() ? tb : !tb;
    return contiguous_p ? std::size_t(p) + std::size_t(j) * ldb
                        : std::size_t(j) + std::size_t(p) * ldb;
  }
  std::size_t ic(int i, int j) const {
    return row() ? std::size_t(j) + std::size_t(i) * ldc
                 : std::size_t(i) + std::size_t(j) * ldc;
  }

  std::string describe() const {
    std::ostringstream s;
    s << entry_name(entry) << " " << (ta ? 'T' : 'N') << (tb ? 'T' : 'N') << " m=" << m
      << " n=" << n << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc
      << " alpha=" << alpha << " beta=" << beta;
    return s.str();
  }
};

template <class T>
Problem<T> make_problem(Entry entry, bool ta, bool tb, int m, int n, int k, int pad,
                        T alpha, T beta, Dist dist, std::mt19937_64 &rng) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Problem<T> p{entry, ta, tb, m, n, k, 0, 0, 0, alpha, beta, {}, {}, {}};
  p.lda = std::max(1, p.sr_a() + pad);
  p.ldb = std::max(1, p.sr_b() + pad);
  p.ldc = std::max(1, p.sr_c() + pad);
  xn_test::fill<T>(p.A, p.sr_a(), p.sc_a(), p.lda, dist, rng, nan);
  xn_test::fill<T>(p.B, p.sr_b(), p.sc_b(), p.ldb, dist, rng, nan);
  if (beta == T(0)) {
    // beta = 0: C must not be read, so it holds NaN everywhere.
    p.C.assign(std::size_t(p.ldc) * std::max(1, p.sc_c()), nan);
  } else {
    xn_test::fill<T>(p.C, p.sr_c(), p.sc_c(), p.ldc, dist, rng, nan);
  }
  return p;
}

// Calls the entry point the problem names on its own C.
template <class T>
void run_xn(Problem<T> &p, int f77_variant = 0) {
  // Fortran accepts either case and 'C' for real data; vary the spelling.
  const char *na = "NnNn", *ta = "TtCc";
  if (p.entry == Entry::F77) {
    Api<T>::f77(p.ta ? ta[f77_variant % 4] : na[f77_variant % 4],
                p.tb ? ta[(f77_variant + 1) % 4] : na[(f77_variant + 1) % 4], p.m, p.n,
                p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, p.C.data(),
                p.ldc);
  } else {
    const int t_code = f77_variant % 2 ? kC : kT;  // ConjTrans is Trans here
    Api<T>::cblas(p.row() ? kRow : kCol, p.ta ? t_code : kN, p.tb ? t_code : kN, p.m, p.n,
                  p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, p.C.data(),
                  p.ldc);
  }
}

// OpenBLAS on a copy of the problem's C (zeroed first when beta = 0, so the
// oracle cannot be blamed for NaN in C).
template <class T>
std::vector<T> run_ref(const Problem<T> &p) {
  std::vector<T> C = p.C;
  if (p.beta == T(0))
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) C[p.ic(i, j)] = T(0);
  Api<T>::ref(p.row() ? kRow : kCol, p.ta ? kT : kN, p.tb ? kT : kN, p.m, p.n, p.k,
              p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb, p.beta, C.data(), p.ldc);
  return C;
}

struct Compare {
  bool ok = true;
  double worst_ratio = 0;  // max error / bound over the entries
  int differing_bits = 0;  // entries not bitwise equal to the oracle
  std::string first_failure;
};

// Checks `got` against `ref` for problem `p` (whose C still holds C0) with
// the bound of the file comment, factor `c`; `normwise` selects
// max(|A||B|) (fast algorithm) or the entry's own |A||B| (classical).
// Padding of C must be bitwise untouched.
template <class T>
Compare compare(const Problem<T> &p, const std::vector<T> &got, const std::vector<T> &ref,
                double c, bool normwise) {
  Compare r;
  const double u = std::numeric_limits<T>::epsilon() / 2;
  std::vector<double> absab(std::size_t(p.m) * p.n, 0.0);
  double max_absab = 0;
  for (int j = 0; j < p.n; ++j)
    for (int i = 0; i < p.m; ++i) {
      double s = 0;
      for (int q = 0; q < p.k; ++q)
        s += std::fabs(double(p.A[p.ia(i, q)])) * std::fabs(double(p.B[p.ib(q, j)]));
      absab[i + std::size_t(j) * p.m] = s;
      max_absab = std::max(max_absab, s);
    }
  std::vector<bool> inside(got.size(), false);
  for (int j = 0; j < p.n; ++j)
    for (int i = 0; i < p.m; ++i) {
      const std::size_t at = p.ic(i, j);
      inside[at] = true;
      const double c0 = p.beta == T(0) ? 0.0 : std::fabs(double(p.C[at]));
      const double ab = normwise ? max_absab : absab[i + std::size_t(j) * p.m];
      const double bound =
          c * std::max(p.k, 1) * u *
          (std::fabs(double(p.alpha)) * ab + std::fabs(double(p.beta)) * c0);
      const double err = std::fabs(double(got[at]) - double(ref[at]));
      if (std::memcmp(&got[at], &ref[at], sizeof(T)) != 0) ++r.differing_bits;
      if (bound > 0) r.worst_ratio = std::max(r.worst_ratio, err / bound);
      if (!(err <= bound) && r.ok) {  // also catches NaN
        r.ok = false;
        std::ostringstream s;
        s << "C(" << i << "," << j << ") = " << got[at] << ", OpenBLAS " << ref[at]
          << ", |diff| " << err << " > bound " << bound;
        r.first_failure = s.str();
      }
    }
  for (std::size_t at = 0; at < got.size(); ++at)
    if (!inside[at] && std::memcmp(&got[at], &p.C[at], sizeof(T)) != 0 && r.ok) {
      r.ok = false;
      r.first_failure = "padding of C written at offset " + std::to_string(at);
    }
  return r;
}

template <class T>
class HostApi : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(HostApi, Precisions);

// ------------------------------------------------------------ bad arguments

using xn_test::BadCblas;
using xn_test::BadF77;
using xn_test::c_pattern;
using xn_test::kBadCblas;
using xn_test::kBadF77;

TYPED_TEST(HostApi, BadArgumentsReportedViaXerbla) {
  using T = TypeParam;
  const std::vector<T> A(64, T(1)), B(64, T(1));
  const std::vector<T> pattern = c_pattern<T>();
  for (const BadF77 &b : kBadF77) {
    std::vector<T> C = pattern;
    g_xerbla = XerblaLog{};
    Api<T>::f77(b.ta, b.tb, b.m, b.n, b.k, T(1), A.data(), b.lda, B.data(), b.ldb, T(0),
                C.data(), b.ldc);
    SCOPED_TRACE(std::string("f77 ta=") + b.ta + " tb=" + b.tb +
                 " m=" + std::to_string(b.m) + " n=" + std::to_string(b.n) +
                 " k=" + std::to_string(b.k) + " lda=" + std::to_string(b.lda) +
                 " ldb=" + std::to_string(b.ldb) + " ldc=" + std::to_string(b.ldc));
    EXPECT_EQ(g_xerbla.calls, 1);
    EXPECT_EQ(g_xerbla.name, Api<T>::f77_name);
    EXPECT_EQ(g_xerbla.info, b.info);
    EXPECT_EQ(xnGetLastHostStatus(), -b.info) << "the thread's last status";
    EXPECT_TRUE(same_bytes(C, pattern)) << "C written after a bad argument";
  }
  for (const BadCblas &b : kBadCblas) {
    std::vector<T> C = pattern;
    g_xerbla = XerblaLog{};
    Api<T>::cblas(b.layout, b.ta, b.tb, b.m, b.n, b.k, T(1), A.data(), b.lda, B.data(),
                  b.ldb, T(0), C.data(), b.ldc);
    SCOPED_TRACE("cblas layout=" + std::to_string(b.layout) +
                 " ta=" + std::to_string(b.ta) + " tb=" + std::to_string(b.tb) +
                 " m=" + std::to_string(b.m) + " n=" + std::to_string(b.n) +
                 " k=" + std::to_string(b.k) + " lda=" + std::to_string(b.lda) +
                 " ldb=" + std::to_string(b.ldb) + " ldc=" + std::to_string(b.ldc));
    EXPECT_EQ(g_xerbla.calls, 1);
    EXPECT_EQ(g_xerbla.name, Api<T>::cblas_name);
    EXPECT_EQ(g_xerbla.info, b.pos);
    EXPECT_EQ(xnGetLastHostStatus(), -b.pos) << "the thread's last status";
    EXPECT_TRUE(same_bytes(C, pattern)) << "C written after a bad argument";
  }
}

// --------------------------------------------------------------- results

TYPED_TEST(HostApi, MatchesOpenBlasAllTransposesAndLayouts) {
  using T = TypeParam;
  OptionGuard guard;
  // A small leaf so the recursion (with peeling for odd sizes) runs at these
  // sizes: 150 gives four levels.
  ASSERT_EQ(xnSetOption(nullptr, Api<T>::leaf_option, 8), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);

  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1},     {16, 16, 16},   {17, 33, 64},
                          {64, 40, 150}, {150, 97, 131}, {33, 150, 19}};
  const T scalars[][2] = {{1, 0}, {1, 1},      {T(0.75), T(0.5)},
                          {2, 0}, {T(1.5), 1}, {1, T(-0.5)}};
  double worst = 0;
  int cases = 0, recursed_differs = 0, variant = 0;
  for (Entry e : {Entry::F77, Entry::CblasCol, Entry::CblasRow})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const Shape &s : shapes) {
          const T *ab = scalars[cases % 6];
          const int pad = cases % 3 == 0 ? 0 : 1 + cases % 5;  // NaN padding
          Problem<T> p = make_problem<T>(e, ta, tb, s.m, s.n, s.k, pad, ab[0], ab[1],
                                         Dist::Uniform01, rng);
          const std::vector<T> A0 = p.A, B0 = p.B, C0 = p.C;
          const std::vector<T> ref = run_ref(p);
          Problem<T> q = p;
          g_xerbla = XerblaLog{};
          run_xn(q, variant++);
          SCOPED_TRACE(p.describe());
          EXPECT_EQ(g_xerbla.calls, 0) << "xerbla called on a valid call";
          EXPECT_TRUE(same_bytes(q.A, A0) && same_bytes(q.B, B0)) << "A or B modified";
          const Compare r = compare(p, q.C, ref, 8.0, true);
          EXPECT_TRUE(r.ok) << r.first_failure;
          worst = std::max(worst, r.worst_ratio);
          if (s.m >= 64 && s.n >= 64 && s.k >= 64 && r.differing_bits > 0)
            ++recursed_differs;
          ++cases;
        }
  // The recursion must really have run: Winograd's result is not bitwise
  // OpenBLAS's on sizes where it recursed.
  EXPECT_GT(recursed_differs, 0);
  std::printf("[ info ] %d cases, worst error / bound = %.3g\n", cases, worst);
}

// Integer inputs small enough that every sum (Winograd's included) is exact:
// the result must then equal OpenBLAS's bitwise, a sharp check of the index
// arithmetic for every transpose and layout.
TYPED_TEST(HostApi, ExactOnSmallIntegers) {
  using T = TypeParam;
  OptionGuard guard;
  ASSERT_EQ(xnSetOption(nullptr, Api<T>::leaf_option, 4), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  int variant = 0;
  for (Entry e : {Entry::F77, Entry::CblasCol, Entry::CblasRow})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int size : {9, 37, 70}) {
          Problem<T> p = make_problem<T>(e, ta, tb, size, size + 3, size + 1, 2, T(1),
                                         T(1), Dist::SmallInt, rng);
          const std::vector<T> ref = run_ref(p);
          run_xn(p, variant++);
          SCOPED_TRACE(p.describe());
          EXPECT_TRUE(same_bytes(p.C, ref)) << "not exact on integers";
        }
}

// ----------------------------------------------------------- quick returns

TYPED_TEST(HostApi, QuickReturnsEmptyOutput) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> A(64, nan), B(64, nan), pattern = c_pattern<T>();
  // m = 0 or n = 0: nothing to compute, C untouched whatever beta.
  for (int mn : {0, 1}) {
    const int m = mn == 0 ? 0 : 4, n = mn == 0 ? 4 : 0;
    for (T beta : {T(0), T(2)}) {
      std::vector<T> C = pattern;
      // The calls are valid: an untouched C must not come from an error.
      g_xerbla = XerblaLog{};
      Api<T>::f77('N', 'N', m, n, 3, T(1), A.data(), 4, B.data(), 3, beta, C.data(), 4);
      EXPECT_TRUE(same_bytes(C, pattern)) << "f77 m=" << m << " n=" << n;
      for (int layout : {kRow, kCol}) {
        C = pattern;
        Api<T>::cblas(layout, kN, kN, m, n, 3, T(1), A.data(), 4, B.data(), 4, beta,
                      C.data(), 4);
        EXPECT_TRUE(same_bytes(C, pattern))
            << "cblas layout=" << layout << " m=" << m << " n=" << n;
      }
      EXPECT_EQ(g_xerbla.calls, 0) << "m=" << m << " n=" << n;
    }
  }
}

// k = 0 or alpha = 0: C = beta C exactly; A and B are not read (they hold
// NaN); beta = 0 gives exact zeros even where C held NaN or Inf; beta = 1
// leaves C as it is (reference BLAS's quick return: a signalling NaN stays
// signalling).
TYPED_TEST(HostApi, QuickReturnsScaleOnly) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> A(64, nan), B(64, nan);
  const int m = 4, n = 5, ldc = 6;  // rows 4..5 of each column are padding
  std::vector<T> C0(std::size_t(ldc) * n);
  for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = T(0.5) + T(i);
  C0[0] = nan;
  C0[1] = std::numeric_limits<T>::infinity();
  C0[2] = std::numeric_limits<T>::signaling_NaN();
  for (T beta : {T(0), T(1), T(-2.5)})
    for (int kind = 0; kind < 2; ++kind) {  // 0: k = 0, 1: alpha = 0
      const int k = kind == 0 ? 0 : 3;
      const T alpha = kind == 0 ? T(1) : T(0);
      for (Entry e : {Entry::F77, Entry::CblasCol, Entry::CblasRow}) {
        std::vector<T> C = C0;
        g_xerbla = XerblaLog{};
        if (e == Entry::F77)
          Api<T>::f77('N', 'T', m, n, k, alpha, A.data(), m, B.data(), n, beta, C.data(),
                      ldc);
        else if (e == Entry::CblasCol)
          Api<T>::cblas(kCol, kN, kT, m, n, k, alpha, A.data(), m, B.data(), n, beta,
                        C.data(), ldc);
        else  // row-major m x n C with row length ldc >= n: swap the roles
          Api<T>::cblas(kRow, kN, kT, n, m, k, alpha, A.data(), std::max(k, 1), B.data(),
                        std::max(k, 1), beta, C.data(), ldc);
        EXPECT_EQ(g_xerbla.calls, 0) << entry_name(e) << " k=" << k;
        // All three calls store C as n runs of ldc with m live entries each.
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < ldc; ++i) {
            const std::size_t at = i + std::size_t(j) * ldc;
            const T want = i >= m || beta == T(1) ? C0[at] : beta == T(0) ? T(0) : beta * C0[at];
            EXPECT_EQ(std::memcmp(&C[at], &want, sizeof(T)), 0)
                << entry_name(e) << " k=" << k << " alpha=" << alpha << " beta=" << beta
                << " at (" << i << "," << j << "): got " << C[at] << " want " << want;
          }
      }
    }
}

// ------------------------------------------------------ non-negative check

TYPED_TEST(HostApi, CheckNonNegFallsBackOnNegativeEntry) {
  using T = TypeParam;
  OptionGuard guard;
  ASSERT_EQ(xnSetOption(nullptr, Api<T>::leaf_option, 8), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_CHECK_NONNEG, 1), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);

  auto count = [] {
    std::uint64_t c = 0;
    EXPECT_EQ(xnGetNonNegFallbackCount(nullptr, &c), CUBLAS_STATUS_SUCCESS);
    return c;
  };
  int variant = 0;
  for (Entry e : {Entry::F77, Entry::CblasCol, Entry::CblasRow})
    for (int which = 0; which < 2; ++which) {  // negative entry in A or B
      Problem<T> p = make_problem<T>(e, which == 0, false, 70, 66, 90, 1, T(1.25), T(0.5),
                                     Dist::Uniform01, rng);
      std::vector<T> &X = which == 0 ? p.A : p.B;
      X[which == 0 ? p.ia(p.m - 1, p.k - 1) : p.ib(p.k / 2, p.n / 3)] = T(-0.5);
      const std::vector<T> ref = run_ref(p);
      Problem<T> q = p;
      const std::uint64_t before = count();
      run_xn(q, variant++);
      SCOPED_TRACE(p.describe() + (which == 0 ? " negative in A" : " negative in B"));
      EXPECT_EQ(count(), before + 1);
      // The classical product: OpenBLAS's entrywise error bound, both sides.
      const Compare r = compare(p, q.C, ref, 2.0, false);
      EXPECT_TRUE(r.ok) << r.first_failure;

      // The same call on non-negative data does not fall back; NaN is not
      // negative either.
      X[which == 0 ? p.ia(p.m - 1, p.k - 1) : p.ib(p.k / 2, p.n / 3)] =
          std::numeric_limits<T>::quiet_NaN();
      Problem<T> nn = p;
      const std::uint64_t before_nn = count();
      run_xn(nn, variant++);
      EXPECT_EQ(count(), before_nn) << "fallback on non-negative data";
    }

  // With the check off, a negative entry is computed by the recursion (no
  // fallback) and the result is still a correct product to a normwise bound.
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_CHECK_NONNEG, 0), CUBLAS_STATUS_SUCCESS);
  Problem<T> p = make_problem<T>(Entry::CblasCol, false, false, 64, 64, 64, 0, T(1), T(0),
                                 Dist::UniformPm1, rng);
  const std::vector<T> ref = run_ref(p);
  Problem<T> q = p;
  const std::uint64_t before = count();
  run_xn(q);
  EXPECT_EQ(count(), before);
  const Compare r = compare(p, q.C, ref, 8.0, true);
  EXPECT_TRUE(r.ok) << r.first_failure;
}

// ------------------------------------------------------------ options API

TEST(HostApiOptions, RoundTripAndInvalidValues) {
  OptionGuard guard;
  struct Valid {
    xnOption_t opt;
    std::int64_t value;
  };
  const Valid valid[] = {{XN_OPT_LEAF_SIZE_S, 1},
                         {XN_OPT_LEAF_SIZE_S, 333},
                         {XN_OPT_LEAF_SIZE_D, 7},
                         {XN_OPT_MAX_LEVELS, 0},
                         {XN_OPT_MAX_LEVELS, 3},
                         {XN_OPT_CHECK_NONNEG, 1},
                         {XN_OPT_CHECK_NONNEG, 0},
                         {XN_OPT_WORKSPACE_LIMIT, -1},
                         {XN_OPT_WORKSPACE_LIMIT, 0},
                         {XN_OPT_WORKSPACE_LIMIT, 1 << 20},
                         {XN_OPT_LEAF_KCHAIN_S, 0},
                         {XN_OPT_LEAF_KCHAIN_D, 512},
                         {XN_OPT_MIN_SIZE_S, 0},
                         {XN_OPT_MIN_SIZE_D, 9000},
                         {XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 1 << 30},
                         {XN_OPT_EXDGEMM_BLOCK, 128},
                         {XN_OPT_STRASSEN_LEAF_S, 64},
                         {XN_OPT_STRASSEN_LEAF_D, 1000},
                         {XN_OPT_STRASSEN_MIN_SIZE_S, 0},
                         {XN_OPT_STRASSEN_MIN_SIZE_D, 5000},
                         {XN_OPT_WINOGRAD_LEAF_S, 3},
                         {XN_OPT_WINOGRAD_LEAF_D, 8192},
                         {XN_OPT_WINOGRAD_MIN_SIZE_S, 1},
                         {XN_OPT_WINOGRAD_MIN_SIZE_D, 20000},
                         {XN_OPT_PACK_TRANS_A, 0},
                         {XN_OPT_PACK_TRANS_A, 1},
                         {XN_OPT_PACK_TRANS_A, -1}};
  for (const Valid &v : valid) {
    std::int64_t got = -99;
    EXPECT_EQ(xnSetOption(nullptr, v.opt, v.value), CUBLAS_STATUS_SUCCESS)
        << "option " << v.opt << " value " << v.value;
    EXPECT_EQ(xnGetOption(nullptr, v.opt, &got), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(got, v.value) << "option " << v.opt;
  }

  const Valid invalid[] = {{XN_OPT_LEAF_SIZE_S, 0},
                           {XN_OPT_LEAF_SIZE_D, 0},
                           {XN_OPT_LEAF_SIZE_D, -8},
                           {XN_OPT_MAX_LEVELS, -1},
                           {XN_OPT_CHECK_NONNEG, 2},
                           {XN_OPT_CHECK_NONNEG, -1},
                           {XN_OPT_WORKSPACE_LIMIT, -2},
                           {XN_OPT_LEAF_KCHAIN_S, -1},
                           {XN_OPT_MIN_SIZE_D, -5},
                           {XN_OPT_EXDGEMM_WORKSPACE_LIMIT, -1},
                           {XN_OPT_EXDGEMM_BLOCK, -1},
                           {XN_OPT_SYMV_VARIANT, -1},
                           {XN_OPT_SYMV_VARIANT, 100000},
                           {XN_OPT_STRASSEN_LEAF_S, 0},
                           {XN_OPT_STRASSEN_LEAF_D, -2},
                           {XN_OPT_STRASSEN_MIN_SIZE_S, -2},
                           {XN_OPT_WINOGRAD_LEAF_D, 0},
                           {XN_OPT_WINOGRAD_MIN_SIZE_S, -3},
                           {XN_OPT_WINOGRAD_MIN_SIZE_D, (1LL << 31) + 1},
                           {XN_OPT_PACK_TRANS_A, 2},
                           {XN_OPT_PACK_TRANS_A, -2}};
  for (const Valid &v : invalid) {
    std::int64_t before = 0, after = 0;
    ASSERT_EQ(xnGetOption(nullptr, v.opt, &before), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(xnSetOption(nullptr, v.opt, v.value), CUBLAS_STATUS_INVALID_VALUE)
        << "option " << v.opt << " value " << v.value;
    ASSERT_EQ(xnGetOption(nullptr, v.opt, &after), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(after, before) << "option " << v.opt << " changed by a bad value";
  }

  // Unknown options, and a NULL output pointer.
  std::int64_t v = 42;
  for (int bad : {-1, int(xn::option_count()), 99}) {
    EXPECT_EQ(xnSetOption(nullptr, xnOption_t(bad), 1), CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(xnGetOption(nullptr, xnOption_t(bad), &v), CUBLAS_STATUS_INVALID_VALUE);
  }
  EXPECT_EQ(v, 42);
  EXPECT_EQ(xnGetOption(nullptr, XN_OPT_MAX_LEVELS, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  std::uint64_t *null_count = nullptr;
  EXPECT_EQ(xnGetNonNegFallbackCount(nullptr, null_count), CUBLAS_STATUS_INVALID_VALUE);
}

// Two threads each own one process-wide option and read back what they set:
// the update of the defaults must be atomic (it once was a read-modify-write
// outside the lock and lost updates intermittently).
TEST(HostApiOptions, ConcurrentSettersDoNotLoseUpdates) {
  OptionGuard guard;
  std::atomic<long> lost{0};
  auto worker = [&lost](xnOption_t opt) {
    for (int i = 1; i <= 100000; ++i) {
      std::int64_t v = 0;
      xnSetOption(nullptr, opt, i);
      xnGetOption(nullptr, opt, &v);
      if (v != i) ++lost;  // nobody else writes `opt`
    }
  };
  std::thread a(worker, XN_OPT_LEAF_SIZE_S), b(worker, XN_OPT_LEAF_SIZE_D);
  a.join();
  b.join();
  EXPECT_EQ(lost.load(), 0);
}

// MAX_LEVELS = 0 means the classical leaf product: the host API then returns
// OpenBLAS's result bitwise (same call, column-major), even with a tiny leaf.
TEST(HostApiOptions, MaxLevelsZeroIsClassical) {
  OptionGuard guard;
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, 4), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_MAX_LEVELS, 0), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  Problem<double> p = make_problem<double>(Entry::CblasCol, false, true, 80, 72, 96, 0,
                                           1.0, 0.0, Dist::Uniform01, rng);
  const std::vector<double> ref = run_ref(p);
  run_xn(p);
  EXPECT_TRUE(same_bytes(p.C, ref));
}

// ------------------------------------------------------------- threads

// Four host threads call the CPU path at once, each on its own data, entry
// point and precision; every result must match OpenBLAS.
TEST(HostApiThreads, ConcurrentCallsAreCorrect) {
  OptionGuard guard;
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, 8), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_LEAF_SIZE_S, 8), CUBLAS_STATUS_SUCCESS);
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));

  constexpr int kThreads = 4, kIters = 6;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([t, seed, &failures] {
      std::mt19937_64 rng(seed + 1000 * t);
      for (int it = 0; it < kIters && failures[t].empty(); ++it) {
        const Entry e = Entry((t + it) % 3);
        const int m = 60 + 7 * t + it, n = 80 - 5 * t, k = 70 + 3 * it;
        auto check = [&](auto tag) {
          using T = decltype(tag);
          Problem<T> p = make_problem<T>(e, it % 2 == 1, t % 2 == 1, m, n, k, 1, T(1),
                                         T(0.5), Dist::Uniform01, rng);
          const std::vector<T> ref = run_ref(p);
          Problem<T> q = p;
          run_xn(q, it);
          const Compare r = compare(p, q.C, ref, 8.0, true);
          if (!r.ok) failures[t] = p.describe() + ": " + r.first_failure;
        };
        if (t % 2 == 0)
          check(double());
        else
          check(float());
      }
    });
  for (std::thread &th : pool) th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[t].empty()) << "thread " << t << ": " << failures[t];
}

// One error model (docs/design.md): the host routines' outcome is the
// thread's last status, 0 / -position / XN_STATUS_UNCHANGED, never reporting
// an earlier call, and stderr stays silent unless XN_VERBOSE=1.
TEST(HostApiStatus, LastStatusOfEachCallAndSilentStderr) {
  OptionGuard guard("cpu");
  std::mt19937_64 rng(xn_test::fresh_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int m = 37, n = 29, k = 41;
  std::vector<double> A(std::size_t(m) * k), B(std::size_t(k) * n);
  for (double &x : A) x = u(rng);
  for (double &x : B) x = u(rng);
  const double one = 1.0, zero = 0.0;

  // An illegal argument, then a call that completes: 0 again.
  std::vector<double> C(std::size_t(m) * n, std::nan(""));
  g_xerbla = XerblaLog{};
  const int bad_m = -1;
  dngemm_("N", "N", &bad_m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, C.data(), &m);
  EXPECT_EQ(xnGetLastHostStatus(), -3);
  exdgemm_("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, C.data(), &m);
  EXPECT_EQ(xnGetLastHostStatus(), 0);
  EXPECT_TRUE(std::isfinite(C[0]));

  // A workspace limit below one block: C unchanged, XN_STATUS_UNCHANGED,
  // and nothing on stderr without XN_VERBOSE.
  ASSERT_EQ(xnSetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 1), CUBLAS_STATUS_SUCCESS);
  const std::vector<double> before = C;
  unsetenv("XN_VERBOSE");
  testing::internal::CaptureStderr();
  exdgemm_("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &one, C.data(), &m);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(xnGetLastHostStatus(), XN_STATUS_UNCHANGED);
  EXPECT_TRUE(same_bytes(C, before)) << "C written by a call that did not run";
  // Asked for, the same failure is one line.
  setenv("XN_VERBOSE", "1", 1);
  testing::internal::CaptureStderr();
  exdgemm_("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &one, C.data(), &m);
  const std::string said = testing::internal::GetCapturedStderr();
  unsetenv("XN_VERBOSE");
  EXPECT_EQ(xnGetLastHostStatus(), XN_STATUS_UNCHANGED);
  EXPECT_EQ(said.rfind("xngemm: EXDGEMM could not run on the CPU", 0), 0u) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;

  // Other host routines that complete clear it (each reports its own call).
  const int inc = 1;
  EXPECT_TRUE(std::isfinite(exddot_(&k, A.data(), &inc, B.data(), &inc)));
  EXPECT_EQ(xnGetLastHostStatus(), 0);
  exdgemm_("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &one, C.data(), &m);
  EXPECT_EQ(xnGetLastHostStatus(), XN_STATUS_UNCHANGED);
  cblas_dngemm(XnColMajor, XnNoTrans, XnNoTrans, m, n, k, 1.0, A.data(), m, B.data(), k,
               0.0, C.data(), m);
  EXPECT_EQ(xnGetLastHostStatus(), 0);
  // Per thread: another thread's calls do not change this thread's status.
  dngemm_("N", "N", &bad_m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, C.data(), &m);
  std::thread([&] {
    EXPECT_EQ(xnGetLastHostStatus(), 0) << "a new thread's status before any call";
    std::vector<double> D(std::size_t(m) * n);
    dngemm_("N", "N", &m, &n, &k, &one, A.data(), &m, B.data(), &k, &zero, D.data(), &m);
    EXPECT_EQ(xnGetLastHostStatus(), 0);
  }).join();
  EXPECT_EQ(xnGetLastHostStatus(), -3);
}

TEST(HostApiEnvironment, CpuPathForced) {
  ASSERT_TRUE(kCpuForced);
  ASSERT_TRUE(kNoCrossover);
  const char *d = std::getenv("XN_DEVICE");
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d, "cpu");
}

}  // namespace
