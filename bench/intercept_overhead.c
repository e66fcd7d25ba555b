/* intercept_overhead.c - what libxngemm_intercept.so adds to a call it
 * passes through: a 2 x 2 x 2 dgemm_ (and cblas_dgemm) called back to back,
 * timed with the monotonic clock; the median over repeats of the time per
 * call. Linked to the system BLAS only; run it with and without LD_PRELOAD
 * (scripts/bench_intercept.sh does both and prints the difference).
 *
 *   intercept_overhead [CALLS [REPEATS]]   (default 200000, 9) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *,
            const double *, const double *, const int *, const double *, const int *,
            const double *, double *, const int *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 200000;
  int reps = argc > 2 ? atoi(argv[2]) : 9;
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64; /* the arrays below */
  double A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C[4] = {0};
  const int n = 2;
  const double one = 1, zero = 0;
  double t_f[64], t_c[64];
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (long i = 0; i < calls; ++i)
      dgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n);
    t_f[r] = (now() - t0) / (double)calls;
    t0 = now();
    for (long i = 0; i < calls; ++i)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, A, 2, B, 2,
                  0.0, C, 2);
    t_c[r] = (now() - t0) / (double)calls;
  }
  qsort(t_f, (size_t)reps, sizeof(double), cmp);
  qsort(t_c, (size_t)reps, sizeof(double), cmp);
  printf(
      "dgemm_ %.1f ns/call, cblas_dgemm %.1f ns/call (median of %d x %ld calls, C[0] = "
      "%g)\n",
      1e9 * t_f[reps / 2], 1e9 * t_c[reps / 2], reps, calls, C[0]);
  return 0;
}
