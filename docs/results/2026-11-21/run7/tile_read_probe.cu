// Probe: bandwidth of reading the lower triangle of an n x n float matrix in
// R x C tiles (column-major within the tile), one tile per 128-thread block,
// every load in flight before use (the register SYMV kernel's pattern), with
// and without the SYMV arithmetic. Also a contiguous 64 KiB-per-block read.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstdlib>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <int R, int C, int MODE>  // MODE 0: sum only; 1: symv-like compute
__global__ void __launch_bounds__(128, 2) tile_read(const float *A, long lda, const int2 *tiles,
                                                    const float *x, float *out) {
  constexpr int CW = C / 4, TU = R / 32, V = TU / 4;
  const int2 t = tiles[blockIdx.x];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const long row0 = long(t.x) * R, col0 = long(t.y) * C;
  const float *src = A + (col0 + w * CW) * lda + row0 + lane * TU;
  float4 e[CW][V];
#pragma unroll
  for (int j = 0; j < CW; ++j)
#pragma unroll
    for (int v = 0; v < V; ++v) e[j][v] = __ldcs(reinterpret_cast<const float4 *>(src + j * lda) + v);
  float s = 0.f;
  if (MODE == 0) {
#pragma unroll
    for (int j = 0; j < CW; ++j)
#pragma unroll
      for (int v = 0; v < V; ++v) s += e[j][v].x + e[j][v].y + e[j][v].z + e[j][v].w;
  } else {
    float xq[CW], xp[TU];
#pragma unroll
    for (int j = 0; j < CW; ++j) xq[j] = x[col0 + w * CW + j];
#pragma unroll
    for (int k = 0; k < TU; ++k) xp[k] = x[row0 + lane * TU + k];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      float r0 = 0, r1 = 0, r2 = 0, r3 = 0;
#pragma unroll
      for (int j = 0; j < CW; ++j) { r0 += e[j][v].x * xq[j]; r1 += e[j][v].y * xq[j]; r2 += e[j][v].z * xq[j]; r3 += e[j][v].w * xq[j]; }
      s += r0 + r1 + r2 + r3;
    }
#pragma unroll
    for (int j = 0; j < CW; ++j) {
      float c = 0;
#pragma unroll
      for (int v = 0; v < V; ++v) c += e[j][v].x * xp[4*v] + e[j][v].y * xp[4*v+1] + e[j][v].z * xp[4*v+2] + e[j][v].w * xp[4*v+3];
#pragma unroll
      for (int o = 16; o; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
      s += c;
    }
  }
  out[blockIdx.x * 128 + threadIdx.x] = s;
}

__global__ void __launch_bounds__(128, 2) contig_read(const float4 *A, float *out) {
  const float4 *src = A + long(blockIdx.x) * 4096;
  float4 e[32];
#pragma unroll
  for (int j = 0; j < 32; ++j) e[j] = __ldcs(src + j * 128 + threadIdx.x);
  float s = 0;
#pragma unroll
  for (int j = 0; j < 32; ++j) s += e[j].x + e[j].y + e[j].z + e[j].w;
  out[blockIdx.x * 128 + threadIdx.x] = s;
}

template <class F>
float time_it(F f, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

static int smem_for(int bps) { return bps == 2 ? 90 * 1024 : bps == 3 ? 60 * 1024 : 0; }

template <int R, int C, int MODE>
void run(const float *A, long n, const float *x, float *out, int order, int bps) {
  std::vector<int2> tiles;
  // lower triangle: tile (p, q) with rows [pR, pR+R) and cols [qC, qC+C) that
  // touch the stored part (p R + R - 1 >= q C).
  long nr = n / R, nc = n / C;
  if (order == 0) {  // column-major
    for (long q = 0; q < nc; ++q) for (long p = 0; p < nr; ++p) if (p * R + R - 1 >= q * C) tiles.push_back({int(p), int(q)});
  } else {  // row-major
    for (long p = 0; p < nr; ++p) for (long q = 0; q < nc; ++q) if (p * R + R - 1 >= q * C) tiles.push_back({int(p), int(q)});
  }
  int2 *dt; CK(cudaMalloc(&dt, tiles.size() * sizeof(int2)));
  CK(cudaMemcpy(dt, tiles.data(), tiles.size() * sizeof(int2), cudaMemcpyHostToDevice));
  const int nt = int(tiles.size());
  CK(cudaFuncSetAttribute(tile_read<R, C, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  float ms = time_it([&] { tile_read<R, C, MODE><<<nt, 128, smem_for(bps)>>>(A, n, dt, x, out); }, 30);
  CK(cudaGetLastError());
  double bytes = double(nt) * R * C * 4;
  printf("n=%ld bps=%d R=%d C=%d mode=%d order=%s tiles=%d MB=%.1f us=%.1f TB/s=%.3f\n", n, bps, R, C, MODE,
         order ? "row" : "col", nt, bytes / 1e6, ms * 1e3, bytes / ms / 1e9);
  CK(cudaFree(dt));
}

int main() {
  long nmax = 16384;
  float *A, *x, *out;
  CK(cudaMalloc(&A, nmax * nmax * 4)); CK(cudaMemset(A, 0, nmax * nmax * 4));
  CK(cudaMalloc(&x, nmax * 4)); CK(cudaMemset(x, 0, nmax * 4));
  CK(cudaMalloc(&out, 64l << 20));
  for (long n : {8192l, 16384l}) {
    long blocks = n * (n + 1) / 2 * 4 / 65536;
    float ms = time_it([&] { contig_read<<<blocks, 128>>>(reinterpret_cast<const float4 *>(A), out); }, 30);
    printf("n=%ld contiguous 64KiB blocks=%ld us=%.1f TB/s=%.3f\n", n, blocks, ms * 1e3, blocks * 65536.0 / ms / 1e9);
    for (int bps : {2, 3})
    for (int order = 0; order < 2; ++order) {
      run<128, 128, 0>(A, n, x, out, order, bps);
      run<256, 64, 0>(A, n, x, out, order, bps);
      run<512, 32, 0>(A, n, x, out, order, bps);
      run<1024, 16, 0>(A, n, x, out, order, bps);
      run<128, 128, 1>(A, n, x, out, order, bps);
      run<256, 64, 1>(A, n, x, out, order, bps);
      run<512, 32, 1>(A, n, x, out, order, bps);
    }
  }
  return 0;
}
