// exblas_api.cpp - the correctly rounded BLAS beyond GEMM on the device:
// xnExdgemv (cublasDgemv's parameters) and xnExddot (cublasDdot's). Both are
// dot products computed in one pass over their operands and rounded once
// (numerics/exact_dot.h, kernels/exblas_launch.h; docs/design.md, "exdgemv
// and exddot"): every value is the exact one under xnExdgemm's IEEE
// contract, the bits the CPU (host_exblas.cpp) gives.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "api/args.h"
#include "api/internal.h"
#include "backend/cuda/call_guard.h"
#include "backend/cuda/handle_state.h"
#include "kernels/exblas_launch.h"
#include "kernels/launch.h"
#include "xngemm.h"

namespace xn {

namespace {

// The dot products of `p` rounded into y (`outputs` values, stride y_out),
// inside an entered call guard; `extra` bytes of workspace after the parts
// are returned in *extra_ptr (the host-mode dot's result).
Status run_dots(CallGuard &guard, const DotProblem &p, ScalarArg<double> alpha,
                ScalarArg<double> beta, double *y, std::int64_t y_out, std::size_t extra,
                double **extra_ptr) {
  HandleState &st = guard.state();
  const DotPlan plan = plan_dot(p, st.sm_count);
  const std::size_t parts_bytes = dot_parts_bytes(p, plan);
  void *ws = acquire_workspace(st, parts_bytes + extra, guard.stream());
  // Nothing touching y has been enqueued: it is untouched. A captured call
  // finds only the workspace the handle has (it never allocates).
  if (!ws) return guard.capturing() ? Status::NotSupported : Status::AllocFailed;
  auto *parts = static_cast<exact::Dot2 *>(ws);
  if (extra_ptr) {
    *extra_ptr = reinterpret_cast<double *>(static_cast<char *>(ws) + parts_bytes);
    if (!y) y = *extra_ptr;
  }
  if (launch_dot2_parts(guard.stream(), p, plan, parts) != cudaSuccess ||
      launch_dot2_finish(guard.stream(), p, plan, parts, alpha, beta, y, y_out) !=
          cudaSuccess)
    return Status::ExecutionFailed;
  return Status::Ok;
}

}  // namespace

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnExdgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                         const double *alpha, const double *A, int lda, const double *x,
                         int incx, const double *beta, double *y, int incy) {
  const cublasStatus_t cs = check_gemv_device_args(handle, trans, m, n, lda, incx, incy);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (y == nullptr) return CUBLAS_STATUS_INVALID_VALUE;  // (as cuBLAS 13.1, H200)
  CallGuard guard(handle);
  if (guard.status() != CUBLAS_STATUS_SUCCESS) return guard.status();
  const bool dev = guard.device_scalars();
  // BLAS quick return: alpha = 0 and beta = 1 leave y as it is.
  if (!dev && *alpha == 0.0 && *beta == 1.0) return CUBLAS_STATUS_SUCCESS;
  const Status entered = guard.enter();
  if (entered != Status::Ok) return to_cublas(entered);
  const bool t = trans != CUBLAS_OP_N;
  const std::int64_t len_x = t ? m : n, len_y = t ? n : m;
  double *y0 = blas_vector_start(y, len_y, incy);
  const ScalarArg<double> a{dev ? 0.0 : *alpha, dev ? alpha : nullptr};
  const ScalarArg<double> b{dev ? 0.0 : *beta, dev ? beta : nullptr};
  if (!dev && *alpha == 0.0) {
    // y = RN(beta y), A and x unread (beta = 0: zeros, y unread); the
    // elements' order does not matter, so y is walked from its lowest
    // address whatever the increment's sign.
    const cudaError_t e = launch_scale<double>(guard.stream(), 1, len_y, y,
                                               incy > 0 ? incy : -std::int64_t(incy), b);
    return to_cublas(
        guard.finish(e == cudaSuccess ? Status::Ok : Status::ExecutionFailed));
  }
  // Output o is row o of A (N: stride 1 between outputs, lda between terms)
  // or column o (T: lda between outputs, 1 between terms).
  const DotProblem p{len_y,
                     len_x,
                     A,
                     t ? std::int64_t(lda) : 1,
                     t ? 1 : std::int64_t(lda),
                     blas_vector_start(x, len_x, incx),
                     incx};
  const Status s = run_dots(guard, p, a, b, y0, incy, 0, nullptr);
  return to_cublas(guard.finish(s));
}

cublasStatus_t xnExddot(cublasHandle_t handle, int n, const double *x, int incx,
                        const double *y, int incy, double *result) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  // No result to write: MAPPING_ERROR, cuBLAS 13.1's status for a host
  // result (H200), in either pointer mode (for a device one cuBLAS returns
  // SUCCESS; this refuses without reading the handle).
  if (result == nullptr) return CUBLAS_STATUS_MAPPING_ERROR;
  CallGuard guard(handle);
  if (guard.status() != CUBLAS_STATUS_SUCCESS) return guard.status();
  const bool on_device = guard.device_scalars();
  // A host result needs a wait on the stream, which a capture cannot hold:
  // refused before anything is enqueued (the capture stays valid).
  if (!on_device && guard.capturing()) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (n <= 0) {
    if (!on_device) {
      *result = 0.0;
      return CUBLAS_STATUS_SUCCESS;
    }
    return cudaMemsetAsync(result, 0, sizeof(double), guard.stream()) == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
  }
  const Status entered = guard.enter();
  if (entered != Status::Ok) return to_cublas(entered);
  // One output: x read as "A" (its terms with stride incx), y as the vector.
  const DotProblem p{
      1, n, blas_vector_start(x, n, incx), 0, incx, blas_vector_start(y, n, incy), incy};
  const ScalarArg<double> one{1.0, nullptr}, zero{0.0, nullptr};
  double *host_slot = nullptr;
  Status s = run_dots(guard, p, one, zero, on_device ? result : nullptr, 1,
                      on_device ? 0 : sizeof(double), on_device ? nullptr : &host_slot);
  double value = 0.0;
  if (s == Status::Ok && !on_device &&
      (cudaMemcpyAsync(&value, host_slot, sizeof value, cudaMemcpyDeviceToHost,
                       guard.stream()) != cudaSuccess ||
       cudaStreamSynchronize(guard.stream()) != cudaSuccess)) {
    cudaGetLastError();
    s = Status::ExecutionFailed;
  }
  const cublasStatus_t out = to_cublas(guard.finish(s));
  // Host pointer mode: the call returns with the value, as cublasDdot's.
  if (out == CUBLAS_STATUS_SUCCESS && !on_device) *result = value;
  return out;
}

}  // extern "C"
