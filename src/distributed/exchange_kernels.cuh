// exchange_kernels.cuh - the device engine's kernels (device_engine.cu, which
// alone includes this): the packing of the blocks that other processes
// need, the unpacking of what arrives into the strips, and the scaling of
// sub(C) by beta.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace xn::dist::exchange {

constexpr int kTile = 32, kPass = 8;  // 32 x 32 tiles, 32 x 8 threads

// packed(a, b) = src[u[a] + v[b] lds], or src[u[b] + v[a] lds] transposed
// (then read along b, through shared memory, so both sides coalesce).
template <class T>
__global__ void pack_kernel(T *dst, const T *src, std::int64_t lds, const int *u,
                            const int *v, int rows, int cols, bool trans) {
  __shared__ T tile[kTile][kTile + 1];
  const int a0 = blockIdx.x * kTile;
  for (int b0 = blockIdx.y * kTile; b0 < cols; b0 += gridDim.y * kTile) {
    if (!trans) {
      const int a = a0 + threadIdx.x;
      for (int j = threadIdx.y; j < kTile; j += kPass) {
        const int b = b0 + j;
        if (a < rows && b < cols)
          dst[a + std::int64_t(b) * rows] = src[u[a] + std::int64_t(v[b]) * lds];
      }
    } else {
      for (int j = threadIdx.y; j < kTile; j += kPass) {
        const int a = a0 + j, b = b0 + threadIdx.x;
        if (a < rows && b < cols)
          tile[threadIdx.x][j] = src[u[b] + std::int64_t(v[a]) * lds];
      }
      __syncthreads();
      for (int j = threadIdx.y; j < kTile; j += kPass) {
        const int a = a0 + threadIdx.x, b = b0 + j;
        if (a < rows && b < cols) dst[a + std::int64_t(b) * rows] = tile[j][threadIdx.x];
      }
      __syncthreads();
    }
  }
}

// strip[rpos[a] + cpos[b] ld] = block(a, b).
template <class T>
__global__ void unpack_kernel(T *strip, std::int64_t ld, const int *rpos, const int *cpos,
                              const T *block, int rows, int cols) {
  const int a = blockIdx.x * kTile + threadIdx.x;
  if (a >= rows) return;
  const std::int64_t r = rpos[a];
  for (int b0 = blockIdx.y * kTile; b0 < cols; b0 += gridDim.y * kTile)
    for (int j = threadIdx.y; j < kTile && b0 + j < cols; j += kPass) {
      const int b = b0 + j;
      strip[r + std::int64_t(cpos[b]) * ld] = block[a + std::int64_t(b) * rows];
    }
}

// c := beta c; beta = 0 writes zeros without reading c (BLAS).
template <class T>
__global__ void scale_kernel(T *c, std::int64_t ldc, std::int64_t rows, std::int64_t cols,
                             T beta) {
  const std::int64_t total = rows * cols;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    T &x = c[e % rows + (e / rows) * ldc];
    x = beta == T(0) ? T(0) : beta * x;
  }
}

inline dim3 tiles(std::int64_t rows, std::int64_t cols) {
  return dim3(unsigned((rows + kTile - 1) / kTile),
              unsigned(std::min<std::int64_t>((cols + kTile - 1) / kTile, 65535)));
}

}  // namespace xn::dist::exchange
