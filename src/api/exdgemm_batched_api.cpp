// exdgemm_batched_api.cpp - xnExdgemmStridedBatched and xnExdgemmBatched
// (cublasDgemmStridedBatched's and cublasDgemmBatched's parameters): the
// batched engine (core/exdgemm_batched.h) where it takes the call, else
// one xnExdgemm per product on the same handle, stream and pointer mode
// (docs/design.md, "Batched exdgemm"). Each product is correctly rounded on
// its own, so neither the engine nor the order of the products shows in
// the bits.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <new>
#include <vector>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "backend/cuda/cuda_exdgemm.h"
#include "backend/cuda/handle_state.h"
#include "core/exdgemm_batched.h"
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

// The batched engine on the whole call (arguments checked, m, n, count >
// 0). *ran false: it declined with C untouched (the caller runs the
// products one by one); else the call's status.
cublasStatus_t batched_engine(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double *alpha, const double *beta, ExBatchOperands x,
                              bool *ran) {
  *ran = false;
  CallGuard guard(handle);
  if (guard.status() != CUBLAS_STATUS_SUCCESS) return CUBLAS_STATUS_SUCCESS;
  const bool dev = guard.device_scalars();
  // k = 0 or alpha = 0 on the host: C = beta C per product, nothing to scan.
  if (k == 0 || (!dev && *alpha == 0.0) || guard.capturing()) return CUBLAS_STATUS_SUCCESS;
  HandleState &st = guard.state();
  if (guard.enter() != Status::Ok) return CUBLAS_STATUS_SUCCESS;
  CudaExBackend be(handle, guard.stream(), st, dev, alpha, beta);
  x.A = MatView<const double>{x.A.p, m, k, x.A.ld, is_trans(op_of(transa))};
  x.B = MatView<const double>{x.B.p, k, n, x.B.ld, is_trans(op_of(transb))};
  ExdgemmReport report;
  const Status s = exdgemm_batched_run(be, x, exdgemm_limits(be, st.opt), &report, ran);
  const Status done = guard.finish(*ran ? s : Status::Ok);
  if (!*ran) return CUBLAS_STATUS_SUCCESS;
  st.ex_info = report;
  st.has_ex_info = true;
  if (be.wide_counter()) st.ex_info.wide_entries = -1;
  st.ex_wide_dev = be.wide_counter();
  if (s == Status::Ok && report.span_bits > 0) st.ex_last_direct_span_bits = report.span_bits;
  return to_cublas(done);
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
  if (C == nullptr) return CUBLAS_STATUS_INVALID_VALUE;  // (as cuBLAS 13.1, H200)
  // Every product writing the same C (strideC = 0) runs one after another,
  // as the per-product path does: the engine's products would race.
  if (strideC != 0 || batchCount == 1) {
    bool ran = false;
    const cublasStatus_t es = batched_engine(
        handle, transa, transb, m, n, k, alpha, beta,
        ExBatchOperands{MatView<const double>{A, 0, 0, lda, false},
                        MatView<const double>{B, 0, 0, ldb, false},
                        MatView<double>{C, m, n, ldc, false}, BatchStep{nullptr, strideA},
                        BatchStep{nullptr, strideB}, BatchStep{nullptr, strideC}, batchCount},
        &ran);
    if (ran) return es;
  }
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
  // The engine reads the pointer arrays on the device: no host copy.
  bool ran = false;
  const auto pointers = [](const void *array) {
    return BatchStep{static_cast<const void *const *>(array), 0};
  };
  const cublasStatus_t es = batched_engine(
      handle, transa, transb, m, n, k, alpha, beta,
      ExBatchOperands{MatView<const double>{nullptr, 0, 0, lda, false},
                      MatView<const double>{nullptr, 0, 0, ldb, false},
                      MatView<double>{nullptr, m, n, ldc, false}, pointers(Aarray),
                      pointers(Barray), pointers(Carray), batchCount},
      &ran);
  if (ran) return es;
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
