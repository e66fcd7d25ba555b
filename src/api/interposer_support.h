// interposer_support.h - what libxngemm exports for its interposer
// (src/intercept/, docs/design.md "Interposer"); not part of the documented
// API. The interposer loads the library privately and finds these by dlsym.
#pragma once

#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How many of the library's entry points, host (sngemm_, exdgemm_,
 * cblas_...) or device (xnDngemm, xnExdgemm, ...), the calling thread is
 * inside. A BLAS or cuBLAS call made while it is > 0 is the library's own (a
 * leaf product) and must reach the real routine, whether the entry point was
 * called through the interposer or by a program that links xNGEMM. */
int xn_internal_call_depth(void);

/* 1 if the calling thread's last host entry point (exdgemm_, dngemm_, ...)
 * could not run and left C unchanged (a BLAS routine has no status to
 * return it in), else 0. */
int xn_internal_host_call_failed(void);

/* The entries of op(A) (m x k) and op(B) (k x n) in device memory, as
 * cublas?gemm describes them (precision 'd' or 's'), classified on the
 * handle's stream: *flags gets the OR of xn::EntryFlags over every entry
 * (1: a negative number, 2: a NaN or Inf). Synchronises that stream once, to
 * hand the answer to the host. Statuses as a cuBLAS call on the handle, and
 * CUBLAS_STATUS_NOT_SUPPORTED while the handle's stream is being captured
 * into a CUDA graph (nothing enqueued); C and the operands are never
 * written. */
cublasStatus_t xn_internal_operand_flags(cublasHandle_t handle, char precision,
                                         cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *A, int lda, const void *B, int ldb,
                                         int *flags);

/* on != 0: the host routines (dngemm_, sngemm_, cblas_dngemm, ...) scan
 * their operands and limit their depth as XN_OPT_CHECK_NONNEG does, without
 * changing the process-wide options (the interposer's ngemm mode). */
void xn_internal_host_check_nonneg(int on);

/* xn_internal_operand_flags, and from the same read of the operands the
 * depth at which xnDngemm / xnSngemm (precision 'd' / 's') on this handle
 * keeps its accuracy on these operands when their scales differ
 * (docs/design.md, "Non-negative check"): *max_levels gets the depth the
 * handle's options plan for the call, lowered where the operands' block
 * maxima require it. Meaningful only when *flags is 0 (no negative entry,
 * NaN or Inf). The call xn?ngemm then makes with XN_OPT_MAX_LEVELS at most
 * *max_levels is the one XN_OPT_CHECK_NONNEG would make, without a second
 * scan. */
cublasStatus_t xn_internal_operand_scan(cublasHandle_t handle, char precision,
                                        cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const void *A, int lda, const void *B, int ldb,
                                        int *flags, int *max_levels);

#ifdef __cplusplus
}
#endif
