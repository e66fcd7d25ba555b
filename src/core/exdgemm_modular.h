// exdgemm_modular.h - exdgemm's modular engine (docs/design.md, "exdgemm:
// the modular engine"), written once over a backend: the split of k, the
// choice of fused residues, and modular_run, the products and sums after
// exdgemm_run's phase 1 (core/exdgemm.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/exdgemm_common.h"
#include "numerics/modular_crt.h"

namespace xn {

namespace ex_detail {

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

}  // namespace ex_detail

// The modular engine's products and sums (docs/design.md, "exdgemm: the
// modular engine"), after exdgemm_run's phase 1: L moduli, the phase-1
// arrays in the head (`head` bytes) and the call's alpha and beta. Blocking
// as the slice engine's, over the modular body; k split as ModularSplit
// says. Backend hooks:
//   residue_bytes(), product_bytes()   storage of one residue / one product
//   modular_max_chunk()                longest k whose products are exact
//   modular_slots(bm, bn, L)           slots that would fill the device
//                                      with a bm x bn block's products
//   modular_residues(X, info, r0, nr, L, span, split, out)
//       rows r0..r0+nr of X (op(A), or op(B)^T) as residues, in the split's
//       chunk-major layout, zero in the padding; span bounds the rows'
//       spans (ModularSpans: the GPU takes a kernel without the pieces of
//       wide rows where it is at most kUnshiftedSpan)
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

// The spans (bits) the residues are planned for: the widest row of op(A)
// and column of op(B), from the exponent scans. Inside a capture, where the
// host never sees them, kUnshiftedSpan: the kernel without pieces, as
// before them (a wider row still gets its exact residues, by
// residue_source, more slowly).
struct ModularSpans {
  int a, b;
};

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
                   MatView<const double> B, MatView<double> C, int L, ModularSpans spans,
                   bool tiles, std::size_t head, double alpha, double beta,
                   const ExdgemmLimits &lim, PhaseClock<Backend> &clock,
                   ExdgemmReport *info) {
  using namespace ex_detail;
  const index_t m = C.rows, n = C.cols, k = A.cols;
  const std::size_t rb = be.residue_bytes();
  Blocking blk;
  char *body = nullptr;
  const Status got = claim_blocking(
      head, lim,
      [&](std::size_t budget) {
        return modular_blocking(be, m, n, k, L, tiles, head, budget, lim);
      },
      [&](std::size_t bytes) { return be.body_space(bytes); }, &blk, &body);
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
    then([&] { return be.modular_residues(Bt, ib, 0, n, L, spans.b, sp, rbs); });
  std::int64_t blocks = 0;
  for (index_t i0 = 0; i0 < m && s == Status::Ok; i0 += blk.bm) {
    const index_t bm = std::min(blk.bm, m - i0);
    if (L > 0 && stores_a)
      then([&] { return be.modular_residues(A, ia, i0, bm, L, spans.a, sp, ra); });
    for (index_t j0 = 0; j0 < n && s == Status::Ok; j0 += blk.bn) {
      const index_t bn = std::min(blk.bn, n - j0);
      const index_t rb_rows = blk.b_once ? n : bn;
      const char *rbj = rbs;
      if (L > 0) {
        if (blk.b_once)
          rbj = rbs + j0 * sp.chunk * index_t(rb);  // row j0 of each (chunk, modulus)
        else if (stores_b)
          then([&] { return be.modular_residues(Bt, ib, j0, bn, L, spans.b, sp, rbs); });
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

}  // namespace xn
