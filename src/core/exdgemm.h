// exdgemm.h - the correctly rounded DGEMM (Ozaki scheme), written once over a
// backend (docs/design.md, "exdgemm"). The backends supply these phases,
// each a pass of the shared __host__ __device__ numerics in src/numerics/:
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
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/options.h"
#include "core/types.h"
#include "core/view.h"
#include "numerics/exdgemm_entry.h"
#include "numerics/modular.h"
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

// How the modular engine's integer products run over k (docs/design.md,
// "Long and skinny k"). k is cut into `chunks` pieces of `chunk` (the last
// may be shorter), each stored padded to `chunk` residues per row, a
// multiple of 16 (cuBLAS's INT8 kernels fail on an odd k such as 211; the
// padding residues are zero). Residues are stored chunk-major: chunk c,
// modulus l, row i at ((c L + l) rows + i) chunk, so that every (chunk,
// modulus) product is one stride apart. Chunk c's L products go to slot c
// mod `slots`: a round of up to `slots` chunks is one batched product. A
// slot that receives a chunk of a later round is first reduced modulo its
// modulus, so the backend's exact accumulation range (max_chunk: the
// GPU's int32 holds 2^17 products) holds again; after the last round the
// slots are folded into the first (modular_fold_slots). More than one slot splits k for parallelism where the block of C
// alone cannot fill the device (skinny shapes).
struct ModularSplit {
  index_t chunk = 0;
  int chunks = 1, slots = 1;
  // Residue bytes of `rows` rows (L moduli, `bytes` each).
  index_t residue_bytes(index_t rows, int L, std::size_t bytes) const {
    return index_t(chunks) * L * rows * chunk * index_t(bytes);
  }
};

// Shortest chunk worth a slot of its own: shorter ones cost more in the
// products' prologue and the sums' extra reads than they gain. The fused
// tiles (ModularFusion::Both) start a slot for a few steps of 32
// positions: 64 x 64 x 4096 on 4 slots of 1024 kept 16 blocks busy on an
// H100's 132 multiprocessors.
constexpr index_t kMinSplitChunk = 1024, kMinTileChunk = 128;

// The split of k for a block: chunks no longer than max_chunk (or
// `force_chunk` when > 0), at least `want_slots` of them where k allows
// chunks of min_chunk, evenly long.
inline ModularSplit modular_split(index_t k, index_t max_chunk, int want_slots,
                                  index_t force_chunk, index_t min_chunk = kMinSplitChunk) {
  ModularSplit sp;
  const index_t longest =
      force_chunk > 0 ? std::min(round_up(force_chunk, 16), max_chunk) : max_chunk;
  index_t chunks = (k + longest - 1) / longest;
  if (force_chunk <= 0)
    chunks = std::max(chunks, std::min<index_t>(std::max(want_slots, 1),
                                                std::max<index_t>(1, k / min_chunk)));
  sp.chunk = std::min(longest, round_up((k + chunks - 1) / chunks, 16));
  sp.chunks = int((k + sp.chunk - 1) / sp.chunk);
  sp.slots = std::max(1, std::min(sp.chunks, std::max(want_slots, 1)));
  return sp;
}

// Elements between two slots' products (and between two moduli's): a block
// of C rounded up so that every product starts 16-byte aligned.
inline index_t product_stride(index_t bm, index_t bn) { return round_up(bm * bn, 64); }

// The modular engine's body: residues of a block's rows of op(A) (none
// where the products make them), of op(B)'s columns (a block's, or all n
// once; none where the products make them), and the slots' L products each.
inline std::size_t modular_body_bytes(index_t bm, index_t bn, index_t n,
                                      const ModularSplit &sp, int L,
                                      std::size_t residue_bytes, std::size_t product_bytes,
                                      bool b_once, ModularFusion fusion) {
  const index_t a = fusion != ModularFusion::None
                        ? 0
                        : round_up(sp.residue_bytes(bm, L, residue_bytes), 256);
  const index_t b = fusion == ModularFusion::Both
                        ? 0
                        : round_up(sp.residue_bytes(b_once ? n : bn, L, residue_bytes), 256);
  // The fused tiles fold their slots as they finish: one product per modulus.
  const index_t slots = fusion == ModularFusion::Both ? 1 : sp.slots;
  const index_t p =
      round_up(slots * L * product_stride(bm, bn) * index_t(product_bytes), 256);
  return std::size_t(a + b + p);
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

// The largest blocking choose(budget) gives whose body the backend can
// allocate after the head: if the body cannot be had after all (memory taken
// since the budget was read), the largest one below it, down to the
// smallest block; AllocFailed when none (C untouched). Growing the workspace
// may move the head region (its contents kept): callers place the phase-1
// arrays again at head_address().
template <class Backend, class Choose>
Status claim_blocking(Backend &be, std::size_t head, const ExdgemmLimits &lim,
                      Choose &&choose, ex_detail::Blocking *blk, char **body) {
  std::size_t budget = lim.workspace_bytes;
  for (;;) {
    *blk = choose(budget);
    if (blk->bm == 0) return Status::AllocFailed;
    *body = static_cast<char *>(be.body_space(blk->bytes - head));
    if (*body) return Status::Ok;
    if (lim.force_block > 0 || blk->bytes <= head + 1) return Status::AllocFailed;
    budget = blk->bytes - 1;
  }
}

// The modular engine's products and sums (docs/design.md, "exdgemm: the
// modular engine"), after exdgemm_run's phase 1: L moduli, the phase-1
// arrays in the head (`head` bytes) and the call's alpha and beta. Blocking
// as the slice engine's, over the modular body; k split as ModularSplit
// says. Backend hooks:
//   residue_bytes(), product_bytes()   storage of one residue / one product
//   modular_max_chunk()                longest k whose products are exact
//   modular_slots(bm, bn, L)           slots that would fill the device
//                                      with a bm x bn block's products
//   modular_residues(X, info, r0, nr, L, split, out)
//       rows r0..r0+nr of X (op(A), or op(B)^T) as residues, in the split's
//       chunk-major layout, zero in the padding
//   modular_products(ra, rb, count, bm, bn, rb_rows, chunk, P, pstride,
//                    accumulate)
//       for b < count: P_b (bm x bn, ld bm, at P + b pstride) (+)= ra_b
//       rb_b^T over `chunk`, exact (any integer congruent to it), with
//       ra_b at ra + b bm chunk and rb_b at rb + b rb_rows chunk (rb_rows =
//       n when op(B)'s residues were made once for all blocks, else bn)
//   modular_reduce(P, L, slots, pstride, entries)
//       each product's first `entries` values to symmetric residues
//   modular_fold_slots(P, L, slots, pstride, entries)
//       each modulus's `slots` products summed into its first
//       (exact::fold_slots), as a symmetric residue
//   kFusedMaxCols, kFusedMaxModuli, and where kFusedMaxCols > 0:
//   modular_fused_products(A, ia, i0, bm, rb, rb_rows, bn, L, split, P, pstride)
//       P_l = the residues of rows i0..i0+bm of op(A), made on the fly
//       from A (never stored), times rb_l^T over all of k, into slot 0
//       (any integers congruent to the products): op(A) read once where
//       op(B) has at most kFusedMaxCols columns and L <= kFusedMaxModuli
//       (ModularFusion::A)
//   kTileMaxRows, and where kTileMaxRows > 0:
//   modular_tile_slots(bm, bn, L)      slots that would fill the device
//                                      with a bm x bn block's fused tiles
//   modular_tile_products(A, ia, i0, bm, Bt, ib, j0, bn, L, split, P, pstride)
//       P_l = an integer congruent modulo m_l to the product of rows
//       i0..i0+bm of op(A) and j0..j0+bn of op(B)^T (|P_l| < 2^31), its
//       slots (the split's chunks s, s + slots, ...) already folded, both
//       operands' residues made on the fly (never stored), where bm and bn
//       are at most kTileMaxRows (ModularFusion::Both)
//   modular_sum_block(A, B, C, ia, ib, i0, bm, j0, bn, L, pstride,
//                     cap_bits, log2_k, P, alpha, beta, wide)
//       the entries of the block from their L products, except those
//       whose range exceeds the moduli's cap_bits (exact::modular_over_range:
//       only in a captured call's fixed plan), which are summed from their
//       operands (exact::DirectTerms); the products are the sum's to
//       consume (the GPU marks rounded entries in them)
namespace testing {
// The slots both backends' modular engines multiply k's chunks into
// (ex_detail::ModularSplit); 0 (default) = each backend's own choice (the
// CPU: one; the GPU: by the block's tiles). Process-wide, for tests of the
// placement, the rounds reduced between them and the slot sums, on shapes
// of any kind (src/core/exdgemm_testing.cpp). Ignored where op(A)'s
// residues are made inside the products (ModularFusion::A: op(B) of at
// most kFusedMaxCols columns), which use no slots.
void set_modular_slots(int slots);
int modular_slots_override();
}  // namespace testing

// Which residues the backend's products make themselves for blocks of C of
// bm x bn (the int8 residues of an operand, L bytes per entry written and
// read again, cost more memory traffic than its doubles where the other
// side of the product is small; docs/design.md, "Skinny n" and "Small m
// and n"): op(A)'s where op(B) has at most kFusedMaxCols columns; both
// where `tiles` allows it (tiles_allowed) and the block fills at least half
// of one tile of kTileMaxRows x kTileMaxRows. Decided once per call, on its
// full block (edge blocks are smaller).
template <class Backend>
constexpr ModularFusion modular_fusion(index_t bm, index_t bn, int L, bool tiles) {
  if (bn <= Backend::kFusedMaxCols && L <= Backend::kFusedMaxModuli) return ModularFusion::A;
  if (tiles && bm <= Backend::kTileMaxRows && bn <= Backend::kTileMaxRows &&
      2 * bm * bn >= index_t(Backend::kTileMaxRows) * Backend::kTileMaxRows)
    return ModularFusion::Both;
  return ModularFusion::None;
}

// Whether a call may take the fused tiles: every row of op(A) and column of
// op(B) spans at most kUnshiftedSpan bits (their entries' residues come
// from one multiply each; the tiles, which make each residue in every
// group of moduli, would repeat the decoding of wider data) and k is at
// least kTileMinK. The tiles' time per step does not shrink with the
// block's rows, so against the stored residues they win on long k and
// full tiles only: on an H100, 64 x 64 by 18 % at k = 2^17, 4 % at 2^15,
// and lose 3 % at 2^14; at k = 2^17, 64 x 32 and 64 x 48 by 7-12 %, 48 x 48
// by 3 %, 48 x 33 and 32 x 32 lose 8-13 % (docs/performance.md).
constexpr int kUnshiftedSpan = 53;
constexpr index_t kTileMinK = index_t(1) << 15;
inline bool tiles_allowed(int span_a, int span_b, index_t k) {
  return span_a <= kUnshiftedSpan && span_b <= kUnshiftedSpan && k >= kTileMinK;
}

template <class Backend>
ex_detail::ModularSplit modular_split_for(const Backend &be, index_t k, index_t bm,
                                          index_t bn, int L, bool tiles,
                                          const ExdgemmLimits &lim) {
  // op(A)'s fused products spread k over the device themselves: no slots.
  const ModularFusion fusion = modular_fusion<Backend>(bm, bn, L, tiles);
  const int forced = testing::modular_slots_override();
  int slots = 1;
  if (fusion != ModularFusion::A) {
    if (forced > 0)
      slots = forced;
    else if constexpr (Backend::kTileMaxRows > 0)
      slots = fusion == ModularFusion::Both ? be.modular_tile_slots(bm, bn, L)
                                            : be.modular_slots(bm, bn, L);
    else
      slots = be.modular_slots(bm, bn, L);
  }
  return ex_detail::modular_split(
      k, be.modular_max_chunk(), slots, lim.force_chunk,
      fusion == ModularFusion::Both ? ex_detail::kMinTileChunk : ex_detail::kMinSplitChunk);
}

// The modular engine's blocking of an m x n x k product within `budget`.
template <class Backend>
ex_detail::Blocking modular_blocking(const Backend &be, index_t m, index_t n, index_t k,
                                     int L, bool tiles, std::size_t head, std::size_t budget,
                                     const ExdgemmLimits &lim) {
  return ex_detail::choose_block(
      m, n, head, budget, lim.force_block, [&](index_t bm, index_t bn, bool once) {
        return ex_detail::modular_body_bytes(
            bm, bn, n, modular_split_for(be, k, bm, bn, L, tiles, lim), L,
            be.residue_bytes(), be.product_bytes(), once,
            modular_fusion<Backend>(bm, bn, L, tiles));
      },
      Backend::kModularBlockCap);
}

template <class Backend>
Status modular_run(Backend &be, MatView<const double> A, MatView<const double> Bt,
                   MatView<const double> B, MatView<double> C, int L, bool tiles,
                   std::size_t head, double alpha, double beta, const ExdgemmLimits &lim,
                   PhaseClock<Backend> &clock, ExdgemmReport *info) {
  using namespace ex_detail;
  const index_t m = C.rows, n = C.cols, k = A.cols;
  const std::size_t rb = be.residue_bytes();
  Blocking blk;
  char *body = nullptr;
  const Status got = claim_blocking(
      be, head, lim,
      [&](std::size_t budget) {
        return modular_blocking(be, m, n, k, L, tiles, head, budget, lim);
      },
      &blk, &body);
  if (got != Status::Ok) return got;
  // One split for every block: the full block's (edge blocks are smaller,
  // and their products fit its space).
  const ModularSplit sp = modular_split_for(be, k, blk.bm, blk.bn, L, tiles, lim);
  const index_t pstride = product_stride(blk.bm, blk.bn);
  const auto *ia = static_cast<const exact::VectorInfo *>(be.head_address());
  const exact::VectorInfo *ib = ia + m;
  const ModularFusion fusion = modular_fusion<Backend>(blk.bm, blk.bn, L, tiles);
  const bool stores_a = fusion == ModularFusion::None, stores_b = fusion != ModularFusion::Both;
  char *ra = body;
  char *rbs = ra + (stores_a ? round_up(sp.residue_bytes(blk.bm, L, rb), 256) : 0);
  char *P = rbs + (stores_b ? round_up(sp.residue_bytes(blk.b_once ? n : blk.bn, L, rb), 256)
                            : 0);
  const int cap_bits = exact::modular_capacity_bits(L), log2_k = ceil_log2(k);
  info->engine = int(ExEngine::Modular);
  info->moduli = L;
  info->k_chunks = sp.chunks;
  info->k_slots = sp.slots;
  info->fused_operands = int(fusion);
  info->block_rows = int(blk.bm);
  info->block_cols = int(blk.bn);
  info->workspace_bytes = blk.bytes;
  info->wide_entries = 0;
  info->slice_products = L;

  // Each step runs only while every step before it succeeded: `then` takes
  // the step as a callable, so a failed product never feeds the sums.
  Status s = Status::Ok;
  auto then = [&s](auto &&step) {
    if (s == Status::Ok) s = step();
  };
  if (blk.b_once && L > 0 && stores_b)
    then([&] { return be.modular_residues(Bt, ib, 0, n, L, sp, rbs); });
  std::int64_t blocks = 0;
  for (index_t i0 = 0; i0 < m && s == Status::Ok; i0 += blk.bm) {
    const index_t bm = std::min(blk.bm, m - i0);
    if (L > 0 && stores_a) then([&] { return be.modular_residues(A, ia, i0, bm, L, sp, ra); });
    for (index_t j0 = 0; j0 < n && s == Status::Ok; j0 += blk.bn) {
      const index_t bn = std::min(blk.bn, n - j0);
      const index_t rb_rows = blk.b_once ? n : bn;
      const char *rbj = rbs;
      if (L > 0) {
        if (blk.b_once)
          rbj = rbs + j0 * sp.chunk * index_t(rb);  // row j0 of each (chunk, modulus)
        else if (stores_b)
          then([&] { return be.modular_residues(Bt, ib, j0, bn, L, sp, rbs); });
        then([&] { return clock.lap(kExConversion); });
        if constexpr (Backend::kFusedMaxCols > 0) {
          if (fusion == ModularFusion::A)
            then([&] {
              return be.modular_fused_products(A, ia, i0, bm, rbj, rb_rows, bn, L, sp, P,
                                               pstride);
            });
        }
        if constexpr (Backend::kTileMaxRows > 0) {
          if (fusion == ModularFusion::Both)
            then([&] {
              return be.modular_tile_products(A, ia, i0, bm, Bt, ib, j0, bn, L, sp, P,
                                              pstride);
            });
        }
        // Rounds of up to `slots` chunks, each one batched product.
        for (int c0 = 0; c0 < sp.chunks && fusion == ModularFusion::None; c0 += sp.slots) {
          const int count = std::min(sp.slots, sp.chunks - c0) * L;
          if (c0 > 0)
            then([&] { return be.modular_reduce(P, L, sp.slots, pstride, bm * bn); });
          then([&] {
            return be.modular_products(
                ra + index_t(c0) * L * bm * sp.chunk * index_t(rb),
                rbj + index_t(c0) * L * rb_rows * sp.chunk * index_t(rb), count, bm, bn,
                rb_rows, sp.chunk, P, pstride, c0 > 0);
          });
        }
        // k split for parallelism: the slots folded into the first, so the
        // reconstruction reads one product per modulus (the fused tiles fold
        // their own).
        if (sp.slots > 1 && fusion == ModularFusion::None)
          then([&] { return be.modular_fold_slots(P, L, sp.slots, pstride, bm * bn); });
        then([&] { return clock.lap(kExProducts); });
      }
      then([&] {
        return be.modular_sum_block(A, B, C, ia, ib, i0, bm, j0, bn, L, pstride, cap_bits,
                                    log2_k, P, alpha, beta, &info->wide_entries);
      });
      then([&] { return clock.lap(kExSums); });
      ++blocks;
    }
  }
  info->blocks = blocks;
  return s;
}

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
      const Status ms =
          modular_run(be, A, Bt, B, C, L, tiles_allowed(span_a, span_b, k), head, alpha,
                      beta, lim, clock, info);
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
      be, head, lim,
      [&](std::size_t budget) {
        return choose_blocking(m, n, k, s_all, t_all, budget, lim.force_block);
      },
      &blk, &body);
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
    // (The spans are not known here: no fused tiles, tiles_allowed.)
    return modular_run(be, A, Bt, B, C, L, false, head, be.host_alpha(), be.host_beta(), lim,
                       clock, info);
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
