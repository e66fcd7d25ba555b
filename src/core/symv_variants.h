// symv_variants.h - the table of SYMV kernel variants (Nath et al., SC'11,
// §6.1: autotuning) and the tuned defaults, as data the CUDA-free parts of
// the library (options, workspace query, tests) and the kernels share.
//
// A variant fixes the tile size nb, the columns per warp (each lane holds
// nb / 32 rows of a tile), the depth of the copy pipeline, a minimum number
// of resident blocks per SM (register budget), the chunk (tiles per thread
// block, numerics/symv_layout.h), the pipeline pieces per tile (the thread
// block has nb / (pieces cols_per_warp) warps) and how full tiles are copied
// (a bulk copy per column, or a tensor copy of a warp's columns) - or the
// register tile kernel instead of the ring (one tile per thread block,
// loaded into registers).
//
// Every variant is listed once, in XN_SYMV_DEFAULT_VARIANTS or
// XN_SYMV_TUNING_VARIANTS below: the table here and the kernels' dispatch
// (kernels/symv_kernels.cu) are both generated from those lists, so they
// cannot fall out of step. The defaults are always compiled; the tuning
// variants only in a build with XN_BUILD_TUNING=ON (they exist for
// `xnbench symv --variant all`).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.h"
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

// Every variant of both lists, whatever the build (their layouts are data:
// the host tests check them all).
std::size_t symv_listed_count();
const SymvVariant &symv_listed_variant(std::size_t i);
// The variants compiled into this build, in table order.
std::size_t symv_compiled_count();
const SymvVariant &symv_compiled_variant(std::size_t i);
// Whether variant `id` is compiled into this build.
bool symv_variant_compiled(int id);
// Whether variant v's shared memory fits one block in that precision.
bool symv_variant_fits(const SymvVariant &v, bool is_double);
// The tuned default for a precision, order n and triangle.
const SymvVariant &symv_default_variant(bool is_double, std::int64_t n, Fill uplo);
// Variant `id`, or the tuned default for (precision, n, uplo) when id is 0,
// not compiled or does not fit that precision.
const SymvVariant &symv_variant(int id, bool is_double, std::int64_t n, Fill uplo);

// The decomposition a variant uses for an n x n matrix.
inline symv::Layout symv_layout(const SymvVariant &v, std::int64_t n, Fill uplo) {
  return symv::make_layout(n, v.nb, v.chunk > 0 ? v.chunk : symv::ceil_div(n, v.nb),
                           uplo == Fill::Lower);
}
// Elements of workspace a call of variant v on an n x n matrix needs.
inline std::size_t symv_workspace_elems(const SymvVariant &v, std::int64_t n, Fill uplo) {
  return n > 0 ? std::size_t(symv::workspace_elems(symv_layout(v, n, uplo))) : 0;
}

}  // namespace xn
