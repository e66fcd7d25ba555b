// exdgemm.h - the correctly rounded DGEMM (Ozaki scheme), written once over a
// backend (docs/design.md, "exdgemm"). The backends supply these phases,
// each a pass of the shared __host__ __device__ numerics in kernels/numerics/:
//
//   scan_operands    per row of op(A) and of op(B)^T: highest/lowest set
//                    bit, non-finite flag, signs
//   fetch_summaries  the exponent summaries (and alpha/beta) to the host:
//                    the call's synchronisation, needed because the moduli
//                    (or slice counts) decide how many and how large the
//                    products are (host-side parameters), and which engine
//                    runs
// then the modular engine (modular_run's hooks, below) or the slices:
//   mark_rows        per group of kGroupRows rows: which slices are nonzero
//   fetch_masks      the group masks to the host (a second synchronisation)
//   split_rows       the nonzero slices of a block of rows, stacked
//   gemm_exact       one DGEMM of the stacked slices: all slice products at once
//   sum_block        one thread/iteration per entry: exdgemm_entry (NearSum)
//
// With XN_OPT_EXDGEMM_PHASE_TIMES, wait() (the backend's queued work done)
// marks the phase boundaries (PhaseClock).
// Workspace: head_space(bytes) gives the phase-1 region, body_space(bytes)
// the slices and products after it; body_space may move the head region
// (contents kept), whose address head_address() then gives.
// op(B) is handled as the rows of op(B)^T, so every phase is written once.
// Blocking of C is the "Type 1" of Ozaki & Ogita (SCAN'12) as Mukunoki et
// al. (PMAA'18) use it: a bm x bn block needs the
// slices of bm rows of op(A) (s bm k), of bn columns of op(B) (t k bn) and
// the s t bm bn slice products; stacking the s slices of A vertically and the
// t slices of B horizontally makes those products one (s bm) x (t bn) x k
// DGEMM, larger and so faster than the batched small ones. Slices that
// are zero in a whole block are left out of the stack (no product computed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/exdgemm_common.h"
#include "core/exdgemm_modular.h"
#include "numerics/modular_crt.h"

namespace xn {

// alpha op(A) op(B) + beta C, correctly rounded, over backend `be`. A, B, C
// are the caller's views (m x k, k x n, m x n) with m, n, k > 0. `info`
// receives the report of xnGetLastExdgemmInfo.
template <class Backend>
Status exdgemm_run(Backend &be, MatView<const double> A, MatView<const double> B,
                   MatView<double> C, const ExdgemmLimits &lim, ExdgemmReport *info) {
  using namespace ex_detail;
  const index_t m = C.rows, n = C.cols, k = A.cols;
  const int w = exact::slice_width(k);
  const MatView<const double> Bt{B.p, n, k, B.ld, !B.trans};  // rows = columns of op(B)
  const index_t groups_a = (m + kGroupRows - 1) / kGroupRows;
  const index_t groups_b = (n + kGroupRows - 1) / kGroupRows;
  *info = ExdgemmReport{};
  info->wide_entries = -1;
  PhaseClock<Backend> clock(be, lim.phase_times, info->phase_ms);

  // Phase 1: the exponent summaries of every row of op(A) and column of
  // op(B), then the synchronisation that brings them to the host (with
  // device-resident alpha and beta). The phase-1 arrays (summaries, and the
  // slice engine's masks) start the head region.
  const std::size_t head = head_bytes(m, n);
  exact::VectorInfo *info_a = nullptr, *info_b = nullptr;
  std::uint64_t *masks_a = nullptr, *masks_b = nullptr;
  auto place_head = [&](char *ws) {
    info_a = reinterpret_cast<exact::VectorInfo *>(ws);
    info_b = info_a + m;
    masks_a = reinterpret_cast<std::uint64_t *>(
        ws + round_up((m + n) * index_t(sizeof(exact::VectorInfo)), 256));
    masks_b = masks_a + groups_a * exact::kMaskWords;
  };
  char *ws = static_cast<char *>(be.head_space(head));
  if (!ws) return Status::AllocFailed;
  place_head(ws);
  Status s = clock.start();
  if (s == Status::Ok) s = be.scan_operands(A, info_a, Bt, info_b);
  std::vector<exact::VectorInfo> ha(static_cast<std::size_t>(m)),
      hb(static_cast<std::size_t>(n));
  double alpha = 0, beta = 0;
  if (s == Status::Ok) s = be.fetch_summaries(info_a, ha, info_b, hb, &alpha, &beta);
  if (s == Status::Ok) s = clock.lap(kExExponents);
  if (s != Status::Ok) return s;

  if (alpha == 0.0) return be.scale(C, beta);  // BLAS: C = beta C, exactly RN(beta c)

  // op(A) or op(B) has no nonzero finite entry: every X is zero or
  // non-finite, there is no product to form and no body to allocate. The
  // sums alone make C, in one block (exact_entry: Inf/NaN, signed zeros,
  // beta c).
  const int span_a = max_span(ha), span_b = max_span(hb);
  info->span_bits = span_a + span_b;
  if (span_a == 0 || span_b == 0) {
    const SliceList none{};
    info->block_rows = int(m);
    info->block_cols = int(n);
    info->blocks = 1;
    info->wide_entries = 0;
    info->workspace_bytes = head;
    s = be.sum_block(A, B, C, info_a, info_b, w, 0, m, 0, n, none, none,
                     MatView<const double>{nullptr, 0, 0, 1, false}, alpha, beta,
                     &info->wide_entries);
    if (s == Status::Ok) s = clock.lap(kExSums);
    return s;
  }

  // The engine: the modular one needs L moduli for |X| < k 2^(span_a +
  // span_b) (modular.h); it runs where the backend has it, the range allows
  // and (unless forced) its L integer products cost less than the slice
  // products, s t of them with s = ceil(span_a / w) (a row's digits from
  // its top down cover its span: an upper bound of the slices any block of
  // rows needs; the masks that give the exact count are made only for the
  // slice engine).
  if constexpr (Backend::kHasModular) {
    const int L = exact::moduli_for_bits(1 + ceil_log2(k) + span_a + span_b);
    const double slices_bound = double((span_a + w - 1) / w) * double((span_b + w - 1) / w);
    const bool modular = L >= 0 && lim.engine != ExEngine::Slices &&
                         (lim.engine == ExEngine::Modular ||
                          L * be.modular_product_cost() < slices_bound);
    if (modular) {
      // Its workspace is allocated before C is touched: if no block of it
      // fits the budget, the slice engine (smaller blocks) runs instead.
      const Status ms = modular_run(be, A, Bt, B, C, L, ModularSpans{span_a, span_b},
                                    tiles_allowed(span_a, span_b, k), head, alpha, beta,
                                    lim, clock, info);
      if (ms != Status::AllocFailed) return ms;  // (info untouched on AllocFailed)
    }
  }

  // The slice engine: which slices each group of rows has (its masks), the
  // second synchronisation (only this engine needs them on the host).
  place_head(static_cast<char *>(be.head_address()));
  s = be.mark_rows(A, info_a, w, masks_a);
  if (s == Status::Ok) s = be.mark_rows(Bt, info_b, w, masks_b);
  std::vector<std::uint64_t> ma(std::size_t(groups_a * exact::kMaskWords)),
      mb(std::size_t(groups_b * exact::kMaskWords));
  if (s == Status::Ok) s = be.fetch_masks(masks_a, ma, masks_b, mb);
  if (s == Status::Ok) s = clock.lap(kExExponents);
  if (s != Status::Ok) return s;
  std::uint64_t all_a[exact::kMaskWords], all_b[exact::kMaskWords];
  union_masks(ma, 0, groups_a, all_a);
  union_masks(mb, 0, groups_b, all_b);
  const int s_all = popcount_mask(all_a), t_all = popcount_mask(all_b);

  info->engine = int(ExEngine::Slices);
  Blocking blk;
  char *body = nullptr;
  s = claim_blocking(
      head, lim,
      [&](std::size_t budget) {
        return choose_blocking(m, n, k, s_all, t_all, budget, lim.force_block);
      },
      [&](std::size_t bytes) { return be.body_space(bytes); }, &blk, &body);
  if (s != Status::Ok) return s;
  place_head(static_cast<char *>(be.head_address()));
  double *a_slices = reinterpret_cast<double *>(body);
  double *b_slices =
      reinterpret_cast<double *>(body + round_up(index_t(s_all) * blk.bm * k * 8, 256));
  double *prods =
      b_slices + round_up(index_t(t_all) * k * (blk.b_once ? n : blk.bn) * 8, 256) / 8;

  info->block_rows = int(blk.bm);
  info->block_cols = int(blk.bn);
  info->workspace_bytes = blk.bytes;
  info->wide_entries = 0;

  // Column blocks: slice lists and, when split once, their place in b_slices.
  const index_t nbj = (n + blk.bn - 1) / blk.bn;
  std::vector<SliceList> lists_b(static_cast<std::size_t>(nbj));
  std::vector<index_t> offset_b(static_cast<std::size_t>(nbj), 0);
  index_t off = 0;
  for (index_t J = 0; J < nbj; ++J) {
    const index_t j0 = J * blk.bn, bn = std::min(blk.bn, n - j0);
    std::uint64_t u[exact::kMaskWords];
    union_masks(mb, j0 / kGroupRows, (j0 + bn + kGroupRows - 1) / kGroupRows, u);
    lists_b[std::size_t(J)] = list_of(u);
    offset_b[std::size_t(J)] = off;
    if (blk.b_once) off += index_t(lists_b[std::size_t(J)].n) * bn * k;
  }
  // Slices of op(B) stored like B: rows of the stacked op(B)^T = t' bn.
  auto b_stack = [&](index_t J, index_t bn) {
    const index_t rows = index_t(lists_b[std::size_t(J)].n) * bn;
    double *p = b_slices + (blk.b_once ? offset_b[std::size_t(J)] : 0);
    // Bt's storage orientation: !B.trans stored rows fast <=> Bt.trans false.
    return MatView<double>{p, rows, k, Bt.trans ? k : std::max<index_t>(rows, 1),
                           Bt.trans};
  };
  if (blk.b_once)
    for (index_t J = 0; J < nbj && s == Status::Ok; ++J) {
      const index_t j0 = J * blk.bn, bn = std::min(blk.bn, n - j0);
      if (lists_b[std::size_t(J)].n)
        s = be.split_rows(Bt, info_b, w, j0, bn, lists_b[std::size_t(J)], b_stack(J, bn));
    }

  int s_max = 0, t_max = 0;
  double products = 0;
  std::int64_t blocks = 0;
  for (index_t i0 = 0; i0 < m && s == Status::Ok; i0 += blk.bm) {
    const index_t bm = std::min(blk.bm, m - i0);
    std::uint64_t u[exact::kMaskWords];
    union_masks(ma, i0 / kGroupRows, (i0 + bm + kGroupRows - 1) / kGroupRows, u);
    const SliceList la = list_of(u);
    s_max = std::max(s_max, la.n);
    const index_t rows_a = index_t(la.n) * bm;
    const MatView<double> a_stack{a_slices, rows_a, k,
                                  A.trans ? k : std::max<index_t>(rows_a, 1), A.trans};
    if (la.n) s = be.split_rows(A, info_a, w, i0, bm, la, a_stack);
    for (index_t J = 0; J < nbj && s == Status::Ok; ++J) {
      const index_t j0 = J * blk.bn, bn = std::min(blk.bn, n - j0);
      const SliceList &lb = lists_b[std::size_t(J)];
      t_max = std::max(t_max, lb.n);
      const MatView<double> bs = b_stack(J, bn);
      if (!blk.b_once && lb.n && la.n) s = be.split_rows(Bt, info_b, w, j0, bn, lb, bs);
      const index_t pr = index_t(la.n) * bm, pc = index_t(lb.n) * bn;
      const MatView<double> P{prods, pr, pc, std::max<index_t>(pr, 1), false};
      if (s == Status::Ok) s = clock.lap(kExConversion);
      if (s == Status::Ok && la.n && lb.n) {
        // op(B) slices = (stacked op(B)^T slices)^T.
        const MatView<const double> bsv{bs.p, k, pc, bs.ld, !bs.trans};
        s = be.gemm_exact(a_stack.as_const(), bsv, P);
      }
      if (s == Status::Ok) s = clock.lap(kExProducts);
      if (s == Status::Ok)
        s = be.sum_block(A, B, C, info_a, info_b, w, i0, bm, j0, bn, la, lb, P.as_const(),
                         alpha, beta, &info->wide_entries);
      if (s == Status::Ok) s = clock.lap(kExSums);
      products += double(la.n) * lb.n * double(bm) * double(bn) / (double(m) * double(n));
      ++blocks;
    }
  }
  info->max_slices_a = s_max;
  info->max_slices_b = t_max;
  info->slice_products = products;
  info->blocks = blocks;
  return s;
}

// The workspace query (xnGetExdgemmWorkspaceSize): bytes an m x n x k call
// uses when every row of op(A) and column of op(B) needs
// exdgemm_typical_slices(k) slices (full 53-bit significands spread over at
// most 2^11 within a row or column), with the largest blocks of C that the
// options' budget allows (the automatic budget counts as unlimited: C in one
// block) or the forced block. With that much memory supplied, such data
// runs in those blocks; data of a wider range needs more slices and runs in
// smaller blocks within it. 0 when the call reads no operand.
inline int exdgemm_typical_slices(index_t k) {
  const int w = exact::slice_width(k);
  return (53 + 11 + w - 1) / w;
}
inline std::size_t exdgemm_workspace_bytes(index_t m, index_t n, index_t k,
                                           const Options &opt) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const int s = exdgemm_typical_slices(k);
  const std::size_t budget = opt.exdgemm_workspace_limit > 0
                                 ? std::size_t(opt.exdgemm_workspace_limit)
                                 : SIZE_MAX;
  ex_detail::Blocking b =
      ex_detail::choose_blocking(m, n, k, s, s, budget, opt.exdgemm_block);
  // A budget below the smallest block: report what the smallest block needs
  // (the call itself would return ALLOC_FAILED).
  if (b.bm == 0) b = ex_detail::choose_blocking(m, n, k, s, s, SIZE_MAX, kGroupRows);
  return b.bytes;
}

// Bits of range a captured plan adds to the spans of the handle's last
// direct call: rows and columns 16 bits wider each than the warm-up's.
constexpr int kCaptureMarginBits = 32;

// A call being captured into a CUDA graph (docs/design.md, "CUDA graphs"):
// a plan fixed before the data is seen, since the host can neither wait for
// the exponent summaries nor change the number or shape of the products
// when the graph is replayed on other data. The modular engine with the
// moduli of the handle's last direct call and a margin (without one, all
// kMaxModuli: what any usual exponent range needs), or fewer where the
// workspace the handle already has does not hold that plan (none:
// NotSupported before anything is enqueued); entries whose range exceeds
// them are summed exactly from their operands on the device
// (modular_over_range, DirectTerms: slow, but only where the data is wider
// than the warm-up's by more than the margin, or no direct call could have
// used the modular engine either); alpha and beta are read on the device by
// the sums (exact_entry handles alpha = 0 there). k of any length: its
// chunks are reduced on the device between rounds. Results are the same
// bits as a direct call's (both are the correctly rounded ones).
template <class Backend>
Status exdgemm_capture_run(Backend &be, MatView<const double> A, MatView<const double> B,
                           MatView<double> C, ExdgemmLimits lim, ExdgemmReport *info) {
  using namespace ex_detail;
  if constexpr (!Backend::kHasModular) {
    return Status::NotSupported;
  } else {
    const index_t m = C.rows, n = C.cols, k = A.cols;
    const std::size_t head = head_bytes(m, n);
    // The moduli for the spans of the handle's last direct call (whatever
    // its engine), this call's k and kCaptureMarginBits (data a little
    // wider than the warm-up's still needs no entry summed directly) where
    // known, else all of them; fewer where the workspace does not hold that
    // plan (at least the warm-up call's, which sized it).
    const int spans = be.capture_span_hint();
    const int wanted =
        spans > 0 ? exact::moduli_for_bits(1 + ceil_log2(k) + spans + kCaptureMarginBits)
                  : -1;
    int L = wanted > 0 ? wanted : exact::kMaxModuli;
    Blocking blk;
    for (; L > 0; --L) {
      blk = modular_blocking(be, m, n, k, L, false, head, lim.workspace_bytes, lim);
      if (blk.bm > 0 && blk.bytes <= lim.workspace_bytes) break;
    }
    if (L == 0) return Status::NotSupported;
    *info = ExdgemmReport{};
    info->wide_entries = -1;
    lim.phase_times = false;  // no waits inside a capture
    lim.workspace_bytes = blk.bytes;
    PhaseClock<Backend> clock(be, false, info->phase_ms);
    const MatView<const double> Bt{B.p, n, k, B.ld, !B.trans};
    char *ws = static_cast<char *>(be.head_space(head));
    if (!ws) return Status::NotSupported;
    auto *info_a = reinterpret_cast<exact::VectorInfo *>(ws);
    Status s = be.scan_operands(A, info_a, Bt, info_a + m);
    if (s != Status::Ok) return s;
    // (The spans are not known here: no fused tiles, tiles_allowed, and
    // the residues planned for narrow rows, ModularSpans.)
    return modular_run(be, A, Bt, B, C, L, ModularSpans{kUnshiftedSpan, kUnshiftedSpan},
                       false, head, be.host_alpha(), be.host_beta(), lim, clock, info);
  }
}

// A call's limits from the options: the workspace budget (the option, or
// the backend's automatic_budget, within its workspace_cap), forced block,
// chunk and engine, phase times.
template <class Backend>
ExdgemmLimits exdgemm_limits(Backend &be, const Options &opt) {
  ExdgemmLimits lim;
  lim.force_block = opt.exdgemm_block;
  lim.force_chunk = opt.exdgemm_k_chunk;
  lim.engine = static_cast<ExEngine>(opt.exdgemm_engine);
  lim.phase_times = opt.exdgemm_phase_times != 0;
  lim.workspace_bytes =
      std::min(opt.exdgemm_workspace_limit > 0 ? std::size_t(opt.exdgemm_workspace_limit)
                                               : be.automatic_budget(),
               be.workspace_cap());
  return lim;
}

// One call C = RN(alpha op(A) op(B) + beta C): the BLAS quick return, the
// workspace budget from the options, then the scheme (or, inside a CUDA
// graph capture, exdgemm_capture_run). Both backends' entry points call
// this. Beyond exdgemm_run's phases the backend provides
//   Status scale_by_beta(MatView<double> C);  C = beta C with the call's beta
//   std::size_t automatic_budget();           budget when the option is 0
//   std::size_t workspace_cap();              most workspace the call can have
//                                             (the user's, or the handle's limit)
//   bool capturing();                         the call is being captured
//   double host_alpha(), host_beta();         the scalars as the host knows
//                                             them before any fetch (a captured
//                                             call with device scalars: the
//                                             backend's sums read them there)
// `alpha_zero`: alpha is known on the host to be 0.
template <class Backend>
Status exdgemm_driver(Backend &be, MatView<const double> A, MatView<const double> B,
                      MatView<double> C, bool alpha_zero, const Options &opt,
                      ExdgemmReport *info) {
  *info = ExdgemmReport{};
  if (C.rows == 0 || C.cols == 0) return Status::Ok;
  // BLAS: C = beta C, A and B not read (RN(beta c) = fl(beta c)).
  if (A.cols == 0 || alpha_zero) return be.scale_by_beta(C);
  const ExdgemmLimits lim = exdgemm_limits(be, opt);
  if (be.capturing()) return exdgemm_capture_run(be, A, B, C, lim, info);
  return exdgemm_run(be, A, B, C, lim, info);
}

}  // namespace xn
