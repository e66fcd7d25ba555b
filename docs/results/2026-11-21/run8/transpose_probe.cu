// Probe: the transposing add/sub / copy of a d 8192 x 8192 quadrant of a
// 16384 x 16384 op(B) (ld 16384), current kernel vs a 64 x 64 tile with
// 16-byte loads, alone ("cold") and right after a 4096 x 4096 x 2048 DGEMM
// ("hot", the state inside an ngemm call).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
namespace xn { template <class T> cudaError_t launch_transpose_add_sub(cudaStream_t, long, long, T *, long, const T *, long, bool, const T *, long, bool, bool); }
#define CK(x) do { auto e = (x); if (e != 0) { printf("%s:%d err %d\n", __FILE__, __LINE__, int(e)); exit(1);} } while (0)
using idx = long;

constexpr int kTile = 32, kTileRows = 8;
__global__ void __launch_bounds__(kTile *kTileRows)
    k0(idx rows, idx cols, double *d, idx ldd, const double *x, idx ldx, bool x_trans,
       const double *y, idx ldy, bool y_trans) {
  __shared__ double xt[kTile][kTile + 1];
  __shared__ double yt[kTile][kTile + 1];
  const idx i0 = idx(blockIdx.x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (idx j0 = idx(blockIdx.y) * kTile; j0 < cols; j0 += idx(gridDim.y) * kTile) {
#pragma unroll
    for (int r = 0; r < kTile; r += kTileRows) {
      const idx i = i0 + ty + r, j = j0 + tx;
      if (i < rows && j < cols) {
        if (x_trans) xt[ty + r][tx] = x[j + i * ldx];
        if (y_trans) yt[ty + r][tx] = y[j + i * ldy];
      }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kTile; r += kTileRows) {
      const idx i = i0 + tx, j = j0 + ty + r;
      if (i < rows && j < cols) {
        const double a = x_trans ? xt[tx][ty + r] : x[i + j * ldx];
        if (y == nullptr) d[i + j * ldd] = a;
        else { const double b = y_trans ? yt[tx][ty + r] : y[i + j * ldy]; d[i + j * ldd] = a - b; }
      }
    }
    __syncthreads();
  }
}

// 64 x 64 tiles, 256 threads, 16-byte loads of the stored columns; no edges
// (the probe's sizes are multiples of 64). NOPS: operands (1 copy, 2 sub).
template <int TB, int NOPS>
__global__ void __launch_bounds__(256, 2) k1(idx rows, idx cols, double *d, idx ldd, const double *x, idx ldx, bool x_trans,
                                const double *y, idx ldy, bool y_trans) {
  extern __shared__ double sm[];
  double (*xt)[TB + 1] = reinterpret_cast<double (*)[TB + 1]>(sm);
  double (*yt)[TB + 1] = reinterpret_cast<double (*)[TB + 1]>(sm + TB * (TB + 1));
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  constexpr int HALF = TB / 2;  // double2 per stored column
  constexpr int LPC = HALF >= 32 ? 32 : HALF; // lanes per column
  constexpr int CPI = 256 / HALF; // columns per iteration
  const idx i0 = idx(blockIdx.x) * TB;
  for (idx j0 = idx(blockIdx.y) * TB; j0 < cols; j0 += idx(gridDim.y) * TB) {
    // load: stored column i0 + c, rows j0 + 2 e .. +1
    double2 vx[TB / CPI], vy[TB / CPI];
#pragma unroll
    for (int r = 0; r < TB / CPI; ++r) {
      const int c = t / HALF + r * CPI, e = t % HALF;
      if (x_trans) vx[r] = *reinterpret_cast<const double2 *>(x + j0 + 2 * e + (i0 + c) * ldx);
      if (NOPS == 2 && y_trans) vy[r] = *reinterpret_cast<const double2 *>(y + j0 + 2 * e + (i0 + c) * ldy);
    }
#pragma unroll
    for (int r = 0; r < TB / CPI; ++r) {
      const int c = t / HALF + r * CPI, e = t % HALF;
      if (x_trans) { xt[c][2 * e] = vx[r].x; xt[c][2 * e + 1] = vx[r].y; }
      if (NOPS == 2 && y_trans) { yt[c][2 * e] = vy[r].x; yt[c][2 * e + 1] = vy[r].y; }
    }
    __syncthreads();
    // write: D(i0 + lane + 32 h, j0 + w + 8 r)
#pragma unroll
    for (int r = 0; r < TB / 8; ++r) {
      const int jj = w + 8 * r;
#pragma unroll
      for (int h = 0; h < TB / 32; ++h) {
        const int ii = lane + 32 * h;
        const idx i = i0 + ii, j = j0 + jj;
        const double a = x_trans ? xt[ii][jj] : x[i + j * ldx];
        if (NOPS == 1) d[i + j * ldd] = a;
        else { const double b = y_trans ? yt[ii][jj] : y[i + j * ldy]; d[i + j * ldd] = a - b; }
      }
    }
    __syncthreads();
  }
  (void)LPC; (void)rows;
}

__global__ void plain_sub(idx rows, idx cols, double *d, idx ldd, const double *x, idx ldx, const double *y, idx ldy) {
  const idx i = (idx(blockIdx.x) * 256 + threadIdx.x) * 2;
  for (idx j = blockIdx.y; j < cols; j += gridDim.y) {
    const double2 a = *reinterpret_cast<const double2 *>(x + i + j * ldx);
    const double2 b = *reinterpret_cast<const double2 *>(y + i + j * ldy);
    *reinterpret_cast<double2 *>(d + i + j * ldd) = make_double2(a.x - b.x, a.y - b.y);
  }
}

int main() {
  const idx N = 16384, h = 8192;
  double *B, *D, *E, *GA, *GB, *GC;
  CK(cudaMalloc(&B, N * N * 8)); CK(cudaMalloc(&D, h * h * 8)); CK(cudaMalloc(&E, h * h * 8));
  CK(cudaMalloc(&GA, 4096l * 2048 * 8)); CK(cudaMalloc(&GB, 4096l * 2048 * 8)); CK(cudaMalloc(&GC, 4096l * 4096 * 8));
  {
    std::vector<double> hb(N * N);
    for (idx k = 0; k < N * N; ++k) hb[k] = double((k * 2654435761u) % 1000) / 1000.0;
    CK(cudaMemcpy(B, hb.data(), N * N * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(GA, hb.data(), 4096l * 2048 * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(GB, hb.data() + 4096l * 2048, 4096l * 2048 * 8, cudaMemcpyHostToDevice));
  }
  cublasHandle_t hd; CK(cublasCreate(&hd));
  const double one = 1, zero = 0;
  const double *B11 = B, *B12 = B + h * N, *B21 = B + h, *B22 = B + h + h * N;  // stored quadrants
  (void)B21;
  CK(cudaFuncSetAttribute(k1<64, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * 64 * 65 * 8));
  CK(cudaFuncSetAttribute(k1<64, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 65 * 8));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  auto time = [&](const char *name, double bytes, bool hot, auto f) {
    std::vector<float> ts;
    for (int r = 0; r < 23; ++r) {
      if (hot) CK(cublasDgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, 4096, 4096, 2048, &one, GA, 4096, GB, 2048, &zero, GC, 4096));
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      CK(cudaGetLastError());
      float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r >= 3) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    printf("%-34s %s us=%8.1f TB/s=%.3f\n", name, hot ? "hot " : "cold", ts[ts.size() / 2] * 1e3, bytes / ts[ts.size() / 2] / 1e9);
  };
  const double q = double(h) * h * 8;
  for (int hot = 0; hot < 2; ++hot) {
    time("plain sub (N,N)", 3 * q, hot, [&] { plain_sub<<<dim3(h / 512, 4096), 256>>>(h, h, D, h, B11, N, B22, N); });
    time("k0 copy T", 2 * q, hot, [&] { k0<<<dim3(h / 32, h / 32), dim3(32, 8)>>>(h, h, D, h, B11, N, true, nullptr, 0, false); });
    time("k0 sub T,T", 3 * q, hot, [&] { k0<<<dim3(h / 32, h / 32), dim3(32, 8)>>>(h, h, D, h, B12, N, true, B11, N, true); });
    time("k0 sub T,N", 3 * q, hot, [&] { k0<<<dim3(h / 32, h / 32), dim3(32, 8)>>>(h, h, D, h, B22, N, true, E, h, false); });
    time("lib copy T", 2 * q, hot, [&] { CK(xn::launch_transpose_add_sub<double>(0, h, h, D, h, B11, N, true, nullptr, 0, false, false)); });
    time("lib sub T,T", 3 * q, hot, [&] { CK(xn::launch_transpose_add_sub<double>(0, h, h, D, h, B12, N, true, B11, N, true, true)); });
    time("lib sub T,N", 3 * q, hot, [&] { CK(xn::launch_transpose_add_sub<double>(0, h, h, E, h, B22, N, true, E, h, false, true)); });
    time("lib sub N,T", 3 * q, hot, [&] { CK(xn::launch_transpose_add_sub<double>(0, h, h, E, h, E, h, false, B22, N, true, true)); });
    for (int gy : {32}) {
      char nm[64];
      snprintf(nm, 64, "k1 copy T gy=%d", gy);
      time(nm, 2 * q, hot, [&] { k1<64, 1><<<dim3(h / 64, gy), 256, 64 * 65 * 8>>>(h, h, D, h, B11, N, true, nullptr, 0, false); });
      snprintf(nm, 64, "k1 sub T,T gy=%d", gy);
      time(nm, 3 * q, hot, [&] { k1<64, 2><<<dim3(h / 64, gy), 256, 2 * 64 * 65 * 8>>>(h, h, D, h, B12, N, true, B11, N, true); });
      snprintf(nm, 64, "k1 sub T,N gy=%d", gy);
      time(nm, 3 * q, hot, [&] { k1<64, 2><<<dim3(h / 64, gy), 256, 2 * 64 * 65 * 8>>>(h, h, D, h, B22, N, true, E, h, false); });
    }
  }
  // check k1 against k0
  std::vector<double> r0(h * h), r1(h * h);
  k0<<<dim3(h / 32, h / 32), dim3(32, 8)>>>(h, h, D, h, B12, N, true, B11, N, true);
  CK(cudaMemcpy(r0.data(), D, h * h * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemset(D, 0xff, h * h * 8));
  k1<64, 2><<<dim3(h / 64, 32), 256, 2 * 64 * 65 * 8>>>(h, h, D, h, B12, N, true, B11, N, true);
  CK(cudaMemcpy(r1.data(), D, h * h * 8, cudaMemcpyDeviceToHost));
  idx bad = 0; for (idx k = 0; k < h * h; ++k) bad += r0[k] != r1[k];
  printf("k1 vs k0 mismatches: %ld\n", bad);
  return 0;
}
