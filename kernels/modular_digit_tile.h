// modular_digit_tile.h - what the two kernels of the INT8 products with the
// CRT digit in their epilogue share (modular_digit_kernels.cu on mma.sync,
// modular_digit_wgmma.cu on Hopper's wgmma): the asynchronous copies into
// shared memory and the epilogue, each sum of a 128 x 128 tile to its
// signed digit and out column by column. Device code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/exdgemm_launch.h"
#include "numerics/hd.h"
#include "numerics/modular_crt.h"

namespace xn {
namespace digit_tile {

constexpr int kTile = 128;  // rows and columns of a block's tile
// The epilogue stages a tile's digits column by column (i fastest, as P
// stores them) with rows padded to 144 bytes: 16-byte aligned, and the
// fragments' writes spread over the banks.
constexpr int kOutPitch = kTile + 16;
constexpr int kOutBytes = kTile * kOutPitch;

__device__ __forceinline__ std::uint32_t smem_address(const void *p) {
  return std::uint32_t(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, or 16 zeros where !inside.
__device__ __forceinline__ void copy16(std::uint32_t dst, const void *src, bool inside) {
  const int bytes = inside ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(bytes));
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// A block's place: tile (i0, j0) of product x = blockIdx.y, whose modulus
// is l = x mod L and whose operands are a (bm rows of k residues) and b
// (bn rows), as launch_ex_modular_residues_batch lays them out; the tiles
// of a product run along blockIdx.x, rows fastest.
struct Block {
  std::int64_t i0, j0, x;
  int l;
  const std::int8_t *a, *b;
};
__device__ __forceinline__ Block block_of(const std::int8_t *ra, const std::int8_t *rb,
                                          std::int64_t bm, std::int64_t bn, std::int64_t k,
                                          int L) {
  const int tiles_m = int((bm + kTile - 1) / kTile);
  Block t;
  t.i0 = std::int64_t(blockIdx.x % tiles_m) * kTile;
  t.j0 = std::int64_t(blockIdx.x / tiles_m) * kTile;
  t.x = blockIdx.y;
  t.l = int(t.x % L);
  t.a = ra + t.x * bm * k;
  t.b = rb + t.x * bn * k;
  return t;
}

// Sum (r, c) of the tile to its digit (crt_digit's arithmetic: the
// reconstruction's own digits, so the bits cannot differ), staged at
// out[c kOutPitch + r] as the digit's two's complement byte (|y| <= 127).
__device__ __forceinline__ void stage_digit(unsigned char *out, int r, int c, int sum,
                                            const exact::CrtBasis &crt, int l) {
  out[c * kOutPitch + r] = std::uint8_t(exact::exact_int_of(exact::int32_crt_digit(
      sum, crt.inv_cofactor_d[l], crt.digit_offset[l], crt.recip[l], crt.m_d[l])));
}

// The staged tile out: column c is P[x pstride + (i0 .. i0 + 127) +
// (j0 + c) ex_digit_column_stride(bm)], its rows up to bm's next multiple of
// 16 (the padding's digits are the zero residues' own), clipped to the
// product's bn columns; 16 bytes a thread. Called by the block's `threads`
// threads.
__device__ __forceinline__ void store_digit_tile(const unsigned char *staged, const Block &t,
                                                 std::int8_t *P, std::int64_t pstride,
                                                 std::int64_t bm, std::int64_t bn,
                                                 int threads) {
  const std::int64_t ldp = ex_digit_column_stride(bm);
  std::int8_t *const out = P + t.x * pstride + t.i0 + t.j0 * ldp;
  const int rows = ldp - t.i0 < kTile ? int(ldp - t.i0) : kTile;
  const int cols = bn - t.j0 < kTile ? int(bn - t.j0) : kTile;
  for (int u = threadIdx.x; u < cols * (kTile / 16); u += threads) {
    const int c = u / (kTile / 16), r = 16 * (u % (kTile / 16));
    if (r < rows)
      *reinterpret_cast<uint4 *>(out + c * ldp + r) =
          *reinterpret_cast<const uint4 *>(staged + c * kOutPitch + r);
  }
}

}  // namespace digit_tile
}  // namespace xn
