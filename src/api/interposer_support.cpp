// interposer_support.cpp - the library's exports for its interposer
// (api/interposer_support.h): the calling thread's depth inside the library,
// and the scan of device operands that decides whether a cuBLAS call may be
// rerouted (docs/design.md, "Interposer").
#include "api/interposer_support.h"

#include "api/internal.h"
#include "backend/cuda/cuda_backend.h"
#include "core/call_depth.h"
#include "core/gemm_driver.h"
#include "core/scale_depth.h"

namespace xn {
namespace {

template <class T>
cublasStatus_t device_operand_flags(cublasHandle_t handle, cublasOperation_t transa,
                                    cublasOperation_t transb, int m, int n, int k,
                                    const T *A, int lda, const T *B, int ldb,
                                    int *flags) {
  return gemm_entry(
      handle, transa, transb, m, n, k, lda, ldb, m > 1 ? m : 1, [&](CallGuard &guard) {
        // The scan hands its answer to the host: not inside a graph capture
        // (the interposer then leaves the call to cuBLAS, which captures).
        if (guard.capturing()) return CUBLAS_STATUS_NOT_SUPPORTED;
        Status s = guard.enter();
        if (s == Status::Ok)
          s = operand_entry_flags<T>(
              guard, MatView<const T>{A, m, k, lda, is_trans(op_of(transa))},
              MatView<const T>{B, k, n, ldb, is_trans(op_of(transb))}, flags);
        return to_cublas(guard.finish(s));
      });
}

// The flags and the depth the non-negative product keeps its accuracy at
// (core/gemm_driver.h does the same inside a checked call).
template <class T>
cublasStatus_t device_operand_scan(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k,
                                   const T *A, int lda, const T *B, int ldb, int *flags,
                                   int *max_levels) {
  return gemm_entry(
      handle, transa, transb, m, n, k, lda, ldb, m > 1 ? m : 1, [&](CallGuard &guard) {
        // Not inside a graph capture (the answer goes to the host), as
        // device_operand_flags.
        if (guard.capturing()) return CUBLAS_STATUS_NOT_SUPPORTED;
        Status s = guard.enter();
        if (s != Status::Ok) return to_cublas(guard.finish(s));
        const GemmAlgorithm &algo = nonneg_winograd_algorithm();
        const int levels =
            planned_levels_any_beta(algo, guard.state().opt,
                                    handle_depth_model(guard.state()),
                                    sizeof(T) == sizeof(double), m, n, k);
        *max_levels = levels;
        BlockMaxima maxima;
        maxima.reset(levels > 0 ? scale_grid_levels(m, n, k, levels) : -1);
        s = operand_scan<T>(
            guard, MatView<const T>{A, m, k, lda, is_trans(op_of(transa))},
            MatView<const T>{B, k, n, ldb, is_trans(op_of(transb))}, &maxima, flags);
        if (s == Status::Ok && *flags == 0 && levels > 0)
          *max_levels =
              nonneg_scale_depth(algo.table_for(true), maxima.a.data(), maxima.b.data(),
                                 maxima.grid_levels, levels, m, n, k);
        return to_cublas(guard.finish(s));
      });
}

}  // namespace
}  // namespace xn

extern "C" {

int xn_internal_call_depth(void) { return xn::t_call_depth; }

int xn_internal_host_call_failed(void) { return xn::host_call_failed() ? 1 : 0; }

void xn_internal_host_check_nonneg(int on) { xn::set_host_check_nonneg(on != 0); }

cublasStatus_t xn_internal_operand_flags(cublasHandle_t handle, char precision,
                                         cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *A, int lda, const void *B, int ldb,
                                         int *flags) {
  if (!flags) return CUBLAS_STATUS_INVALID_VALUE;
  *flags = 0;
  if (precision == 'd')
    return xn::device_operand_flags(handle, transa, transb, m, n, k,
                                    static_cast<const double *>(A), lda,
                                    static_cast<const double *>(B), ldb, flags);
  if (precision == 's')
    return xn::device_operand_flags(handle, transa, transb, m, n, k,
                                    static_cast<const float *>(A), lda,
                                    static_cast<const float *>(B), ldb, flags);
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t xn_internal_operand_scan(cublasHandle_t handle, char precision,
                                        cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const void *A, int lda, const void *B, int ldb,
                                        int *flags, int *max_levels) {
  if (!flags || !max_levels) return CUBLAS_STATUS_INVALID_VALUE;
  *flags = 0;
  *max_levels = 0;
  if (precision == 'd')
    return xn::device_operand_scan(
        handle, transa, transb, m, n, k, static_cast<const double *>(A), lda,
        static_cast<const double *>(B), ldb, flags, max_levels);
  if (precision == 's')
    return xn::device_operand_scan(handle, transa, transb, m, n, k,
                                   static_cast<const float *>(A), lda,
                                   static_cast<const float *>(B), ldb, flags, max_levels);
  return CUBLAS_STATUS_INVALID_VALUE;
}

}  // extern "C"
