// device_api.cpp - the cuBLAS-compatible entry points xnSngemm/xnDngemm and
// the handle-state calls of include/xngemm.h.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>

#include "api/device_gemm.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/handle_state.h"
#include "core/args.h"
#include "core/executor.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "xngemm.h"

namespace xn {

cublasStatus_t to_cublas(Status s) {
  switch (s) {
    case Status::Ok:
      return CUBLAS_STATUS_SUCCESS;
    case Status::InvalidValue:
      return CUBLAS_STATUS_INVALID_VALUE;
    case Status::AllocFailed:
      return CUBLAS_STATUS_ALLOC_FAILED;
    case Status::ExecutionFailed:
      return CUBLAS_STATUS_EXECUTION_FAILED;
    default:
      return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

cublasStatus_t handle_stream_and_mode(cublasHandle_t handle, cudaStream_t *stream,
                                      bool *dev_scalars) {
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  cublasStatus_t cs = cublasGetStream(handle, stream);
  if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasGetPointerMode(handle, &mode);
  *dev_scalars = mode == CUBLAS_POINTER_MODE_DEVICE;
  return cs;
}

namespace {

template <class T>
const T *host_zero_one() {
  static const T v[2] = {T(0), T(1)};
  return v;
}
const float *device_zero_one(const HandleState &st, float *) { return st.zero_one_f(); }
const double *device_zero_one(const HandleState &st, double *) { return st.zero_one_d(); }

template <class T>
ScalarKind kind_of(T v) {
  return v == T(0) ? ScalarKind::Zero : v == T(1) ? ScalarKind::One : ScalarKind::User;
}

// Runs the non-negative scan of op(A) and op(B); true if a negative entry was
// found. Needs one stream synchronisation: the choice of algorithm is made on
// the host.
template <class T>
Status scan_for_negative(HandleState &st, cudaStream_t stream, MatView<const T> A,
                         MatView<const T> B, bool *found) {
  *found = false;
  if (cudaMemsetAsync(st.neg_flag_dev, 0, sizeof(int), stream) != cudaSuccess)
    return Status::ExecutionFailed;
  for (const MatView<const T> &V : {A, B})
    if (launch_find_negative<T>(stream, V.stored_rows(), V.stored_cols(), V.p, V.ld,
                                st.neg_flag_dev) != cudaSuccess)
      return Status::ExecutionFailed;
  if (cudaMemcpyAsync(st.neg_flag_host, st.neg_flag_dev, sizeof(int),
                      cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::ExecutionFailed;
  *found = *st.neg_flag_host != 0;
  return Status::Ok;
}

}  // namespace

template <class T>
cublasStatus_t device_ngemm(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const T *alpha,
                            const T *A, int lda, const T *B, int ldb, const T *beta, T *C,
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

  // With device scalars their values are unknown on the host: the kernels
  // read beta on the device (beta == 0 still never reads C) and cuBLAS does
  // the same for the leaves.
  const ScalarKind beta_kind = dev_scalars ? ScalarKind::User : kind_of(*beta);
  const MatView<T> Cv{C, m, n, ldc, false};
  const MatView<const T> Av{A, m, k, lda, transa != CUBLAS_OP_N};
  const MatView<const T> Bv{B, k, n, ldb, transb != CUBLAS_OP_N};
  const bool is_double = sizeof(T) == sizeof(double);
  const bool quick = k == 0 || (!dev_scalars && *alpha == T(0));
  int levels =
      quick ? 0
            : choose_levels(m, n, k, hs->opt.leaf_for(is_double), int(hs->opt.max_levels),
                            hs->opt.min_size_for(is_double));
  hs->last_levels = 0;

  // Below the crossover, and for the quick return, the call is exactly one
  // cuBLAS GEMM (or one scaling kernel): no workspace, so no ordering events
  // either, and nothing added to cuBLAS's own cost.
  // The caller's own alpha and beta pointers go to cuBLAS as they are
  // (ScalarKind::User), so no constants are needed.
  if (levels == 0 && !hs->opt.check_nonneg) {
    CudaBackend<T> plain(handle, stream, dev_scalars, alpha, beta, nullptr);
    return to_cublas(quick ? plain.scale(Cv, beta_kind)
                           : plain.gemm(Av, Bv, ScalarKind::User, Cv));
  }

  Status s = ensure_device_resources(*hs, stream);
  if (s == Status::Ok) s = order_after_last_call(*hs, stream);
  if (s != Status::Ok) return to_cublas(s);
  const T *zero_one =
      dev_scalars ? device_zero_one(*hs, static_cast<T *>(nullptr)) : host_zero_one<T>();
  CudaBackend<T> be(handle, stream, dev_scalars, alpha, beta, zero_one);

  bool negative = false;
  if (quick) {
    s = be.scale(Cv, beta_kind);  // BLAS quick return: A and B not read
  } else {
    if (hs->opt.check_nonneg) s = scan_for_negative<T>(*hs, stream, Av, Bv, &negative);
    if (s == Status::Ok && negative) {
      ++hs->nonneg_fallbacks;
      s = be.gemm(Av, Bv, beta_kind, Cv);
    } else if (s == Status::Ok) {
      T *ws = nullptr;
      // Fewer levels when the workspace cannot be had: never fail for lack
      // of scratch memory the classical product does not need.
      const bool t_normal =
          stores_t_normal(hs->opt.normal_b_temps, is_double, Av.trans, Bv.trans);
      bool pack = false;
      const int run_levels = choose_workspace(
          m, n, k, levels, Av.trans, Bv.trans, t_normal,
          [&](index_t elems) {
            ws = static_cast<T *>(
                acquire_workspace(*hs, std::size_t(elems) * sizeof(T), stream));
            return ws != nullptr;
          },
          &pack);
      hs->last_levels = run_levels;
      s = recursive_gemm<T>(be, winograd_nonneg_schedule(), run_levels, Av, Bv, beta_kind,
                            Cv, ws, hs->opt.kchain_for(is_double), t_normal, pack);
    }
  }
  const Status done = mark_call_done(*hs, stream);
  return to_cublas(s != Status::Ok ? s : done);
}

template cublasStatus_t device_ngemm<float>(cublasHandle_t, cublasOperation_t,
                                            cublasOperation_t, int, int, int,
                                            const float *, const float *, int,
                                            const float *, int, const float *, float *,
                                            int);
template cublasStatus_t device_ngemm<double>(cublasHandle_t, cublasOperation_t,
                                             cublasOperation_t, int, int, int,
                                             const double *, const double *, int,
                                             const double *, int, const double *,
                                             double *, int);

}  // namespace xn

using namespace xn;

extern "C" {

cublasStatus_t xnSngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k, const float *alpha,
                        const float *A, int lda, const float *B, int ldb,
                        const float *beta, float *C, int ldc) {
  return device_ngemm<float>(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                             C, ldc);
}

cublasStatus_t xnDngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k,
                        const double *alpha, const double *A, int lda, const double *B,
                        int ldb, const double *beta, double *C, int ldc) {
  return device_ngemm<double>(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                              beta, C, ldc);
}

cublasStatus_t xnSetOption(cublasHandle_t handle, xnOption_t option, int64_t value) {
  if (!handle)
    return update_default_option(option, value) ? CUBLAS_STATUS_SUCCESS
                                                : CUBLAS_STATUS_INVALID_VALUE;
  HandleState *hs = handle_state(handle);
  if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
  std::lock_guard<std::mutex> lock(hs->mu);
  return apply_option(hs->opt, option, value) ? CUBLAS_STATUS_SUCCESS
                                              : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t xnGetOption(cublasHandle_t handle, xnOption_t option, int64_t *value) {
  Options o;
  if (!handle) {
    o = default_options();
  } else {
    HandleState *hs = handle_state(handle);
    if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
    std::lock_guard<std::mutex> lock(hs->mu);
    o = hs->opt;
  }
  return read_option(o, option, value) ? CUBLAS_STATUS_SUCCESS
                                       : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t xnGetWorkspaceSize(cublasHandle_t handle, char precision,
                                  cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, size_t *bytes) {
  if (!bytes || (precision != 's' && precision != 'd'))
    return CUBLAS_STATUS_INVALID_VALUE;
  // Leading dimensions do not matter here: pass the smallest valid ones.
  const int lda = std::max(1, transa == CUBLAS_OP_N ? m : k);
  const int ldb = std::max(1, transb == CUBLAS_OP_N ? k : n);
  const void *h = handle ? static_cast<const void *>(handle) : &precision;
  const cublasStatus_t cs =
      check_gemm_device_args(h, transa, transb, m, n, k, lda, ldb, std::max(1, m));
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  Options o = default_options();
  if (handle) {
    HandleState *hs = handle_state(handle);
    if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
    std::lock_guard<std::mutex> lock(hs->mu);
    o = hs->opt;
  }
  const bool is_double = precision == 'd';
  const int levels = choose_levels(m, n, k, o.leaf_for(is_double), int(o.max_levels),
                                   o.min_size_for(is_double));
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  *bytes = std::size_t(call_workspace_elems(
               m, n, k, levels, ta, tb,
               stores_t_normal(o.normal_b_temps, is_double, ta, tb))) *
           (is_double ? sizeof(double) : sizeof(float));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnSetWorkspace(cublasHandle_t handle, void *ptr, size_t bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if ((ptr == nullptr) != (bytes == 0) ||
      (reinterpret_cast<std::uintptr_t>(ptr) & 255) != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  HandleState *hs = handle_state(handle);
  if (!hs) return CUBLAS_STATUS_ALLOC_FAILED;
  std::lock_guard<std::mutex> lock(hs->mu);
  release_workspace(*hs);
  hs->ws = ptr;
  hs->ws_bytes = bytes;
  hs->ws_owned = ptr == nullptr;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetWorkspaceHeld(cublasHandle_t handle, size_t *bytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!bytes) return CUBLAS_STATUS_INVALID_VALUE;
  HandleState *hs = find_handle_state(handle);
  if (!hs) {
    *bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(hs->mu);
  *bytes = hs->ws_bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetNonNegFallbackCount(cublasHandle_t handle, uint64_t *count) {
  if (!count) return CUBLAS_STATUS_INVALID_VALUE;
  if (!handle) {
    *count = host_nonneg_fallbacks();
    return CUBLAS_STATUS_SUCCESS;
  }
  HandleState *hs = find_handle_state(handle);
  if (!hs) {
    *count = 0;
    return CUBLAS_STATUS_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(hs->mu);
  *count = hs->nonneg_fallbacks;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnGetLastLevels(cublasHandle_t handle, int *levels) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!levels) return CUBLAS_STATUS_INVALID_VALUE;
  HandleState *hs = find_handle_state(handle);
  if (!hs) {
    *levels = -1;
    return CUBLAS_STATUS_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(hs->mu);
  *levels = hs->last_levels;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t xnRelease(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  release_handle_state(handle);
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
