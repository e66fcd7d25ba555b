// test_ngemm_schedule.cpp - every schedule table against the classical product:
// symbolically (as a bilinear form over the quadrants), and exactly on small
// integer matrices through the real executor at 1, 2 and 3 levels.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/executor.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/schedule_symbolic.h"
#include "support/test_support.h"

namespace {

using xn::Operand;
using xn::StepKind;

TEST(ScheduleTable, NonNegWinogradEqualsClassicalProductWithBeta) {
  // Badin et al.'s table runs at every level, with any beta.
  const xn::Schedule &s = xn::winograd_nonneg_schedule();
  EXPECT_TRUE(s.any_beta);
  EXPECT_EQ(s.products, 7);
  for (bool beta : {false, true}) {
    const std::array<xn_test::Form, 4> c = xn_test::evaluate(s, beta);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(c[2 * i + j], xn_test::classical_quadrant(i, j, beta))
            << s.name << " quadrant C" << i + 1 << j + 1 << " beta " << beta;
  }
}

TEST(ScheduleTable, WinogradWritesCOnlyByAssignmentOrAddition) {
  // Badin et al., ICS'13, section 4.2: C and U are only ever assigned or
  // added to (never subtracted from, never fed a difference), and only the
  // pre-additions into S and T subtract.
  const xn::Schedule &s = xn::winograd_nonneg_schedule();
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const xn::Step &st = s.steps[i];
    for (int d = 0; d < st.ndst; ++d) {
      const bool c_or_u = xn::is_c_quadrant(st.dst[d]) || st.dst[d] == Operand::U;
      if (st.kind == StepKind::Combine && c_or_u) {
        for (int r = 0; r < st.nsrc; ++r) EXPECT_GE(st.coef[d][r], 0) << "step " << i;
      }
      if (st.kind == StepKind::Combine && st.role != xn::Role::C) {
        EXPECT_TRUE(st.dst[d] == Operand::S || st.dst[d] == Operand::T) << "step " << i;
      }
    }
  }
}

// The executor on integer matrices: with small integers every operation is
// exact in double, so the result must equal the classical product bit for bit.
struct IntCase {
  int m, n, k;
  bool ta, tb;
  int levels;
  int kchain = 0;  // longest k per leaf GEMM (leaf_gemm); 0 = no split
  // XN_OPT_PACK_TRANS_B: B-side temporaries non-transposed (1), transposed
  // with op(B) (0), automatic (-1)
  int normal_b_temps = -1;
  xn::CpuLeaf leaf = xn::CpuLeaf::PreloadLoop;
};

void run_integer_case(const IntCase &c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int lda = (c.ta ? c.k : c.m) + 3, ldb = (c.tb ? c.n : c.k) + 2, ldc = c.m + 1;
  std::vector<double> A, B, C, ref;
  xn_test::fill(A, c.ta ? c.k : c.m, c.ta ? c.m : c.k, lda, xn_test::Dist::SmallInt, rng,
                std::nan(""));
  xn_test::fill(B, c.tb ? c.n : c.k, c.tb ? c.k : c.n, ldb, xn_test::Dist::SmallInt, rng,
                std::nan(""));
  xn_test::fill(C, c.m, c.n, ldc, xn_test::Dist::SmallInt, rng, -7.0);
  ref = C;
  const double alpha = 2, beta = 3;
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.m; ++i) {
      double s = 0;
      for (int p = 0; p < c.k; ++p)
        s += (c.ta ? A[p + i * lda] : A[i + p * lda]) *
             (c.tb ? B[j + p * ldb] : B[p + j * ldb]);
      ref[i + j * ldc] = alpha * s + beta * ref[i + j * ldc];
    }
  xn::Options opt;
  opt.kchain_d = c.kchain;
  opt.normal_b_temps = c.normal_b_temps;
  bool t_normal = false;
  const xn::Status st = xn::cpu_ngemm<double>(c.ta, c.tb, c.m, c.n, c.k, alpha, A.data(),
                                              lda, B.data(), ldb, beta, C.data(), ldc,
                                              opt, c.levels, c.leaf, nullptr, &t_normal);
  ASSERT_EQ(st, xn::Status::Ok);
  EXPECT_EQ(t_normal,
            c.levels > 0 && xn::temp_orientation(opt.normal_a_temps, opt.normal_b_temps,
                                                 true, c.ta, c.tb)
                                .t_normal);
  for (std::size_t i = 0; i < C.size(); ++i)
    ASSERT_EQ(C[i], ref[i]) << "index " << i << " m=" << c.m << " n=" << c.n
                            << " k=" << c.k << " ta=" << c.ta << " tb=" << c.tb
                            << " levels=" << c.levels << " kchain=" << c.kchain
                            << " normal_b_temps=" << c.normal_b_temps << "; "
                            << xn_test::describe_seed(seed);
}

TEST(ScheduleExecutor, IntegerMatricesExactAtOneTwoThreeLevels) {
  for (int levels = 1; levels <= 3; ++levels)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int s = 8 << levels;  // leaves of 8
        run_integer_case({s, s, s, ta, tb, levels}, xn_test::fresh_seed());
        // odd and rectangular: exercises the peeling at every depth
        run_integer_case({s + 5, s + 3, s + 7, ta, tb, levels}, xn_test::fresh_seed());
        run_integer_case({3 * s + 1, s - 1, 2 * s + 3, ta, tb, levels},
                         xn_test::fresh_seed());
        // leaves split along k (uneven last chunk), and the peels
        run_integer_case({s + 5, s + 3, 3 * s + 7, ta, tb, levels, 9},
                         xn_test::fresh_seed());
      }
}

// B-side temporaries stored non-transposed (on) or with op(B)'s orientation
// (off) for every transpose pair, odd sizes and padded leading dimensions,
// both leaves: the transposing pre-additions and the mixed NN/NT leaves are
// exact on small integers.
TEST(ScheduleExecutor, NonTransposedBTempsExactAtOneTwoThreeLevels) {
  for (int levels = 1; levels <= 3; ++levels)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int option : {1, 0})
          for (xn::CpuLeaf leaf : {xn::CpuLeaf::PreloadLoop, xn::CpuLeaf::OpenBlas}) {
            const int s = 8 << levels;  // leaves of 8
            run_integer_case({s, s, s, ta, tb, levels, 0, option, leaf},
                             xn_test::fresh_seed());
            run_integer_case({s + 5, s + 3, s + 7, ta, tb, levels, 0, option, leaf},
                             xn_test::fresh_seed());
            run_integer_case(
                {3 * s + 1, s - 1, 2 * s + 3, ta, tb, levels, 7, option, leaf},
                xn_test::fresh_seed());
          }
}

TEST(ScheduleExecutor, LeafKChainIsExactAndIgnoredWithoutRecursion) {
  for (int kchain : {1, 8, 30, 64, 500}) {
    run_integer_case({33, 21, 101, true, false, 0, kchain}, xn_test::fresh_seed());
    run_integer_case({34, 22, 202, true, false, 1, kchain}, xn_test::fresh_seed());
  }
}

TEST(Plan, MinSizeTurnsRecursionOffBelowTheCrossover) {
  EXPECT_EQ(xn::choose_levels(6144, 6144, 6144, 2048, 10, 7168), 0);
  EXPECT_EQ(xn::choose_levels(13312, 13312, 13312, 2048, 10, 14336), 0);
  EXPECT_EQ(xn::choose_levels(14336, 14336, 14336, 2048, 10, 14336), 2);
  EXPECT_EQ(xn::choose_levels(7168, 7168, 7168, 2048, 10, 7168), 1);
  EXPECT_EQ(xn::choose_levels(8192, 8192, 8192, 2048, 10, 7168), 2);
  EXPECT_EQ(xn::choose_levels(8192, 8192, 8192, 2048, 10, 0), 2);
}

TEST(Plan, ChooseLevelsHalvesWhileTheLeafStaysLargeEnough) {
  // Square: every dimension at least twice the leaf.
  EXPECT_EQ(xn::choose_levels(32768, 32768, 32768, 4096, 10), 3);
  EXPECT_EQ(xn::choose_levels(8192, 8192, 8192, 4096, 10), 1);
  EXPECT_EQ(xn::choose_levels(8191, 8191, 8191, 4096, 10), 0);
  EXPECT_EQ(xn::choose_levels(6000, 6000, 6000, 4096, 10), 0);
  EXPECT_EQ(xn::choose_levels(32768, 32768, 32768, 4096, 2), 2);
  // The smallest dimension may go down to leaf / 2, whichever it is.
  EXPECT_EQ(xn::choose_levels(32768, 32768, 8192, 4096, 10), 2);
  EXPECT_EQ(xn::choose_levels(32768, 8192, 32768, 4096, 10), 2);
  EXPECT_EQ(xn::choose_levels(8192, 32768, 32768, 4096, 10), 2);
  EXPECT_EQ(xn::choose_levels(8191, 8192, 8192, 4096, 10), 1);
  // ... but not the second smallest.
  EXPECT_EQ(xn::choose_levels(32768, 8192, 8192, 4096, 10), 1);
  EXPECT_EQ(xn::choose_levels(1, 1, 1, 1, 10), 0);
  EXPECT_EQ(xn::choose_levels(4, 4, 2, 1, 10), 1);
  EXPECT_EQ(xn::choose_levels(8, 8, 4, 2, 10), 2);
}

TEST(Plan, WorkspaceStaysUnderAThirdOfTheOperandsPlusPadding) {
  for (int n : {1000, 4096, 5003, 32768}) {
    const double operands = 3.0 * n * double(n);
    for (int levels = 1; levels <= 3; ++levels) {
      const double ws = double(xn::workspace_elems(n, n, n, levels, false, true));
      EXPECT_LE(ws, operands / 3 * 1.1 + 1e5) << n << " " << levels;
      // NT with T non-transposed: NN's, plus the packed quarter of op(B)'s
      // core when it has room (plan.h): under half of the operands.
      const double nn =
          double(xn::call_workspace_elems(n, n, n, levels, false, false, false));
      const double nt_unpacked =
          double(xn::call_workspace_elems(n, n, n, levels, false, true, true, false));
      const double nt =
          double(xn::call_workspace_elems(n, n, n, levels, false, true, true));
      const double half = double(n & ~((1 << levels) - 1)) / 2;
      EXPECT_EQ(nt_unpacked, nn);
      EXPECT_EQ(nt, nn + half * half) << n << " " << levels;
      EXPECT_LE(nt, operands / 2) << n << " " << levels;
    }
  }
}

}  // namespace
