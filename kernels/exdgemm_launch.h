// exdgemm_launch.h - host-side launchers of the exdgemm CUDA kernels. Each
// runs one phase of src/core/exdgemm.h on the GPU with the shared numerics of
// numerics/ozaki_split.h and numerics/exdgemm_entry.h, enqueues on `stream`
// and returns the launch's cudaError_t (never synchronises).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "numerics/exdgemm_entry.h"
#include "numerics/hd.h"
#include "numerics/modular_crt.h"
#include "numerics/ozaki_split.h"

namespace xn {

using exact::SliceList;

// A column-major view: element (i, j) of the logical rows x cols matrix is
// p[i + j*ld], or p[j + i*ld] if trans.
struct ExView {
  const double *p;
  std::int64_t rows, cols, ld;
  bool trans;
};

// A batched call (xnExdgemmStridedBatched, xnExdgemmBatched): where product
// z finds an operand, pointers[z] (cublasDgemmBatched's array, read on the
// device) when set, else the view's p + z stride.
struct ExBatchStep {
  const void *const *pointers;
  std::int64_t stride;
};
// A launch's products of a batched call: `count` of them (one per
// blockIdx.z or blockIdx.y, at most 65535), from product `first` of the
// call.
struct ExBatch {
  ExBatchStep a, b, c;
  std::int64_t first, count;
};

// info_a[i] = exponent summary of row i of A, info_b[j] of row j of Bt (the
// columns of op(B)); both operands in one launch.
cudaError_t launch_ex_scan_operands(cudaStream_t s, ExView A, exact::VectorInfo *info_a,
                                    ExView Bt, exact::VectorInfo *info_b);

// The same for every product of `batch` (its steps a and b: A and Bt),
// product z's summaries at info_a + z A.rows and info_b + z Bt.rows.
cudaError_t launch_ex_scan_batch(cudaStream_t s, ExView A, exact::VectorInfo *info_a,
                                 ExView Bt, exact::VectorInfo *info_b, const ExBatch &batch);

// spans[0] = the widest span (top - low + 1) of info_a[0..na), spans[1] of
// info_b[0..nb) (0 where no entry is nonzero and finite).
cudaError_t launch_ex_batch_spans(cudaStream_t s, const exact::VectorInfo *info_a,
                                  std::int64_t na, const exact::VectorInfo *info_b,
                                  std::int64_t nb, int *spans);

// masks[g * kMaskWords ..] = nonzero slices of rows [64 g, 64 g + 64) of X.
cudaError_t launch_ex_mark_rows(cudaStream_t s, ExView X, const exact::VectorInfo *info,
                                int w, std::uint64_t *masks);

// out(a * nr + i, j) = digit list.idx[a] of X(r0 + i, j); out stored with
// X's orientation (ld_out), so reads and writes are both coalesced.
cudaError_t launch_ex_split_rows(cudaStream_t s, ExView X, const exact::VectorInfo *info,
                                 int w, std::int64_t r0, std::int64_t nr,
                                 const SliceList &list, double *out, std::int64_t ld_out);

// What the per-entry kernels of both engines share: the block of C
// (C(i0 + i, j0 + j), one entry per thread), the operands (non-finite
// entries, signed zeros, entries summed directly), alpha/beta as host
// values or, where alpha_dev/beta_dev are set (device pointer mode), read
// from the device, and *wide_count (device), incremented by the entries
// that took the wide path.
struct ExBlockArgs {
  ExView A, B;
  double *C;
  std::int64_t ldc;
  const exact::VectorInfo *info_a, *info_b;
  std::int64_t i0, bm, j0, bn;
  double alpha, beta;
  const double *alpha_dev, *beta_dev;
  unsigned long long *wide_count;
};

// The slice engine: X from the block's slice products P (ld ldp).
struct ExSumArgs {
  ExBlockArgs blk;
  int w;
  const double *P;
  std::int64_t ldp;
};
cudaError_t launch_ex_sum_block(cudaStream_t s, const ExSumArgs &a, const SliceList &la,
                                const SliceList &lb);

// The modular engine (kernels/numerics/modular.h). Residues of rows r0..r0+nr
// of X modulo the first L moduli, k cut into `chunks` chunks of `chunk` (a
// multiple of 16; core/exdgemm.h, ModularSplit): position p = c chunk + q
// of row i at out[((c L + l) nr + i) chunk + q] (int8), zero in the
// padding p >= X.cols. `span` is the widest row's span the kernel is
// chosen for (any value is safe: a row wider than it takes residue_source,
// more slowly): within 53 bits a kernel without the pieces of wider rows
// (exact::row_pieces), whose code slowed the narrow rows' residues.
cudaError_t launch_ex_modular_residues(cudaStream_t s, ExView X,
                                       const exact::VectorInfo *info, std::int64_t r0,
                                       std::int64_t nr, int L, int span,
                                       std::int64_t chunk, int chunks, std::int8_t *out);

// The residues of all rows of X in every product of a batch (step: the
// operand's ExBatchStep; product z of the launch is product `first` + z of
// the call, its summaries at info + (first + z) X.rows), laid out chunk by
// chunk over the launch's products: position p = c chunk + q of row i of
// product z, modulo m_l, at out[(((c count + z) L + l) X.rows + i) chunk +
// q], so that each chunk's count x L products are one stride apart.
cudaError_t launch_ex_modular_residues_batch(cudaStream_t s, ExView X, ExBatchStep step,
                                             std::int64_t first, std::int64_t count,
                                             const exact::VectorInfo *info, int L,
                                             int span, std::int64_t chunk, int chunks,
                                             std::int8_t *out);

// Skinny n: rows r0..r0+nr of X times op(B)'s residues, X's residues made
// on the fly (never stored): P[l pstride + i + j nr] = an int32 congruent
// to sum_p (X_ip mod m_l) rb[((c L + l) rb_rows + j) chunk + q] over all of
// k (p = c chunk + q), for j < nb <= kExFusedMaxCols and L <=
// kExFusedMaxModuli. k's pieces are spread over about `sm_count` x 16
// blocks; each adds its sums, reduced modulo m_l, into P with int32
// atomics (exact, so the result is the same in any order); P's L planes
// are zeroed first.
inline constexpr int kExFusedMaxCols = 4, kExFusedMaxModuli = 24;
cudaError_t launch_ex_modular_fused_products(cudaStream_t s, ExView X,
                                             const exact::VectorInfo *info, std::int64_t r0,
                                             std::int64_t nr, const std::int8_t *rb,
                                             std::int64_t rb_rows, std::int64_t nb, int L,
                                             std::int64_t chunk, int chunks, std::int32_t *P,
                                             std::int64_t pstride, int sm_count);

// Small m and n: both operands' residues made on the fly (never stored)
// and multiplied on the INT8 tensor cores, a block per tile of
// kExTileRows x kExTileRows of P (rows i0.. of op(A) = X rows, rows j0.. of
// op(B)^T = Y rows), kExTileModuli moduli and slot s (blockIdx.y): slot s
// takes the chunks c = s, s + slots, ... of k (each at most 2^17
// positions: int32 exact) and adds a symmetric residue of sum_p (X_ip mod
// m_l)(Y_jp mod m_l) over them into P[l pstride + i + j bm], for every i <
// bm, j < bn, l < L (any L): the slots fold inside the launch (P, L pstride
// int32 values, is zeroed first where slots > 1; |P| <= 127 slots).
inline constexpr int kExTileRows = 64, kExTileModuli = 4;
cudaError_t launch_ex_modular_tile_products(cudaStream_t s, ExView X,
                                            const exact::VectorInfo *info_x, std::int64_t i0,
                                            std::int64_t bm, ExView Y,
                                            const exact::VectorInfo *info_y, std::int64_t j0,
                                            std::int64_t bn, int L, std::int64_t chunk,
                                            int chunks, int slots, std::int32_t *P,
                                            std::int64_t pstride);

// The CRT digits' layout (launch_ex_modular_digit_products writes it, the
// batched reconstruction reads it): entry (i, j) of product x at P[x
// pstride + i + j ex_digit_column_stride(bm)], each column padded to a
// multiple of 16 bytes, so that the products store whole 16-byte pieces and
// the reconstruction loads whole words whatever bm is (byte by byte, a bm
// no multiple of 16 took up to 1.5x the time on an H200); pstride at least
// ex_digit_plane_bytes(bm, bn).
XN_HD constexpr std::int64_t ex_digit_column_stride(std::int64_t bm) {
  return (bm + 15) / 16 * 16;
}
XN_HD constexpr std::int64_t ex_digit_plane_bytes(std::int64_t bm, std::int64_t bn) {
  return ex_digit_column_stride(bm) * bn;
}

// P_x = ra_x rb_x^T for the `count` products x of one chunk laid out as
// launch_ex_modular_residues_batch lays them out (ra_x = ra + x bm k, bm
// rows of k residues; rb_x likewise with bn rows), k a multiple of 16 and
// at most 2^17 (the int32 sums exact), modulus l = x mod crt.L (the basis
// travels by value, as to the reconstruction): each entry (i, j) leaves as
// its signed CRT digit (|y| <= 127), int8 in the digits' layout above, the
// digit the reconstruction would make of the int32 sum.
// ra, rb, P and pstride 16-byte aligned (else cudaErrorInvalidValue).
cudaError_t launch_ex_modular_digit_products(cudaStream_t s, const std::int8_t *ra,
                                             const std::int8_t *rb, int count, std::int64_t bm,
                                             std::int64_t bn, std::int64_t k,
                                             const exact::CrtBasis &crt, std::int8_t *P,
                                             std::int64_t pstride);

// The same on Hopper's wgmma (modular_digit_wgmma.cu, built for sm_90a),
// for the current device where ex_digit_products_on_wgmma() (else
// cudaErrorNotSupported, having launched nothing).
// launch_ex_modular_digit_products takes it there and checks the
// arguments for both.
cudaError_t launch_ex_modular_digit_products_wgmma(cudaStream_t s, const std::int8_t *ra,
                                                   const std::int8_t *rb, int count,
                                                   std::int64_t bm, std::int64_t bn,
                                                   std::int64_t k, const exact::CrtBasis &crt,
                                                   std::int8_t *P, std::int64_t pstride);

// Whether launch_ex_modular_digit_products takes the wgmma kernel on the
// current device (where the engine's choice of digits differs: the
// backend's digit_products_pay).
bool ex_digit_products_on_wgmma();
// Whether this build has the wgmma kernel (an sm_90a image: CMakeLists.txt).
bool ex_digit_products_wgmma_built();

namespace testing {
// Tests only: launch_ex_modular_digit_products on its mma.sync kernel even
// where wgmma runs (both kernels' bits are checked on Hopper).
void set_digit_products_by_mma_sync(bool on);
bool digit_products_by_mma_sync();
// Tests only: sums[4 r + j] (r < rows, j < 4) = the fraction form's sums of
// row r whose L int8 digits are P[r + l pstride], by the reconstruction's
// tensor-core path, which reads words of four rows: P and pstride
// multiples of 4 (else cudaErrorInvalidValue).
cudaError_t launch_digit_fraction_sums(cudaStream_t s, const std::int8_t *P,
                                       std::int64_t pstride, int L, std::int64_t rows,
                                       double *sums);
}  // namespace testing

// Between two rounds of chunks: every product P[(s L + l) pstride + e]
// (s < slots, e < entries) to its symmetric residue modulo m_l.
cudaError_t launch_ex_modular_reduce(cudaStream_t s, std::int32_t *P, int L, int slots,
                                     std::int64_t pstride, std::int64_t entries);

// After the last round of a k split into `slots` parts: each modulus's
// products summed into the first, P[l pstride + e] = fold_slots over
// P[(s L + l) pstride + e] (e < entries), a symmetric residue.
cudaError_t launch_ex_modular_fold_slots(cudaStream_t s, std::int32_t *P, int L, int slots,
                                         std::int64_t pstride, std::int64_t entries);

// The modular engine: X rebuilt from the crt.L products P[l pstride + i + j
// bm] (int32; consumed: each rounded entry's first product is overwritten
// with a mark, kernels/exdgemm_kernels.cu); the basis
// travels by value (about 5 KB of kernel parameters, read uniformly across
// a warp: measured faster than the same basis read from a global table).
// Entries whose range exceeds the moduli's cap_bits
// (exact::modular_over_range, with ceil(log2 k) = log2_k) are summed from
// their operands (exact::DirectTerms).
struct ExModularSumArgs {
  ExBlockArgs blk;
  // int32 sums (column stride bm), or (digits, batched launches only) int8
  // CRT digits in their layout (ex_digit_column_stride), the done mark in
  // plane 0 there too.
  void *P;
  bool digits = false;
  std::int64_t pstride;
  exact::CrtBasis crt;
  int cap_bits, log2_k;
  // The first pass stores `epoch` at *undone where it leaves an entry to
  // the second, which runs only if *undone == epoch (a new epoch each
  // launch: nothing to reset). Null: the second pass always runs (inside a
  // stream capture, where a replayed graph reuses its epoch).
  unsigned long long *undone = nullptr;
  unsigned long long epoch = 0;
};
cudaError_t launch_ex_modular_sum_block(cudaStream_t s, const ExModularSumArgs &a);

// The same for every product of `batch` (the whole of each C: i0 = j0 = 0,
// bm x bn): product z of the launch reads its operands and C by the
// batch's steps, its summaries at info_a + (first + z) bm and info_b +
// (first + z) bn, and its L products at P + z L pstride (a.digits: int8
// CRT digits from launch_ex_modular_digit_products; sum_block takes int32
// sums only; digits in words of four rows, P and pstride multiples of 4,
// else cudaErrorInvalidValue). bn is at most 65535 (cudaErrorInvalidValue
// beyond: the batched engine's blocks are at most kModularBlockCap wide).
cudaError_t launch_ex_modular_sum_batch(cudaStream_t s, const ExModularSumArgs &a,
                                        const ExBatch &batch);

}  // namespace xn
