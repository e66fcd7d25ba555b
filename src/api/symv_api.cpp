// symv_api.cpp - xnSsymv/xnDsymv (cublas?symv's parameters): the argument
// checks, the call guard and the kernels (kernels/symv_kernels.cu); and the
// SYMV workspace calls.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "core/options.h"
#include "core/symv_variants.h"
#include "kernels/symv_launch.h"
#include "xngemm.h"

namespace xn {

namespace {

template <class T>
cublasStatus_t device_symv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                           const T *alpha, const T *A, int lda, const T *x, int incx,
                           const T *beta, T *y, int incy) {
  const cublasStatus_t cs = check_symv_device_args(handle, uplo, n, lda, incx, incy);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  if (n == 0) return CUBLAS_STATUS_SUCCESS;
  CallGuard guard(handle);
  if (guard.status() != CUBLAS_STATUS_SUCCESS) return guard.status();
  const bool dev = guard.device_scalars();
  // BLAS quick return: alpha = 0 and beta = 1 leave y as it is.
  if (!dev && *alpha == T(0) && *beta == T(1)) return CUBLAS_STATUS_SUCCESS;
  const bool alpha_is_zero = !dev && *alpha == T(0);
  const Status entered = guard.enter();
  if (entered != Status::Ok) return to_cublas(entered);

  HandleState &st = guard.state();
  const Fill fill = fill_of(uplo);
  const SymvVariant &v = symv_variant(int(st.opt.symv_variant), sizeof(T) == 8, n, fill);
  const std::size_t bytes = symv_workspace_elems(v, n, fill) * sizeof(T);
  void *ws = nullptr;
  if (!alpha_is_zero) {
    ws = acquire_workspace(st, bytes, guard.stream());
    // Nothing has been enqueued that touches y: it is untouched. A captured
    // call finds only the workspace the handle has (it never allocates).
    if (!ws)
      return to_cublas(
          guard.finish(guard.capturing() ? Status::NotSupported : Status::AllocFailed));
  }
  const ScalarArg<T> a{dev ? T(0) : *alpha, dev ? alpha : nullptr};
  const ScalarArg<T> b{dev ? T(0) : *beta, dev ? beta : nullptr};
  const cudaError_t e =
      launch_symv<T>(guard.stream(), v, fill == Fill::Lower, n, a, A, lda, x, incx, b, y,
                     incy, static_cast<T *>(ws), alpha_is_zero);
  return to_cublas(guard.finish(e == cudaSuccess ? Status::Ok : Status::ExecutionFailed));
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
  Options o;
  const cublasStatus_t cs = options_of(handle, &o);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  const SymvVariant &v = symv_variant(int(o.symv_variant), is_double, n, fill_of(uplo));
  *bytes = symv_workspace_elems(v, n, fill_of(uplo)) *
           (is_double ? sizeof(double) : sizeof(float));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnSetSymvWorkspace(cublasHandle_t handle, void *ptr, size_t bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if ((ptr == nullptr) != (bytes == 0)) return CUBLAS_STATUS_INVALID_VALUE;
  if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0) return CUBLAS_STATUS_INVALID_VALUE;
  const StateLock lock(handle, true);
  if (!lock.state()) return CUBLAS_STATUS_ALLOC_FAILED;
  set_user_workspace(*lock.state(), ptr, bytes);
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
