// scalapack.h - the BLACS, ScaLAPACK and PBLAS routines the distributed
// GEMMs, their tests and xnbench_mpi use (ScaLAPACK installs no C header
// for them). Fortran character arguments
// carry a hidden length, passed last.
#pragma once

#include <cstddef>

extern "C" {
// Grids (the library only asks; the tests and xnbench_mpi make them).
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridexit(int ctxt);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
// ScaLAPACK's index tools (1-based global indices).
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc,
            const int *nprocs);
int indxg2p_(const int *g, const int *nb, const int *iproc, const int *isrc,
             const int *nprocs);
int indxg2l_(const int *g, const int *nb, const int *iproc, const int *isrc,
             const int *nprocs);
// Element-wise sum of an m x n integer array over `scope` ("All", "Row",
// "Column"); rdest = -1: every process gets the result.
void Cigsum2d(int ctxt, const char *scope, const char *top, int m, int n, int *a, int lda,
              int rdest, int cdest);
// Element-wise minimum (ldia = -1: no positions returned).
void Cigamn2d(int ctxt, const char *scope, const char *top, int m, int n, int *a, int lda,
              int *ra, int *ca, int ldia, int rdest, int cdest);

// sub(C) := beta sub(C) + alpha op(sub(A)) (PBLAS): any two distributions
// of one context, descriptors of type 1 or 2; beta = 0 never reads sub(C).
void pdgeadd_(const char *trans, const int *m, const int *n, const double *alpha,
              const double *a, const int *ia, const int *ja, const int *desca,
              const double *beta, double *c, const int *ic, const int *jc,
              const int *descc, std::size_t trans_len);
void psgeadd_(const char *trans, const int *m, const int *n, const float *alpha,
              const float *a, const int *ia, const int *ja, const int *desca,
              const float *beta, float *c, const int *ic, const int *jc, const int *descc,
              std::size_t trans_len);

// PBLAS's own products, the baselines of the tests and xnbench_mpi.
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja,
             const int *desca, const double *b, const int *ib, const int *jb,
             const int *descb, const double *beta, double *c, const int *ic,
             const int *jc, const int *descc);
void psgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja,
             const int *desca, const float *b, const int *ib, const int *jb,
             const int *descb, const float *beta, float *c, const int *ic, const int *jc,
             const int *descc);

// ScaLAPACK's error reporter (the user may supply their own): "On entry to
// SRNAME parameter number INFO had an illegal value".
void pxerbla_(const int *ictxt, const char *srname, const int *info,
              std::size_t srname_len);
}
