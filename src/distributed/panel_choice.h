// panel_choice.h - the order in which the distributed driver (pgemm.cpp)
// tries to reserve memory for one band of sub(C): the widest panel of K
// first, with room for the local routine's whole workspace beside the
// strips (one budget: docs/design.md, "Distributed GEMM", "Memory").
#pragma once

#include <cstdint>
#include <vector>

namespace xn::dist {

struct PanelTry {
  std::int64_t kb;         // panel width (columns of op(sub(A)), rows of op(sub(B)))
  bool routine_workspace;  // room for all the workspace the local routine asks for
};

// For a band whose widest allowed panel is `kb` (all of K unless
// XN_OPT_DIST_WORKSPACE_LIMIT says less): kb with the routine's
// workspace; half of kb with it (a second panel costs one more exchange,
// while the Winograd engine without its workspace falls back to fewer
// levels or the classical product, and narrower panels still cost it
// levels: two panels at most for the workspace's sake); then kb, kb/2,
// ... down to one column without it, the routine making do with what is
// left. A product that needs all of K (`whole_k`: the correctly rounded
// one) never takes panels: kb with, then without, the workspace. When
// every try fails the driver splits sub(C) into bands.
inline std::vector<PanelTry> panel_tries(std::int64_t kb, bool whole_k) {
  std::vector<PanelTry> tries{{kb, true}};
  if (!whole_k && kb > 1) tries.push_back({(kb + 1) / 2, true});
  for (std::int64_t w = kb;; w = (w + 1) / 2) {
    tries.push_back({w, false});
    if (whole_k || w == 1) break;
  }
  return tries;
}

}  // namespace xn::dist
