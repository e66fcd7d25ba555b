// exdgemm_api.cpp - xnExdgemm (cublasDgemm's parameters) and its report; the
// host entry points exdgemm_/cblas_exdgemm live in host_api.cpp with the
// other BLAS-style routines.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>

#include "api/device_gemm.h"
#include "backend/cuda/cuda_exdgemm.h"
#include "backend/cuda/handle_state.h"
#include "core/args.h"
#include "core/exdgemm.h"
#include "xngemm.h"

namespace xn {

namespace {
thread_local xnExdgemmInfo_t t_host_info{};
thread_local bool t_has_host_info = false;
}  // namespace

void set_host_exdgemm_info(const xnExdgemmInfo_t &info) {
  t_host_info = info;
  t_has_host_info = true;
}

cublasStatus_t device_exdgemm(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double *alpha, const double *A, int lda,
                              const double *B, int ldb, const double *beta, double *C,
                              int ldc) {
  cublasStatus_t cs =
      check_gemm_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;

  cudaStream_t stream = nullptr;
  bool dev_scalars = false;
  if ((cs = handle_stream_and_mode(handle, &stream, &dev_scalars)) !=
      CUBLAS_STATUS_SUCCESS)
    return cs;

  HandleState *hs = handle_state(handle);
  if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
  std::lock_guard<std::mutex> lock(hs->mu);
  hs->ex_info = xnExdgemmInfo_t{};
  hs->has_ex_info = true;

  Status s = ensure_device_resources(*hs, stream);
  if (s == Status::Ok) s = order_after_last_call(*hs, stream);
  if (s != Status::Ok) return to_cublas(s);

  const MatView<double> Cv{C, m, n, ldc, false};
  CudaExBackend be(handle, stream, *hs, dev_scalars, alpha, beta);
  if (k == 0 || (!dev_scalars && *alpha == 0.0)) {
    // BLAS quick return: C = beta C, A and B not read (RN(beta c) = fl(beta c)).
    const cudaError_t e = launch_scale<double>(
        stream, m, n, C, ldc,
        ScalarArg<double>{dev_scalars ? 0.0 : *beta, dev_scalars ? beta : nullptr});
    s = e == cudaSuccess ? Status::Ok : Status::ExecutionFailed;
  } else {
    ExdgemmLimits lim;
    lim.force_block = hs->opt.exdgemm_block;
    if (hs->opt.exdgemm_workspace_limit > 0) {
      lim.workspace_bytes = std::size_t(hs->opt.exdgemm_workspace_limit);
    } else {
      // A quarter of what is free now, counting what we already hold.
      std::size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        free_b = std::size_t(1) << 30;
      }
      lim.workspace_bytes = (free_b + hs->ex_head.bytes + hs->ex_body.bytes) / 4;
    }
    const MatView<const double> Av{A, m, k, lda, transa != CUBLAS_OP_N};
    const MatView<const double> Bv{B, k, n, ldb, transb != CUBLAS_OP_N};
    s = exdgemm_run(be, Av, Bv, Cv, lim, &hs->ex_info);
    hs->ex_info.wide_entries = -1;  // counted on the device; read on query
  }
  const Status done = mark_call_done(*hs, stream);
  hs->ex_wide_dev = be.wide_counter();
  return to_cublas(s != Status::Ok ? s : done);
}

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnExdgemm(cublasHandle_t handle, cublasOperation_t transa,
                         cublasOperation_t transb, int m, int n, int k,
                         const double *alpha, const double *A, int lda, const double *B,
                         int ldb, const double *beta, double *C, int ldc) {
  return device_exdgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                        ldc);
}

cublasStatus_t xnGetLastExdgemmInfo(cublasHandle_t handle, xnExdgemmInfo_t *info) {
  if (!info) return CUBLAS_STATUS_INVALID_VALUE;
  if (!handle) {
    *info = t_has_host_info ? t_host_info : xnExdgemmInfo_t{};
    if (!t_has_host_info) info->wide_entries = -1;
    return CUBLAS_STATUS_SUCCESS;
  }
  HandleState *hs = find_handle_state(handle);
  *info = xnExdgemmInfo_t{};
  info->wide_entries = -1;
  if (!hs) return CUBLAS_STATUS_SUCCESS;
  std::lock_guard<std::mutex> lock(hs->mu);
  if (!hs->has_ex_info) return CUBLAS_STATUS_SUCCESS;
  *info = hs->ex_info;
  // The wide-path count lives on the device: wait for the handle's last call
  // (our own event) and read it. Only this query waits.
  if (hs->ex_wide_dev && hs->has_last) {
    unsigned long long wide = 0;
    if (cudaEventSynchronize(hs->last_done) == cudaSuccess &&
        cudaMemcpy(&wide, hs->ex_wide_dev, sizeof wide, cudaMemcpyDeviceToHost) ==
            cudaSuccess)
      info->wide_entries = std::int64_t(wide);
    else
      cudaGetLastError();
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
