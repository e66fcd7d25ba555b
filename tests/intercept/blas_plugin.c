/* blas_plugin.c - a module linked against one of the fake BLAS libraries
 * (fake_blas.c), loaded by two_blas_client with RTLD_LOCAL: its calls must
 * reach its own BLAS, under the interposer as without it. */
void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const double *alpha, const double *A, const int *lda,
            const double *B, const int *ldb, const double *beta, double *C,
            const int *ldc);
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k,
                 double alpha, const double *A, int lda, const double *B, int ldb,
                 double beta, double *C, int ldc);

/* C(1,1) after a 1 x 1 x 1 dgemm_ (which = 0) or cblas_dgemm (which = 1). */
double plugin_product(int which) {
  const int one = 1;
  const double a = 2, b = 3, alpha = 1, beta = 0;
  double c = -1;
  if (which == 0)
    dgemm_("N", "N", &one, &one, &one, &alpha, &a, &one, &b, &one, &beta, &c, &one);
  else
    cblas_dgemm(102, 111, 111, 1, 1, 1, alpha, &a, 1, &b, 1, beta, &c, 1);
  return c;
}
