// symv_launch.h - host-side launchers of the SYMV kernels (seed 004,
// algorithm 2) and the table of compiled kernel variants.
//
// A variant fixes the tile size nb, the columns per warp (each lane holds
// nb / 32 rows of a tile), the depth of the copy pipeline, a minimum number
// of resident blocks per SM (register budget), the chunk (tiles per thread
// block, symv_layout.h) and the pipeline pieces per tile (the thread block
// has nb / (pieces cols_per_warp) warps; symv_layout.h column_warp) and
// how full tiles are copied (a bulk copy per column, or a tensor copy of a
// warp's columns) - or the register tile kernel instead of the ring (one
// tile per thread block, loaded into registers). Variant 0 means "the tuned default for
// this precision"; bench/ sweeps the others (seed 004 §6.1 autotuning).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/launch.h"
#include "numerics/symv_layout.h"

namespace xn {

struct SymvVariant {
  int id;             // 1-based position in the table
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

// The compiled variants: ids 1 .. symv_variant_count().
int symv_variant_count();
// Whether variant v's shared memory fits one block in that precision.
bool symv_variant_fits(const SymvVariant &v, bool is_double);
// The tuned default for a precision, order n and triangle.
const SymvVariant &symv_default_variant(bool is_double, std::int64_t n, bool lower);
// Variant `id` (1-based), or the tuned default for (precision, n, lower) when
// id is 0, out of range or does not fit that precision.
const SymvVariant &symv_variant(int id, bool is_double, std::int64_t n, bool lower);

// The decomposition a variant uses for an n x n matrix.
inline symv::Layout symv_layout(const SymvVariant &v, std::int64_t n, bool lower) {
  return symv::make_layout(n, v.nb, v.chunk > 0 ? v.chunk : symv::ceil_div(n, v.nb),
                           lower);
}
inline std::size_t symv_workspace_elems(const SymvVariant &v, std::int64_t n,
                                        bool lower) {
  return n > 0 ? std::size_t(symv::workspace_elems(symv_layout(v, n, lower))) : 0;
}

// y = alpha A x + beta y for the symmetric n x n A of which only the `lower`
// (or upper) triangle is read, on `stream`. ws holds symv_workspace_elems
// elements, 16-byte aligned (contents ignored, overwritten). incx, incy non-zero, BLAS
// semantics for negative ones (x, y point at the first element in memory).
// beta == 0 never reads y; when `alpha_is_zero` is known on the host the
// first kernel is skipped and A, x and ws are not touched. With a device
// alpha equal to zero the first kernel returns at once and the second only
// scales y. Returns the launch's error; never synchronises. Two kernels
// (tiles, reduction) when x is contiguous and 16-byte aligned; x is packed
// into the workspace first otherwise.
template <class T>
cudaError_t launch_symv(cudaStream_t stream, const SymvVariant &v, bool lower,
                        std::int64_t n, ScalarArg<T> alpha, const T *A, std::int64_t lda,
                        const T *x, std::int64_t incx, ScalarArg<T> beta, T *y,
                        std::int64_t incy, T *ws, bool alpha_is_zero);

}  // namespace xn
