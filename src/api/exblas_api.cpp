// exblas_api.cpp - the correctly rounded BLAS beyond GEMM on the device:
// xnExdgemv (cublasDgemv's parameters) and xnExddot (cublasDdot's). Both are
// xnExdgemm products on views of their vectors (docs/design.md, "exdgemv and
// exddot"): every value is an entry of the exact product rounded once, under
// xnExdgemm's IEEE contract, so the CPU (host_exblas.cpp) gives the same bits.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "api/args.h"
#include "api/internal.h"
#include "kernels/launch.h"
#include "xngemm.h"

namespace xn {

namespace {

// Device memory for the vectors a GEMM view cannot express, taken from the
// stream-ordered pool and given back in stream order when the call ends
// (rare: negative or zero increments, and a host-mode dot's result).
class StreamScratch {
 public:
  StreamScratch(cudaStream_t s, std::size_t doubles) : s_(s) {
    if (doubles > 0 &&
        cudaMallocAsync(reinterpret_cast<void **>(&p_), doubles * sizeof(double), s) !=
            cudaSuccess) {
      cudaGetLastError();
      p_ = nullptr;
    }
  }
  ~StreamScratch() {
    if (p_) cudaFreeAsync(p_, s_);
  }
  StreamScratch(const StreamScratch &) = delete;
  StreamScratch &operator=(const StreamScratch &) = delete;
  double *get() const { return p_; }

 private:
  cudaStream_t s_;
  double *p_ = nullptr;
};

// A vector as the product reads it: p with a positive increment inc.
struct VectorView {
  const double *p;
  int inc;
};

// The call's pointer mode set to host for the duration of an inner product
// whose scalars are the library's own (exddot's 1 and 0), then restored.
class HostScalars {
 public:
  explicit HostScalars(cublasHandle_t h) : h_(h) {
    ok_ = cublasGetPointerMode(h, &saved_) == CUBLAS_STATUS_SUCCESS &&
          cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST) == CUBLAS_STATUS_SUCCESS;
  }
  ~HostScalars() {
    if (ok_) cublasSetPointerMode(h_, saved_);
  }
  bool ok() const { return ok_; }

 private:
  cublasHandle_t h_;
  cublasPointerMode_t saved_ = CUBLAS_POINTER_MODE_HOST;
  bool ok_ = false;
};

// C (len x 1, or 1 x len with ldc = inc) = alpha op(M) v + beta C for the
// stored matrix M (rows x cols, ld) and a vector v of op(M)'s column count:
// y as a column when its increment is 1, else as the row y^T = v^T op(M)^T
// with leading dimension inc (the GEMM views need no copy for positive
// increments).
cublasStatus_t exact_matrix_vector(cublasHandle_t handle, bool trans, int rows, int cols,
                                   const double *alpha, const double *M, int ld,
                                   VectorView v, const double *beta, double *y,
                                   int incy) {
  const int len_v = trans ? rows : cols, len_y = trans ? cols : rows;
  const cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (incy == 1) {
    // y = alpha op(M) v + beta y; v as a column (inc 1) or as the row it is
    // stored as, transposed.
    return v.inc == 1
               ? device_exdgemm(handle, op, CUBLAS_OP_N, len_y, 1, len_v, alpha, M, ld,
                                v.p, std::max(1, len_v), beta, y, std::max(1, len_y))
               : device_exdgemm(handle, op, CUBLAS_OP_T, len_y, 1, len_v, alpha, M, ld,
                                v.p, v.inc, beta, y, std::max(1, len_y));
  }
  // y^T = alpha v^T op(M)^T + beta y^T: v^T is 1 x len_v with leading
  // dimension v.inc, y^T 1 x len_y with leading dimension incy.
  return device_exdgemm(handle, CUBLAS_OP_N, trans ? CUBLAS_OP_N : CUBLAS_OP_T, 1, len_y,
                        len_v, alpha, v.p, v.inc, M, ld, beta, y, incy);
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
  const bool t = trans != CUBLAS_OP_N;
  const int len_x = t ? m : n, len_y = t ? n : m;
  if (incx > 0 && incy > 0)
    return exact_matrix_vector(handle, t, m, n, alpha, A, lda, VectorView{x, incx}, beta,
                               y, incy);
  // A negative increment: the vector is copied to contiguous memory in its
  // logical order (y back after the product).
  cudaStream_t s = nullptr;
  if (cublasGetStream(handle, &s) != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool stage_x = incx < 0, stage_y = incy < 0;
  const StreamScratch scratch(s, std::size_t(stage_x ? len_x : 0) +
                                     std::size_t(stage_y ? len_y : 0));
  if (!scratch.get()) return CUBLAS_STATUS_ALLOC_FAILED;
  double *xs = stage_x ? scratch.get() : nullptr;
  double *ys = stage_y ? scratch.get() + (stage_x ? len_x : 0) : nullptr;
  // y is copied in whatever beta is (a device beta is not known here); with
  // beta == 0 the product never reads the copy.
  if ((stage_x && launch_copy_vector<double>(s, len_x, x, incx, xs, 1) != cudaSuccess) ||
      (stage_y && launch_copy_vector<double>(s, len_y, y, incy, ys, 1) != cudaSuccess))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  const cublasStatus_t st = exact_matrix_vector(
      handle, t, m, n, alpha, A, lda, stage_x ? VectorView{xs, 1} : VectorView{x, incx},
      beta, stage_y ? ys : y, stage_y ? 1 : incy);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  if (stage_y && launch_copy_vector<double>(s, len_y, ys, 1, y, incy) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnExddot(cublasHandle_t handle, int n, const double *x, int incx,
                        const double *y, int incy, double *result) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  cudaStream_t s = nullptr;
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  if (cublasGetStream(handle, &s) != CUBLAS_STATUS_SUCCESS ||
      cublasGetPointerMode(handle, &mode) != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool on_device = mode == CUBLAS_POINTER_MODE_DEVICE;
  // A host result needs a wait on the stream, which a capture cannot hold:
  // refused before anything is enqueued (the capture stays valid).
  if (!on_device) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &capture) != cudaSuccess) {
      cudaGetLastError();
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (capture != cudaStreamCaptureStatusNone) return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (n <= 0) {
    if (!on_device) {
      *result = 0.0;
      return CUBLAS_STATUS_SUCCESS;
    }
    return cudaMemsetAsync(result, 0, sizeof(double), s) == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
  }
  // Pairs (x_i, y_i) are what matters, not their order: both increments
  // negative read both vectors backwards, the same pairs as their absolute
  // values. One negative (or a zero increment) is copied in logical order.
  if (incx < 0 && incy < 0) {
    incx = -incx;
    incy = -incy;
  }
  const bool stage_x = incx <= 0, stage_y = incy <= 0;
  const std::size_t staged = std::size_t(stage_x ? n : 0) + std::size_t(stage_y ? n : 0);
  const StreamScratch scratch(s, staged + (on_device ? 0 : 1));
  if (!scratch.get() && (staged > 0 || !on_device)) return CUBLAS_STATUS_ALLOC_FAILED;
  const double *xs = x, *ys = y;
  if (stage_x) {
    if (launch_copy_vector<double>(s, n, x, incx, scratch.get(), 1) != cudaSuccess)
      return CUBLAS_STATUS_EXECUTION_FAILED;
    xs = scratch.get();
    incx = 1;
  }
  if (stage_y) {
    double *dst = scratch.get() + (stage_x ? n : 0);
    if (launch_copy_vector<double>(s, n, y, incy, dst, 1) != cudaSuccess)
      return CUBLAS_STATUS_EXECUTION_FAILED;
    ys = dst;
    incy = 1;
  }
  double *out = on_device ? result : scratch.get() + staged;
  // x^T (1 x n, leading dimension incx) times y (n x 1 as a column, or its
  // stored 1 x n row transposed), with the library's own alpha = 1 and
  // beta = 0 on the host.
  cublasStatus_t st;
  {
    const HostScalars host_scalars(handle);
    if (!host_scalars.ok()) return CUBLAS_STATUS_NOT_INITIALIZED;
    const double one = 1.0, zero = 0.0;
    st = incy == 1 ? device_exdgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, n, &one, xs,
                                    incx, ys, n, &zero, out, 1)
                   : device_exdgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, 1, 1, n, &one, xs,
                                    incx, ys, incy, &zero, out, 1);
  }
  if (st != CUBLAS_STATUS_SUCCESS || on_device) return st;
  // Host pointer mode: the call returns with the value, as cublasDdot's.
  double value = 0;
  if (cudaMemcpyAsync(&value, out, sizeof value, cudaMemcpyDeviceToHost, s) !=
          cudaSuccess ||
      cudaStreamSynchronize(s) != cudaSuccess) {
    cudaGetLastError();
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  *result = value;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
