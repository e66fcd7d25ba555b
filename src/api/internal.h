// internal.h - what the entry-point files of src/api/ share: the translation
// between cuBLAS's vocabulary and the core's, and the device routines the
// host API calls.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "api/args.h"
#include "api/status_conventions.h"
#include "backend/cuda/call_guard.h"
#include "core/device_model.h"
#include "core/exdgemm.h"
#include "core/gemm_driver.h"
#include "core/schedule.h"
#include "core/types.h"
#include "numerics/elementwise.h"
#include "xngemm.h"

namespace xn {

// Valid operations only (the argument checks come first): CUBLAS_OP_C is the
// transpose of real data.
inline Op op_of(cublasOperation_t op) { return op == CUBLAS_OP_N ? Op::N : Op::T; }
inline Fill fill_of(cublasFillMode_t uplo) {
  return uplo == CUBLAS_FILL_MODE_LOWER ? Fill::Lower : Fill::Upper;
}

// What the host knows of a scalar: 0, 1 or another value.
template <class T>
ScalarKind kind_of(T v) {
  return v == T(0) ? ScalarKind::Zero : v == T(1) ? ScalarKind::One : ScalarKind::User;
}

// The core's exdgemm report as the public struct.
inline xnExdgemmInfo_t to_public(const ExdgemmReport &r) {
  xnExdgemmInfo_t i{};
  i.max_slices_a = r.max_slices_a;
  i.max_slices_b = r.max_slices_b;
  i.block_rows = r.block_rows;
  i.block_cols = r.block_cols;
  i.blocks = r.blocks;
  i.slice_products = r.slice_products;
  i.wide_entries = r.wide_entries;
  i.workspace_bytes = r.workspace_bytes;
  i.engine = r.engine;
  i.moduli = r.moduli;
  i.k_chunks = r.k_chunks;
  i.k_slots = r.k_slots;
  i.fused_operands = r.fused_operands;
  static_assert(sizeof i.phase_ms / sizeof i.phase_ms[0] == kExPhaseCount,
                "xnExdgemmInfo_t.phase_ms holds one entry per phase");
  for (int ph = 0; ph < kExPhaseCount; ++ph) i.phase_ms[ph] = r.phase_ms[ph];
  return i;
}

// The part every device GEMM-shaped entry point shares: cublas?gemm's
// argument checks, the quick return for an empty C, the call guard; then
// `run(guard)` does the call.
template <class Run>
cublasStatus_t gemm_entry(cublasHandle_t handle, cublasOperation_t transa,
                          cublasOperation_t transb, int m, int n, int k, int lda, int ldb,
                          int ldc, Run &&run) {
  const cublasStatus_t cs =
      check_gemm_device_args(handle, transa, transb, m, n, k, lda, ldb, ldc);
  if (cs != CUBLAS_STATUS_SUCCESS) return cs;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  CallGuard guard(handle);
  if (guard.status() != CUBLAS_STATUS_SUCCESS) return guard.status();
  return run(guard);
}

// The device recursive GEMM of `algo` (xn?ngemm, xn?gemmStrassen,
// xn?gemmWinograd) for T = float or double, argument checks included.
template <class T>
cublasStatus_t device_recursive_gemm(const GemmAlgorithm &algo, cublasHandle_t handle,
                                     cublasOperation_t transa, cublasOperation_t transb,
                                     int m, int n, int k, const T *alpha, const T *A,
                                     int lda, const T *B, int ldb, const T *beta, T *C,
                                     int ldc);

// The device exdgemm (argument checks included), and the per-thread report
// of the host exdgemm (xnGetLastExdgemmInfo(NULL, ...)).
cublasStatus_t device_exdgemm(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const double *alpha, const double *A, int lda,
                              const double *B, int ldb, const double *beta, double *C,
                              int ldc);
void set_host_exdgemm_info(const xnExdgemmInfo_t &info);

// The handle's stream, if it is not being captured into a CUDA graph:
// SUCCESS, NOT_INITIALIZED (no stream), EXECUTION_FAILED (the query
// failed) or NOT_SUPPORTED (capturing: a call that must wait cannot run).
cublasStatus_t uncaptured_stream(cublasHandle_t handle, cudaStream_t *stream);

// Reports the bad parameter `position` of host routine `name` through
// xerbla_, as reference BLAS does, and as the thread's last host status
// (-position: xnGetLastHostStatus).
void report_bad_argument(const char *name, int position);

// How many host-API calls fell back to the classical product under
// XN_OPT_CHECK_NONNEG (reported by xnGetNonNegFallbackCount(NULL, ...)).
std::uint64_t host_nonneg_fallbacks();

// The calling thread's last recursive host GEMM (?ngemm_, ?stgemm_,
// ?wigemm_ and their cblas_ forms), on the GPU or the CPU: what it ran
// (levels -1 before any; xnGetLastGemmInfo(NULL) and xnGetLastLevels(NULL)).
xnGemmInfo_t host_last_gemm_info();
// The public form of a call's report; `levels` < -1 takes report.levels.
xnGemmInfo_t gemm_info_of(const GemmReport &report, const DepthModel *model,
                          int levels = -2);

// Whether the calling thread's last host entry point could not run (C left
// unchanged, xnGetLastHostStatus XN_STATUS_UNCHANGED): CPU exdgemm within a
// workspace limit too small for one block. The interposer then calls the
// BLAS instead.
bool host_call_failed();
// Every host entry point begins here: the thread's last status is 0 until
// the call says otherwise, so it never reports an earlier call.
void begin_host_call();

// The host routines scan non-negative operands and limit their depth as
// XN_OPT_CHECK_NONNEG does (the interposer's ngemm mode), leaving the
// process-wide options alone.
void set_host_check_nonneg(bool on);

}  // namespace xn
