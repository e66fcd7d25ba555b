// test_fastgemm_cpu.cpp - xn?gemmStrassen / xn?gemmWinograd (Li, Ranka,
// Sahni, ICPADS'11) on the CPU backend against the exact MPFR oracle.
//
// Every entry is held to the rigorous first-order normwise bound computed
// from the tables themselves (support/error_bound.h), at forced depths 0..3
// over OpenBLAS leaves, both algorithms, both precisions, every transpose
// pair, odd and rectangular sizes (peeling), alpha and beta (beta = 0 over
// NaN), on uniform [-1, 1] data and on the paper's test matrix (section
// 8.1.2). That the bound means something: the measured error and its ratio
// to the bound are printed per depth, and a schedule with one product's
// sign flipped breaks it. Then the host entry points (sstgemm_, dstgemm_,
// swigemm_, dwigemm_ and their cblas_ forms) on the CPU: results within the
// bound, bitwise the CPU recursion at the depth the options choose, and bad
// arguments reported through xerbla_ with C untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/executor.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/bad_gemm_args.h"
#include "support/error_bound.h"
#include "support/host_state.h"
#include "support/mpfr_oracle.h"
#include "support/paper_matrix.h"
#include "support/test_support.h"
#include "support/xerbla_log.h"
#include "xngemm.h"

namespace {

using xn_test::unit_roundoff;

using xn_test::g_xerbla;
using xn_test::XerblaLog;

using xn_test::Dist;
using xn_test::ExactEntry;

template <class T>
const char *type_name() {
  return sizeof(T) == sizeof(double) ? "double" : "float";
}

const xn::GemmAlgorithm *const kGeneral[] = {&xn::strassen_algorithm(),
                                             &xn::winograd_algorithm()};

// The bound is first order: the neglected terms are O(u^2), below (the
// longest chain of roundings, a few hundred here) * u relative to the
// bound itself, i.e. under 1e-4 even in float. 1.01 covers them with room
// and nothing else.
constexpr double kSecondOrder = 1.01;

constexpr double kPadC = -12345.0;  // C's padding rows: must stay untouched

// alpha * sum rounds unless alpha is a power of two.
bool power_of_two(double x) {
  int e = 0;
  return x != 0 && std::fabs(std::frexp(x, &e)) == 0.5;
}

enum class Input { Uniform, Paper };
const char *input_name(Input in) { return in == Input::Uniform ? "uniform" : "paper"; }

// ---------------------------------------------------------------------------
// A problem, its inputs and the exact values of the entries checked.

template <class T>
struct Problem {
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  T alpha = 1, beta = 0;
  Input input = Input::Uniform;
  std::vector<T> A, B, C0;  // C0's m x n part is NaN when beta == 0
  std::vector<std::pair<std::int64_t, std::int64_t>> where;  // entries checked
  std::vector<ExactEntry> exact;                             // and their values
  double max_a = 0, max_b = 0, max_c0 = 0;

  // Uniform [-1, 1] (or `dist`) or the paper's matrix (m = n = k) in A and
  // B with NaN padding, uniform [-1, 1] in C0 with kPadC padding.
  void draw(std::mt19937_64 &rng, Input in, Dist dist = Dist::UniformPm1, int pad = 2) {
    input = in;
    const std::int64_t ar = ta ? k : m, ac = ta ? m : k;
    const std::int64_t br = tb ? n : k, bc = tb ? k : n;
    lda = std::max<std::int64_t>(1, ar + pad);
    ldb = std::max<std::int64_t>(1, br + pad + 1);
    ldc = std::max<std::int64_t>(1, m + pad + 2);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    if (in == Input::Paper) {
      ASSERT_TRUE(m == k && n == k) << "the paper's matrices are square";
      const xn_test::PaperMatrix pm(k);
      pm.store(false, ta, lda, nan, A);
      pm.store(true, tb, ldb, nan, B);
    } else {
      xn_test::fill(A, ar, ac, lda, dist, rng, nan);
      xn_test::fill(B, br, bc, ldb, dist, rng, nan);
    }
    xn_test::fill(C0, m, n, ldc, Dist::UniformPm1, rng, T(kPadC));
    if (beta == T(0))  // BLAS: C is not read, so it may hold anything
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) C0[std::size_t(i + j * ldc)] = nan;
    max_a = max_abs(A, ar, ac, lda);
    max_b = max_abs(B, br, bc, ldb);
    max_c0 = beta == T(0) ? 0 : max_abs(C0, m, n, ldc);
  }

  // Exact values of every entry (samples <= 0), or of the last row and
  // column (where the peeled strips land), the first ones and `samples`
  // random entries: the oracle is the slow part of these tests.
  void solve(std::mt19937_64 &rng, std::int64_t samples = 0) {
    where.clear();
    if (samples <= 0) {
      xn_test::exact_gemm<T>(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta,
                             C0.data(), ldc, exact);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i) where.emplace_back(i, j);
      return;
    }
    for (std::int64_t i = 0; i < m; ++i) where.emplace_back(i, n - 1);
    for (std::int64_t j = 0; j + 1 < n; ++j) where.emplace_back(m - 1, j);
    for (std::int64_t s = 0; s < samples; ++s)
      where.emplace_back(std::int64_t(rng() % std::uint64_t(m)),
                         std::int64_t(rng() % std::uint64_t(n)));
    exact.clear();
    for (const auto &ij : where)
      exact.push_back(xn_test::exact_gemm_entry<T>(ta, tb, k, alpha, A.data(), lda,
                                                   B.data(), ldb, beta, C0.data(), ldc,
                                                   ij.first, ij.second));
  }

  // |alpha| max|op(A)| max|op(B)|: the bound's unit.
  double scale() const { return std::fabs(double(alpha)) * max_a * max_b; }
  // |beta| max|C0| in that unit.
  double beta_c0() const { return std::fabs(double(beta)) * max_c0 / scale(); }

  double bound(const xn::GemmAlgorithm &algo, int levels) const {
    return xn_test::fastgemm_error_bound(algo, levels, m, n, k, beta != T(0), beta_c0(),
                                         power_of_two(double(alpha)));
  }

  std::string describe() const {
    std::ostringstream s;
    s << type_name<T>() << " " << input_name(input) << " m=" << m << " n=" << n
      << " k=" << k << " ta=" << ta << " tb=" << tb << " lda=" << lda << " ldb=" << ldb
      << " ldc=" << ldc << " alpha=" << alpha << " beta=" << beta;
    return s.str();
  }

  static double max_abs(const std::vector<T> &X, std::int64_t r, std::int64_t c,
                        std::int64_t ld) {
    double v = 0;
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t i = 0; i < r; ++i)
        v = std::max(v, std::fabs(double(X[std::size_t(i + j * ld)])));
    return v;
  }
};

// How a result compares with the oracle: the largest error in units of
// u |alpha| max|A| max|B|, its ratio to the bound, the first failure.
struct Outcome {
  double max_err = 0, max_ratio = 0;
  std::string failure;
};

template <class T>
Outcome judge(const Problem<T> &p, const std::vector<T> &C, double bound) {
  Outcome r;
  const double unit = unit_roundoff<T>() * p.scale();
  for (std::size_t e = 0; e < p.where.size(); ++e) {
    const std::int64_t i = p.where[e].first, j = p.where[e].second;
    const double got = double(C[std::size_t(i + j * p.ldc)]);
    const double err = xn_test::abs_error(got, p.exact[e]) / unit;
    const double ratio = std::isnan(err) ? INFINITY : err / bound;
    r.max_err = std::max(r.max_err, std::isnan(err) ? INFINITY : err);
    r.max_ratio = std::max(r.max_ratio, ratio);
    if (!(err <= kSecondOrder * bound) && r.failure.empty()) {
      std::ostringstream s;
      s.precision(17);
      s << "entry (" << i << "," << j << "): got " << got << " exact " << p.exact[e].hi
        << " + " << p.exact[e].lo << ", error " << err << " u|alpha|max|A|max|B| > bound "
        << bound;
      r.failure = s.str();
    }
  }
  for (std::int64_t j = 0; j < p.n && r.failure.empty(); ++j)
    for (std::int64_t i = p.m; i < p.ldc; ++i)
      if (C[std::size_t(i + j * p.ldc)] != T(kPadC)) {
        r.failure = "padding of C written at (" + std::to_string(i) + "," +
                    std::to_string(j) + ")";
        break;
      }
  return r;
}

template <class T>
std::vector<T> run_cpu(const Problem<T> &p, const xn::GemmAlgorithm &algo, int levels,
                       const xn::Options &opt, int *levels_run = nullptr) {
  std::vector<T> C = p.C0;
  const xn::Status st = xn::cpu_recursive_gemm<T>(
      algo, p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda, p.B.data(), p.ldb,
      p.beta, C.data(), p.ldc, opt, levels, xn::CpuLeaf::OpenBlas, nullptr, nullptr,
      levels_run);
  EXPECT_EQ(st, xn::Status::Ok) << p.describe();
  return C;
}

// The largest error and error/bound seen per algorithm, precision, input
// and depth, printed at the end of the sweep.
struct Worst {
  double err = 0, ratio = 0, bound = 0;
  int runs = 0;
  void add(const Outcome &o, double b) {
    ++runs;
    err = std::max(err, o.max_err);
    if (o.max_ratio >= ratio) {
      ratio = o.max_ratio;
      bound = b;
    }
  }
};

// ---------------------------------------------------------------------------
// The bound itself against Higham's constants.

// Higham, ASNA 2nd ed., section 23.2.2, for square n = n0 2^L: Strassen
// (n/n0)^log2(12) (n0^2 + 5 n0) - 5n, Winograd (n/n0)^log2(18) (n0^2 + 6 n0)
// - 6n, i.e. the recurrences f(2h) = 12 f(h) + 50 h and 18 f(h) + 96 h over
// f(n0) = n0^2. The tables give exactly Strassen's: the worst quadrants
// (C11, C22) take 20 h from their products' operand errors and 30 h from
// their three additions (partial magnitudes 8, 10, 12 in the order Li et
// al.'s fused passes add them: M7 + M1 + M4 - M5 and M6 + M1 - M2 + M3).
// For Winograd they give less, 18 f(h) + 89 h: the worst quadrants (C12,
// C21) take 47 h from their products' operand errors (M1 = S2 T2: 30 h,
// M5 or M4: 8 h, M6 or M7: 9 h) and 42 h from their three additions (one
// left-to-right sum, partial magnitudes 10, 14, 18), where the textbook's
// by-hand recurrence charges 96 h per level. So ours <= textbook, by 3 % at
// most for n0 >= 8, with the same leading term 18^L n0^2.
TEST(FastGemmErrorBound, MatchesTheTextbookConstantsForSquarePowersOfTwo) {
  std::printf("  n0  L   strassen: ours / textbook        winograd: ours / textbook\n");
  for (double n0 : {8.0, 16.0, 32.0, 1024.0})
    for (int L = 1; L <= 3; ++L) {
      const double n = n0 * double(1 << L);
      const std::int64_t ni = std::int64_t(n);
      const double st = xn_test::fastgemm_error_bound(xn::strassen_algorithm(), L, ni, ni,
                                                      ni, false, 0, true);
      const double wi = xn_test::fastgemm_error_bound(xn::winograd_algorithm(), L, ni, ni,
                                                      ni, false, 0, true);
      const double st_book = xn_test::textbook_strassen_bound(n, n0);
      const double wi_book = xn_test::textbook_winograd_bound(n, n0);
      std::printf("%4.0f  %d  %11.5g / %-11.5g (%.4f)  %11.5g / %-11.5g (%.4f)\n", n0, L,
                  st, st_book, st / st_book, wi, wi_book, wi / wi_book);
      EXPECT_NEAR(st / st_book, 1.0, 1e-12) << "n0 " << n0 << " L " << L;
      EXPECT_LE(wi, wi_book * (1 + 1e-12)) << "n0 " << n0 << " L " << L;
      EXPECT_GE(wi, 0.96 * wi_book) << "n0 " << n0 << " L " << L;
    }
  // With beta the top level runs the accumulating tables: beta * C0 enters
  // each quadrant by one fma and then the later partial sums into it, so
  // the bound grows by a small multiple of Mold, not by a factor.
  for (const xn::GemmAlgorithm *a : kGeneral) {
    const double zero = xn_test::fastgemm_error_bound(*a, 2, 64, 64, 64, false, 0, true);
    const double one = xn_test::fastgemm_error_bound(*a, 2, 64, 64, 64, true, 1.0, true);
    EXPECT_GT(one, zero * 0.9) << a->name;
    EXPECT_LT(one, zero * 1.1) << a->name;
  }
}

// The evaluator models products that assign; the non-negative schedule's
// "C11 += A12 * B21" is refused rather than bounded wrongly.
TEST(FastGemmErrorBound, RefusesTablesWhoseProductsAccumulate) {
  EXPECT_THROW(xn_test::table_bound(xn::winograd_nonneg_schedule(), 8, 64, false, 0),
               std::invalid_argument);
  for (const xn::GemmAlgorithm *a : kGeneral) {
    EXPECT_NO_THROW(xn_test::table_bound(*a->zero_beta, 8, 64, false, 0)) << a->name;
    EXPECT_NO_THROW(xn_test::table_bound(*a->any_beta, 8, 64, true, 1)) << a->name;
  }
}

// The paper's matrices: B = A^-1 (Sherman-Morrison), so the exact product
// of the stored ones is I up to the rounding of the inputs:
// |A^ B^ - I| <= 2 u |A||B| + O(u^2), entry by entry.
template <class T>
void paper_product_is_identity(std::int64_t n) {
  Problem<T> p;
  p.m = p.n = p.k = n;
  std::mt19937_64 rng(1);
  p.draw(rng, Input::Paper);
  p.solve(rng);
  double worst = 0;
  for (std::size_t e = 0; e < p.where.size(); ++e) {
    const double want = p.where[e].first == p.where[e].second ? 1.0 : 0.0;
    const double dev = std::fabs((p.exact[e].hi - want) + p.exact[e].lo);
    const double bound = 2 * unit_roundoff<T>() * p.exact[e].magnitude;
    worst = std::max(worst, dev / bound);
    EXPECT_LE(dev, kSecondOrder * bound)
        << type_name<T>() << " N=" << n << " entry (" << p.where[e].first << ","
        << p.where[e].second << ")";
  }
  std::printf(
      "  %s N=%lld: max|A^B^ - I| / (2u|A||B|) = %.3f, max|A| %.3g, max|B| %.3g\n",
      type_name<T>(), static_cast<long long>(n), worst, p.max_a, p.max_b);
}

TEST(PaperMatrix, TheExactProductIsTheIdentityUpToTheInputsRounding) {
  for (std::int64_t n : {64, 97}) {
    paper_product_is_identity<double>(n);
    paper_product_is_identity<float>(n);
  }
}

// ---------------------------------------------------------------------------
// Every entry within the bound, depths 0..3.

struct SweepCase {
  std::int64_t m, n, k;
  Input input;
  std::int64_t samples;  // 0: every entry against the oracle
};

// Sizes 64..256 put the leaves of 3 levels at 8..32. Odd sizes peel every
// strip (k-strip, bottom rows, right columns; 130 x 99 x 135: 2, 3 and 7 of
// them at 3 levels); the 256 and 255 cases check the last row and column
// and a sample of entries only (the oracle is the slow part).
const SweepCase kSweep[] = {
    {64, 64, 64, Input::Uniform, 0},    {67, 45, 81, Input::Uniform, 0},
    {33, 70, 129, Input::Uniform, 0},   {130, 99, 135, Input::Uniform, 0},
    {64, 64, 64, Input::Paper, 0},      {97, 97, 97, Input::Paper, 0},
    {128, 128, 128, Input::Paper, 0},   {256, 256, 256, Input::Uniform, 300},
    {255, 255, 255, Input::Paper, 300},
};

// (alpha, beta): beta = 0 over NaN, 1, -0.5; alpha exact or rounding.
const double kScalars[][2] = {{1, 0},       {0.75, 1}, {1, -0.5},
                              {-1.5, -0.5}, {2, 1},    {0.75, 0}};

template <class T>
void sweep(std::uint64_t seed, Worst (&worst)[2][2][4]) {
  std::mt19937_64 rng(seed);
  xn::Options opt;
  int turn = 0;
  for (const SweepCase &sc : kSweep)
    for (int t = 0; t < 4; ++t, ++turn) {
      Problem<T> p;
      p.m = sc.m;
      p.n = sc.n;
      p.k = sc.k;
      p.ta = t & 1;
      p.tb = (t & 2) != 0;
      p.alpha = T(kScalars[turn % 6][0]);
      p.beta = T(kScalars[turn % 6][1]);
      p.draw(rng, sc.input);
      p.solve(rng, sc.samples);
      for (int a = 0; a < 2; ++a)
        for (int L = 0; L <= 3; ++L) {
          // Either side's temporaries transposed, automatic or
          // non-transposed.
          opt.normal_b_temps = (turn + L) % 3 - 1;
          opt.normal_a_temps = (turn + 2 * L + a) % 3 - 1;
          int ran = -1;
          const std::vector<T> C = run_cpu(p, *kGeneral[a], L, opt, &ran);
          EXPECT_EQ(ran, L) << p.describe();
          const double b = p.bound(*kGeneral[a], L);
          const Outcome o = judge(p, C, b);
          worst[a][int(sc.input)][L].add(o, b);
          EXPECT_TRUE(o.failure.empty())
              << kGeneral[a]->name << " L=" << L << " " << p.describe() << ": "
              << o.failure << "; " << xn_test::describe_seed(seed);
        }
    }
}

template <class T>
void print_worst(const Worst (&worst)[2][2][4]) {
  for (int a = 0; a < 2; ++a)
    for (int in = 0; in < 2; ++in)
      for (int L = 0; L <= 3; ++L) {
        const Worst &w = worst[a][in][L];
        std::printf(
            "  %-8s %-6s %-7s L=%d: max error %8.3g u|alpha||A||B|, max error/bound "
            "%.2e (bound %.3g), %d runs\n",
            kGeneral[a]->name, type_name<T>(), input_name(Input(in)), L, w.err, w.ratio,
            w.bound, w.runs);
      }
}

TEST(FastGemmCpuAccuracy, EveryEntryWithinTheBoundAtDepthsZeroToThree) {
  const std::uint64_t seed = xn_test::fresh_seed();
  Worst wd[2][2][4], ws[2][2][4];
  sweep<double>(seed, wd);
  sweep<float>(seed + 1, ws);
  print_worst<double>(wd);
  print_worst<float>(ws);
}

// ---------------------------------------------------------------------------
// The bound catches a wrong schedule: Li et al.'s tables with one product's
// sign flipped where it reaches C (Strassen's M1 into C11, Winograd's M2
// into C11), parsed and run through the same executor and CPU backend.

// kStrassen of src/core/schedule.cpp, "(C11, C22) += T1" -> C11 - T1.
const char *const kStrassenFlipped[] = {
    "C12 = A21 - A11",
    "C21 = B11 + B12",
    "C22 = C12 * C21",
    "C12 = A12 - A22",
    "C21 = B21 + B22",
    "C11 = C12 * C21",
    "(C12, T2) = (A11 + A22, A21 + A22)",
    "C21 = B11 + B22",
    "T1 = C12 * C21",
    "(C11, C22) = (C11 - T1, C22 + T1)",  // flipped: C11 gets -M1
    "C21 = T2 * B11",
    "T1 = B21 - B11",
    "T2 = A22 * T1",
    "(C11, C21, C22) = (C11 + T2, C21 + T2, C22 - C21)",
    "T1 = B12 - B22",
    "C12 = A11 * T1",
    "T2 = A11 + A12",
    "T1 = T2 * B22",
    "(C11, C12, C22) = (C11 - T1, C12 + T1, C22 + C12)",
};
// kWinograd, the last step "C11 += T1" -> "C11 -= T1" (C11 = M3 - M2).
const char *const kWinogradFlipped[] = {
    "T1 = A11 - A21",
    "T2 = B22 - B12",
    "C21 = T1 * T2",
    "T1 = A21 + A22",
    "T2 = B12 - B11",
    "C22 = T1 * T2",
    "T1 = T1 - A11",
    "T2 = B22 - T2",
    "C11 = T1 * T2",
    "T1 = A12 - T1",
    "C12 = T1 * B22",
    "T1 = A11 * B11",
    "(C12, C11) = (C11 + T1 + C22 + C12, C11 + T1 + C21)",
    "T2 = T2 - B21",
    "C21 = A22 * T2",
    "(C21, C22) = (C11 - C21, C11 + C22)",
    "C11 = A12 * B21",
    "C11 -= T1",  // flipped
};

// C = alpha op(A) op(B) (beta = 0) by `algo` at `levels` through the
// executor itself.
template <class T>
std::vector<T> run_executor(const Problem<T> &p, const xn::GemmAlgorithm &algo,
                            int levels) {
  std::vector<T> C = p.C0;
  xn::CpuBackend<T> be(p.alpha, p.beta);
  std::vector<T> ws(std::size_t(std::max<xn::index_t>(
      1, xn::call_workspace_elems(algo, false, p.m, p.n, p.k, levels, p.ta, p.tb, false,
                                  false))));
  const xn::Status st = xn::recursive_gemm<T>(
      be, algo, levels, xn::MatView<const T>{p.A.data(), p.m, p.k, p.lda, p.ta},
      xn::MatView<const T>{p.B.data(), p.k, p.n, p.ldb, p.tb}, xn::ScalarKind::Zero,
      xn::MatView<T>{C.data(), p.m, p.n, p.ldc, false}, ws.data(), 0, false, false);
  EXPECT_EQ(st, xn::Status::Ok);
  return C;
}

TEST(FastGemmCpuAccuracy, AScheduleWithOneProductSignFlippedBreaksTheBound) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  xn::Schedule flipped[2];
  std::string error;
  ASSERT_TRUE(xn::parse_schedule("strassen, M1 flipped in C11", kStrassenFlipped,
                                 std::size(kStrassenFlipped), false, &flipped[0], &error))
      << error;
  ASSERT_TRUE(xn::parse_schedule("winograd, M2 flipped in C11", kWinogradFlipped,
                                 std::size(kWinogradFlipped), false, &flipped[1], &error))
      << error;
  Problem<double> p;
  p.m = p.n = p.k = 64;
  p.ta = false;
  p.tb = true;
  p.draw(rng, Input::Uniform);
  p.solve(rng);
  for (int a = 0; a < 2; ++a) {
    const xn::GemmAlgorithm &good = *kGeneral[a];
    const xn::GemmAlgorithm bad{good.kind,           "flipped", &flipped[a],
                                good.any_beta,       false,     good.pack_budget_num,
                                good.pack_budget_den};
    for (int L = 1; L <= 3; ++L) {
      const double b = p.bound(good, L);
      const Outcome ok = judge(p, run_executor(p, good, L), b);
      const Outcome broken = judge(p, run_executor(p, bad, L), b);
      std::printf("  %s L=%d: error/bound %.2e with the table, %.2e with %s\n", good.name,
                  L, ok.max_ratio, broken.max_ratio, flipped[a].name.c_str());
      EXPECT_TRUE(ok.failure.empty()) << good.name << " L=" << L << ": " << ok.failure;
      // Not a near miss: a wrong sign is a whole product off, the bound a
      // few thousand roundings.
      EXPECT_GT(broken.max_ratio, 1e6)
          << good.name << " L=" << L << "; " << xn_test::describe_seed(seed);
    }
  }
}

// ---------------------------------------------------------------------------
// Non-negative data: the general routines beside ?ngemm (whose schedule is
// built for that case). Informative only: the paper's claim is about speed
// for any signs; the ratio printed shows the price of generality.
TEST(FastGemmCpuAccuracy, NonNegativeDataErrorBesideNgemm) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const xn::Options opt;
  for (int prec = 0; prec < 2; ++prec) {
    auto one = [&](auto tag) {
      using T = decltype(tag);
      Problem<T> p;
      p.m = p.n = p.k = 128;
      p.draw(rng, Input::Uniform, Dist::Uniform01);
      p.solve(rng);
      for (int L = 1; L <= 3; ++L) {
        std::vector<T> Cn = p.C0;
        ASSERT_EQ(
            xn::cpu_ngemm<T>(false, false, p.m, p.n, p.k, p.alpha, p.A.data(), p.lda,
                             p.B.data(), p.ldb, p.beta, Cn.data(), p.ldc, opt, L),
            xn::Status::Ok);
        const double e_ngemm = judge(p, Cn, 1.0).max_err;
        double e[2];
        for (int a = 0; a < 2; ++a) {
          const double b = p.bound(*kGeneral[a], L);
          const Outcome o = judge(p, run_cpu(p, *kGeneral[a], L, opt), b);
          EXPECT_TRUE(o.failure.empty()) << kGeneral[a]->name << ": " << o.failure;
          e[a] = o.max_err;
        }
        std::printf(
            "  %s 128^3 uniform [0,1] L=%d: max error (u|A||B|) ngemm %.3g, strassen "
            "%.3g "
            "(%.2fx), winograd %.3g (%.2fx)\n",
            type_name<T>(), L, e_ngemm, e[0], e[0] / e_ngemm, e[1], e[1] / e_ngemm);
      }
    };
    if (prec == 0)
      one(double());
    else
      one(float());
  }
}

// ---------------------------------------------------------------------------
// The host entry points on the CPU (XN_DEVICE=cpu), with a small leaf so
// that they recurse at these sizes.

constexpr int kLeaf = 16;
constexpr int kMaxLevels = 3;

class FastGemmHostOnCpu : public ::testing::Test {
 protected:
  static constexpr xnOption_t kLeafOptions[] = {
      XN_OPT_STRASSEN_LEAF_S, XN_OPT_STRASSEN_LEAF_D, XN_OPT_WINOGRAD_LEAF_S,
      XN_OPT_WINOGRAD_LEAF_D};
  static constexpr xnOption_t kMinSizeOptions[] = {
      XN_OPT_STRASSEN_MIN_SIZE_S, XN_OPT_STRASSEN_MIN_SIZE_D, XN_OPT_WINOGRAD_MIN_SIZE_S,
      XN_OPT_WINOGRAD_MIN_SIZE_D};

  void SetUp() override {
    state_ = std::make_unique<xn_test::HostStateGuard>("cpu");
    // No crossover: the small leaf alone decides the depth.
    for (xnOption_t o : kLeafOptions)
      ASSERT_EQ(xnSetOption(nullptr, o, kLeaf), CUBLAS_STATUS_SUCCESS);
    for (xnOption_t o : kMinSizeOptions)
      ASSERT_EQ(xnSetOption(nullptr, o, 0), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_MAX_LEVELS, kMaxLevels), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_WORKSPACE_LIMIT, -1), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_PACK_TRANS_B, -1), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_PACK_TRANS_A, -1), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override { state_.reset(); }

  std::uint64_t seed_ = xn_test::fresh_seed();

 private:
  std::unique_ptr<xn_test::HostStateGuard> state_;  // every option, XN_DEVICE
};

// The entry points of one precision, in the order Strassen, Winograd.
template <class T>
struct HostApi;
template <>
struct HostApi<double> {
  using F77 = void (*)(const char *, const char *, const int *, const int *, const int *,
                       const double *, const double *, const int *, const double *,
                       const int *, const double *, double *, const int *);
  using Cblas = void (*)(int, int, int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);
  static constexpr F77 f77[2] = {dstgemm_, dwigemm_};
  static constexpr Cblas cblas[2] = {cblas_dstgemm, cblas_dwigemm};
  static constexpr const char *f77_name[2] = {"DSTGEMM", "DWIGEMM"};
  static constexpr const char *cblas_name[2] = {"cblas_dstgemm", "cblas_dwigemm"};
};
template <>
struct HostApi<float> {
  using F77 = void (*)(const char *, const char *, const int *, const int *, const int *,
                       const float *, const float *, const int *, const float *,
                       const int *, const float *, float *, const int *);
  using Cblas = void (*)(int, int, int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
  static constexpr F77 f77[2] = {sstgemm_, swigemm_};
  static constexpr Cblas cblas[2] = {cblas_sstgemm, cblas_swigemm};
  static constexpr const char *f77_name[2] = {"SSTGEMM", "SWIGEMM"};
  static constexpr const char *cblas_name[2] = {"cblas_sstgemm", "cblas_swigemm"};
};

template <class T>
bool same_bits(const std::vector<T> &x, const std::vector<T> &y) {
  return x.size() == y.size() &&
         std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

struct HostShape {
  int m, n, k;
  std::int64_t samples;
};

// Every entry point of precision T on one problem: the Fortran call and the
// CBLAS calls in both layouts (row-major C^T = op(B)^T op(A)^T, which the
// library runs as the same column-major product) give the bits of the CPU
// recursion at the depth the options choose, within the bound.
template <class T>
void host_case(std::mt19937_64 &rng, std::uint64_t seed, const HostShape &s, int ta,
               int tb, int turn) {
  Problem<T> p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.ta = ta != 0;
  p.tb = tb != 0;
  p.alpha = T(kScalars[turn % 6][0]);
  p.beta = T(kScalars[turn % 6][1]);
  p.draw(rng, Input::Uniform, Dist::UniformPm1, turn % 3);
  p.solve(rng, s.samples);
  // Fortran: 'N'/'n', 'T'/'t', 'C'/'c' (C is T for real data); CBLAS
  // likewise with NoTrans, Trans, ConjTrans.
  const char f77_chars[3][2] = {{'N', 'n'}, {'T', 't'}, {'C', 'c'}};
  const int cblas_ops[3] = {XnNoTrans, XnTrans, XnConjTrans};
  const int fa = ta, fb = tb;
  const char ca = f77_chars[fa][turn % 2], cb = f77_chars[fb][(turn / 2) % 2];
  const int oa = cblas_ops[fa], ob = cblas_ops[fb];
  const int m = s.m, n = s.n, k = s.k, lda = int(p.lda), ldb = int(p.ldb),
            ldc = int(p.ldc);
  const int want_levels = xn::choose_levels(m, n, k, kLeaf, kMaxLevels);
  for (int a = 0; a < 2; ++a) {
    SCOPED_TRACE(std::string(HostApi<T>::f77_name[a]) + " " + p.describe() + "; " +
                 xn_test::describe_seed(seed));
    int ran = -1;
    const std::vector<T> ref = run_cpu(p, *kGeneral[a], -1, xn::default_options(), &ran);
    EXPECT_EQ(ran, want_levels);
    g_xerbla = XerblaLog{};
    std::vector<T> C = p.C0, Ccol = p.C0, Crow = p.C0;
    HostApi<T>::f77[a](&ca, &cb, &m, &n, &k, &p.alpha, p.A.data(), &lda, p.B.data(), &ldb,
                       &p.beta, C.data(), &ldc);
    int host_levels = -2;
    ASSERT_EQ(xnGetLastLevels(nullptr, &host_levels), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(host_levels, want_levels) << "the thread's last host call's depth";
    HostApi<T>::cblas[a](XnColMajor, oa, ob, m, n, k, p.alpha, p.A.data(), lda,
                         p.B.data(), ldb, p.beta, Ccol.data(), ldc);
    HostApi<T>::cblas[a](XnRowMajor, ob, oa, n, m, k, p.alpha, p.B.data(), ldb,
                         p.A.data(), lda, p.beta, Crow.data(), ldc);
    EXPECT_EQ(g_xerbla.calls, 0) << "xerbla called on a valid call";
    EXPECT_TRUE(same_bits(C, ref)) << "Fortran entry point";
    EXPECT_TRUE(same_bits(Ccol, ref)) << "CBLAS column-major";
    EXPECT_TRUE(same_bits(Crow, ref)) << "CBLAS row-major";
    const Outcome o = judge(p, C, p.bound(*kGeneral[a], want_levels));
    EXPECT_TRUE(o.failure.empty()) << "levels " << want_levels << ": " << o.failure;
  }
}

TEST_F(FastGemmHostOnCpu, EveryEntryPointEveryTransposeWithinTheBound) {
  std::mt19937_64 rng(seed_);
  // Depths 3, 2, 1 and 0 with leaf 16 (choose_levels).
  const HostShape shapes[] = {
      {131, 129, 133, 200}, {70, 67, 69, 0}, {40, 33, 70, 0}, {5, 7, 3, 0}};
  int turn = 0;
  for (const HostShape &s : shapes)
    for (int ta = 0; ta < 3; ++ta)
      for (int tb = 0; tb < 3; ++tb, ++turn) {
        // ConjTrans only on the smaller shapes: it is Trans.
        if ((ta == 2 || tb == 2) && s.m > 100) continue;
        host_case<double>(rng, seed_, s, ta, tb, turn);
        host_case<float>(rng, seed_, s, ta, tb, turn);
        if (HasFatalFailure()) return;
      }
}

// BLAS quick returns through the new names: m = 0 or n = 0 leaves C alone;
// alpha = 0 and k = 0 only scale C by beta (beta = 0 writes zeros over NaN,
// A and B unread).
TEST_F(FastGemmHostOnCpu, QuickReturnsAsBlas) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> A(64, nan), B(64, nan);
  for (int a = 0; a < 2; ++a) {
    std::vector<double> C(16, 3.0);
    const int four = 4, zero = 0, ld = 4;
    const double one = 1, two = 2, none = 0;
    HostApi<double>::f77[a]("N", "N", &zero, &four, &four, &one, A.data(), &ld, B.data(),
                            &ld, &two, C.data(), &ld);
    EXPECT_EQ(C, std::vector<double>(16, 3.0)) << "m = 0";
    HostApi<double>::f77[a]("N", "N", &four, &four, &four, &none, A.data(), &ld, B.data(),
                            &ld, &two, C.data(), &ld);
    EXPECT_EQ(C, std::vector<double>(16, 6.0)) << "alpha = 0";
    HostApi<double>::cblas[a](XnRowMajor, XnNoTrans, XnNoTrans, 4, 4, 0, 1.0, A.data(), 4,
                              B.data(), 4, 0.5, C.data(), 4);
    EXPECT_EQ(C, std::vector<double>(16, 3.0)) << "k = 0";
    std::vector<float> Cs(16, nan);
    const std::vector<float> As(64, float(nan)), Bs(64, float(nan));
    const float fone = 1, fzero = 0;
    HostApi<float>::f77[a]("T", "T", &four, &four, &zero, &fone, As.data(), &ld,
                           Bs.data(), &ld, &fzero, Cs.data(), &ld);
    EXPECT_EQ(Cs, std::vector<float>(16, 0.0f)) << "k = 0, beta = 0 over NaN";
  }
}

// ------------------------------------------------------------ bad arguments

using xn_test::BadCblas;
using xn_test::BadF77;
using xn_test::c_pattern;
using xn_test::kBadCblas;
using xn_test::kBadF77;

template <class T>
void bad_arguments() {
  const std::vector<T> A(64, T(1)), B(64, T(1)), pattern = c_pattern<T>();
  const T one = 1, zero = 0;
  for (int a = 0; a < 2; ++a) {
    for (const BadF77 &b : kBadF77) {
      std::vector<T> C = pattern;
      g_xerbla = XerblaLog{};
      HostApi<T>::f77[a](&b.ta, &b.tb, &b.m, &b.n, &b.k, &one, A.data(), &b.lda, B.data(),
                         &b.ldb, &zero, C.data(), &b.ldc);
      SCOPED_TRACE(std::string(HostApi<T>::f77_name[a]) + " ta=" + b.ta + " tb=" + b.tb +
                   " m=" + std::to_string(b.m) + " n=" + std::to_string(b.n) +
                   " k=" + std::to_string(b.k) + " lda=" + std::to_string(b.lda) +
                   " ldb=" + std::to_string(b.ldb) + " ldc=" + std::to_string(b.ldc));
      EXPECT_EQ(g_xerbla.calls, 1);
      EXPECT_EQ(g_xerbla.name, HostApi<T>::f77_name[a]);
      EXPECT_EQ(g_xerbla.info, b.info);
      EXPECT_TRUE(same_bits(C, pattern)) << "C written after a bad argument";
    }
    for (const BadCblas &b : kBadCblas) {
      std::vector<T> C = pattern;
      g_xerbla = XerblaLog{};
      HostApi<T>::cblas[a](b.layout, b.ta, b.tb, b.m, b.n, b.k, one, A.data(), b.lda,
                           B.data(), b.ldb, zero, C.data(), b.ldc);
      SCOPED_TRACE(std::string(HostApi<T>::cblas_name[a]) +
                   " layout=" + std::to_string(b.layout) + " ta=" + std::to_string(b.ta) +
                   " tb=" + std::to_string(b.tb) + " m=" + std::to_string(b.m) +
                   " n=" + std::to_string(b.n) + " k=" + std::to_string(b.k) +
                   " lda=" + std::to_string(b.lda) + " ldb=" + std::to_string(b.ldb) +
                   " ldc=" + std::to_string(b.ldc));
      EXPECT_EQ(g_xerbla.calls, 1);
      EXPECT_EQ(g_xerbla.name, HostApi<T>::cblas_name[a]);
      EXPECT_EQ(g_xerbla.info, b.pos);
      EXPECT_TRUE(same_bits(C, pattern)) << "C written after a bad argument";
    }
  }
}

TEST_F(FastGemmHostOnCpu, BadArgumentsReportedViaXerbla) {
  bad_arguments<double>();
  bad_arguments<float>();
}

}  // namespace
