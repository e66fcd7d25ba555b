// exdgemm_batched.h - the batched correctly rounded DGEMM
// (xnExdgemmStridedBatched, xnExdgemmBatched) as one modular engine over the
// whole batch (docs/design.md, "Batched exdgemm"): each phase of
// core/exdgemm.h is one launch for a group of products, not one per product,
// and the call synchronises once (the moduli), not once per product.
//
//   scan_batch        exponent summaries of every product's rows of op(A)
//                     and columns of op(B)
//   fetch_batch_spans the widest row and column over the batch, and alpha
//                     and beta, to the host: the call's one synchronisation
//   then per group of products that fits the workspace:
//   residues_batch    op(A)'s, then op(B)^T's residues of the group, chunk
//                     by chunk over the group's products
//   modular_products  per chunk of k: the group's count x L INT8 products as
//                     one strided batch (uniform strides by the layout)
//   modular_reduce    between chunks (core/exdgemm.h, ModularSplit)
//   or, where k is one chunk and the backend's digit products pay:
//   modular_digit_products
//                     the group's count x L INT8 products, each sum leaving
//                     as its CRT digit (one byte, not four)
//   sum_batch         the group's entries from their L products (or digits)
//
// One set of moduli serves every product: L from the widest row of op(A)
// and column of op(B) over the batch. Each entry is correctly rounded
// whatever L is (the moduli only have to hold |X|), so the bits are those
// of one xnExdgemm per product.
//
// The engine takes what it runs fastest: every product one block of C (m, n
// at most the backend's kModularBlockCap), residues stored (no fused
// products: op(B) wider than kFusedMaxCols), one slot (the batch fills the
// device). Anything else, a capture, a forced block, alpha = 0, an operand
// without a nonzero finite entry, a range beyond the moduli (over the
// widest row and column of the whole batch: one outlier product sends the
// batch to the per-product path) or a workspace too small for the
// summaries and one product declines (`*ran` false, C untouched): the
// caller then runs one xnExdgemm per product.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/exdgemm.h"

namespace xn {

// Where product b of a batch finds an operand: pointers[b] (a device array
// of pointers, as cublasDgemmBatched takes) when set, else the view's p + b
// stride.
struct BatchStep {
  const void *const *pointers = nullptr;
  std::int64_t stride = 0;
};

// A batch of count products C_b = alpha op(A_b) op(B_b) + beta C_b of one
// shape: A, B, C are product 0's views (their p ignored where the step has
// pointers).
struct ExBatchOperands {
  MatView<const double> A, B;
  MatView<double> C;
  BatchStep a, b, c;
  index_t count = 0;
};

namespace testing {
// The digit products (Backend::kHasDigitProducts) where k is one chunk: 0
// = where the backend says they pay (digit_products_pay), 1 = always, -1 =
// never; for tests and benchmarks comparing the two paths
// (src/core/exdgemm_testing.cpp).
void set_batched_digits(int use);
int batched_digits_override();
}  // namespace testing

namespace ex_detail {

// The body of a group of g products: op(A)'s residues, op(B)^T's, then the
// products, each region 256-byte aligned (offsets in bytes from the body).
struct BatchGroupLayout {
  std::size_t residues_b = 0, products = 0, bytes = 0;
};
inline BatchGroupLayout batch_group_layout(index_t g, index_t m, index_t n,
                                           const ModularSplit &sp, int L,
                                           std::size_t residue, std::size_t product,
                                           index_t pstride) {
  BatchGroupLayout b;
  b.residues_b = std::size_t(round_up(g * sp.residue_bytes(m, L, residue), 256));
  b.products = b.residues_b + std::size_t(round_up(g * sp.residue_bytes(n, L, residue), 256));
  b.bytes = b.products + std::size_t(round_up(g * L * pstride * index_t(product), 256));
  return b;
}

// Bytes of the batch's summaries (count x (m + n)) and of the two spans.
inline std::size_t batch_head_bytes(index_t count, index_t m, index_t n) {
  return std::size_t(round_up(count * (m + n) * index_t(sizeof(exact::VectorInfo)), 256) +
                     256);
}

// Launch limit of the backends' grids (a group's products on one grid
// dimension, and count x L planes reduced between chunks).
constexpr index_t kMaxBatchGroup = 65535;

}  // namespace ex_detail

template <class Backend>
Status exdgemm_batched_run(Backend &be, const ExBatchOperands &x, const ExdgemmLimits &lim,
                           ExdgemmReport *info, bool *ran) {
  using namespace ex_detail;
  *ran = false;
  *info = ExdgemmReport{};
  info->wide_entries = -1;
  const index_t m = x.C.rows, n = x.C.cols, k = x.A.cols, count = x.count;
  if constexpr (!Backend::kHasBatched) {
    return Status::Ok;
  } else {
    // (A forced block of C is the product-by-product path's to honour.)
    if (count <= 0 || m <= 0 || n <= 0 || k <= 0 || be.capturing() ||
        lim.engine == ExEngine::Slices || lim.force_block > 0 ||
        n <= Backend::kFusedMaxCols || m > Backend::kModularBlockCap ||
        n > Backend::kModularBlockCap)
      return Status::Ok;
    PhaseClock<Backend> clock(be, lim.phase_times, info->phase_ms);
    const MatView<const double> Bt{x.B.p, n, k, x.B.ld, !x.B.trans};
    const ModularSplit sp = modular_split(k, be.modular_max_chunk(), 1, lim.force_chunk);
    const index_t pstride = product_stride(m, n);
    const std::size_t rb = be.residue_bytes();

    // Phase 1 over the batch, and its one synchronisation; nothing is
    // allocated unless the summaries and one product with one modulus fit
    // the budget.
    const std::size_t head = batch_head_bytes(count, m, n);
    if (head + batch_group_layout(1, m, n, sp, 1, rb, be.product_bytes(), pstride).bytes >
        lim.workspace_bytes)
      return Status::Ok;
    char *ws = static_cast<char *>(be.head_space(head));
    if (!ws) return Status::Ok;  // declined: the products one by one need less
    auto *ia = reinterpret_cast<exact::VectorInfo *>(ws);
    exact::VectorInfo *ib = ia + count * m;
    int *spans = reinterpret_cast<int *>(ws + head - 256);
    Status s = clock.start();
    for (index_t z0 = 0; z0 < count && s == Status::Ok; z0 += kMaxBatchGroup)
      s = be.scan_batch(x, Bt, z0, std::min(kMaxBatchGroup, count - z0), ia, ib);
    int span_a = 0, span_b = 0;
    double alpha = 0, beta = 0;
    if (s == Status::Ok)
      s = be.fetch_batch_spans(ia, count * m, ib, count * n, spans, &span_a, &span_b, &alpha,
                               &beta);
    if (s == Status::Ok) s = clock.lap(kExExponents);
    if (s != Status::Ok) return s;  // (nothing written: the caller may rerun)
    info->span_bits = span_a + span_b;

    // The moduli for the widest row and column (exdgemm_run's choice).
    if (alpha == 0.0 || span_a == 0 || span_b == 0) return Status::Ok;
    const int w = exact::slice_width(k);
    const int L = exact::moduli_for_bits(1 + ceil_log2(k) + span_a + span_b);
    const double slices_bound = double((span_a + w - 1) / w) * double((span_b + w - 1) / w);
    if (L <= 0 || (lim.engine != ExEngine::Modular &&
                   !(L * be.modular_product_cost() < slices_bound)))
      return Status::Ok;

    // One chunk of k: the products' epilogue may make the CRT digits, int8,
    // where that pays (the backend's measured rule).
    bool digits = false;
    if constexpr (Backend::kHasDigitProducts) {
      const int forced = testing::batched_digits_override();
      digits = sp.chunks == 1 && forced >= 0 && (forced > 0 || be.digit_products_pay(L, m, n, k));
    }
    const std::size_t pb = digits ? 1 : be.product_bytes();
    index_t plane = pstride;  // product to product (the digits lay theirs out)
    if constexpr (Backend::kHasDigitProducts)
      if (digits) plane = be.digit_plane_stride(m, n);

    // Groups of products: as many as the budget holds (and the grids take).
    auto group_bytes = [&](index_t g) {
      return batch_group_layout(g, m, n, sp, L, rb, pb, plane).bytes;
    };
    index_t group = std::min(count, kMaxBatchGroup / L);
    const std::size_t budget = std::max(lim.workspace_bytes, head) - head;
    const std::size_t one = group_bytes(1);
    if (one > budget) return Status::Ok;
    group = std::min<index_t>(group, index_t(budget / one));
    while (group > 0 && group_bytes(group) > budget) --group;
    char *body = nullptr;
    for (; group > 0; group /= 2)  // memory taken since the budget was read
      if ((body = static_cast<char *>(be.body_space(group_bytes(group))))) break;
    if (!body) return Status::Ok;
    ia = static_cast<exact::VectorInfo *>(be.head_address());  // (the head may have moved)
    ib = ia + count * m;
    *ran = true;

    const int cap_bits = exact::modular_capacity_bits(L), log2_k = ceil_log2(k);
    info->engine = int(ExEngine::Modular);
    info->moduli = L;
    info->k_chunks = sp.chunks;
    info->k_slots = 1;
    info->block_rows = int(m);
    info->block_cols = int(n);
    info->workspace_bytes = head + group_bytes(group);
    info->wide_entries = 0;
    info->slice_products = L;

    auto then = [&s](auto &&step) {
      if (s == Status::Ok) s = step();
    };
    std::int64_t groups = 0;
    for (index_t z0 = 0; z0 < count && s == Status::Ok; z0 += group) {
      const index_t g = std::min(group, count - z0);
      const BatchGroupLayout at = batch_group_layout(g, m, n, sp, L, rb, pb, plane);
      char *ra = body, *rbs = body + at.residues_b, *P = body + at.products;
      then([&] { return be.residues_batch(x.A, x.a, z0, g, ia, L, span_a, sp, ra); });
      then([&] { return be.residues_batch(Bt, x.b, z0, g, ib, L, span_b, sp, rbs); });
      then([&] { return clock.lap(kExConversion); });
      if constexpr (Backend::kHasDigitProducts)
        if (digits)
          then([&] {
            return be.modular_digit_products(ra, rbs, int(g * L), L, m, n, sp.chunk, P,
                                             plane);
          });
      // Chunk c of the group's products: count x L of them, one stride apart.
      for (int c = 0; c < sp.chunks && !digits; ++c) {
        if (c > 0) then([&] { return be.modular_reduce(P, L, int(g), pstride, m * n); });
        then([&] {
          return be.modular_products(ra + index_t(c) * g * L * m * sp.chunk * index_t(rb),
                                     rbs + index_t(c) * g * L * n * sp.chunk * index_t(rb),
                                     int(g * L), m, n, n, sp.chunk, P, pstride, c > 0);
        });
      }
      then([&] { return clock.lap(kExProducts); });
      then([&] {
        return be.sum_batch(x, z0, g, ia, ib, L, plane, cap_bits, log2_k, P, digits, alpha,
                            beta);
      });
      then([&] { return clock.lap(kExSums); });
      ++groups;
    }
    info->blocks = groups;
    return s;
  }
}

}  // namespace xn
