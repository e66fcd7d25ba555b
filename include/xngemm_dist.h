/*
 * xngemm_dist.h - xNGEMM's distributed products: ScaLAPACK's PDGEMM argument
 * list, the library's routines as the local engine (libxngemm_dist, which
 * needs MPI and ScaLAPACK).
 *
 * Rename PDGEMM to PDNGEMM (non-negative op(A), op(B): faster and more
 * accurate local products) or PEXDGEMM (correctly rounded: every entry of
 * sub(C) is the exact alpha op(sub(A)) op(sub(B)) + beta sub(C) rounded once,
 * bitwise the same for every process grid, block size and number of
 * processes, and equal to xnExdgemm / exdgemm_ on one process).
 *
 *   sub(C) := alpha op(sub(A)) op(sub(B)) + beta sub(C),
 *   sub(C) = C(IC:IC+M-1, JC:JC+N-1), op(sub(A)) M x K, op(sub(B)) K x N,
 *
 * with matrices distributed 2-D block-cyclically over a BLACS process grid
 * and described by ScaLAPACK array descriptors (DTYPE 1, or PBLAS's DTYPE 2).
 * Every process of the grid calls the routine with the same global
 * arguments, as for PDGEMM.
 *
 * Argument checks are PDGEMM's (PBLAS), with its error numbers: INFO = -i
 * for the i-th argument, -(100 i + j) for entry j of the descriptor at
 * position i (entries numbered as in PBLAS's eleven-entry descriptor, as
 * PBLAS reports them). Where PDGEMM would stop the program (Cblacs_abort),
 * these routines report through PXERBLA(ICTXT, name, -INFO) on the processes
 * that found the error and return on every process with sub(C) untouched.
 *
 * Local arrays in host memory or in GPU memory: on every process of the
 * grid, A, B and C are either host arrays or device arrays of one GPU
 * (cudaMalloc), never a mix (then XN_STATUS_UNCHANGED and sub(C) unchanged). Device
 * arrays stay on the GPUs: the blocks move between them over NCCL (where
 * every process has a GPU of its own and libnccl.so.2 loads) or MPI
 * (XN_OPT_DIST_TRANSPORT), the local product is the library's device
 * routine, and the call returns when sub(C) is complete. It follows the
 * caller's work on the legacy default stream; work on other streams must be
 * complete before the call.
 *
 * Method (docs/design.md, "Distributed GEMM"): each process gathers the rows
 * of op(sub(A)) that meet its rows of sub(C) and the columns of op(sub(B))
 * that meet its columns (PBLAS's PxGEADD moves them, transposing where
 * op(X) = X'), then forms its part of sub(C) with one local product by the
 * library's host routine (DNGEMM, SNGEMM, EXDGEMM: on the GPU when the
 * process has one, otherwise on the CPU). Where that does not fit the
 * workspace limit (XN_OPT_DIST_WORKSPACE_LIMIT) or the memory of some
 * process, PDNGEMM and PSNGEMM gather K in panels; PEXDGEMM, which forms each
 * entry's whole dot product on the process that owns the entry (so no
 * partial sums are ever combined), takes sub(C) in bands instead.
 */
#ifndef XNGEMM_DIST_H
#define XNGEMM_DIST_H

#ifdef __cplusplus
extern "C" {
#endif

/** PDNGEMM: PDGEMM's argument list; non-negative op(sub(A)), op(sub(B)). */
void pdngemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *ia,
              const int *ja, const int *desca, const double *b, const int *ib,
              const int *jb, const int *descb, const double *beta, double *c,
              const int *ic, const int *jc, const int *descc);

/** PSNGEMM: PSGEMM's argument list; non-negative op(sub(A)), op(sub(B)). */
void psngemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *ia,
              const int *ja, const int *desca, const float *b, const int *ib,
              const int *jb, const int *descb, const float *beta, float *c,
              const int *ic, const int *jc, const int *descc);

/** PEXDGEMM: PDGEMM's argument list; every entry correctly rounded. Only if
 *  not even one row and one column of K fit is sub(C) left unchanged
 *  (xnGetLastDistStatus: XN_STATUS_UNCHANGED). */
void pexdgemm_(const char *transa, const char *transb, const int *m, const int *n,
               const int *k, const double *alpha, const double *a, const int *ia,
               const int *ja, const int *desca, const double *b, const int *ib,
               const int *jb, const int *descb, const double *beta, double *c,
               const int *ic, const int *jc, const int *descc);

/** What the last PDNGEMM/PSNGEMM/PEXDGEMM call of this thread did on this
 *  process: the bands sub(C) was computed in (1 when whole; 0 for a quick
 *  return or an error) and the most panels of K of one band (1 when K was
 *  taken whole). Either pointer may be NULL. */
void xnGetLastDistInfo(int *bands, int *panels);

/** The most recursion levels (xnGetLastLevels) that a local product of the
 *  last PDNGEMM/PSNGEMM call of this thread ran on this process (one per
 *  band and panel of K; a narrow last panel may run fewer): 0 when every
 *  one was the classical product (a short workspace, XN_OPT_MAX_LEVELS = 0,
 *  small shares), -1 when none ran here (or the call was PEXDGEMM's). */
void xnGetLastDistLevels(int *levels);

/** Outcomes of xnGetLastDistStatus beyond 0 (done) and -i (argument i was
 *  illegal: PDGEMM's INFO, reported through PXERBLA): those of the host
 *  routines (xngemm.h, repeated here so that this header needs no CUDA
 *  header), also under the names earlier releases gave them. */
#ifndef XN_STATUS_UNCHANGED
#define XN_STATUS_UNCHANGED 1
#define XN_STATUS_PARTIAL 2
#endif
#define XN_DIST_UNCHANGED XN_STATUS_UNCHANGED /**< the call did not run: sub(C) is unchanged */
#define XN_DIST_PARTIAL XN_STATUS_PARTIAL     /**< it failed after part of sub(C) was written */

/** The outcome of the last PDNGEMM/PSNGEMM/PEXDGEMM call of this thread on
 *  this process; every process of the grid gets a nonzero value when the
 *  call did not complete. 0: sub(C) is the product. -i (PBLAS's INFO):
 *  argument i (or entry j of the descriptor at i, as -(100 i + j)) was
 *  illegal on this process (reported through PXERBLA; sub(C) unchanged;
 *  the other processes get XN_DIST_UNCHANGED). XN_DIST_UNCHANGED: the call could not run (mixed host and
 *  device arrays, no GPU work could be set up, a workspace limit below the
 *  least that works, or memory, the transport or a GPU failed before any of
 *  sub(C) was written): sub(C) is unchanged. XN_DIST_PARTIAL: memory, the
 *  transport or a local product failed after part of sub(C) was written
 *  (whole bands, or the panels of K summed so far). A transport that fails
 *  on some process (NCCL, out of memory) is agreed by every process before
 *  any of them writes sub(C): the grid moves its blocks over MPI instead,
 *  and only if that fails too does the call stop, with sub(C) unchanged.
 *  Nothing is said on stderr unless XN_VERBOSE=1. */
int xnGetLastDistStatus(void);

#ifdef __cplusplus
}
#endif

#endif /* XNGEMM_DIST_H */
