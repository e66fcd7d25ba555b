// test_exblas_plan.cpp - the layout plans of the one-pass dot-product kernels
// (kernels/exblas_launch.h), host code checked on the CPU: every plan covers
// its terms, respects the kernels' limits (x's staged chunk, gridDim.y), and
// passes the numerics a count of TwoSums (dot_plan_ops) no smaller than the
// kernels can perform, which the error bound of numerics/exact_dot.h needs.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/exblas_launch.h"

namespace {

using xn::DotPlan;
using xn::DotProblem;

// The most TwoSums one output's accumulation can take under `plan`: every
// product, the in-block tree of a block plan's parts (255 merges per chunk),
// and the finish's merges (a chain of chunks - 1, or a block's tree of at
// most chunks + 255).
double most_two_sums(const DotProblem &p, const DotPlan &plan) {
  const double chunks = plan.chunks;
  return double(p.terms) + (plan.thread_per_output ? 0.0 : 255.0 * chunks) + chunks + 255.0;
}

void check_plan(const DotProblem &p, int sms) {
  const DotPlan plan = xn::plan_dot(p, sms);
  SCOPED_TRACE(testing::Message() << "outputs " << p.outputs << " terms " << p.terms
                                  << " a_out " << p.a_out << " sms " << sms);
  ASSERT_GE(plan.chunks, 1);
  ASSERT_LE(plan.chunks, 65535);  // gridDim.y
  EXPECT_GE(std::int64_t(plan.chunks) * plan.terms_per_chunk, p.terms);
  EXPECT_LT(std::int64_t(plan.chunks - 1) * plan.terms_per_chunk, p.terms);
  if (plan.thread_per_output) {
    EXPECT_EQ(p.a_out, 1) << "a thread per output needs adjacent outputs";
    EXPECT_LE(plan.terms_per_chunk, 4096) << "x's chunk must fit the staging buffer";
  }
  EXPECT_GE(xn::dot_plan_ops(p, plan), most_two_sums(p, plan));
  EXPECT_EQ(xn::dot_parts_bytes(p, plan) % 256, 0u);
  EXPECT_GE(xn::dot_parts_bytes(p, plan),
            std::size_t(plan.chunks) * std::size_t(p.outputs) * sizeof(xn::exact::Dot2));
}

TEST(ExblasPlan, EveryPlanCoversItsTermsWithinTheKernelsLimits) {
  const std::int64_t outputs[] = {1, 3, 63, 64, 257, 8191, 16384, 1 << 20};
  const std::int64_t terms[] = {1, 2, 255, 4096, 4097, 8191, 16384, 1 << 24,
                                std::int64_t(65535) * 4096, std::int64_t(65535) * 4096 + 1,
                                std::int64_t(1) << 31};
  for (std::int64_t o : outputs)
    for (std::int64_t t : terms)
      for (int sms : {0, 114, 132})
        for (bool adjacent : {true, false}) {
          // (Pointers are never dereferenced by the planner.)
          const DotProblem p{o, t, nullptr, adjacent ? 1 : t, adjacent ? o : 1, nullptr, 1};
          check_plan(p, sms);
        }
}

// The case a review found: more than 65535 chunks of 4096 terms would have
// overrun a thread-per-output plan's staging buffer; it takes the block plan.
TEST(ExblasPlan, TermsBeyondTheStagedChunksTakeTheBlockPlan) {
  const DotProblem p{64, std::int64_t(65535) * 4096 + 1, nullptr, 1, 64, nullptr, 1};
  const DotPlan plan = xn::plan_dot(p, 132);
  EXPECT_FALSE(plan.thread_per_output);
  const DotProblem q{64, std::int64_t(65535) * 4096, nullptr, 1, 64, nullptr, 1};
  EXPECT_TRUE(xn::plan_dot(q, 132).thread_per_output);
}

}  // namespace
