// exdgemm_common.h - what both of exdgemm's engines use (core/exdgemm.h):
// the engine and phase names, the call's report and limits, the phase
// clock, the blocking of C and the claim of its workspace.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/options.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/exdgemm_entry.h"
#include "numerics/ozaki_split.h"

namespace xn {

using exact::kGroupRows;
using exact::SliceList;

// The engine that forms the exact products (XN_OPT_EXDGEMM_ENGINE).
enum class ExEngine : int { Auto = 0, Slices = 1, Modular = 2 };

// The phases timed with XN_OPT_EXDGEMM_PHASE_TIMES (xnExdgemmInfo_t's
// phase_ms): exponent scans and the fetch, conversion (slices or residues),
// products, sums (reconstruction and rounding).
enum ExPhase : int { kExExponents, kExConversion, kExProducts, kExSums, kExPhaseCount };

// Whose residues the modular engine's integer products make themselves,
// never stored: none, op(A)'s (skinny n), or both operands' (small m and
// n). The value is the report's fused_operands.
enum class ModularFusion : int { None = 0, A = 1, Both = 2 };

// What a call did (xnGetLastExdgemmInfo; the fields are documented there).
struct ExdgemmReport {
  int engine = 0;  // ExEngine that ran (Slices or Modular); 0 before any product
  int moduli = 0;  // modular engine: moduli, i.e. integer products of the full shape
  int k_chunks = 0, k_slots = 0;  // modular engine: ModularSplit's chunks and slots
  int fused_operands = 0;  // modular engine: int(ModularFusion) of the products
  // The widest row of op(A) plus the widest column of op(B), in bits (their
  // spans, top - low + 1), as the exponent scan found them; 0 before it.
  int span_bits = 0;
  int max_slices_a = 0, max_slices_b = 0;
  int block_rows = 0, block_cols = 0;
  std::int64_t blocks = 0;
  double slice_products = 0;
  std::int64_t wide_entries = 0;  // -1: not counted
  std::size_t workspace_bytes = 0;
  double phase_ms[kExPhaseCount] = {};
};

struct ExdgemmLimits {
  std::size_t workspace_bytes = 0;  // budget for the call's workspace
  index_t force_block = 0;          // 0 = from the budget
  index_t force_chunk = 0;          // modular k per product; 0 = ModularSplit's choice
  ExEngine engine = ExEngine::Auto;
  bool phase_times = false;  // XN_OPT_EXDGEMM_PHASE_TIMES
};

// Wall time per phase when the limits ask for it: at each phase boundary
// the backend waits for its queued work (be.wait()), so the host clock
// measures the phase just ended. Off, it does nothing (no waits).
template <class Backend>
class PhaseClock {
 public:
  PhaseClock(Backend &be, bool on, double *ms) : be_(be), on_(on), ms_(ms) {}
  // The start: earlier work on the stream is not counted.
  Status start() {
    if (!on_) return Status::Ok;
    const Status s = be_.wait();
    t_ = std::chrono::steady_clock::now();
    return s;
  }
  // Ends phase p (its time is added: blocks of C repeat phases).
  Status lap(ExPhase p) {
    if (!on_) return Status::Ok;
    const Status s = be_.wait();
    const auto now = std::chrono::steady_clock::now();
    ms_[p] += std::chrono::duration<double, std::milli>(now - t_).count();
    t_ = now;
    return s;
  }

 private:
  Backend &be_;
  bool on_;
  double *ms_;
  std::chrono::steady_clock::time_point t_{};
};

namespace ex_detail {

inline int popcount_mask(const std::uint64_t *m) {
  int c = 0;
  for (int w = 0; w < exact::kMaskWords; ++w) c += __builtin_popcountll(m[w]);
  return c;
}

// Union of the masks of groups [g0, g1).
inline void union_masks(const std::vector<std::uint64_t> &masks, index_t g0, index_t g1,
                        std::uint64_t *out) {
  for (int w = 0; w < exact::kMaskWords; ++w) out[w] = 0;
  for (index_t g = g0; g < g1; ++g)
    for (int w = 0; w < exact::kMaskWords; ++w)
      out[w] |= masks[std::size_t(g) * exact::kMaskWords + w];
}

inline SliceList list_of(const std::uint64_t *m) {
  SliceList l;
  for (int r = 0; r < exact::kMaxSlices; ++r)
    if ((m[r >> 6] >> (r & 63)) & 1) l.idx[l.n++] = static_cast<unsigned char>(r);
  return l;
}

// Bytes of the phase-1 arrays: infos and masks for m rows and n columns.
inline std::size_t head_bytes(index_t m, index_t n) {
  const index_t infos = round_up((m + n) * index_t(sizeof(exact::VectorInfo)), 256);
  const index_t groups =
      (m + kGroupRows - 1) / kGroupRows + (n + kGroupRows - 1) / kGroupRows;
  return std::size_t(infos + round_up(groups * exact::kMaskWords * 8, 256));
}

struct Blocking {
  index_t bm = 0, bn = 0;
  bool b_once = false;  // all slices of op(B) split once, up front
  std::size_t bytes = 0;
};

inline std::size_t body_bytes(index_t bm, index_t bn, index_t n, index_t k, int s, int t,
                              bool b_once) {
  const index_t a = round_up(index_t(s) * bm * k * 8, 256);
  const index_t b = round_up(index_t(t) * k * (b_once ? n : bn) * 8, 256);
  const index_t p = round_up(index_t(s) * t * bm * bn * 8, 256);
  return std::size_t(a + b + p);
}

// Largest square-ish block (multiple of kGroupRows, or the whole dimension)
// whose head and body fit the budget; body(bm, bn, once) gives the body's
// bytes (SIZE_MAX: that shape is impossible), once = op(B)'s part made once
// for all blocks. cap > 0: where both m and n exceed it, no block edge
// does (the backend's products run slower beyond it).
template <class Body>
Blocking choose_block(index_t m, index_t n, std::size_t head, std::size_t budget,
                      index_t force, Body &&body, index_t cap = 0) {
  Blocking best;
  auto fits = [&](index_t bm, index_t bn, bool once, Blocking *out) {
    const std::size_t b = body(bm, bn, once);
    if (b == SIZE_MAX || head + b > budget) return false;
    *out = Blocking{bm, bn, once, head + b};
    return true;
  };
  if (force > 0) {
    const index_t f = round_up(force, kGroupRows);
    const index_t bm = std::min(m, f), bn = std::min(n, f);
    if (!fits(bm, bn, true, &best) && !fits(bm, bn, false, &best)) {
      // Over the budget: the call will try it (and fail if it cannot have it).
      const std::size_t b = body(bm, bn, false);
      best = b == SIZE_MAX ? Blocking{} : Blocking{bm, bn, false, head + b};
    }
    return best;
  }
  index_t top = round_up(std::max(m, n), kGroupRows);
  if (cap > 0 && m > cap && n > cap) top = std::min(top, round_up(cap, kGroupRows));
  for (index_t b = top; b >= kGroupRows;
       b = b > 2 * kGroupRows ? round_up(b / 2, kGroupRows) : b - kGroupRows) {
    const index_t bm = std::min(m, b), bn = std::min(n, b);
    if (fits(bm, bn, true, &best) || fits(bm, bn, false, &best)) return best;
    if (b == kGroupRows) break;
  }
  return Blocking{};  // nothing fits
}

// The slice engine's blocking; s and t are upper bounds on the slice counts
// of any block.
inline Blocking choose_blocking(index_t m, index_t n, index_t k, int s, int t,
                                std::size_t budget, index_t force) {
  return choose_block(
      m, n, head_bytes(m, n), budget, force, [&](index_t bm, index_t bn, bool once) {
        // cuBLAS takes int dimensions for the stacked product.
        if (index_t(s) * bm > index_t(INT32_MAX) || index_t(t) * bn > index_t(INT32_MAX))
          return SIZE_MAX;
        return body_bytes(bm, bn, n, k, s, t, once);
      });
}

// Highest span (top - low + 1) over rows with a nonzero finite entry; 0 if
// none.
inline int max_span(const std::vector<exact::VectorInfo> &info) {
  int span = 0;
  for (const exact::VectorInfo &v : info)
    if (v.top != exact::kNoTop) span = std::max(span, v.top - v.low + 1);
  return span;
}

inline int ceil_log2(index_t k) {
  int b = 0;
  while ((index_t(1) << b) < k) ++b;
  return b;
}

}  // namespace ex_detail

// The largest blocking choose(budget) gives whose body allocate_body(bytes)
// (the backend's space after the head; nullptr when it cannot) can have: if the body cannot be had after all (memory taken since the budget
// was read), the largest one below it, down to the smallest block;
// AllocFailed when none (C untouched). Growing the workspace may move the
// head region (its contents kept): callers place the phase-1 arrays again
// at the backend's head_address().
template <class Choose, class AllocateBody>
Status claim_blocking(std::size_t head, const ExdgemmLimits &lim, Choose &&choose,
                      AllocateBody &&allocate_body, ex_detail::Blocking *blk, char **body) {
  std::size_t budget = lim.workspace_bytes;
  for (;;) {
    *blk = choose(budget);
    if (blk->bm == 0) return Status::AllocFailed;
    *body = static_cast<char *>(allocate_body(blk->bytes - head));
    if (*body) return Status::Ok;
    if (lim.force_block > 0 || blk->bytes <= head + 1) return Status::AllocFailed;
    budget = blk->bytes - 1;
  }
}

}  // namespace xn
