// symv_variant_list.h - the SYMV kernel variants (Nath et al., SC'11, §6.1:
// autotuning) as data: the descriptor and the two lists every table is
// generated from. CUDA-free and below both users: the kernels' dispatch
// (kernels/symv_kernels.cu) and the core's lookup and tuned defaults
// (core/symv_variants.h), so neither includes the other.
//
// A variant fixes the tile size nb, the columns per warp (each lane holds
// nb / 32 rows of a tile), the depth of the copy pipeline, a minimum number
// of resident blocks per SM (register budget), the chunk (tiles per thread
// block, symv_layout.h), the pipeline pieces per tile (the thread block has
// nb / (pieces cols_per_warp) warps) and how full tiles are copied (a bulk
// copy per column, or a tensor copy of a warp's columns) - or the register
// tile kernel instead of the ring (one tile per thread block, loaded into
// registers).
//
// Every variant is listed once, in XN_SYMV_DEFAULT_VARIANTS or
// XN_SYMV_TUNING_VARIANTS below. The defaults are always compiled; the
// tuning variants only in a build with XN_BUILD_TUNING=ON (they exist for
// `xnbench symv --variant all`).
#pragma once

#include <cstdint>

#include "numerics/symv_layout.h"

namespace xn {

struct SymvVariant {
  int id;             // XN_OPT_SYMV_VARIANT value (1-based, stable across builds)
  int nb;             // tile size
  int cols_per_warp;  // tile columns each warp holds
  int stages;         // depth of the asynchronous-copy pipeline (tiles)
  int min_blocks;     // __launch_bounds__ minimum resident blocks per SM
  int chunk;          // tiles per thread block (0: a whole block row)
  int pieces;         // ring stages per tile (each nb / pieces columns)
  int tensor;         // 1: a tensor copy per warp and stage (box nb x cols_per_warp)
  int regs;           // 1: the register tile kernel (one tile per block, chunk 1,
                      //    nb / cols_per_warp warps; stages, pieces, tensor unused)
};

// clang-format off
// X(id, nb, cols_per_warp, stages, min_blocks, chunk, pieces, tensor, regs)
//
// The register tile kernel, one tile per block: the tuned defaults
// (symv_default_variant; docs/performance.md, "SYMV").
#define XN_SYMV_DEFAULT_VARIANTS(X) \
  X(33, 128, 16, 0, 2, 1, 1, 0, 1)  \
  X(34, 128, 32, 0, 2, 1, 1, 0, 1)  \
  X(35, 64, 16, 0, 4, 1, 1, 0, 1)

// The tuning sweep's other variants (XN_BUILD_TUNING=ON). Chunk 0 = one
// thread block per block row (the layout of Nath et al.).
#define XN_SYMV_TUNING_VARIANTS(X)                                             \
  /* The ring kernel: whole tiles per stage. */                                \
  X(1, 64, 8, 2, 3, 4, 1, 0, 0)                                                \
  X(2, 64, 8, 3, 2, 8, 1, 0, 0)                                                \
  X(3, 64, 8, 2, 3, 8, 1, 0, 0)                                                \
  X(4, 64, 8, 3, 2, 12, 1, 0, 0)                                               \
  X(5, 64, 8, 3, 2, 6, 1, 0, 0)                                                \
  X(6, 64, 16, 3, 2, 8, 1, 0, 0)                                               \
  X(7, 128, 16, 3, 1, 8, 1, 0, 0)                                              \
  X(8, 64, 8, 3, 2, 0, 1, 0, 0)                                                \
  X(9, 64, 8, 2, 3, 6, 1, 0, 0)                                                \
  X(10, 128, 8, 3, 1, 8, 1, 0, 0)                                              \
  X(11, 128, 16, 3, 1, 4, 1, 0, 0)                                             \
  X(12, 64, 16, 2, 3, 6, 1, 0, 0)                                              \
  /* Tiles in pieces: nb 128 with two (single: ~97 KiB, 2 blocks/SM) or */     \
  /* four (~66 KiB, 3 blocks/SM) pieces; nb 64 with two. */                    \
  X(13, 128, 4, 3, 2, 8, 2, 0, 0)                                              \
  X(14, 128, 4, 3, 2, 4, 2, 0, 0)                                              \
  X(15, 128, 4, 3, 2, 6, 2, 0, 0)                                              \
  X(16, 128, 8, 3, 2, 6, 2, 0, 0)                                              \
  X(17, 128, 4, 4, 3, 6, 4, 0, 0)                                              \
  X(18, 128, 4, 4, 3, 3, 4, 0, 0)                                              \
  X(19, 64, 4, 4, 3, 6, 2, 0, 0)                                               \
  X(20, 64, 8, 4, 3, 6, 2, 0, 0)                                               \
  X(21, 128, 8, 3, 2, 2, 2, 0, 0)                                              \
  X(22, 128, 8, 3, 2, 3, 2, 0, 0)                                              \
  X(23, 128, 8, 3, 2, 4, 2, 0, 0)                                              \
  /* Tensor copies (one per warp and stage) instead of one per column. */      \
  X(24, 128, 8, 3, 1, 8, 1, 1, 0)                                              \
  X(25, 128, 16, 3, 1, 8, 1, 1, 0)                                             \
  X(26, 128, 8, 3, 2, 3, 2, 1, 0)                                              \
  X(27, 128, 8, 3, 2, 6, 2, 1, 0)                                              \
  X(28, 64, 8, 2, 3, 6, 1, 1, 0)                                               \
  X(29, 64, 8, 2, 3, 4, 1, 1, 0)                                               \
  X(30, 64, 16, 3, 2, 8, 1, 1, 0)                                              \
  X(31, 64, 8, 3, 2, 8, 1, 1, 0)                                               \
  X(32, 128, 4, 4, 3, 6, 4, 1, 0)                                              \
  /* The register kernel at three blocks per SM. */                            \
  X(36, 128, 32, 0, 3, 1, 1, 0, 1)                                             \
  /* Ring, single precision, after the split diagonal tile: pieces of 64 */    \
  /* columns, per-column bulk copies, chunks of 5 and 8; and chunks of 5 at */ \
  /* three blocks per SM. */                                                   \
  X(37, 128, 8, 3, 2, 5, 2, 0, 0)                                              \
  X(38, 128, 8, 3, 2, 8, 2, 0, 0)                                              \
  X(39, 128, 8, 2, 3, 5, 2, 0, 0)

// clang-format on

// The largest variant id of either list: XN_OPT_SYMV_VARIANT's range is
// 0 .. this (0 = the tuned default).
inline constexpr int kSymvMaxVariantId = 39;

// The decomposition a variant uses for an n x n matrix (lower: the stored
// triangle is the lower one).
inline symv::Layout symv_variant_layout(const SymvVariant &v, std::int64_t n,
                                        bool lower) {
  return symv::make_layout(n, v.nb, v.chunk > 0 ? v.chunk : symv::ceil_div(n, v.nb),
                           lower);
}

}  // namespace xn
