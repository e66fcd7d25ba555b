// intercept_overhead_cublas.cu - what libxngemm_intercept.so costs and gains
// a CUDA program that calls cublasDgemm: a program of cuBLAS only, run with
// and without LD_PRELOAD (scripts/bench_intercept.sh cublas does both).
//
//   intercept_overhead_cublas small [TRAINS [CALLS]]    (default 2000, 64)
//       TRAINS pairs of trains of CALLS 8 x 8 x 8 cublasDgemm calls on one
//       stream, synchronised between trains: the host time to issue a call
//       through the program's cublasDgemm and through cuBLAS's own, and the
//       difference (what the interposer adds to a call it passes through)
//   intercept_overhead_cublas large [N [REPEATS]]       (default 16384, 5)
//       one N x N x N cublasDgemm, inputs uniform in [-1, 1) ("signed") and
//       in [0, 1) ("nonneg"): the median time per call (CUDA events, after
//       a warm-up call) and the achieved TFLOP/s
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define XN_STR2(x) #x
#define XN_STR(x) XN_STR2(x)
#define CHECK(call)                                                          \
  do {                                                                       \
    if ((call) != 0) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

namespace {

// Uniform in [lo, lo + width) from a hash of the index: any entry on its own.
__global__ void fill(double *x, std::size_t count, std::uint64_t seed, double lo,
                     double width) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = lo + width * (double(z >> 11) * 0x1p-53);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Trains short enough that the launch queue never fills (a full queue
// makes the host wait for the GPU, and the time per call is then the GPU's):
// the host time to issue a train, per call, is what an interposer adds to.
// Trains alternate between the program's cublasDgemm (the interposer's,
// under LD_PRELOAD) and cuBLAS's own, found in libcublas itself: the median
// of the paired differences is the interposer's cost, free of the drift
// between processes (without LD_PRELOAD it measures zero).
int small(long trains, int train) {
  using Dgemm = decltype(&cublasDgemm_v2);
  void *lib = dlopen("libcublas.so." XN_STR(CUBLAS_VER_MAJOR), RTLD_NOW | RTLD_NOLOAD);
  const Dgemm direct =
      lib ? reinterpret_cast<Dgemm>(dlsym(lib, "cublasDgemm_v2")) : nullptr;
  if (!direct) {
    std::fprintf(stderr, "cannot find cuBLAS's own cublasDgemm_v2\n");
    return 1;
  }
  cublasHandle_t h;
  cudaStream_t s;
  CHECK(cublasCreate(&h));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cublasSetStream(h, s));
  const int n = 8;
  double *A, *B, *C;
  for (double **p : {&A, &B, &C}) CHECK(cudaMalloc(p, n * n * sizeof(double)));
  fill<<<1, 64, 0, s>>>(A, n * n, 1, 0.0, 1.0);
  fill<<<1, 64, 0, s>>>(B, n * n, 2, 0.0, 1.0);
  const double one = 1, zero = 0;
  const auto issue = [&](Dgemm gemm) {
    CHECK(cudaStreamSynchronize(s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < train; ++i)
      CHECK(gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count() / train;
  };
  std::vector<double> program, cublas, diff;
  for (long r = 0; r < trains + 10; ++r) {  // the first 10 pairs are a warm-up
    const double p = issue(cublasDgemm), c = issue(direct);
    if (r < 10) continue;
    program.push_back(p);
    cublas.push_back(c);
    diff.push_back(p - c);
  }
  CHECK(cudaStreamSynchronize(s));
  std::printf(
      "small 8x8x8: %.1f ns/call to issue through the program's cublasDgemm, %.1f "
      "through cuBLAS's own, difference %.1f ns/call (medians of %ld trains of %d "
      "calls each)\n",
      1e9 * median(program), 1e9 * median(cublas), 1e9 * median(diff), trains, train);
  for (double *p : {A, B, C}) CHECK(cudaFree(p));
  CHECK(cublasDestroy(h));
  CHECK(cudaStreamDestroy(s));
  return 0;
}

int large(int n, int reps) {
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  const std::size_t count = std::size_t(n) * n;
  double *A, *B, *C;
  for (double **p : {&A, &B, &C}) CHECK(cudaMalloc(p, count * sizeof(double)));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const double one = 1, zero = 0;
  for (const char *data : {"signed", "nonneg"}) {
    const bool nonneg = !std::strcmp(data, "nonneg");
    fill<<<1024, 256>>>(A, count, 11, nonneg ? 0.0 : -1.0, nonneg ? 1.0 : 2.0);
    fill<<<1024, 256>>>(B, count, 12, nonneg ? 0.0 : -1.0, nonneg ? 1.0 : 2.0);
    std::vector<double> ms;
    for (int r = 0; r <= reps; ++r) {  // the first call is a warm-up
      CHECK(cudaEventRecord(e0));
      CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C,
                        n));
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (r > 0) ms.push_back(t);
    }
    const double t = median(ms);
    std::printf("large %d %s: %.2f ms, %.1f TFLOP/s (median of %d, from %.2f to %.2f)\n",
                n, data, t, 2.0 * n * double(n) * n / (t * 1e9), reps,
                *std::min_element(ms.begin(), ms.end()),
                *std::max_element(ms.begin(), ms.end()));
  }
  for (double *p : {A, B, C}) CHECK(cudaFree(p));
  CHECK(cublasDestroy(h));
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "small";
  if (!std::strcmp(what, "small"))
    return small(std::max(1L, argc > 2 ? std::atol(argv[2]) : 2000),
                 std::max(1, argc > 3 ? std::atoi(argv[3]) : 64));
  if (!std::strcmp(what, "large"))
    return large(argc > 2 ? std::atoi(argv[2]) : 16384,
                 std::max(1, argc > 3 ? std::atoi(argv[3]) : 5));
  std::fprintf(
      stderr,
      "usage: intercept_overhead_cublas small [TRAINS [CALLS]] | large [N [REPEATS]]\n");
  return 2;
}
