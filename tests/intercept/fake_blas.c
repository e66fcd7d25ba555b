/* fake_blas.c - a stand-in BLAS that marks its results: built twice
 * (FAKE_BLAS_MARK 1 and 2) into two libraries that define the same symbols,
 * as two BLAS builds loaded privately by two modules of one program do
 * (NumPy's and SciPy's wheels each bundle their own OpenBLAS). dgemm_ sets
 * C(1,1) to the mark, cblas_dgemm to 10 + the mark: a pass-through that
 * reaches the wrong library shows. */
#ifndef FAKE_BLAS_MARK
#error "FAKE_BLAS_MARK (1 or 2) is required"
#endif

void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const double *alpha, const double *A, const int *lda,
            const double *B, const int *ldb, const double *beta, double *C,
            const int *ldc) {
  (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)A,
      (void)lda, (void)B, (void)ldb, (void)beta, (void)ldc;
  C[0] = FAKE_BLAS_MARK;
}

void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k,
                 double alpha, const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc) {
  (void)layout, (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha,
      (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)ldc;
  C[0] = 10 + FAKE_BLAS_MARK;
}
