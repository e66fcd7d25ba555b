// cuda_exdgemm.h - the CUDA backend of exdgemm: the phases of
// src/core/exdgemm.h as kernels (kernels/exdgemm_kernels.cu) and DGEMMs
// pinned to native FP64 (native_dgemm.h: a cuBLASLt algorithm whose
// capabilities say IEEE double, else CUBLAS_COMPUTE_64F_PEDANTIC), on the
// handle's stream, with the handle's exdgemm regions as workspace.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <new>
#include <vector>

#include "backend/cuda/device_pool.h"
#include "backend/cuda/handle_state.h"
#include "backend/cuda/native_dgemm.h"
#include "core/exdgemm.h"
#include "core/exdgemm_batched.h"
#include "kernels/exdgemm_launch.h"
#include "kernels/launch.h"

namespace xn {

class CudaExBackend {
 public:
  // The modular engine: int8 residues, INT8 tensor-core products with int32
  // accumulation (exact for chunks of k up to 2^17: longer k is cut, and
  // reduced between chunks), int32 products. One INT8 product costs about
  // 1/20 of a DGEMM of its shape on the H200 (docs/performance.md); 1/12 is
  // assumed, for the residue and reconstruction passes.
  static constexpr bool kHasModular = true;
  // op(A)'s residues inside the products for op(B) of up to 4 columns and
  // 24 moduli: the products' L x 4 int32 sums stay in registers
  // (launch_ex_modular_fused_products).
  static constexpr int kFusedMaxCols = kExFusedMaxCols, kFusedMaxModuli = kExFusedMaxModuli;
  // Both operands' residues inside the products for blocks of C of at most
  // one tile of kExTileRows x kExTileRows, any L
  // (launch_ex_modular_tile_products).
  static constexpr int kTileMaxRows = kExTileRows;
  // Blocks of C of at most 8192 x 8192 where both dimensions are larger:
  // cuBLAS's INT8 GEMM runs 8192 x 8192 x 16384-65536 at 1,390-1,640 TOPS
  // on an H100 but 16384 x 16384 x 16384-131072 at 680-790 (issue 33's
  // measurements); a 16384^3 call on an H200 (whose budget held one
  // block) ran its products at 1,242 TOPS against 1,491 in 8192 blocks on
  // an H100 (docs/performance.md).
  static constexpr index_t kModularBlockCap = 8192;
  std::size_t residue_bytes() const { return 1; }
  std::size_t product_bytes() const { return 4; }
  index_t modular_max_chunk() const { return exact::kInt32ChunkK; }
  double modular_product_cost() const { return 1.0 / 12; }
  // Products side by side (slots) so that a block's L products give every
  // multiprocessor about kTilesPerSm output tiles of kTile x kTile (the
  // order of cuBLAS's INT8 tiles): a skinny block's few tiles are
  // multiplied over pieces of k at once (docs/design.md, "Long and skinny k").
  int modular_slots(index_t bm, index_t bn, int L) const {
    const index_t want = kTilesPerSm * std::max(st_.sm_count, 1);
    const index_t have = std::max<index_t>(1, tiles(bm, bn) * std::max(L, 1));
    return int(std::min<index_t>(kMaxSlots, std::max<index_t>(1, (want + have - 1) / have)));
  }

  // The fused tiles: a block of 16 warps per multiprocessor (its 122
  // registers a thread allow one), each a tile, kExTileModuli moduli and a
  // slot: slots enough for one such wave.
  int modular_tile_slots(index_t bm, index_t bn, int L) const {
    const index_t per_slot = ((bm + kExTileRows - 1) / kExTileRows) *
                             ((bn + kExTileRows - 1) / kExTileRows) *
                             ((std::max(L, 1) + kExTileModuli - 1) / kExTileModuli);
    const index_t want = std::max(st_.sm_count, 1);
    return int(std::min<index_t>(kMaxSlots,
                                 std::max<index_t>(1, (want + per_slot - 1) / per_slot)));
  }

  CudaExBackend(cublasHandle_t h, cudaStream_t s, HandleState &st, bool dev_scalars,
                const double *alpha, const double *beta)
      : h_(h), s_(s), st_(st), dev_(dev_scalars), alpha_(alpha), beta_(beta) {}

  // The handle's one workspace holds [head | body]; the count of entries
  // summed by the wide accumulator lives beside the handle's constants.
  void *head_space(std::size_t bytes) {
    char *p = static_cast<char *>(acquire_workspace(st_, bytes, s_));
    if (!p) return nullptr;
    head_ = bytes;
    if (cudaMemsetAsync(st_.wide_count(), 0, sizeof(unsigned long long), s_) !=
        cudaSuccess)
      return nullptr;
    wide_ = st_.wide_count();
    return p;
  }
  void *body_space(std::size_t bytes) {
    char *p = static_cast<char *>(acquire_workspace(st_, head_ + bytes, s_, head_));
    return p ? p + head_ : nullptr;
  }
  void *head_address() const { return st_.ws; }
  unsigned long long *wide_counter() const { return wide_; }
  // The budget can be no larger than the workspace the handle can have
  // (inside a capture: the one it has).
  std::size_t workspace_cap() const { return xn::workspace_cap(st_); }
  bool capturing() const { return st_.in_capture; }
  // The widest row plus column (bits) of the handle's last direct call (0:
  // none): a captured call's fixed plan takes its moduli from them
  // (core/exdgemm.h, exdgemm_capture_run).
  int capture_span_hint() const { return st_.ex_last_direct_span_bits; }
  // The scalars before any fetch: host values, or (device pointer mode) not
  // known here: the sums then read them on the device (block_args).
  double host_alpha() const { return dev_ ? 0.0 : *alpha_; }
  double host_beta() const { return dev_ ? 0.0 : *beta_; }

  // Phase boundaries of XN_OPT_EXDGEMM_PHASE_TIMES only.
  Status wait() { return ok(cudaStreamSynchronize(s_)); }

  Status scan_operands(MatView<const double> A, exact::VectorInfo *info_a,
                       MatView<const double> Bt, exact::VectorInfo *info_b) {
    return ok(launch_ex_scan_operands(s_, view(A), info_a, view(Bt), info_b));
  }
  Status mark_rows(MatView<const double> X, const exact::VectorInfo *info, int w,
                   std::uint64_t *masks) {
    return ok(launch_ex_mark_rows(s_, view(X), info, w, masks));
  }

  // The call's synchronisation: exponent summaries (and device-resident
  // alpha, beta) to pinned host memory, then wait for the stream.
  Status fetch_summaries(const exact::VectorInfo *ia, std::vector<exact::VectorInfo> &hia,
                         const exact::VectorInfo *ib, std::vector<exact::VectorInfo> &hib,
                         double *alpha, double *beta) {
    const std::size_t nia = hia.size() * sizeof(exact::VectorInfo),
                      nib = hib.size() * sizeof(exact::VectorInfo);
    char *host = static_cast<char *>(acquire_ex_host(st_, 16 + nia + nib));
    if (!host) return Status::AllocFailed;
    double *scal = reinterpret_cast<double *>(host);
    char *infos = host + 16;
    if (cudaMemcpyAsync(infos, ia, nia, cudaMemcpyDeviceToHost, s_) != cudaSuccess ||
        cudaMemcpyAsync(infos + nia, ib, nib, cudaMemcpyDeviceToHost, s_) != cudaSuccess)
      return Status::ExecutionFailed;
    if (dev_) {
      if (cudaMemcpyAsync(scal, alpha_, 8, cudaMemcpyDeviceToHost, s_) != cudaSuccess ||
          cudaMemcpyAsync(scal + 1, beta_, 8, cudaMemcpyDeviceToHost, s_) != cudaSuccess)
        return Status::ExecutionFailed;
    }
    if (cudaStreamSynchronize(s_) != cudaSuccess) return Status::ExecutionFailed;
    std::memcpy(hia.data(), infos, nia);
    std::memcpy(hib.data(), infos + nia, nib);
    *alpha = dev_ ? scal[0] : *alpha_;
    *beta = dev_ ? scal[1] : *beta_;
    return Status::Ok;
  }
  // The slice engine's masks: a second synchronisation.
  Status fetch_masks(const std::uint64_t *ma, std::vector<std::uint64_t> &ha,
                     const std::uint64_t *mb, std::vector<std::uint64_t> &hb) {
    const std::size_t na = ha.size() * 8, nb = hb.size() * 8;
    char *host = static_cast<char *>(acquire_ex_host(st_, na + nb));
    if (!host) return Status::AllocFailed;
    if (cudaMemcpyAsync(host, ma, na, cudaMemcpyDeviceToHost, s_) != cudaSuccess ||
        cudaMemcpyAsync(host + na, mb, nb, cudaMemcpyDeviceToHost, s_) != cudaSuccess ||
        cudaStreamSynchronize(s_) != cudaSuccess)
      return Status::ExecutionFailed;
    std::memcpy(ha.data(), host, na);
    std::memcpy(hb.data(), host + na, nb);
    return Status::Ok;
  }

  // C = beta C with the call's beta (host or device): the quick return
  // (beta = 1: C untouched, as reference DGEMM; launch_scale's kernel
  // skips it for a device beta).
  Status scale_by_beta(MatView<double> C) {
    if (!dev_ && *beta_ == 1.0) return Status::Ok;
    return ok(launch_scale<double>(
        s_, C.rows, C.cols, C.p, C.ld,
        ScalarArg<double>{dev_ ? 0.0 : *beta_, dev_ ? beta_ : nullptr}));
  }

  // All of a workspace the caller supplied (xnSetWorkspace: memory set
  // aside for the library, as the distributed engine's scratch is);
  // otherwise a quarter of the device memory free now, counting the
  // workspace the handle already holds and what the library's pool holds
  // unused (device_pool.h).
  std::size_t automatic_budget() const {
    if (!st_.ws_owned || st_.in_capture) return st_.ws_bytes;
    std::size_t free_b = 0, total_b = 0;
    // (cudaMemGetInfo would invalidate another thread's global capture.)
    const RelaxedCaptureMode relaxed;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
      free_b = std::size_t(1) << 30;
    }
    int device = 0;
    if (stream_device(s_, &device) == cudaSuccess) {
      const PoolBytes pool = pool_bytes(device);
      free_b += pool.unused();
    } else {
      cudaGetLastError();
    }
    return (free_b + (st_.ws_owned ? st_.ws_bytes : 0)) / 4;
  }

  Status scale(MatView<double> C, double beta) {
    return ok(launch_scale<double>(s_, C.rows, C.cols, C.p, C.ld,
                                   ScalarArg<double>{beta, nullptr}));
  }

  Status split_rows(MatView<const double> X, const exact::VectorInfo *info, int w,
                    index_t r0, index_t nr, const SliceList &list, MatView<double> out) {
    return ok(launch_ex_split_rows(s_, view(X), info, w, r0, nr, list, out.p, out.ld));
  }

  // Exact by construction in any native FP64 arithmetic (docs/design.md).
  // First choice: a cuBLASLt algorithm checked to be native FP64
  // (native_dgemm.h), at DGEMM's full rate. Fallback: cublasGemmEx with
  // COMPUTE_64F_PEDANTIC, which keeps cuBLAS on native FP64 whatever the
  // handle's math mode, emulation strategy or CUBLAS_EMULATE_DOUBLE_PRECISION
  // say (cublas_api.h: "_PEDANTIC types ensure standard arithmetic") but runs
  // a 20-30 % slower kernel on the H200. The handle's own settings are never
  // touched.
  Status gemm_exact(MatView<const double> A, MatView<const double> B, MatView<double> C) {
    if (!st_.native_dgemm) st_.native_dgemm = new (std::nothrow) NativeDgemm();
    if (st_.native_dgemm) {
      const NativeDgemm::Result r = st_.native_dgemm->run(
          s_, A.trans, B.trans, C.rows, C.cols, A.cols, A.p, A.ld, B.p, B.ld, C.p, C.ld);
      if (r == NativeDgemm::Result::Ran) {
        testing::count_native_dgemm(true);
        return Status::Ok;
      }
    }
    testing::count_native_dgemm(false);
    static const double host_one = 1.0, host_zero = 0.0;
    const double *one = dev_ ? st_.zero_one_d() + 1 : &host_one;
    const double *zero = dev_ ? st_.zero_one_d() : &host_zero;
    const cublasStatus_t cs = cublasGemmEx(
        h_, A.trans ? CUBLAS_OP_T : CUBLAS_OP_N, B.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
        int(C.rows), int(C.cols), int(A.cols), one, A.p, CUDA_R_64F, int(A.ld), B.p,
        CUDA_R_64F, int(B.ld), zero, C.p, CUDA_R_64F, int(C.ld),
        CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
    return cs == CUBLAS_STATUS_SUCCESS ? Status::Ok : Status::ExecutionFailed;
  }

  Status modular_residues(MatView<const double> X, const exact::VectorInfo *info,
                          index_t r0, index_t nr, int L, int span,
                          const ex_detail::ModularSplit &sp, void *out) {
    return ok(launch_ex_modular_residues(s_, view(X), info, r0, nr, L, span, sp.chunk,
                                         sp.chunks, static_cast<std::int8_t *>(out)));
  }

  // P_b (+)= ra_b rb_b^T: op(A) = T, op(B) = N over k-contiguous int8
  // residues (chunks a multiple of 16 long: the padding residues are zero,
  // and cuBLAS's INT8 kernels fail on an odd k such as 211), int32 out,
  // CUBLAS_COMPUTE_32I: exact (every partial sum of a chunk's <= 2^17
  // products of |r| <= 127, on top of a carried |r| <= 127, is below 2^31).
  // Products that fill the device one by one are launched one by one; small
  // ones as one strided batch. The handle's pointer mode holds for the
  // int32 scalars.
  Status modular_products(const void *ra, const void *rb, int count, index_t bm, index_t bn,
                          index_t rb_rows, index_t chunk, void *P, index_t pstride,
                          bool accumulate) {
    static const int host_zero_one[2] = {0, 1};
    const int *zero_one = dev_ ? st_.zero_one_i32() : host_zero_one;
    const int *one = zero_one + 1, *beta = accumulate ? one : zero_one;
    const auto *a = static_cast<const std::int8_t *>(ra);
    const auto *b = static_cast<const std::int8_t *>(rb);
    auto *p = static_cast<std::int32_t *>(P);
    cublasStatus_t cs = CUBLAS_STATUS_SUCCESS;
    if (tiles(bm, bn) >= kTilesPerSm * std::max(st_.sm_count, 1)) {
      for (int x = 0; x < count && cs == CUBLAS_STATUS_SUCCESS; ++x)
        cs = cublasGemmEx(h_, CUBLAS_OP_T, CUBLAS_OP_N, int(bm), int(bn), int(chunk), one,
                          a + index_t(x) * bm * chunk, CUDA_R_8I, int(chunk),
                          b + index_t(x) * rb_rows * chunk, CUDA_R_8I, int(chunk), beta,
                          p + index_t(x) * pstride, CUDA_R_32I, int(bm),
                          CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
    } else {
      cs = cublasGemmStridedBatchedEx(
          h_, CUBLAS_OP_T, CUBLAS_OP_N, int(bm), int(bn), int(chunk), one, a, CUDA_R_8I,
          int(chunk), bm * chunk, b, CUDA_R_8I, int(chunk), rb_rows * chunk, beta, p,
          CUDA_R_32I, int(bm), pstride, count, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
    }
    return cs == CUBLAS_STATUS_SUCCESS ? Status::Ok : Status::ExecutionFailed;
  }

  // P_l = residues of op(A)'s rows i0.. (made here from A) times rb_l^T,
  // over all of k: k's pieces spread over the device, each adding its
  // reduced sums into P (int32 atomics: exact, so the same bits in any
  // order), zeroed first.
  Status modular_fused_products(MatView<const double> A, const exact::VectorInfo *info,
                                index_t i0, index_t bm, const void *rb, index_t rb_rows,
                                index_t bn, int L, const ex_detail::ModularSplit &sp,
                                void *P, index_t pstride) {
    return ok(launch_ex_modular_fused_products(
        s_, view(A), info, i0, bm, static_cast<const std::int8_t *>(rb), rb_rows, bn, L,
        sp.chunk, sp.chunks, static_cast<std::int32_t *>(P), pstride,
        std::max(st_.sm_count, 1)));
  }

  // The block's L products, both operands' residues made here from A and
  // op(B) (small m and n), the slots folded as they finish.
  Status modular_tile_products(MatView<const double> A, const exact::VectorInfo *ia,
                               index_t i0, index_t bm, MatView<const double> Bt,
                               const exact::VectorInfo *ib, index_t j0, index_t bn, int L,
                               const ex_detail::ModularSplit &sp, void *P, index_t pstride) {
    return ok(launch_ex_modular_tile_products(s_, view(A), ia, i0, bm, view(Bt), ib, j0, bn,
                                              L, sp.chunk, sp.chunks, sp.slots,
                                              static_cast<std::int32_t *>(P), pstride));
  }

  Status modular_fold_slots(void *P, int L, int slots, index_t pstride, index_t entries) {
    return ok(launch_ex_modular_fold_slots(s_, static_cast<std::int32_t *>(P), L, slots,
                                           pstride, entries));
  }

  Status modular_reduce(void *P, int L, int slots, index_t pstride, index_t entries) {
    return ok(launch_ex_modular_reduce(s_, static_cast<std::int32_t *>(P), L, slots,
                                       pstride, entries));
  }

  Status modular_sum_block(MatView<const double> A, MatView<const double> B,
                           MatView<double> C, const exact::VectorInfo *ia,
                           const exact::VectorInfo *ib, index_t i0, index_t bm,
                           index_t j0, index_t bn, int L, index_t pstride, int cap_bits,
                           int log2_k, void *P, double alpha, double beta,
                           std::int64_t *) {
    return ok(launch_ex_modular_sum_block(
        s_, sum_args(block_args(A, B, C, ia, ib, i0, bm, j0, bn, alpha, beta), P, pstride, L,
                     cap_bits, log2_k)));
  }

  // The batched engine (core/exdgemm_batched.h): each phase one launch over
  // a group of products, product z on blockIdx.z (or y).
  static constexpr bool kHasBatched = true;
  Status scan_batch(const ExBatchOperands &x, MatView<const double> Bt, index_t first,
                    index_t count, exact::VectorInfo *info_a, exact::VectorInfo *info_b) {
    return ok(launch_ex_scan_batch(s_, view(x.A), info_a, view(Bt), info_b,
                                   batch(x, first, count)));
  }
  // The call's synchronisation: the widest spans over the batch (reduced on
  // the device: 8 bytes, not the summaries) and device-resident alpha, beta.
  Status fetch_batch_spans(const exact::VectorInfo *ia, index_t na,
                           const exact::VectorInfo *ib, index_t nb, int *spans_dev,
                           int *span_a, int *span_b, double *alpha, double *beta) {
    char *host = static_cast<char *>(acquire_ex_host(st_, 32));
    if (!host) return Status::AllocFailed;
    double *scal = reinterpret_cast<double *>(host);
    int *spans = reinterpret_cast<int *>(host + 16);
    if (launch_ex_batch_spans(s_, ia, na, ib, nb, spans_dev) != cudaSuccess ||
        cudaMemcpyAsync(spans, spans_dev, 2 * sizeof(int), cudaMemcpyDeviceToHost, s_) !=
            cudaSuccess)
      return Status::ExecutionFailed;
    if (dev_ && (cudaMemcpyAsync(scal, alpha_, 8, cudaMemcpyDeviceToHost, s_) != cudaSuccess ||
                 cudaMemcpyAsync(scal + 1, beta_, 8, cudaMemcpyDeviceToHost, s_) !=
                     cudaSuccess))
      return Status::ExecutionFailed;
    if (cudaStreamSynchronize(s_) != cudaSuccess) return Status::ExecutionFailed;
    *span_a = spans[0];
    *span_b = spans[1];
    *alpha = dev_ ? scal[0] : *alpha_;
    *beta = dev_ ? scal[1] : *beta_;
    return Status::Ok;
  }
  Status residues_batch(MatView<const double> X, const BatchStep &step, index_t first,
                        index_t count, const exact::VectorInfo *info, int L, int span,
                        const ex_detail::ModularSplit &sp, void *out) {
    return ok(launch_ex_modular_residues_batch(s_, view(X), step_of(step), first, count,
                                               info, L, span, sp.chunk, sp.chunks,
                                               static_cast<std::int8_t *>(out)));
  }
  // The products of one chunk of k with each sum's CRT digit made in their
  // epilogue (kernels/modular_digit_wgmma.cu on Hopper, else
  // kernels/modular_digit_kernels.cu): kernels of our own, not
  // cuBLAS's INT8 GEMM, whose int32 sums cross memory twice, and the
  // reconstruction then sums the digits on the tensor cores. They pay where
  // that saving outweighs the products' rate against cuBLAS's: measured
  // regions, per kernel (docs/performance.md, H200, 2026-11-29).
  //   wgmma (Hopper): at k = 256 as fast as cuBLAS's products from 256^2
  //   to 1024^2 entries (the digits win 12-35 % overall, 15-24 moduli), at
  //   512^3 still 2 % ahead; at 1024^3 products 40 % slower (4.36 against
  //   3.10 ms for 64 of 24 moduli), the whole 1-3 % behind, yet at 256^2 x
  //   1024 12-15 % ahead.
  //   mma.sync (elsewhere): about half cuBLAS's rate; 256 x 256 products at
  //   24-25 moduli gained 2-9 % from k = 256 to 768, and at 15 moduli every
  //   shape from 512 x 512 x 256 to 1024^3 lost (measured before the
  //   reconstruction's tensor-core sums; kept as it was).
  struct DigitRegion {
    int min_moduli;
    index_t max_k, max_entries;  // m n
  };
  // (Up to the largest shapes measured: 1024^2 entries at k = 256.)
  static constexpr DigitRegion kWgmmaDigitRegions[] = {{15, 512, 1024 * 1024},
                                                       {15, 1024, 256 * 256}};
  static constexpr DigitRegion kMmaSyncDigitRegions[] = {{20, 768, 256 * 256}};
  static constexpr bool kHasDigitProducts = true;
  bool digit_products_pay(int L, index_t m, index_t n, index_t k) const {
    const auto inside = [&](const DigitRegion &r) {
      return L >= r.min_moduli && k <= r.max_k && m * n <= r.max_entries;
    };
    // (Below 4 rows a padded column of digits outweighs the int32 sums'.)
    if (ex_digit_column_stride(m) > 4 * m) return false;
    if (ex_digit_products_on_wgmma())
      return std::any_of(std::begin(kWgmmaDigitRegions), std::end(kWgmmaDigitRegions), inside);
    return std::any_of(std::begin(kMmaSyncDigitRegions), std::end(kMmaSyncDigitRegions),
                       inside);
  }
  // The digits' planes: columns padded to 16 bytes (ex_digit_column_stride),
  // each plane 64-byte aligned as product_stride's.
  static index_t digit_plane_stride(index_t bm, index_t bn) {
    return round_up(ex_digit_plane_bytes(bm, bn), 64);
  }
  Status modular_digit_products(const void *ra, const void *rb, int count, int L, index_t bm,
                                index_t bn, index_t chunk, void *P, index_t pstride) {
    return ok(launch_ex_modular_digit_products(
        s_, static_cast<const std::int8_t *>(ra), static_cast<const std::int8_t *>(rb), count,
        bm, bn, chunk, exact::crt_basis(L),
        static_cast<std::int8_t *>(P), pstride));
  }
  Status sum_batch(const ExBatchOperands &x, index_t first, index_t count,
                   const exact::VectorInfo *ia, const exact::VectorInfo *ib, int L,
                   index_t pstride, int cap_bits, int log2_k, void *P, bool digits,
                   double alpha, double beta) {
    ExModularSumArgs a =
        sum_args(block_args(x.A, x.B, x.C, ia, ib, 0, x.C.rows, 0, x.C.cols, alpha, beta), P,
                 pstride, L, cap_bits, log2_k);
    a.digits = digits;
    return ok(launch_ex_modular_sum_batch(s_, a, batch(x, first, count)));
  }

  Status sum_block(MatView<const double> A, MatView<const double> B, MatView<double> C,
                   const exact::VectorInfo *ia, const exact::VectorInfo *ib, int w,
                   index_t i0, index_t bm, index_t j0, index_t bn, const SliceList &la,
                   const SliceList &lb, MatView<const double> P, double alpha,
                   double beta, std::int64_t *) {
    const ExSumArgs a{block_args(A, B, C, ia, ib, i0, bm, j0, bn, alpha, beta), w, P.p,
                      P.ld};
    return ok(launch_ex_sum_block(s_, a, la, lb));
  }

 private:
  // Output tiles of a bm x bn product, and how many per multiprocessor make
  // a product fill the device (modular_slots, modular_products).
  static constexpr index_t kTile = 128, kTilesPerSm = 4, kMaxSlots = 256;
  static index_t tiles(index_t bm, index_t bn) {
    return ((bm + kTile - 1) / kTile) * ((bn + kTile - 1) / kTile);
  }
  ExBlockArgs block_args(MatView<const double> A, MatView<const double> B,
                         MatView<double> C, const exact::VectorInfo *ia,
                         const exact::VectorInfo *ib, index_t i0, index_t bm, index_t j0,
                         index_t bn, double alpha, double beta) const {
    // With device scalars the kernels read them there (a captured call
    // never had them on the host; a direct one fetched the same values).
    return ExBlockArgs{view(A), view(B), C.p,   C.ld, ia,   ib,
                       i0,      bm,      j0,    bn,   alpha, beta,
                       dev_ ? alpha_ : nullptr, dev_ ? beta_ : nullptr, wide_};
  }
  // The reconstruction's arguments; its second pass is skipped where the
  // first leaves no entry (a new epoch per launch, the flag beside the
  // handle's constants), except inside a capture (ExModularSumArgs::undone).
  ExModularSumArgs sum_args(const ExBlockArgs &blk, void *P, index_t pstride, int L,
                            int cap_bits, int log2_k) {
    ExModularSumArgs a{};
    a.blk = blk;
    a.P = P;
    a.pstride = pstride;
    a.crt = exact::crt_basis(L);
    a.cap_bits = cap_bits;
    a.log2_k = log2_k;
    if (!st_.in_capture) {
      a.undone = st_.ex_undone_flag();
      a.epoch = ++st_.ex_sum_epoch;
    }
    return a;
  }
  static ExBatchStep step_of(const BatchStep &b) { return ExBatchStep{b.pointers, b.stride}; }
  static ExBatch batch(const ExBatchOperands &x, index_t first, index_t count) {
    return ExBatch{step_of(x.a), step_of(x.b), step_of(x.c), first, count};
  }
  static ExView view(MatView<const double> X) {
    return ExView{X.p, X.rows, X.cols, X.ld, X.trans};
  }
  static Status ok(cudaError_t e) {
    return e == cudaSuccess ? Status::Ok : Status::ExecutionFailed;
  }
  cublasHandle_t h_;
  cudaStream_t s_;
  HandleState &st_;
  bool dev_;
  const double *alpha_, *beta_;
  std::size_t head_ = 0;
  unsigned long long *wide_ = nullptr;
};

}  // namespace xn
