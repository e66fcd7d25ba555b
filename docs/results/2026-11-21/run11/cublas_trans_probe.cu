// cublas_trans_probe.cu - which DGEMM kernel cuBLAS runs for each transpose
// pair of a square product, and how long it takes (issue 2: the baseline's
// NN is slower than its NT and TN at 16384 and 32768).
//
// Build: nvcc -O2 -arch=sm_90 cublas_trans_probe.cu -lcublas -o cublas_trans_probe
// Run:   ./cublas_trans_probe N [reps]      (timings, CUDA events, median)
//        ncu --clock-control none --metrics gpu__time_duration.sum \
//            ./cublas_trans_probe N 1       (the kernel names)
// The inputs are uniform [0, 1) (cuBLAS picks the kernel from the shape,
// transposes and alignment, not from the values; the values only keep the
// FP64 units' power draw realistic).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                                                 \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_CUBLAS(x)                                                              \
  do {                                                                               \
    cublasStatus_t s_ = (x);                                                         \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d cublas status %d\n", __FILE__, __LINE__, int(s_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__global__ void fill_uniform(double *a, long long count, unsigned long long key) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long z = (unsigned long long)i * 0x9E3779B97F4A7C15ull + key;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    a[i] = double(z >> 11) * 0x1.0p-53;
  }
}

int main(int argc, char **argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 16384;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const long long count = n * n;
  double *A, *B, *C;
  CHECK_CUDA(cudaMalloc(&A, count * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&B, count * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&C, count * sizeof(double)));
  fill_uniform<<<4096, 256>>>(A, count, 1);
  fill_uniform<<<4096, 256>>>(B, count, 2);
  CHECK_CUDA(cudaGetLastError());
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  const double one = 1.0, zero = 0.0;
  const char *names[4] = {"NN", "NT", "TN", "TT"};
  const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
  // Interleaved rounds, so that clock and temperature drift spreads over all four.
  std::vector<std::vector<float>> ms(4);
  for (int r = 0; r < reps; ++r)
    for (int c = 0; c < 4; ++c) {
      const cublasOperation_t ta = ops[c / 2], tb = ops[c % 2];
      CHECK_CUDA(cudaEventRecord(t0));
      CHECK_CUBLAS(cublasDgemm(h, ta, tb, int(n), int(n), int(n), &one, A, int(n), B,
                               int(n), &zero, C, int(n)));
      CHECK_CUDA(cudaEventRecord(t1));
      CHECK_CUDA(cudaEventSynchronize(t1));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, t0, t1));
      ms[c].push_back(t);
    }
  std::printf("n=%lld reps=%d (median ms, TF/s; first round included)\n", n, reps);
  for (int c = 0; c < 4; ++c) {
    std::vector<float> v = ms[c];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2];
    std::printf("%s %10.3f ms %6.2f TF/s  (min %.3f)\n", names[c], med,
                2.0 * double(n) * double(n) * double(n) / (med * 1e-3) / 1e12, v.front());
  }
  CHECK_CUBLAS(cublasDestroy(h));
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  return 0;
}
