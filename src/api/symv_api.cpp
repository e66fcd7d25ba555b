// symv_api.cpp - xnSsymv/xnDsymv (cublas?symv's parameters) and their
// workspace calls. The kernels are in kernels/symv_kernels.cu.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "api/device_gemm.h"
#include "backend/cuda/handle_state.h"
#include "core/args.h"
#include "kernels/symv_launch.h"
#include "xngemm.h"

namespace xn {

namespace {

template <class T>
cublasStatus_t device_symv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                           const T *alpha, const T *A, int lda, const T *x, int incx,
                           const T *beta, T *y, int incy) {
  cublasStatus_t cs = check_symv_device_args(handle, uplo, n, lda, incx, incy);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  if (n == 0) return CUBLAS_STATUS_SUCCESS;

  cudaStream_t stream = nullptr;
  bool dev_scalars = false;
  if ((cs = handle_stream_and_mode(handle, &stream, &dev_scalars)) !=
      CUBLAS_STATUS_SUCCESS)
    return cs;
  // BLAS quick return: alpha = 0 and beta = 1 leave y as it is.
  if (!dev_scalars && *alpha == T(0) && *beta == T(1)) return CUBLAS_STATUS_SUCCESS;
  const bool alpha_is_zero = !dev_scalars && *alpha == T(0);

  HandleState *hs = handle_state(handle);
  if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
  std::lock_guard<std::mutex> lock(hs->mu);
  Status s = ensure_device_resources(*hs, stream);
  if (s == Status::Ok) s = order_after_last_call(*hs, stream);
  if (s != Status::Ok) return to_cublas(s);

  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
  const SymvVariant &v =
      symv_variant(int(hs->opt.symv_variant), sizeof(T) == 8, n, lower);
  const std::size_t bytes = symv_workspace_elems(v, n, lower) * sizeof(T);
  void *ws = nullptr;
  if (!alpha_is_zero) {
    if (hs->symv_user) {
      ws = hs->symv_user_bytes >= bytes ? hs->symv_user : nullptr;
    } else {
      ws = acquire_buffer(hs->symv_ws, bytes, stream);
    }
    // Nothing has been enqueued that touches y: it is untouched.
    if (!ws) {
      mark_call_done(*hs, stream);
      return CUBLAS_STATUS_ALLOC_FAILED;
    }
  }
  const ScalarArg<T> a{dev_scalars ? T(0) : *alpha, dev_scalars ? alpha : nullptr};
  const ScalarArg<T> b{dev_scalars ? T(0) : *beta, dev_scalars ? beta : nullptr};
  const cudaError_t e = launch_symv<T>(stream, v, lower, n, a, A, lda, x, incx, b, y,
                                       incy, static_cast<T *>(ws), alpha_is_zero);
  s = e == cudaSuccess ? Status::Ok : Status::ExecutionFailed;
  const Status done = mark_call_done(*hs, stream);
  return to_cublas(s != Status::Ok ? s : done);
}

}  // namespace

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnSsymv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                       const float *alpha, const float *A, int lda, const float *x,
                       int incx, const float *beta, float *y, int incy) {
  return device_symv<float>(handle, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t xnDsymv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                       const double *alpha, const double *A, int lda, const double *x,
                       int incx, const double *beta, double *y, int incy) {
  return device_symv<double>(handle, uplo, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t xnGetSymvWorkspaceSize(cublasHandle_t handle, char precision,
                                      cublasFillMode_t uplo, int n, size_t *bytes) {
  if (!bytes) return CUBLAS_STATUS_INVALID_VALUE;
  const bool is_double = precision == 'd' || precision == 'D';
  if (!is_double && precision != 's' && precision != 'S')
    return CUBLAS_STATUS_INVALID_VALUE;
  if ((uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) || n < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  std::int64_t variant = 0;
  if (handle) {
    HandleState *hs = handle_state(handle);
    if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
    std::lock_guard<std::mutex> lock(hs->mu);
    variant = hs->opt.symv_variant;
  } else {
    variant = default_options().symv_variant;
  }
  const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
  const SymvVariant &v = symv_variant(int(variant), is_double, n, lower);
  *bytes =
      symv_workspace_elems(v, n, lower) * (is_double ? sizeof(double) : sizeof(float));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnSetSymvWorkspace(cublasHandle_t handle, void *ptr, size_t bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if ((ptr == nullptr) != (bytes == 0)) return CUBLAS_STATUS_INVALID_VALUE;
  if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0) return CUBLAS_STATUS_INVALID_VALUE;
  HandleState *hs = handle_state(handle);
  if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
  std::lock_guard<std::mutex> lock(hs->mu);
  hs->symv_user = ptr;
  hs->symv_user_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
