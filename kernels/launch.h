// launch.h - host-side launchers of the elementwise CUDA kernels.
//
// Every launcher works on column-major regions of `rows` x `cols` stored
// elements with their own leading dimensions, enqueues on `stream`, and
// returns the launch's cudaError_t (never synchronises).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace xn {

// A scale factor known on the host (dev == nullptr) or living in device
// memory (cuBLAS's CUBLAS_POINTER_MODE_DEVICE): the kernel reads *dev.
template <class T>
struct ScalarArg {
  T value;
  const T *dev;
};

// One fused elementwise step of a recursive schedule (core/executor.h,
// CombineOp) over rows x cols stored elements, every operand with its own
// leading dimension and the same orientation:
//   dst[d] = ew_combine(src values, coef[d])                (in source order)
//   dst[d] = ew_fold(that, beta, old dst[d])   when beta_old[d] (beta == 0
//                                              never reads the old value)
// Each source is read once, and every source is read before any target is
// written at the same position, so a target may be a source.
constexpr int kCombineMaxDst = 4;
constexpr int kCombineMaxSrc = 6;
template <class T>
struct CombineArgs {
  std::int64_t rows, cols;
  int ndst, nsrc;
  T *dst[kCombineMaxDst];
  std::int64_t ldd[kCombineMaxDst];
  const T *src[kCombineMaxSrc];
  std::int64_t lds[kCombineMaxSrc];
  signed char coef[kCombineMaxDst][kCombineMaxSrc];
  bool beta_old[kCombineMaxDst];
  ScalarArg<T> beta;
};

template <class T>
cudaError_t launch_combine(cudaStream_t stream, const CombineArgs<T> &args);

// C = beta * C; beta == 0 writes zeros without reading C, beta == 1 writes
// nothing (BLAS's quick return: a signalling NaN stays signalling).
template <class T>
cudaError_t launch_scale(cudaStream_t stream, std::int64_t rows, std::int64_t cols, T *c,
                         std::int64_t ldc, ScalarArg<T> beta);

// ORs into *flags the EntryFlags (numerics/elementwise.h) of every entry of
// the rows x cols matrix x: kEntryNegative for a negative number,
// kEntryNonFinite for a NaN or Inf. *flags must have been cleared by the
// caller.
template <class T>
cudaError_t launch_entry_flags(cudaStream_t stream, std::int64_t rows, std::int64_t cols,
                               const T *x, std::int64_t ldx, int *flags);

// The finest grid launch_entry_flags_max makes (core/scale_depth.h,
// kMaxScaleGridLevels).
constexpr int kScanMaxGridLevels = 4;

// The same scan, in the same single read of x, also maxing into cells[r + c
// 2^g] the largest entry of each block (r, c) of a grid of 2^g x 2^g blocks
// of x (0 <= g <= kScanMaxGridLevels; blocks rows >> g by cols >> g, the last row and
// column of blocks taking the remainder: src/core/scale_depth.h, scale_grid_block), as
// the bits of a double (non-negative entries only: negative ones, -0 and NaN never raise
// a cell above 0). The caller clears *flags and the cells.
template <class T>
cudaError_t launch_entry_flags_max(cudaStream_t stream, std::int64_t rows,
                                   std::int64_t cols, const T *x, std::int64_t ldx,
                                   int *flags, long long *cells, int grid_levels);

// D = op(X) + op(Y) or op(X) - op(Y) for a rows x cols D: an operand with
// its `_trans` flag set is stored transposed (cols x rows, op(X)(i, j) =
// x[j + i*ldx]), otherwise like D. Tiled through shared memory so that the
// reads of the transposed operands and all other accesses are coalesced (the
// B-side pre-additions of Badin et al., ICS'13, Table 1 into a non-transposed T). d may
// alias a non-transposed operand, never a transposed one. y == nullptr (with
// y_trans false) makes it a copy, D = op(X) (the packed quadrant of op(B),
// src/core/plan.h). At least one operand must be transposed (else
// cudaErrorInvalidValue: that is launch_combine's job).
template <class T>
cudaError_t launch_transpose_add_sub(cudaStream_t stream, std::int64_t rows,
                                     std::int64_t cols, T *d, std::int64_t ldd,
                                     const T *x, std::int64_t ldx, bool x_trans,
                                     const T *y, std::int64_t ldy, bool y_trans,
                                     bool subtract);

}  // namespace xn
