// handle_api.cpp - the calls of include/xngemm.h that read or change what
// xNGEMM keeps per handle: options, workspace, counters, release.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "backend/cuda/device_model_cuda.h"
#include "backend/cuda/handle_state.h"
#include "core/call_depth.h"
#include "core/environment.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "xngemm.h"

using namespace xn;

extern "C" {

cublasStatus_t xnSetOption(cublasHandle_t handle, xnOption_t option, int64_t value) {
  if (!handle)
    return update_default_option(option, value) ? CUBLAS_STATUS_SUCCESS
                                                : CUBLAS_STATUS_INVALID_VALUE;
  const StateLock lock(handle, true);
  if (!lock.state()) return CUBLAS_STATUS_ALLOC_FAILED;
  return apply_option(lock.state()->opt, option, value) ? CUBLAS_STATUS_SUCCESS
                                                        : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t xnGetOption(cublasHandle_t handle, xnOption_t option, int64_t *value) {
  Options o;
  const cublasStatus_t cs = options_of(handle, &o);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  return read_option(o, option, value) ? CUBLAS_STATUS_SUCCESS
                                       : CUBLAS_STATUS_INVALID_VALUE;
}

namespace {

// The bytes a recursive GEMM of `algo` plans for (gemm_driver.h).
cublasStatus_t recursive_gemm_workspace(cublasHandle_t handle, const GemmAlgorithm &algo,
                                        char precision, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        bool beta_nonzero, size_t *bytes) {
  if (!bytes || (precision != 's' && precision != 'd'))
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasStatus_t cs = check_gemm_query_args(transa, transb, m, n, k);
  Options o;
  if (cs == CUBLAS_STATUS_SUCCESS) cs = options_of(handle, &o);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  const bool is_double = precision == 'd';
  const std::shared_ptr<const DepthModel> model =
      device_depth_model(o.device_calibration != 0);
  *bytes = std::size_t(planned_workspace_elems(algo, o, model.get(), is_double, beta_nonzero,
                                               m, n, k,
                                               is_trans(op_of(transa)),
                                               is_trans(op_of(transb)))) *
           (is_double ? sizeof(double) : sizeof(float));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t xnGetWorkspaceSize(cublasHandle_t handle, char precision,
                                  cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, size_t *bytes) {
  // The call's beta is not asked: the depth the model plans can depend on it
  // (beta != 0 adds a read of C), so the size covers both.
  if (!bytes) return CUBLAS_STATUS_INVALID_VALUE;
  size_t with_beta = 0, without = 0;
  cublasStatus_t s = recursive_gemm_workspace(handle, nonneg_winograd_algorithm(), precision,
                                              transa, transb, m, n, k, true, &with_beta);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = recursive_gemm_workspace(handle, nonneg_winograd_algorithm(), precision, transa,
                                 transb, m, n, k, false, &without);
  if (s == CUBLAS_STATUS_SUCCESS) *bytes = std::max(with_beta, without);
  return s;
}

cublasStatus_t xnGetFastGemmWorkspaceSize(cublasHandle_t handle, xnFastGemm_t algorithm,
                                          char precision, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          int beta_is_zero, size_t *bytes) {
  if (algorithm != XN_FAST_GEMM_STRASSEN && algorithm != XN_FAST_GEMM_WINOGRAD)
    return CUBLAS_STATUS_INVALID_VALUE;
  return recursive_gemm_workspace(
      handle,
      algorithm == XN_FAST_GEMM_STRASSEN ? strassen_algorithm() : winograd_algorithm(),
      precision, transa, transb, m, n, k, beta_is_zero == 0, bytes);
}

cublasStatus_t xnSetWorkspace(cublasHandle_t handle, void *ptr, size_t bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if ((ptr == nullptr) != (bytes == 0) ||
      (reinterpret_cast<std::uintptr_t>(ptr) & 255) != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const StateLock lock(handle, true);
  if (!lock.state()) return CUBLAS_STATUS_ALLOC_FAILED;
  set_user_workspace(*lock.state(), ptr, bytes);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetWorkspaceHeld(cublasHandle_t handle, size_t *bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!bytes) return CUBLAS_STATUS_INVALID_VALUE;
  const StateLock lock(handle, false);
  *bytes = lock.state() ? lock.state()->ws_bytes : 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetNonNegFallbackCount(cublasHandle_t handle, uint64_t *count) {
  if (!count) return CUBLAS_STATUS_INVALID_VALUE;
  if (!handle) {
    *count = host_nonneg_fallbacks();
    return CUBLAS_STATUS_SUCCESS;
  }
  const StateLock lock(handle, false);
  *count = lock.state() ? lock.state()->nonneg_fallbacks : 0;
  return CUBLAS_STATUS_SUCCESS;
}

// The levels of xnGetLastGemmInfo (defined below), kept for earlier callers.
cublasStatus_t xnGetLastLevels(cublasHandle_t handle, int *levels) {
  if (!levels) return CUBLAS_STATUS_INVALID_VALUE;
  xnGemmInfo_t info;
  const cublasStatus_t st = xnGetLastGemmInfo(handle, &info);
  if (st == CUBLAS_STATUS_SUCCESS) *levels = info.levels;
  return st;
}

}  // extern "C"

namespace xn {

cublasStatus_t uncaptured_stream(cublasHandle_t handle, cudaStream_t *stream) {
  if (cublasGetStream(handle, stream) != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(*stream, &capture) != cudaSuccess) {
    cudaGetLastError();
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  return capture == cudaStreamCaptureStatusNone ? CUBLAS_STATUS_SUCCESS
                                                : CUBLAS_STATUS_NOT_SUPPORTED;
}

xnGemmInfo_t gemm_info_of(const GemmReport &report, const DepthModel *model, int levels) {
  xnGemmInfo_t info{};
  info.levels = levels < -1 ? report.levels : levels;
  info.planned_levels = report.planned;
  info.source = xnParameterSource_t(int(report.source));
  info.predicted_speedup = report.predicted_speedup;
  if (model && report.source != ModelSource::Options)
    std::snprintf(info.model, sizeof info.model, "%s", model->description.c_str());
  return info;
}

}  // namespace xn

extern "C" {

cublasStatus_t xnGetLastGemmInfo(cublasHandle_t handle, xnGemmInfo_t *info) {
  if (!info) return CUBLAS_STATUS_INVALID_VALUE;
  if (!handle) {
    *info = host_last_gemm_info();
    return CUBLAS_STATUS_SUCCESS;
  }
  const StateLock lock(handle, false);
  const HandleState *st = lock.state();
  *info = st && st->has_last_report
              ? gemm_info_of(st->last_report, st->last_model.get())
              : gemm_info_of(GemmReport{}, nullptr, -1);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnCalibrate(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  // The measured GEMMs are cuBLAS's own, never rerouted by the interposer;
  // its allocations and waits must not disturb another thread's capture,
  // and it cannot run inside one (it allocates and waits for its results).
  const CallDepthGuard inside;
  const RelaxedCaptureMode relaxed;
  cudaStream_t stream = nullptr;
  const cublasStatus_t free_stream = uncaptured_stream(handle, &stream);
  if (free_stream != CUBLAS_STATUS_SUCCESS) return free_stream;
  // No other xNGEMM call on the handle meanwhile (the calibration changes
  // the handle's pointer and math modes for its duration).
  const StateLock lock(handle, true);
  if (!lock.state()) return CUBLAS_STATUS_ALLOC_FAILED;
  DepthModel model;
  std::string path, problem;
  const Status s = calibrate_current_device(handle, &model, &path, &problem);
  if (s == Status::Ok && !problem.empty())
    diagnostic("the calibration is used in this process but not saved: %s", problem.c_str());
  return to_cublas(s);
}

cublasStatus_t xnRelease(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  release_handle_state(handle);
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
