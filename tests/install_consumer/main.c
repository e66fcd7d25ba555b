/* A C consumer of the installed library: cblas_dngemm on 3x3 non-negative
 * matrices, in both layouts, checked against a plain loop. The entries are
 * small integers, so the result must be exact. Exits non-zero on mismatch. */
#include <stdio.h>
#include <xngemm.h>

static int check(const char *what, const double *got, const double *want) {
  int bad = 0;
  for (int i = 0; i < 9; ++i)
    if (got[i] != want[i]) {
      fprintf(stderr, "%s: entry %d is %g, expected %g\n", what, i, got[i],
              want[i]);
      bad = 1;
    }
  return bad;
}

int main(void) {
  const double A[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const double B[9] = {0, 1, 2, 3, 0, 1, 2, 3, 4};
  const double alpha = 2.0, beta = 0.5;
  double C0[9], want_row[9], want_col[9], C[9];
  for (int i = 0; i < 9; ++i) C0[i] = (double)(i + 1);

  /* Row-major: X(i, j) = X[3 i + j]; column-major: X[i + 3 j]. */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double r = 0, c = 0;
      for (int p = 0; p < 3; ++p) {
        r += A[3 * i + p] * B[3 * p + j];
        c += A[i + 3 * p] * B[p + 3 * j];
      }
      want_row[3 * i + j] = alpha * r + beta * C0[3 * i + j];
      want_col[i + 3 * j] = alpha * c + beta * C0[i + 3 * j];
    }

  int bad = 0;
  for (int i = 0; i < 9; ++i) C[i] = C0[i];
  cblas_dngemm(XnRowMajor, XnNoTrans, XnNoTrans, 3, 3, 3, alpha, A, 3, B, 3,
               beta, C, 3);
  bad |= check("row-major", C, want_row);

  for (int i = 0; i < 9; ++i) C[i] = C0[i];
  cblas_dngemm(XnColMajor, XnNoTrans, XnNoTrans, 3, 3, 3, alpha, A, 3, B, 3,
               beta, C, 3);
  bad |= check("column-major", C, want_col);

  printf("xngemm %d.%d.%d consumer: %s\n", XNGEMM_VERSION_MAJOR,
         XNGEMM_VERSION_MINOR, XNGEMM_VERSION_PATCH, bad ? "MISMATCH" : "OK");
  return bad;
}
