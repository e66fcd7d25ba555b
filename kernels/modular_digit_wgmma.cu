// modular_digit_wgmma.cu - the modular engine's INT8 products with the CRT
// digit in their epilogue (modular_digit_kernels.cu says what and why) on
// Hopper's warpgroup MMA: wgmma.mma_async m64n128k32 .s8 reads both
// operands from shared memory (PTX ISA, "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate"), at about twice the rate mma.sync reaches
// on the same tensor cores. Compiled for sm_90a alone (the wgmma
// instructions exist nowhere else); the launcher says
// cudaErrorNotSupported on a device without that image, and the mma.sync
// kernel runs instead.
//
// A block of two warpgroups owns a 128 x 128 tile of one product, each
// warpgroup 64 rows by 128 columns; k in stages of 128 bytes through
// kStages buffers filled by cp.async (zero-filled past the matrix). A
// buffer's operand is 128 rows of 128 bytes in the 128-byte swizzle that
// wgmma's descriptors name (16-byte piece c of row r at piece c ^ (r mod
// 8), the buffer 1024-byte aligned), so that the warpgroups' reads fall
// in distinct banks; a k step of 32 bytes is the descriptor's start
// address moved by 32.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/exdgemm_launch.h"
#include "kernels/modular_digit_tile.h"
#include "kernels/per_device.h"
#include "numerics/hd.h"
#include "numerics/modular_crt.h"

namespace xn {
namespace {

using digit_tile::kTile;
constexpr int kStageK = 128;  // bytes of k a stage: the swizzle's row
constexpr int kStages = 3;
constexpr int kThreads = 256;  // two warpgroups
constexpr int kOperandBytes = kTile * kStageK;
constexpr int kStageBytes = 2 * kOperandBytes;
constexpr int kPipeBytes = kStages * kStageBytes;
constexpr int kAlign = 1024;  // the 128-byte swizzle repeats every 8 rows
constexpr int kSmemBytes =
    (kPipeBytes > digit_tile::kOutBytes ? kPipeBytes : digit_tile::kOutBytes) + kAlign;
constexpr int kCopies = kOperandBytes / 16 / kThreads;  // 16-byte pieces a thread an operand
static_assert(kCopies * kThreads * 16 == kOperandBytes, "whole pieces a thread");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Byte offset of 16-byte piece c (0..7) of row r in an operand buffer.
__device__ __forceinline__ int swizzled(int r, int c) { return r * kStageK + ((c ^ (r % 8)) << 4); }

// wgmma's shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
// Format") for K-major rows of 128 bytes in the 128-byte swizzle: start
// address, leading byte offset (unused by this layout: 1), stride byte
// offset 1024 (8 rows to the next 8), swizzle mode 1; each in 16 bytes.
__device__ __forceinline__ std::uint64_t descriptor(std::uint32_t address) {
  return std::uint64_t((address & 0x3ffff) >> 4) | (std::uint64_t(1) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}

// d += A B^T for the warpgroup's 64 x 32 A and 128 x 32 B (both K-major),
// int32 sums. Thread (warp w of the warpgroup, g = lane / 4, t = lane % 4)
// holds d[4i + c] at row 16w + g + 8 (c / 2), column 8i + 2t + c % 2.
__device__ __forceinline__ void wgmma_m64n128k32_s8(int (&d)[64], std::uint64_t desc_a,
                                                    std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1;\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),
        "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
        "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),
        "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),
        "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
        "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]),
        "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]),
        "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]),
        "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
      : "l"(desc_a), "l"(desc_b));
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// cp.async writes through the generic proxy, wgmma reads through the async
// one: each writer fences before the barrier that hands the buffer over.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accesses of the accumulators across the
// asynchronous products.
__device__ __forceinline__ void pin_accumulators(int (&d)[64]) {
  XN_UNROLL
  for (int e = 0; e < 64; ++e) asm volatile("" : "+r"(d[e])::"memory");
}
#endif

__global__ void __launch_bounds__(kThreads, 2)
    modular_digit_products_wgmma_kernel(const std::int8_t *__restrict__ ra,
                                        const std::int8_t *__restrict__ rb, std::int64_t bm,
                                        std::int64_t bn, std::int64_t k, std::int8_t *P,
                                        std::int64_t pstride,
                                        const __grid_constant__ exact::CrtBasis crt) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const std::uint32_t raw = digit_tile::smem_address(smem_raw);
  const std::uint32_t base = (raw + kAlign - 1) & ~std::uint32_t(kAlign - 1);
  unsigned char *const smem = smem_raw + (base - raw);

  const digit_tile::Block blk = digit_tile::block_of(ra, rb, bm, bn, k, crt.L);
  const std::int64_t i0 = blk.i0, j0 = blk.j0;
  const std::int8_t *const a = blk.a, *const b = blk.b;

  // Thread's pieces: piece threadIdx.x % 8 of rows threadIdx.x / 8 + 32 h.
  const int crow = threadIdx.x / 8, cpiece = threadIdx.x % 8;
  auto load_stage = [&](int stage, std::int64_t kt) {
    const std::int64_t p = kt * kStageK + 16 * cpiece;
    const std::uint32_t sa = base + stage * kStageBytes, sb = sa + kOperandBytes;
    XN_UNROLL
    for (int h = 0; h < kCopies; ++h) {
      const int r = crow + (kThreads / 8) * h;
      const bool in_a = i0 + r < bm && p < k, in_b = j0 + r < bn && p < k;
      digit_tile::copy16(sa + swizzled(r, cpiece), in_a ? a + (i0 + r) * k + p : a, in_a);
      digit_tile::copy16(sb + swizzled(r, cpiece), in_b ? b + (j0 + r) * k + p : b, in_b);
    }
  };

  const int warpgroup = threadIdx.x / 128;
  int acc[64];
  XN_UNROLL
  for (int e = 0; e < 64; ++e) acc[e] = 0;

  const std::int64_t ktiles = (k + kStageK - 1) / kStageK;
  XN_UNROLL
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    digit_tile::copy_commit();
  }
  for (std::int64_t kt = 0; kt < ktiles; ++kt) {
    digit_tile::copy_wait<kStages - 2>();
    fence_async_shared();
    __syncthreads();  // stage kt landed for all; stage kt - 1's products done by all
    const std::int64_t next = kt + kStages - 1;
    if (next < ktiles) load_stage(int(next % kStages), next);
    digit_tile::copy_commit();
    const std::uint32_t sa = base + int(kt % kStages) * kStageBytes + warpgroup * 64 * kStageK,
                        sb = base + int(kt % kStages) * kStageBytes + kOperandBytes;
    wgmma_fence();
    pin_accumulators(acc);
    XN_UNROLL
    for (int s = 0; s < kStageK / 32; ++s)
      wgmma_m64n128k32_s8(acc, descriptor(sa + 32 * s), descriptor(sb + 32 * s));
    wgmma_commit();
    wgmma_wait_all();
    pin_accumulators(acc);
  }
  digit_tile::copy_wait<0>();
  __syncthreads();  // the buffers become the epilogue's

  const int lane = threadIdx.x % 32, w = (threadIdx.x / 32) % 4, g = lane / 4, t = lane % 4;
  XN_UNROLL
  for (int i = 0; i < 16; ++i)
    XN_UNROLL
    for (int c = 0; c < 4; ++c)
      digit_tile::stage_digit(smem, 64 * warpgroup + 16 * w + g + 8 * (c / 2),
                              8 * i + 2 * t + c % 2, acc[4 * i + c], crt, blk.l);
  __syncthreads();
  digit_tile::store_digit_tile(smem, blk, P, pstride, bm, bn, kThreads);
#else
  (void)ra, (void)rb, (void)bm, (void)bn, (void)k, (void)P, (void)pstride, (void)crt;
#if defined(__CUDA_ARCH__)
  __trap();  // an image without wgmma must never pass for this kernel
#endif
#endif
}

// Whether the current device runs the wgmma kernel: an sm_90a image for it,
// its shared memory granted. Asked once per device (per call beyond
// ordinal 63).
bool wgmma_ready() {
  static AnswerPerDevice ready;
  return ready.ask([](int device) {
    int major = 0, minor = 0;
    bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
                  cudaSuccess &&
              cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) ==
                  cudaSuccess &&
              major == 9 && minor == 0;
    cudaFuncAttributes attributes{};
    ok = ok && cudaFuncGetAttributes(&attributes, modular_digit_products_wgmma_kernel) ==
                   cudaSuccess;
    ok = ok && cudaFuncSetAttribute(modular_digit_products_wgmma_kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes) == cudaSuccess;
    // A refusal above is an answer, not the caller's error (and, as a
    // failure to grant shared memory would be, final for the process).
    if (!ok) (void)cudaGetLastError();
    return ok;
  });
}

}  // namespace

bool ex_digit_products_on_wgmma() {
  return !testing::digit_products_by_mma_sync() && wgmma_ready();
}

bool ex_digit_products_wgmma_built() { return true; }

cudaError_t launch_ex_modular_digit_products_wgmma(cudaStream_t s, const std::int8_t *ra,
                                                   const std::int8_t *rb, int count,
                                                   std::int64_t bm, std::int64_t bn,
                                                   std::int64_t k, const exact::CrtBasis &crt,
                                                   std::int8_t *P, std::int64_t pstride) {
  if (!wgmma_ready()) return cudaErrorNotSupported;  // (callers ask first)
  const std::int64_t tiles = ((bm + kTile - 1) / kTile) * ((bn + kTile - 1) / kTile);
  modular_digit_products_wgmma_kernel<<<dim3(unsigned(tiles), unsigned(count)), kThreads,
                                        kSmemBytes, s>>>(ra, rb, bm, bn, k, P, pstride, crt);
  return cudaGetLastError();
}

}  // namespace xn
