// int8_mma.h - one warp-wide product on the INT8 tensor cores (PTX ISA,
// "mma.sync.aligned.m16n8k32 .s8"), shared by the kernels that use it:
// d += A B for a 16 x 32 piece A (row-major) and a 32 x 8 piece B
// (column-major), int32 sums. With g = lane / 4 and t = lane % 4, a0..a3
// hold A's rows g, g + 8, g, g + 8 at k = 4t..4t+3, 4t..4t+3, 16+4t..19+4t,
// 16+4t..19+4t (four bytes each, k ascending); b0, b1 hold B's column g at
// k = 4t..4t+3 and 16+4t..19+4t; d[c] is the sum at row g + 8 (c / 2),
// column 2t + c % 2 (mma_m16n8k32_s8; mma_m16n8k32_s8u8 with B's bytes
// unsigned). Device code for sm_80 and later only: a caller that
// may run earlier keeps its own fallback (tile_mma, exdgemm_kernels.cu).
#pragma once

#include <cstdint>

namespace xn {

// d += A B with B's bytes of type btype ("s8" or "u8").
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define XN_MMA_M16N8K32_S8(btype)                                                     \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8." btype                     \
               ".s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"        \
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                       \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
#else
#define XN_MMA_M16N8K32_S8(btype) __trap()  // no INT8 mma.sync before sm_80
#endif

__device__ __forceinline__ void mma_m16n8k32_s8(int (&d)[4], std::uint32_t a0, std::uint32_t a1,
                                                std::uint32_t a2, std::uint32_t a3,
                                                std::uint32_t b0, std::uint32_t b1) {
  XN_MMA_M16N8K32_S8("s8");
}

// B's bytes unsigned (0..255), as the reconstruction's weights
// (exact::fraction_weight_byte) need.
__device__ __forceinline__ void mma_m16n8k32_s8u8(int (&d)[4], std::uint32_t a0, std::uint32_t a1,
                                                  std::uint32_t a2, std::uint32_t a3,
                                                  std::uint32_t b0, std::uint32_t b1) {
  XN_MMA_M16N8K32_S8("u8");
}

#undef XN_MMA_M16N8K32_S8

}  // namespace xn
