// test_fastgemm_schedule.cpp - the schedule language and the general-input
// tables (Strassen and Winograd, Li, Ranka, Sahni, ICPADS'11): the parser's
// checks, every table symbolically against the classical product (with and
// without beta), the workspace layout (two temporaries per level, C as
// scratch, spares for shapes whose scratch does not fit), and the executor
// exactly on small integer matrices at 1, 2 and 3 levels through both CPU
// leaves, every transpose pair, odd and rectangular sizes, alpha and beta.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/executor.h"
#include "core/gemm_driver.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "numerics/elementwise.h"
#include "support/schedule_symbolic.h"
#include "support/test_support.h"

namespace {

using xn::Operand;
using xn::StepKind;

const xn::GemmAlgorithm *const kAlgorithms[] = {&xn::nonneg_winograd_algorithm(),
                                                &xn::strassen_algorithm(),
                                                &xn::winograd_algorithm()};
const xn::GemmAlgorithm *const kGeneral[] = {&xn::strassen_algorithm(),
                                             &xn::winograd_algorithm()};

bool parses(std::vector<const char *> lines, bool any_beta, std::string *why = nullptr) {
  xn::Schedule s;
  std::string error;
  const bool ok =
      xn::parse_schedule("test", lines.data(), lines.size(), any_beta, &s, &error);
  if (why) *why = error;
  return ok;
}

// A correct table to mutate: Strassen's seven products into C with S, T, U.
std::vector<const char *> good_table() {
  return {"S = A11 + A22",
          "T = B11 + B22",
          "U = S * T",
          "(C11, C22) = U",
          "S = A21 + A22",
          "U = S * B11",
          "(C21, C22) = (U, C22 - U)",
          "T = B12 - B22",
          "U = A11 * T",
          "(C12, C22) = (U, C22 + U)",
          "T = B21 - B11",
          "U = A22 * T",
          "(C11, C21) += U",
          "S = A11 + A12",
          "U = S * B22",
          "(C11, C12) = (C11 - U, C12 + U)",
          "S = A21 - A11",
          "T = B11 + B12",
          "U = S * T",
          "C22 += U",
          "S = A12 - A22",
          "T = B21 + B22",
          "U = S * T",
          "C11 += U"};
}

TEST(ScheduleLanguage, TheTablesParseWithTheirRoles) {
  for (const xn::GemmAlgorithm *a : kAlgorithms) {
    EXPECT_EQ(a->zero_beta->products, 7) << a->name;
    EXPECT_EQ(a->any_beta->products, 7) << a->name;
    EXPECT_TRUE(a->any_beta->any_beta) << a->name;
  }
  // Li et al.'s tables use C12 and C21 (Strassen) as scratch and two
  // temporaries, T1 and T2, each holding values of several roles.
  const xn::Schedule &st = xn::strassen_schedule();
  EXPECT_FALSE(st.any_beta);
  EXPECT_EQ(st.c_roles[1], xn::role_bit(xn::Role::A) | xn::role_bit(xn::Role::C));
  EXPECT_EQ(st.c_roles[2], xn::role_bit(xn::Role::B) | xn::role_bit(xn::Role::C));
  int temps = 0;
  for (unsigned r : st.temp_roles) temps += r != 0;
  EXPECT_EQ(temps, 2);
  const xn::Schedule &wi = xn::winograd_schedule();
  temps = 0;
  for (unsigned r : wi.temp_roles) temps += r != 0;
  EXPECT_EQ(temps, 2);
  for (int q = 0; q < 4; ++q) EXPECT_EQ(wi.c_roles[q], xn::role_bit(xn::Role::C)) << q;
}

TEST(ScheduleLanguage, MalformedTablesAreRejectedWithAReason) {
  std::string why;
  ASSERT_TRUE(parses(good_table(), true, &why)) << why;
  struct Bad {
    std::vector<const char *> lines;
    bool any_beta;
  };
  std::vector<Bad> bad;
  auto mutate = [&](std::size_t i, const char *line, bool any_beta = true) {
    std::vector<const char *> t = good_table();
    t[i] = line;
    bad.push_back({t, any_beta});
  };
  mutate(0, "S = A11 + Q22");                  // unknown operand
  mutate(0, "S = A11 +");                      // syntax
  mutate(0, "S = A11 + A11");                  // an operand twice in one expression
  mutate(2, "U = T * S");                      // B-role times A-role
  mutate(2, "U = S * S");                      // A-role times A-role
  mutate(3, "(C11, C11) = U");                 // a target twice
  mutate(3, "(C11, C22) = (U, U, U)");         // three expressions, two targets
  mutate(3, "C11 = U + C12");                  // C12 read before it is written
  mutate(3, "A11 = U");                        // writes an input
  mutate(4, "S = A21 + B22");                  // roles mixed in one step
  mutate(12, "(C11, C21) = U");                // overwrites C11 (beta * C lost) ...
  mutate(0, "C12 = A11 + A22");                // ... or uses C as scratch, with any beta
  mutate(23, "C11 += S * T");                  // an eighth product
  mutate(2, "T = S * T");                      // a product's target is one of its factors
  mutate(1, "T = B11 + B22 - B12");            // op(B) in a step no transposing pass does
  mutate(1, "T = -B11 - B22");                 // ... nor with two negative terms
  mutate(0, "S = A11 + A22 - A21");            // the same for op(A)
  mutate(0, "S = -A11 - A22");                 // ... and two negative terms
  mutate(4, "(S, U) = (A21 + A22, S - A11)");  // reads a target of its own step
  bad.push_back({{"U = A11 * B11", "(C11, C12, C21, C22) = U"}, true});  // 1 product
  for (std::size_t i = 0; i < bad.size(); ++i)
    EXPECT_FALSE(parses(bad[i].lines, bad[i].any_beta, &why)) << "case " << i;
  // The same scratch use is fine in a beta = 0 table.
  std::vector<const char *> t = good_table();
  t[0] = "C12 = A11 + A22";
  t[2] = "U = C12 * T";
  EXPECT_TRUE(parses(t, false, &why)) << why;
  EXPECT_FALSE(parses(t, true));
}

TEST(ScheduleLanguage, EachTargetIsSummedInTheOrderWritten) {
  // The sources of a fused step are ordered so that every target's terms
  // come in the order its expression is written (they are summed in source
  // order): Strassen's "(C11, C21, C22) = (C11 + T2, C21 + T2, C22 - C21)"
  // needs C22 before C21 before T2.
  const xn::Step *fused = nullptr;
  for (const xn::Step &st : xn::strassen_schedule().steps)
    if (st.kind == StepKind::Combine && st.ndst == 3 && st.dst[1] == Operand::C21)
      fused = &st;
  ASSERT_NE(fused, nullptr);
  ASSERT_EQ(fused->nsrc, 4);
  EXPECT_EQ(fused->src[0], Operand::C11);
  EXPECT_EQ(fused->src[1], Operand::C22);
  EXPECT_EQ(fused->src[2], Operand::C21);
  EXPECT_EQ(fused->src[3], Operand::T2);
  const signed char c22[4] = {0, 1, -1, 0};
  for (int s = 0; s < 4; ++s) EXPECT_EQ(fused->coef[2][s], c22[s]) << s;

  xn::Schedule s;
  std::string why;
  std::vector<const char *> t = good_table();
  t[15] = "(C12, C11) = (C11 + U + C12, C11 - C12)";
  ASSERT_TRUE(xn::parse_schedule("order", t.data(), t.size(), false, &s, &why)) << why;
  const xn::Step &st = s.steps[15];
  ASSERT_EQ(st.nsrc, 3);
  EXPECT_EQ(st.src[0], Operand::C11);
  EXPECT_EQ(st.src[1], Operand::U);
  EXPECT_EQ(st.src[2], Operand::C12);
  EXPECT_EQ(st.coef[1][0], 1);
  EXPECT_EQ(st.coef[1][1], 0);
  EXPECT_EQ(st.coef[1][2], -1);
  // Orders that no sequence satisfies are refused.
  t[15] = "(C12, C11) = (C11 + U + C12, C12 + C11 - U)";
  EXPECT_FALSE(parses(t, false, &why));
  EXPECT_NE(why.find("order"), std::string::npos) << why;
}

TEST(ScheduleTable, EveryTableEqualsTheClassicalProduct) {
  for (const xn::GemmAlgorithm *a : kAlgorithms)
    for (const xn::Schedule *s : {a->zero_beta, a->any_beta})
      for (bool beta : {false, true}) {
        if (beta && !s->any_beta) continue;  // never run with beta != 0
        const std::array<xn_test::Form, 4> c = xn_test::evaluate(*s, beta);
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j)
            EXPECT_EQ(c[2 * i + j], xn_test::classical_quadrant(i, j, beta))
                << s->name << " quadrant C" << i + 1 << j + 1 << " beta " << beta;
      }
}

TEST(ScheduleTable, StrassenAndWinogradFormTheirOwnSevenProducts) {
  // Strassen's products are (A11 + A22)(B11 + B22), ...: 12 of the 14
  // factors are sums of two quadrants, Winograd's 8 are (S1..S4, S5..S8 are
  // sums of 2, 3 or 4 quadrants). Count the factors that are sums.
  auto sums_in_factors = [](const xn::Schedule &s) {
    int sums = 0;
    xn_test::evaluate(s, false, [&](const xn_test::Form &x, const xn_test::Form &y) {
      for (const xn_test::Form &f : {x, y}) {
        int terms = 0;
        for (int p = 0; p < 4; ++p) terms += f.a[p] != 0 || f.b[p] != 0;
        sums += terms > 1;
      }
    });
    return sums;
  };
  EXPECT_EQ(sums_in_factors(xn::strassen_schedule()), 10);
  EXPECT_EQ(sums_in_factors(xn::strassen_accumulate_schedule()), 10);
  EXPECT_EQ(sums_in_factors(xn::winograd_schedule()), 8);
  EXPECT_EQ(sums_in_factors(xn::winograd_accumulate_schedule()), 8);
}

// Quadrant moves of one level's elementwise steps (each source read and each
// target written once; the old value of a quadrant that beta multiplies is
// one more read) and of its products' outputs (written once, read once more
// when they accumulate): the figures docs/design.md compares with Li,
// Ranka, Sahni, ICPADS'11, section 7 (51 and 41 per level of their
// multi-level Strassen and Winograd).
struct Moves {
  int elementwise = 0, product_io = 0;
};
Moves moves(const xn::Schedule &s, bool beta_nonzero) {
  Moves m;
  for (const xn::Step &st : s.steps) {
    if (st.kind == StepKind::Product) {
      m.product_io += st.accumulate ? 2 : 1;
      continue;
    }
    m.elementwise += st.nsrc + st.ndst;
    for (int d = 0; d < st.ndst; ++d) m.elementwise += st.c_first[d] && beta_nonzero;
  }
  return m;
}

TEST(ScheduleTable, QuadrantMovesPerLevelAreTheDesignsFigures) {
  EXPECT_EQ(moves(xn::strassen_schedule(), false).elementwise, 48);  // paper: 51
  EXPECT_EQ(moves(xn::winograd_schedule(), false).elementwise, 39);  // paper: 41
  EXPECT_EQ(moves(xn::strassen_accumulate_schedule(), true).elementwise, 61);
  EXPECT_EQ(moves(xn::winograd_accumulate_schedule(), true).elementwise, 59);
  EXPECT_EQ(moves(xn::winograd_nonneg_schedule(), false).elementwise, 37);
  EXPECT_EQ(moves(xn::winograd_nonneg_schedule(), true).elementwise, 40);
  for (const xn::Schedule *s :
       {&xn::strassen_schedule(), &xn::winograd_schedule(),
        &xn::strassen_accumulate_schedule(), &xn::winograd_accumulate_schedule()})
    EXPECT_EQ(moves(*s, true).product_io, 7) << s->name;
  EXPECT_EQ(moves(xn::winograd_nonneg_schedule(), false).product_io, 11);
}

// The CPU backend's column loops (ew_combine_first, ew_combine_next) and the
// GPU's ew_combine give the same bits for every sign pattern of up to four
// terms, on values that stress the rounding and the specials.
template <class T>
void combine_forms_agree() {
  const T specials[] = {T(0),
                        -T(0),
                        T(1),
                        -T(1),
                        T(1e-30),
                        T(3.5e-310),
                        -T(2.5e-40),
                        std::numeric_limits<T>::max(),
                        -std::numeric_limits<T>::max(),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        T(0.1),
                        T(-0.3),
                        T(7e5)};
  std::mt19937_64 rng(xn_test::fresh_seed());
  const int ns = int(sizeof specials / sizeof specials[0]);
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = 1 + int(rng() % 4);
    T v[4];
    signed char coef[4];
    int nonzero = 0;
    for (int s = 0; s < n; ++s) {
      v[s] = rng() % 3
                 ? T(std::ldexp(double(rng() % 100000) - 50000.0, int(rng() % 40) - 20))
                 : specials[rng() % ns];
      coef[s] = static_cast<signed char>(int(rng() % 3) - 1);
      nonzero += coef[s] != 0;
    }
    if (nonzero == 0) coef[0] = 1;
    T r = T(0);
    bool started = false;
    for (int s = 0; s < n; ++s) {
      if (coef[s] == 0) continue;
      const T sign = coef[s] > 0 ? T(1) : T(-1);
      r = started ? xn::ew_combine_next(r, sign, v[s]) : xn::ew_combine_first(sign, v[s]);
      started = true;
    }
    const T e = xn::ew_combine(v, coef, n);
    if (std::isnan(e)) {
      ASSERT_TRUE(std::isnan(r)) << trial;
    } else {
      ASSERT_EQ(std::memcmp(&r, &e, sizeof(T)), 0) << trial << " " << e << " " << r;
    }
  }
}

TEST(CombineArithmetic, ColumnFormAndElementFormGiveTheSameBits) {
  combine_forms_agree<double>();
  combine_forms_agree<float>();
}

// ---------------------------------------------------------------- workspace

TEST(FastGemmPlan, TwoTemporariesPerLevelAtMostTwoThirdsOfNSquared) {
  // Li, Ranka, Sahni, ICPADS'11, section 1: two temporaries of a quadrant
  // per level, 2 n^2 / 3 in all; with beta != 0 the top level of a call
  // run whole has three, so the call runs as two column halves, each within
  // 2 n^2 / 3 again (plan.h, choose_split).
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (int n : {1024, 4096, 4100, 32768})
      for (int levels = 1; levels <= 4; ++levels) {
        const double nn = double(n) * n;
        const double zero =
            double(xn::workspace_elems(*a, false, n, n, n, levels, false, false));
        const double any =
            double(xn::workspace_elems(*a, true, n, n, n, levels, false, false));
        EXPECT_LE(zero, 2 * nn / 3) << a->name << " n " << n << " levels " << levels;
        EXPECT_LE(any, 11 * nn / 12) << a->name << " n " << n << " levels " << levels;
        const double call = double(
            xn::call_workspace_elems(*a, true, n, n, n, levels, false, false, false));
        EXPECT_LE(call, 2 * nn / 3) << a->name << " n " << n << " levels " << levels;
        EXPECT_EQ(xn::choose_split(*a, true, n, n, n, levels, false, false, false),
                  xn::CallSplit::Columns);
        EXPECT_EQ(xn::choose_split(*a, false, n, n, n, levels, false, false, false),
                  xn::CallSplit::None);
        // Exactly the two (three) quadrants per level when nothing is padded.
        if (n % (16 << levels) == 0) {
          double two = 0;
          for (int l = 0; l < levels; ++l) two += 2 * std::pow(n >> (l + 1), 2);
          EXPECT_EQ(zero, two) << a->name << " n " << n << " levels " << levels;
          EXPECT_EQ(any, two + std::pow(n >> 1, 2))
              << a->name << " " << n << " " << levels;
          // A half (n x n/2 x n): S, T and U at its top level (n^2/4 +
          // n^2/8 + n^2/8), then at most two temporaries of its largest
          // role, the A-shaped one, per level below.
          double half = nn / 2;
          for (int l = 1; l < levels; ++l) half += 2 * std::pow(n >> (l + 1), 2);
          EXPECT_LE(call, half) << a->name << " " << n << " " << levels;
          EXPECT_GE(call, nn / 2) << a->name << " " << n << " " << levels;
        }
        // Transposed operands store the same number of elements.
        EXPECT_EQ(double(xn::workspace_elems(*a, false, n, n, n, levels, true, true)),
                  zero);
      }
}

TEST(FastGemmPlan, DefaultOptionsKeepTheBoundForEveryTransposePair) {
  // What the size query reports with the built-in options, in double (where
  // op(B) transposed stores the B-side values non-transposed and may pack):
  // within 2 n^2 / 3, beta = 0 or not, for every transpose pair.
  const xn::Options opt;
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (int n : {8192, 16384, 32768})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          const double nn = double(n) * n;
          EXPECT_LE(
              double(xn::planned_workspace_elems(*a, opt, nullptr, true, false, n, n, n, ta, tb)),
              2 * nn / 3)
              << a->name << " " << n << " " << ta << tb;
          EXPECT_LE(
              double(xn::planned_workspace_elems(*a, opt, nullptr, true, true, n, n, n, ta, tb)),
              2 * nn / 3)
              << a->name << " " << n << " " << ta << tb;
        }
}

TEST(FastGemmPlan, BetaNonzeroSplitsWhereItNeedsLess) {
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (int levels = 1; levels <= 3; ++levels) {
      const int s = 64 << levels;
      // Tall: row halves; wide: column halves; both need less than whole.
      EXPECT_EQ(xn::choose_split(*a, true, 4 * s, s, s, levels, false, false, false),
                xn::CallSplit::Rows);
      EXPECT_EQ(xn::choose_split(*a, true, s, 4 * s, s, levels, false, false, false),
                xn::CallSplit::Columns);
      for (const auto &shape : {std::array<int, 3>{4 * s, s, s},
                                {s, 4 * s, s},
                                {s, s, 4 * s},
                                {3 * s + 5, s + 7, 2 * s + 3}}) {
        xn::index_t split = 0;
        xn::choose_split(*a, true, shape[0], shape[1], shape[2], levels, true, true, true,
                         &split);
        EXPECT_LE(split, xn::whole_call_elems(*a, true, shape[0], shape[1], shape[2],
                                              levels, true, true, true, false));
      }
    }
  // No half without a core to recurse on (a dimension below 2^(levels+1)).
  for (const xn::GemmAlgorithm *a : kGeneral) {
    EXPECT_NE(xn::choose_split(*a, true, 64, 6, 64, 2, false, true, false),
              xn::CallSplit::Columns);
    EXPECT_NE(xn::choose_split(*a, true, 6, 64, 64, 2, false, false, false),
              xn::CallSplit::Rows);
    EXPECT_EQ(xn::split_point(7, 2), 0);
    EXPECT_EQ(xn::split_point(8, 2), 4);
  }
  // ?ngemm's one table runs with any beta: never split.
  EXPECT_EQ(xn::choose_split(xn::nonneg_winograd_algorithm(), true, 4096, 4096, 4096, 2,
                             false, false, false),
            xn::CallSplit::None);
}

TEST(FastGemmPlan, ScratchThatDoesNotFitAQuadrantOfCGoesToASpare) {
  // Strassen keeps A-role sums in C12 (hm x hk) and B-role sums in C21
  // (hk x hn): with k > n the first does not fit, with k > m the second.
  const xn::Schedule &s = xn::strassen_schedule();
  xn::LevelLayout L = xn::level_layout(s, 64, 64, 64, false, false);
  for (int q = 0; q < 4; ++q) EXPECT_EQ(L.spare_off[q], -1) << q;
  L = xn::level_layout(s, 128, 32, 256, false, false);
  EXPECT_EQ(L.spare_roles[1], xn::role_bit(xn::Role::A));  // C12: 64 x 128 in 64 x 16
  EXPECT_EQ(L.spare_roles[2], xn::role_bit(xn::Role::B));  // C21: 128 x 16 in 64 x 16
  EXPECT_GE(L.spare_off[1], 0);
  EXPECT_GE(L.spare_off[2], 0);
  // A transposed A-role value is stored hk x hm: it fits when hk <= hm.
  L = xn::level_layout(s, 64, 128, 32, true, false);
  EXPECT_EQ(L.spare_off[1], -1);
  L = xn::level_layout(s, 64, 128, 256, true, false);
  EXPECT_GE(L.spare_off[1], 0);
  // Winograd after Douglas et al. never uses C as scratch.
  L = xn::level_layout(xn::winograd_schedule(), 128, 32, 256, false, false);
  for (int q = 0; q < 4; ++q) EXPECT_EQ(L.spare_off[q], -1) << q;
}

// ---------------------------------------------------------------- executor

// The executor on small signed integers: every operation is exact in double,
// so the result must equal the classical product bit for bit.
struct IntCase {
  int m, n, k;
  bool ta, tb;
  int levels;
  double alpha, beta;
  int normal_b_temps = 0;
  xn::CpuLeaf leaf = xn::CpuLeaf::PreloadLoop;
  int normal_a_temps = 0;
};

void run_integer_case(const xn::GemmAlgorithm &algo, const IntCase &c,
                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int lda = (c.ta ? c.k : c.m) + 3, ldb = (c.tb ? c.n : c.k) + 2, ldc = c.m + 1;
  const double nan = std::nan("");
  std::vector<double> A, B, C, ref;
  xn_test::fill(A, c.ta ? c.k : c.m, c.ta ? c.m : c.k, lda, xn_test::Dist::SmallSignedInt,
                rng, nan);
  xn_test::fill(B, c.tb ? c.n : c.k, c.tb ? c.k : c.n, ldb, xn_test::Dist::SmallSignedInt,
                rng, nan);
  // beta = 0 never reads C: it holds NaN then (the padding row -7 either way).
  xn_test::fill(C, c.m, c.n, ldc, xn_test::Dist::SmallSignedInt, rng, -7.0);
  ref = C;
  if (c.beta == 0)
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) C[i + std::size_t(j) * ldc] = nan;
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.m; ++i) {
      double s = 0;
      for (int p = 0; p < c.k; ++p)
        s += (c.ta ? A[p + i * lda] : A[i + p * lda]) *
             (c.tb ? B[j + p * ldb] : B[p + j * ldb]);
      double &r = ref[i + std::size_t(j) * ldc];
      r = c.alpha * s + (c.beta == 0 ? 0.0 : c.beta * r);
    }
  xn::Options opt;
  opt.normal_b_temps = c.normal_b_temps;
  opt.normal_a_temps = c.normal_a_temps;
  int ran = -1;
  const xn::Status st = xn::cpu_recursive_gemm<double>(
      algo, c.ta, c.tb, c.m, c.n, c.k, c.alpha, A.data(), lda, B.data(), ldb, c.beta,
      C.data(), ldc, opt, c.levels, c.leaf, nullptr, nullptr, &ran);
  ASSERT_EQ(st, xn::Status::Ok);
  ASSERT_EQ(ran, c.levels);
  for (std::size_t i = 0; i < C.size(); ++i)
    ASSERT_EQ(C[i], ref[i]) << algo.name << " index " << i << " m=" << c.m << " n=" << c.n
                            << " k=" << c.k << " ta=" << c.ta << " tb=" << c.tb
                            << " levels=" << c.levels << " alpha=" << c.alpha
                            << " beta=" << c.beta
                            << " normal_b_temps=" << c.normal_b_temps
                            << " normal_a_temps=" << c.normal_a_temps << "; "
                            << xn_test::describe_seed(seed);
}

TEST(FastGemmExecutor, IntegerMatricesExactAtOneTwoThreeLevels) {
  const xn::CpuLeaf loop = xn::CpuLeaf::PreloadLoop;
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (int levels = 1; levels <= 3; ++levels)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          // With op(A) transposed, the A-side temporaries transposed (0) and
          // non-transposed (1: the transposing passes, XN_OPT_PACK_TRANS_A).
          for (int sa : {0, 1})
            for (double beta : {0.0, 1.0, -3.0}) {
              if (sa && !ta) continue;
              const int s = 8 << levels;  // leaves of 8
              const double alpha = beta == 1.0 ? -1.0 : 2.0;
              run_integer_case(*a, {s, s, s, ta, tb, levels, alpha, beta, 0, loop, sa},
                               xn_test::fresh_seed());
              // odd and rectangular: the peeling at every depth
              run_integer_case(
                  *a, {s + 5, s + 3, s + 7, ta, tb, levels, alpha, beta, 0, loop, sa},
                  xn_test::fresh_seed());
              run_integer_case(*a,
                               {3 * s + 1, s - 1 + 8, 2 * s + 3, ta, tb, levels, alpha,
                                beta, 0, loop, sa},
                               xn_test::fresh_seed());
              // k beyond m and n: C's quadrants cannot hold the pre-additions
              run_integer_case(
                  *a, {s, s + 2, 4 * s + 1, ta, tb, levels, alpha, beta, 0, loop, sa},
                  xn_test::fresh_seed());
              // tall and wide: beta != 0 splits rows, columns (plan.h)
              run_integer_case(
                  *a, {4 * s + 3, s, s + 1, ta, tb, levels, alpha, beta, 0, loop, sa},
                  xn_test::fresh_seed());
              run_integer_case(
                  *a, {s, 4 * s + 1, s, ta, tb, levels, alpha, beta, 0, loop, sa},
                  xn_test::fresh_seed());
              // thin k
              run_integer_case(
                  *a, {2 * s, 2 * s + 1, s, ta, tb, levels, alpha, beta, 0, loop, sa},
                  xn_test::fresh_seed());
            }
}

TEST(FastGemmExecutor, NonTransposedBTempsAndBothLeavesExact) {
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (int levels = 1; levels <= 3; ++levels)
      for (bool ta : {false, true})
        for (int option : {1, 0})
          for (xn::CpuLeaf leaf : {xn::CpuLeaf::PreloadLoop, xn::CpuLeaf::OpenBlas})
            for (double beta : {0.0, 0.5}) {
              const int s = 8 << levels;
              // Both sides non-transposed (TT) as well as the B side alone.
              const int sa = ta ? (levels + int(beta == 0)) % 2 : 0;
              run_integer_case(
                  *a,
                  {s + 5, s + 3, s + 7, ta, true, levels, 1.0, beta, option, leaf, sa},
                  xn_test::fresh_seed());
              run_integer_case(
                  *a, {s, s, 3 * s, ta, true, levels, 1.0, beta, option, leaf, sa},
                  xn_test::fresh_seed());
            }
}

// Nothing is written past the workspace the plan gives, nor outside C's m x n
// block (C's padding rows), for every algorithm, beta, orientation (a
// transposed A-role value lives hk x hm inside C12) and depth.
TEST(FastGemmExecutor, StaysWithinItsWorkspaceAndC) {
  std::mt19937_64 rng(xn_test::fresh_seed());
  constexpr double kGuard = -12345.0;
  for (const xn::GemmAlgorithm *a : kGeneral)
    for (bool beta_zero : {true, false})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int normal : {0, 1, 2, 3})
            for (const auto &shape : {std::array<int, 3>{64, 64, 64},
                                      {72, 40, 136},
                                      {67, 69, 71},
                                      {40, 72, 24}})
              for (int levels = 1; levels <= 3; ++levels) {
                const int m = shape[0], n = shape[1], k = shape[2];
                const bool t_normal = normal & 1, s_normal = (normal & 2) != 0;
                const int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 1, ldc = m + 3;
                std::vector<double> A, B, C;
                xn_test::fill(A, ta ? k : m, ta ? m : k, lda, xn_test::Dist::UniformPm1,
                              rng, kGuard);
                xn_test::fill(B, tb ? n : k, tb ? k : n, ldb, xn_test::Dist::UniformPm1,
                              rng, kGuard);
                xn_test::fill(C, m, n, ldc, xn_test::Dist::UniformPm1, rng, kGuard);
                const std::int64_t elems = xn::call_workspace_elems(
                    *a, !beta_zero, m, n, k, levels, ta && !s_normal, tb, t_normal);
                std::vector<double> ws(std::size_t(elems) + 512, kGuard);
                xn::CpuBackend<double> be(1.0, beta_zero ? 0.0 : 0.5);
                const xn::Status st = xn::recursive_gemm<double>(
                    be, *a, levels, {A.data(), m, k, lda, ta}, {B.data(), k, n, ldb, tb},
                    beta_zero ? xn::ScalarKind::Zero : xn::ScalarKind::User,
                    {C.data(), m, n, ldc, false}, ws.data(), 0, t_normal, true, s_normal);
                ASSERT_EQ(st, xn::Status::Ok) << a->name;
                for (std::size_t i = std::size_t(elems); i < ws.size(); ++i)
                  ASSERT_EQ(ws[i], kGuard)
                      << a->name << " wrote past its workspace at " << i << " m=" << m
                      << " n=" << n << " k=" << k << " levels=" << levels;
                for (int j = 0; j < n; ++j)
                  for (int i = m; i < ldc; ++i)
                    ASSERT_EQ(C[i + std::size_t(j) * ldc], kGuard)
                        << a->name << " wrote C's padding";
              }
}

}  // namespace
