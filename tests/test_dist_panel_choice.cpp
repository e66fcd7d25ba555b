// test_dist_panel_choice.cpp - the order in which the distributed driver
// reserves memory for a band (src/distributed/panel_choice.h): the widest panel
// with the local routine's workspace first, at most two panels for the
// workspace's sake, then ever narrower panels without it down to one
// column; the correctly rounded product never takes panels.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "distributed/panel_choice.h"

namespace {

using xn::dist::panel_tries;
using xn::dist::PanelTry;

std::vector<std::int64_t> widths(const std::vector<PanelTry> &tries, bool with) {
  std::vector<std::int64_t> w;
  for (const PanelTry &t : tries)
    if (t.routine_workspace == with) w.push_back(t.kb);
  return w;
}

TEST(PanelChoice, WorkspaceFirstThenHalvingWithout) {
  const auto tries = panel_tries(100, false);
  ASSERT_FALSE(tries.empty());
  EXPECT_EQ(tries.front().kb, 100);
  EXPECT_TRUE(tries.front().routine_workspace);
  EXPECT_EQ(widths(tries, true), (std::vector<std::int64_t>{100, 50}));
  EXPECT_EQ(widths(tries, false),
            (std::vector<std::int64_t>{100, 50, 25, 13, 7, 4, 2, 1}));
  // Every try with the workspace comes before every try without it.
  bool without_seen = false;
  for (const PanelTry &t : tries) {
    EXPECT_FALSE(t.routine_workspace && without_seen);
    without_seen = without_seen || !t.routine_workspace;
  }
}

TEST(PanelChoice, OneColumnAndWholeK) {
  const auto one = panel_tries(1, false);
  EXPECT_EQ(widths(one, true), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(widths(one, false), (std::vector<std::int64_t>{1}));
  const auto whole = panel_tries(4097, true);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].kb, 4097);
  EXPECT_TRUE(whole[0].routine_workspace);
  EXPECT_EQ(whole[1].kb, 4097);
  EXPECT_FALSE(whole[1].routine_workspace);
}

// For every width up to 3000: the halving ends at exactly one column, the
// second workspace try is the first halving, and the widths never grow.
TEST(PanelChoice, EveryWidthEndsAtOneColumn) {
  for (std::int64_t kb = 1; kb <= 3000; ++kb) {
    const auto tries = panel_tries(kb, false);
    const auto with = widths(tries, true), without = widths(tries, false);
    ASSERT_EQ(with.size(), kb > 1 ? 2u : 1u) << kb;
    if (kb > 1) {
      ASSERT_EQ(with[1], (kb + 1) / 2) << kb;
    }
    ASSERT_EQ(without.front(), kb) << kb;
    ASSERT_EQ(without.back(), 1) << kb;
    for (std::size_t i = 1; i < without.size(); ++i)
      ASSERT_EQ(without[i], (without[i - 1] + 1) / 2) << kb;
  }
}

}  // namespace
