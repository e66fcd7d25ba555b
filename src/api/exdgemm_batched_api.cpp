// exdgemm_batched_api.cpp - xnExdgemmStridedBatched and xnExdgemmBatched
// (cublasDgemmStridedBatched's and cublasDgemmBatched's parameters): every
// product is an xnExdgemm on the same handle, stream and pointer mode
// (docs/design.md, "Batched exdgemm"). Each product is correctly rounded on
// its own, so the order of the products never shows in the bits.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <new>
#include <vector>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/handle_state.h"
#include "xngemm.h"

namespace xn {

namespace {

// The batch's products in order, A_b, B_b, C_b from `operands(b, ...)`;
// stops at the first that fails: the first product's status when nothing
// was written (a caller may then run the batch elsewhere), else
// CUBLAS_STATUS_EXECUTION_FAILED (the earlier products are written).
template <class Operands>
cublasStatus_t each_product(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const double *alpha, int lda, int ldb, const double *beta,
                            int ldc, int batch, Operands &&operands) {
  for (int b = 0; b < batch; ++b) {
    const double *A = nullptr, *B = nullptr;
    double *C = nullptr;
    operands(b, &A, &B, &C);
    const cublasStatus_t s =
        device_exdgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (s != CUBLAS_STATUS_SUCCESS) return b == 0 ? s : CUBLAS_STATUS_EXECUTION_FAILED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// cublasDgemm*Batched's checks: the GEMM's, then batchCount >= 0.
cublasStatus_t check_batched(cublasHandle_t handle, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, int lda, int ldb,
                             int ldc, int batch) {
  const cublasStatus_t cs = check_gemm_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  return batch < 0 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

}  // namespace

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnExdgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, int m, int n, int k,
                                       const double *alpha, const double *A, int lda,
                                       long long int strideA, const double *B, int ldb,
                                       long long int strideB, const double *beta, double *C,
                                       int ldc, long long int strideC, int batchCount) {
  const cublasStatus_t cs =
      check_batched(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
  if (cs != CUBLAS_STATUS_SUCCESS || m == 0 || n == 0 || batchCount == 0) return cs;
  return each_product(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount,
                      [&](int b, const double **Ab, const double **Bb, double **Cb) {
                        *Ab = A + std::int64_t(b) * strideA;
                        *Bb = B + std::int64_t(b) * strideB;
                        *Cb = C + std::int64_t(b) * strideC;
                      });
}

cublasStatus_t xnExdgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                cublasOperation_t transb, int m, int n, int k,
                                const double *alpha, const double *const Aarray[], int lda,
                                const double *const Barray[], int ldb, const double *beta,
                                double *const Carray[], int ldc, int batchCount) {
  const cublasStatus_t cs =
      check_batched(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
  if (cs != CUBLAS_STATUS_SUCCESS || m == 0 || n == 0 || batchCount == 0) return cs;
  if (!Aarray || !Barray || !Carray) return CUBLAS_STATUS_INVALID_VALUE;
  // The pointer arrays live in device memory (as cublasDgemmBatched's):
  // the host needs them to launch each product, which a stream capture
  // cannot wait for.
  // Its copy and wait must not disturb another thread's capture.
  const RelaxedCaptureMode relaxed;
  cudaStream_t stream = nullptr;
  const cublasStatus_t free_stream = uncaptured_stream(handle, &stream);
  if (free_stream != CUBLAS_STATUS_SUCCESS) return free_stream;
  const std::size_t count = std::size_t(batchCount);
  std::vector<const double *> a, b;
  std::vector<double *> c;
  try {
    a.resize(count), b.resize(count), c.resize(count);
  } catch (const std::bad_alloc &) {
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  const std::size_t bytes = count * sizeof(void *);
  if (cudaMemcpyAsync(a.data(), Aarray, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaMemcpyAsync(b.data(), Barray, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaMemcpyAsync(c.data(), Carray, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    cudaGetLastError();
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  return each_product(handle, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, batchCount,
                      [&](int i, const double **Ab, const double **Bb, double **Cb) {
                        *Ab = a[std::size_t(i)];
                        *Bb = b[std::size_t(i)];
                        *Cb = c[std::size_t(i)];
                      });
}

}  // extern "C"
