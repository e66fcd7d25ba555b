// symv_launch.h - host-side launcher of the SYMV kernels (Nath et al.,
// SC'11, algorithm 2). The variants it can run are those of
// numerics/symv_variant_list.h compiled into this build.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/launch.h"
#include "numerics/symv_variant_list.h"

namespace xn {

// y = alpha A x + beta y for the symmetric n x n A of which only the lower
// (lower = true) or upper triangle is read, on `stream`. ws holds symv_workspace_elems
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
