// xnbench_mpi_gpu.cu - see xnbench_mpi_gpu.h.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "mpi_entries.h"
#include "xnbench_mpi_gpu.h"
#include "xngemm.h"

namespace xnb {

namespace {

template <class T>
__global__ void fill_kernel(T *a, std::int64_t lr, std::int64_t lc, std::int64_t lld,
                            int nb, int P, int Q, int myrow, int mycol,
                            std::uint64_t seed, int which, bool signed_) {
  const std::int64_t total = lr * lc;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t li = e % lr, lj = e / lr;
    a[li + lj * lld] = T(entry(seed, which, global_of(li, nb, myrow, P),
                               global_of(lj, nb, mycol, Q), signed_));
  }
}

bool ok(cudaError_t e) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "xnbench_mpi: CUDA: %s\n", cudaGetErrorString(e));
  cudaGetLastError();
  return false;
}

template <class T>
cublasStatus_t local_call(Routine r, cublasHandle_t h, int m, int n, int k, const T *a,
                          const T *b, T *c) {
  const T one = 1, zero = 0;
  if constexpr (sizeof(T) == 4) {
    (void)r;
    return xnSngemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
  } else {
    return (r == Routine::pexdgemm ? xnExdgemm : xnDngemm)(
        h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m);
  }
}

template <class T>
double time_local(Routine routine, bool classical, std::int64_t m, std::int64_t n,
                  std::int64_t k, int reps, std::uint64_t seed) {
  const bool exact = routine == Routine::pexdgemm;
  T *a = device_local<T>(m, k, m, 256, 1, 1, 0, 0, seed, 0, exact);
  T *b = device_local<T>(k, n, k, 256, 1, 1, 0, 0, seed, 1, exact);
  T *c = device_local<T>(m, n, m, 256, 1, 1, 0, 0, seed, 2, exact);
  double ms = -1;
  cublasHandle_t h = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (a && b && c && cublasCreate(&h) == CUBLAS_STATUS_SUCCESS &&
      ok(cudaEventCreate(&e0)) && ok(cudaEventCreate(&e1))) {
    if (classical) xnSetOption(h, XN_OPT_MAX_LEVELS, 0);
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      cudaEventRecord(e0);
      const cublasStatus_t s = local_call<T>(routine, h, int(m), int(n), int(k), a, b, c);
      cudaEventRecord(e1);
      if (s != CUBLAS_STATUS_SUCCESS || !ok(cudaEventSynchronize(e1))) {
        t.clear();
        break;
      }
      float x = 0;
      cudaEventElapsedTime(&x, e0, e1);
      if (r > 0) t.push_back(x);
    }
    if (!t.empty()) {
      std::sort(t.begin(), t.end());
      ms = t[t.size() / 2];
    }
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (h) {
    xnRelease(h);
    cublasDestroy(h);
  }
  device_free(a);
  device_free(b);
  device_free(c);
  return ms;
}

}  // namespace

int bind_gpu(int local_rank) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return 0;
  }
  cudaSetDevice(local_rank % n);
  return n;
}

bool hold_all_but(double gib) {
  std::size_t free = 0, total = 0;
  if (!ok(cudaMemGetInfo(&free, &total))) return false;
  const double keep = gib * double(std::size_t(1) << 30);
  if (keep >= double(total)) return true;
  const std::size_t hold = total - std::size_t(keep);
  if (hold > free) return false;
  void *p = nullptr;  // freed by the driver when the process ends
  return ok(cudaMalloc(&p, hold));
}

template <class T>
T *device_local(std::int64_t lr, std::int64_t lc, std::int64_t lld, int nb, int P, int Q,
                int myrow, int mycol, std::uint64_t seed, int which, bool signed_) {
  void *p = nullptr;
  const std::size_t bytes = std::size_t(std::max<std::int64_t>(lld * lc, 1)) * sizeof(T);
  if (!ok(cudaMalloc(&p, bytes))) return nullptr;
  if (lr > 0 && lc > 0) {
    const std::int64_t blocks = std::min<std::int64_t>((lr * lc + 255) / 256, 1 << 20);
    fill_kernel<T><<<unsigned(blocks), 256>>>(static_cast<T *>(p), lr, lc, lld, nb, P, Q,
                                              myrow, mycol, seed, which, signed_);
  }
  if (!ok(cudaDeviceSynchronize())) {
    cudaFree(p);
    return nullptr;
  }
  return static_cast<T *>(p);
}

void device_free(void *p) {
  if (p) cudaFree(p);
}

template <class T>
T device_read(const T *p, std::int64_t index) {
  T v = T(0);
  ok(cudaMemcpy(&v, p + index, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

double time_local_engine(Routine routine, bool classical, std::int64_t m, std::int64_t n,
                         std::int64_t k, int reps, std::uint64_t seed) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  return routine == Routine::psngemm
             ? time_local<float>(routine, classical, m, n, k, reps, seed)
             : time_local<double>(routine, classical, m, n, k, reps, seed);
}

template float *device_local<float>(std::int64_t, std::int64_t, std::int64_t, int, int,
                                    int, int, int, std::uint64_t, int, bool);
template double *device_local<double>(std::int64_t, std::int64_t, std::int64_t, int, int,
                                      int, int, int, std::uint64_t, int, bool);
template float device_read<float>(const float *, std::int64_t);
template double device_read<double>(const double *, std::int64_t);

}  // namespace xnb
