// exdgemm_api.cpp - xnExdgemm (cublasDgemm's parameters): the argument
// checks, the call guard and the exdgemm driver (core/exdgemm.h) over the
// CUDA backend; and its report. The host entry points exdgemm_ and
// cblas_exdgemm live in host_api.cpp with the other BLAS-style routines.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "backend/cuda/cuda_exdgemm.h"
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
  return gemm_entry(
      handle, transa, transb, m, n, k, lda, ldb, ldc, [&](CallGuard &guard) {
        HandleState &st = guard.state();
        st.ex_info = ExdgemmReport{};
        st.has_ex_info = true;
        const Status entered = guard.enter();
        if (entered != Status::Ok) return to_cublas(entered);
        const bool dev = guard.device_scalars();
        CudaExBackend be(handle, guard.stream(), st, dev, alpha, beta);
        const Status s = exdgemm_driver(
            be, MatView<const double>{A, m, k, lda, is_trans(op_of(transa))},
            MatView<const double>{B, k, n, ldb, is_trans(op_of(transb))},
            MatView<double>{C, m, n, ldc, false}, !dev && *alpha == 0.0, st.opt,
            &st.ex_info);
        // The wide-path count lives on the device; xnGetLastExdgemmInfo reads it.
        if (be.wide_counter()) st.ex_info.wide_entries = -1;
        const Status done = guard.finish(s);
        // A captured call's count is written only by replays: not reported.
        st.ex_wide_dev = guard.capturing() ? nullptr : be.wide_counter();
        // The spans a direct call's data had: a later capture's plan takes
        // its moduli from them (CudaExBackend::capture_span_hint).
        if (!guard.capturing() && s == Status::Ok && st.ex_info.span_bits > 0)
          st.ex_last_direct_span_bits = st.ex_info.span_bits;
        return to_cublas(done);
      });
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

cublasStatus_t xnGetExdgemmWorkspaceSize(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         size_t *bytes) {
  if (!bytes) return CUBLAS_STATUS_INVALID_VALUE;
  cublasStatus_t cs = check_gemm_query_args(transa, transb, m, n, k);
  Options o;
  if (cs == CUBLAS_STATUS_SUCCESS) cs = options_of(handle, &o);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  *bytes = exdgemm_workspace_bytes(m, n, k, o);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetLastExdgemmInfo(cublasHandle_t handle, xnExdgemmInfo_t *info) {
  if (!info) return CUBLAS_STATUS_INVALID_VALUE;
  if (!handle) {
    *info = t_has_host_info ? t_host_info : xnExdgemmInfo_t{};
    if (!t_has_host_info) info->wide_entries = -1;
    return CUBLAS_STATUS_SUCCESS;
  }
  *info = xnExdgemmInfo_t{};
  info->wide_entries = -1;
  const StateLock lock(handle, false);
  HandleState *hs = lock.state();
  if (!hs || !hs->has_ex_info) return CUBLAS_STATUS_SUCCESS;
  *info = to_public(hs->ex_info);
  // The wide-path count lives on the device: wait for the handle's last call
  // (our own event) and read it. Only this query waits.
  if (hs->ex_wide_dev && hs->has_last) {
    const RelaxedCaptureMode relaxed;
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
