// modular_digit_kernels.cu - the modular engine's INT8 products with the
// Chinese remainder digit made in their epilogue (docs/design.md, "Batched
// exdgemm"): P_x = ra_x rb_x^T over k-contiguous int8 residues, and each
// int32 sum leaves the kernel as its signed CRT digit y_l = p (M/m_l)^-1
// mod m_l, one byte, not four. The reconstruction then reads a quarter of
// the bytes and skips the digit's arithmetic. cuBLAS's INT8 GEMM has no
// such epilogue (its int32 sums cross memory twice) but runs its tensor
// cores at about twice this kernel's mma.sync rate: the engine takes these
// products only where the first outweighs the second (digit_products_pay).
// On Hopper the launcher takes the wgmma kernel (modular_digit_wgmma.cu);
// this one serves every other device.
//
// A classic multistage tensor-core GEMM (the structure of CUTLASS's sm80
// kernels, written for this one case): a block of 4 warps owns a 128 x 128
// tile of one product, k in steps of 64 bytes through kStages buffers of
// shared memory filled by cp.async (zero-filled past the matrix), each warp
// a 64 x 64 piece by mma.sync m16n8k32 .s8 with ldmatrix fragments (128
// bytes of fragments read from shared memory per mma; 64 x 32 pieces read
// 192, near the 128 bytes a cycle shared memory delivers). The
// rows of a buffer are 64 bytes, their four 16-byte pieces XOR-swizzled by
// (row / 2) mod 4 so that ldmatrix's eight rows fall in distinct banks.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/exdgemm_launch.h"
#include "kernels/int8_mma.h"
#include "kernels/modular_digit_tile.h"
#include "kernels/per_device.h"
#include "numerics/hd.h"
#include "numerics/modular.h"
#include "numerics/modular_crt.h"

namespace xn {
namespace {

using digit_tile::copy16;
using digit_tile::copy_commit;
using digit_tile::copy_wait;
using digit_tile::smem_address;
constexpr int kTileM = digit_tile::kTile, kTileN = digit_tile::kTile, kTileK = 64;
constexpr int kStages = 4;
constexpr int kThreads = 128;  // 4 warps: 2 along m by 2 along n, 64 x 64 each
constexpr int kWarpN = 64, kPiecesN = kWarpN / 8;
constexpr int kCopies = kTileM * kTileK / 16 / kThreads;  // 16-byte pieces a thread a stage
constexpr int kStageBytes = (kTileM + kTileN) * kTileK;
constexpr int kPipeBytes = kStages * kStageBytes;
constexpr int kSmemBytes =
    kPipeBytes > digit_tile::kOutBytes ? kPipeBytes : digit_tile::kOutBytes;
static_assert(kCopies * kThreads * 16 == kTileM * kTileK,
              "each thread copies kCopies 16-byte pieces of each operand a stage");

// Byte offset of 16-byte piece c (0..3) of row r in a stage's operand tile.
__device__ __forceinline__ int swizzled(int r, int c) {
  return r * kTileK + ((c ^ ((r >> 1) & 3)) << 4);
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__global__ void __launch_bounds__(kThreads, 2)
    modular_digit_products_kernel(const std::int8_t *__restrict__ ra,
                                  const std::int8_t *__restrict__ rb, std::int64_t bm,
                                  std::int64_t bn, std::int64_t k, std::int8_t *P,
                                  std::int64_t pstride, const __grid_constant__ exact::CrtBasis crt) {
  extern __shared__ __align__(128) unsigned char smem[];
  const digit_tile::Block blk = digit_tile::block_of(ra, rb, bm, bn, k, crt.L);
  const std::int64_t i0 = blk.i0, j0 = blk.j0;
  const std::int8_t *const a = blk.a, *const b = blk.b;

  // Each thread's kCopies 16-byte pieces of each operand per stage: rows
  // threadIdx.x / 4 + 32 h, piece threadIdx.x % 4.
  const int crow = threadIdx.x / 4, cpiece = threadIdx.x % 4;
  const std::uint32_t base = smem_address(smem);
  auto load_stage = [&](int stage, std::int64_t kt) {
    const std::int64_t p = kt * kTileK + 16 * cpiece;
    const std::uint32_t sa = base + stage * kStageBytes, sb = sa + kTileM * kTileK;
    XN_UNROLL
    for (int h = 0; h < kCopies; ++h) {
      const int r = crow + (kThreads / 4) * h;
      const bool in_a = i0 + r < bm && p < k, in_b = j0 + r < bn && p < k;
      // (Out-of-range pieces read nothing: any valid address will do.)
      copy16(sa + swizzled(r, cpiece), in_a ? a + (i0 + r) * k + p : a, in_a);
      copy16(sb + swizzled(r, cpiece), in_b ? b + (j0 + r) * k + p : b, in_b);
    }
  };

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm = (warp % 2) * 64, wn = (warp / 2) * kWarpN;
  int acc[4][kPiecesN][4];
  XN_UNROLL
  for (int mi = 0; mi < 4; ++mi)
    XN_UNROLL
    for (int ni = 0; ni < kPiecesN; ++ni)
      XN_UNROLL
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0;

  const std::int64_t ktiles = (k + kTileK - 1) / kTileK;
  XN_UNROLL
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    copy_commit();
  }
  // ldmatrix's lane addresses: matrix q = lane / 8, its row lane % 8.
  const int q = lane / 8, qr = lane % 8;
  for (std::int64_t kt = 0; kt < ktiles; ++kt) {
    copy_wait<kStages - 2>();
    __syncthreads();  // stage kt landed for all; stage kt - 1 read by all
    const std::int64_t next = kt + kStages - 1;
    if (next < ktiles) load_stage(int(next % kStages), next);
    copy_commit();
    const std::uint32_t sa = base + int(kt % kStages) * kStageBytes, sb = sa + kTileM * kTileK;
    XN_UNROLL
    for (int ks = 0; ks < 2; ++ks) {  // two k32 steps a stage
      std::uint32_t af[4][4], bf[kPiecesN / 2][4];
      // A: matrices (rows +0/+8 by q % 2, k +0/+16 by q / 2) = a0..a3.
      XN_UNROLL
      for (int mi = 0; mi < 4; ++mi)
        ldmatrix_x4(af[mi], sa + swizzled(wm + 16 * mi + 8 * (q % 2) + qr, 2 * ks + q / 2));
      // B: matrices (k +0/+16 by q % 2, columns +0/+8 by q / 2): b0, b1
      // of two n8 pieces.
      XN_UNROLL
      for (int nj = 0; nj < kPiecesN / 2; ++nj)
        ldmatrix_x4(bf[nj], sb + swizzled(wn + 16 * nj + 8 * (q / 2) + qr, 2 * ks + q % 2));
      XN_UNROLL
      for (int mi = 0; mi < 4; ++mi)
        XN_UNROLL
        for (int ni = 0; ni < kPiecesN; ++ni)
          mma_m16n8k32_s8(acc[mi][ni], af[mi][0], af[mi][1], af[mi][2], af[mi][3],
                          bf[ni / 2][2 * (ni % 2)], bf[ni / 2][2 * (ni % 2) + 1]);
    }
  }
  copy_wait<0>();
  __syncthreads();  // the buffers become the epilogue's

  const int g = lane / 4, t = lane % 4;
  XN_UNROLL
  for (int mi = 0; mi < 4; ++mi)
    XN_UNROLL
    for (int ni = 0; ni < kPiecesN; ++ni)
      XN_UNROLL
      for (int e = 0; e < 4; ++e)
        digit_tile::stage_digit(smem, wm + 16 * mi + g + 8 * (e / 2),
                                wn + 8 * ni + 2 * t + e % 2, acc[mi][ni][e], crt, blk.l);
  __syncthreads();
  digit_tile::store_digit_tile(smem, blk, P, pstride, bm, bn, kThreads);
}

std::atomic<bool> g_by_mma_sync{false};

}  // namespace

#if !defined(XN_WGMMA_KERNELS)
// Built without sm_90a (CMakeLists.txt): no wgmma kernel to take.
cudaError_t launch_ex_modular_digit_products_wgmma(cudaStream_t, const std::int8_t *,
                                                   const std::int8_t *, int, std::int64_t,
                                                   std::int64_t, std::int64_t,
                                                   const exact::CrtBasis &, std::int8_t *,
                                                   std::int64_t) {
  return cudaErrorNotSupported;
}
bool ex_digit_products_on_wgmma() { return false; }
bool ex_digit_products_wgmma_built() { return false; }
#endif

namespace testing {
void set_digit_products_by_mma_sync(bool on) { g_by_mma_sync.store(on); }
bool digit_products_by_mma_sync() { return g_by_mma_sync.load(std::memory_order_relaxed); }
}  // namespace testing

cudaError_t launch_ex_modular_digit_products(cudaStream_t s, const std::int8_t *ra,
                                             const std::int8_t *rb, int count, std::int64_t bm,
                                             std::int64_t bn, std::int64_t k,
                                             const exact::CrtBasis &crt, std::int8_t *P,
                                             std::int64_t pstride) {
  if (count <= 0 || bm <= 0 || bn <= 0) return cudaSuccess;
  // (cp.async copies 16-byte pieces, and the epilogue stores them: the
  // residues, P and pstride 16-byte aligned.)
  const auto misaligned = [](const void *p) {
    return (reinterpret_cast<std::uintptr_t>(p) & 15) != 0;
  };
  if (crt.L < 1 || crt.L > exact::kMaxModuli || k < 1 || k % 16 != 0 ||
      k > exact::kInt32ChunkK || count > 65535 || pstride < ex_digit_plane_bytes(bm, bn) ||
      pstride % 16 != 0 || misaligned(ra) || misaligned(rb) || misaligned(P))
    return cudaErrorInvalidValue;
  const std::int64_t tiles = ((bm + kTileM - 1) / kTileM) * ((bn + kTileN - 1) / kTileN);
  if (tiles > INT32_MAX) return cudaErrorInvalidValue;
  // Hopper's wgmma where this device has its image, unless a test asks
  // for the mma.sync kernel.
  if (ex_digit_products_on_wgmma())
    return launch_ex_modular_digit_products_wgmma(s, ra, rb, count, bm, bn, k, crt, P, pstride);
  // The shared memory beyond 48 KB, granted once per device.
  static OncePerDevice granted;
  if (const cudaError_t e = granted.ensure([] {
        return cudaFuncSetAttribute(modular_digit_products_kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      });
      e != cudaSuccess)
    return e;
  modular_digit_products_kernel<<<dim3(unsigned(tiles), unsigned(count)), kThreads, kSmemBytes,
                                  s>>>(ra, rb, bm, bn, k, P, pstride, crt);
  return cudaGetLastError();
}

}  // namespace xn
