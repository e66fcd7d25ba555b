// cuda_backend.h - the CUDA backend: cuBLAS leaf GEMMs on the caller's
// handle (its stream, pointer mode and math mode) and our elementwise kernels.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstring>
#include <optional>

#include "backend/cuda/call_guard.h"
#include "core/executor.h"
#include "core/gemm_driver.h"
#include "core/types.h"
#include "core/view.h"
#include "kernels/launch.h"
#include "numerics/elementwise.h"

namespace xn {

inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda,
                                  const float *B, int ldb, const float *beta, float *C,
                                  int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k,
                                  const double *alpha, const double *A, int lda,
                                  const double *B, int ldb, const double *beta, double *C,
                                  int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
class CudaBackend {
 public:
  // alpha/beta point to host or device memory as the handle's pointer mode
  // says (`device_scalars`); zero_one points to {0, 1} of type T in memory of
  // the same kind, and may be null if only ScalarKind::User is ever used.
  CudaBackend(cublasHandle_t handle, cudaStream_t stream, bool device_scalars,
              const T *alpha, const T *beta, const T *zero_one)
      : h_(handle),
        s_(stream),
        dev_(device_scalars),
        alpha_(alpha),
        beta_(beta),
        zero_one_(zero_one) {}

  Status gemm(MatView<const T> A, MatView<const T> B, ScalarKind beta, MatView<T> C) {
    const cublasStatus_t st = cublas_gemm(
        h_, A.trans ? CUBLAS_OP_T : CUBLAS_OP_N, B.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
        int(C.rows), int(C.cols), int(A.cols), alpha_, A.p, int(A.ld), B.p, int(B.ld),
        beta_ptr(beta), C.p, int(C.ld));
    return st == CUBLAS_STATUS_SUCCESS ? Status::Ok : Status::ExecutionFailed;
  }

  Status combine(const CombineOp<T> &op) {
    static_assert(kCombineMaxDst == kMaxDst && kCombineMaxSrc == kMaxSrc,
                  "the kernel's argument holds a whole step");
    CombineArgs<T> a{};
    a.rows = op.dst[0].stored_rows();
    a.cols = op.dst[0].stored_cols();
    a.ndst = op.ndst;
    a.nsrc = op.nsrc;
    for (int d = 0; d < op.ndst; ++d) {
      a.dst[d] = op.dst[d].p;
      a.ldd[d] = op.dst[d].ld;
      a.beta_old[d] = op.beta_old[d];
      for (int s = 0; s < op.nsrc; ++s) a.coef[d][s] = op.coef[d][s];
    }
    for (int s = 0; s < op.nsrc; ++s) {
      a.src[s] = op.src[s].p;
      a.lds[s] = op.src[s].ld;
    }
    a.beta = scalar(op.beta);
    return ok(launch_combine<T>(s_, a));
  }

  Status scale(MatView<T> C, ScalarKind beta) {
    if (beta == ScalarKind::One) return Status::Ok;
    return ok(launch_scale<T>(s_, C.rows, C.cols, C.p, C.ld, scalar(beta)));
  }

  // D = X +/- Y for a non-transposed D and X, Y of either orientation.
  Status transpose_add_sub(MatView<T> D, MatView<const T> X, MatView<const T> Y,
                           bool subtract) {
    if (D.trans || X.rows != D.rows || X.cols != D.cols || Y.rows != D.rows ||
        Y.cols != D.cols)
      return Status::InvalidValue;
    return ok(launch_transpose_add_sub<T>(s_, D.rows, D.cols, D.p, D.ld, X.p, X.ld,
                                          X.trans, Y.p, Y.ld, Y.trans, subtract));
  }

  // D = op(X) for a non-transposed D and a transposed X.
  Status transpose_copy(MatView<T> D, MatView<const T> X) {
    if (D.trans || !X.trans || X.rows != D.rows || X.cols != D.cols)
      return Status::InvalidValue;
    return ok(launch_transpose_add_sub<T>(s_, D.rows, D.cols, D.p, D.ld, X.p, X.ld, true,
                                          nullptr, 0, false, false));
  }

 private:
  static Status ok(cudaError_t e) {
    return e == cudaSuccess ? Status::Ok : Status::ExecutionFailed;
  }
  const T *beta_ptr(ScalarKind k) const {
    return k == ScalarKind::Zero  ? zero_one_
           : k == ScalarKind::One ? zero_one_ + 1
                                  : beta_;
  }
  ScalarArg<T> scalar(ScalarKind k) const {
    if (k == ScalarKind::Zero) return ScalarArg<T>{T(0), nullptr};
    if (k == ScalarKind::One) return ScalarArg<T>{T(1), nullptr};
    return dev_ ? ScalarArg<T>{T(0), beta_} : ScalarArg<T>{*beta_, nullptr};
  }

  cublasHandle_t h_;
  cudaStream_t s_;
  bool dev_;
  const T *alpha_, *beta_, *zero_one_;
};

// The CUDA hooks of the GEMM driver (core/gemm_driver.h) for one call.
// plain(): the caller's alpha and beta pointers go to cuBLAS as they are, so
// a call that does not recurse needs neither constants nor the call guard.
// begin() enters the guard; backend() then also has the handle's 0 and 1 in
// the scalars' memory kind, for the schedule's internal betas.
// The OR of the EntryFlags of every entry of A and B (stored as viewed), on
// the guard's stream, read back to the host, and with maxima->grid_levels >=
// 0 (if maxima is given) the block maxima of op(A) and op(B) on that grid
// (core/gemm_driver.h, BlockMaxima), taken by the same kernels in the same
// read: one read of each operand, one copy of flags and maxima to pinned
// memory and one synchronisation of that stream (not of the device). The
// guard must have entered (its state's scan buffer exists).
template <class T>
Status operand_scan(CallGuard &g, MatView<const T> A, MatView<const T> B,
                    BlockMaxima *maxima, int *flags) {
  static_assert(kScanMaxGridLevels == kMaxScaleGridLevels, "one grid for scan and rule");
  static_assert(kScanBufferBytes >=
                    kScanMaximaOffset +
                        2 * (std::size_t(1) << (2 * kScanMaxGridLevels)) * sizeof(double),
                "the scan buffer holds both grids");
  *flags = 0;
  HandleState &st = g.state();
  const cudaStream_t stream = g.stream();
  const int grid = maxima ? maxima->grid_levels : -1;
  if (grid > kScanMaxGridLevels) return Status::Internal;
  const std::size_t cells = grid < 0 ? 0 : std::size_t(1) << (2 * grid);
  const std::size_t bytes =
      grid < 0 ? sizeof(int) : kScanMaximaOffset + 2 * cells * sizeof(double);
  char *dev = reinterpret_cast<char *>(st.scan_flags_dev);
  long long *cells_dev = reinterpret_cast<long long *>(dev + kScanMaximaOffset);
  if (cudaMemsetAsync(dev, 0, bytes, stream) != cudaSuccess)
    return Status::ExecutionFailed;
  for (int which = 0; which < 2; ++which) {
    const MatView<const T> &V = which == 0 ? A : B;
    const cudaError_t e =
        grid < 0 ? launch_entry_flags<T>(stream, V.stored_rows(), V.stored_cols(), V.p,
                                         V.ld, st.scan_flags_dev)
                 : launch_entry_flags_max<T>(stream, V.stored_rows(), V.stored_cols(),
                                             V.p, V.ld, st.scan_flags_dev,
                                             cells_dev + which * cells, grid);
    if (e != cudaSuccess) return Status::ExecutionFailed;
  }
  if (cudaMemcpyAsync(st.scan_flags_host, dev, bytes, cudaMemcpyDeviceToHost, stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::ExecutionFailed;
  *flags = *st.scan_flags_host;
  if (grid >= 0) {
    // Stored (r, c) of a transposed operand is op() block (c, r).
    const char *host = reinterpret_cast<const char *>(st.scan_flags_host);
    const index_t side = index_t(1) << grid;
    for (int which = 0; which < 2; ++which) {
      const bool trans = which == 0 ? A.trans : B.trans;
      double *out = which == 0 ? maxima->a.data() : maxima->b.data();
      for (index_t c = 0; c < side; ++c)
        for (index_t r = 0; r < side; ++r) {
          double v;
          std::memcpy(&v, host + kScanMaximaOffset + (which * cells + r + side * c) * 8,
                      8);
          out[trans ? c + side * r : r + side * c] = v;
        }
    }
    maxima->nonfinite = (*flags & kEntryNonFinite) != 0;
  }
  return Status::Ok;
}

// The flags alone (the interposer's scan, api/interposer_support.h).
template <class T>
Status operand_entry_flags(CallGuard &g, MatView<const T> A, MatView<const T> B,
                           int *flags) {
  return operand_scan<T>(g, A, B, nullptr, flags);
}

template <class T>
class CudaGemmHooks {
 public:
  CudaGemmHooks(CallGuard &guard, const T *alpha, const T *beta)
      : g_(guard),
        alpha_(alpha),
        beta_(beta),
        plain_(guard.handle(), guard.stream(), guard.device_scalars(), alpha, beta,
               nullptr) {}

  CudaBackend<T> &plain() { return plain_; }
  CudaBackend<T> &backend() { return *full_; }

  Status begin() {
    const Status s = g_.enter();
    if (s != Status::Ok) return s;
    static const T host_zero_one[2] = {T(0), T(1)};
    const HandleState &st = g_.state();
    const T *zero_one = !g_.device_scalars() ? host_zero_one
                        : sizeof(T) == sizeof(double)
                            ? reinterpret_cast<const T *>(st.zero_one_d())
                            : reinterpret_cast<const T *>(st.zero_one_f());
    full_.emplace(g_.handle(), g_.stream(), g_.device_scalars(), alpha_, beta_, zero_one);
    return Status::Ok;
  }

  bool capturing() const { return g_.capturing(); }

  // One read of op(A) and op(B) and one stream synchronisation: the choice
  // of algorithm and depth is made on the host.
  Status find_negative(MatView<const T> A, MatView<const T> B, BlockMaxima *maxima,
                       bool *found) {
    int flags = 0;
    const Status s = operand_scan<T>(g_, A, B, maxima, &flags);
    *found = (flags & kEntryNegative) != 0;
    maxima->nonfinite = (flags & kEntryNonFinite) != 0;
    return s;
  }

  // XN_OPT_WORKSPACE_LIMIT caps what the recursion may have the library
  // allocate (a supplied workspace is used as far as it goes).
  T *workspace(index_t elems) {
    HandleState &st = g_.state();
    const std::size_t bytes = std::size_t(elems) * sizeof(T);
    if (st.ws_owned && st.opt.workspace_limit >= 0 &&
        bytes > std::size_t(st.opt.workspace_limit))
      return nullptr;
    return static_cast<T *>(acquire_workspace(st, bytes, g_.stream()));
  }

 private:
  CallGuard &g_;
  const T *alpha_, *beta_;
  CudaBackend<T> plain_;
  std::optional<CudaBackend<T>> full_;
};

}  // namespace xn
