/* intercept_client.c - an unchanged BLAS program for the interposer tests
 * (tests/intercept/check_intercept.py): linked to the system BLAS only, it
 * calls dgemm_, cblas_dgemm (row-major), sgemm_ and cblas_sgemm on inputs
 * from a fixed generator and prints every entry of C in hexadecimal, so the
 * checker can compare bit for bit and against exact rational arithmetic.
 *
 *   intercept_client CASE    CASE: signed (the default), nonneg, bad, threads,
 *                            alpha0, nan
 *
 * signed: A (m x k) and B (k x n) with entries of mixed sign and exponents
 *         2^-20..2^20 (dot products that cancel); nonneg: small non-negative
 *         integers (every product exact); bad: a call with lda < m, which
 *         the BLAS reports through its xerbla (the program then continues
 *         or stops as that BLAS does); threads: the signed dgemm_ from 4
 *         threads at once, 8 times each, every thread's last C printed as
 *         "dgemm_tT"; alpha0: alpha = 0, C = beta C (BLAS's quick return,
 *         which reference BLAS does without reading A or B); nan: signed
 *         with A(0,0) = NaN. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *,
            const double *, const double *, const int *, const double *, const int *,
            const double *, double *, const int *);
void sgemm_(const char *, const char *, const int *, const int *, const int *,
            const float *, const float *, const int *, const float *, const int *,
            const float *, float *, const int *);

enum { M = 5, N = 4, K = 96 };

/* The same generator as check_intercept.py: 64-bit LCG, top 53 bits. */
static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state;
}
/* A signed value with an exponent in -20..20, or a small integer. */
static double draw(int nonneg) {
  const uint64_t r = next_u64();
  if (nonneg) return (double)((r >> 33) % 7);
  const double mant = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
  const int e = (int)((r >> 3) % 41) - 20;
  const double v =
      (1.0 + mant) * (e >= 0 ? (double)(1ull << e) : 1.0 / (double)(1ull << -e));
  return (r & 1) ? -v : v;
}

enum { THREADS = 4, ROUNDS = 8 };
static double tA[M * K], tB[K * N], tC[THREADS][M * N];
static void *worker(void *arg) {
  const int t = (int)(long)arg, m = M, n = N, k = K;
  const double one = 1, zero = 0;
  for (int r = 0; r < ROUNDS; ++r)
    dgemm_("N", "N", &m, &n, &k, &one, tA, &m, tB, &k, &zero, tC[t], &m);
  return NULL;
}

int main(int argc, char **argv) {
  const char *c = argc > 1 ? argv[1] : "signed";
  const int nonneg = !strcmp(c, "nonneg");
  double A[M * K], B[K * N], C[M * N], Ar[M * K], Br[K * N], Cr[M * N];
  float As[M * K], Bs[K * N], Cs[M * N];
  for (int i = 0; i < M * K; ++i) A[i] = draw(nonneg);
  for (int i = 0; i < K * N; ++i) B[i] = draw(nonneg);
  if (!strcmp(c, "nan")) A[0] = NAN;
  /* Row-major copies of the same matrices for cblas_dgemm. */
  for (int i = 0; i < M; ++i)
    for (int p = 0; p < K; ++p) Ar[i * K + p] = A[i + p * M];
  for (int p = 0; p < K; ++p)
    for (int j = 0; j < N; ++j) Br[p * N + j] = B[p + j * K];
  for (int i = 0; i < M * K; ++i) As[i] = (float)A[i];
  for (int i = 0; i < K * N; ++i) Bs[i] = (float)B[i];
  const int m = M, n = N, k = K;
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;

  if (!strcmp(c, "threads")) {
    pthread_t th[THREADS];
    memcpy(tA, A, sizeof A);
    memcpy(tB, B, sizeof B);
    for (long t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; ++t)
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i)
          printf("dgemm_t%d %d %d %a\n", t, i, j, tC[t][i + j * M]);
    return 0;
  }
  if (!strcmp(c, "alpha0")) {
    const double two = 2;
    for (int i = 0; i < M * N; ++i) C[i] = i + 1;
    dgemm_("N", "N", &m, &n, &k, &zero, A, &m, B, &k, &two, C, &m);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.0, Ar, K, Br, N,
                2.0, C, N);
    for (int i = 0; i < M * N; ++i) printf("alpha0 %d 0 %a\n", i, C[i]);
    return 0;
  }
  if (!strcmp(c, "bad")) {
    const int bad_lda = M - 1;
    dgemm_("N", "N", &m, &n, &k, &one, A, &bad_lda, B, &k, &zero, C, &m);
    printf("after bad call\n");
    return 0;
  }
  dgemm_("N", "N", &m, &n, &k, &one, A, &m, B, &k, &zero, C, &m);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) printf("dgemm %d %d %a\n", i, j, C[i + j * M]);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, Ar, K, Br, N, 0.0,
              Cr, N);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) printf("cblas_dgemm %d %d %a\n", i, j, Cr[i * N + j]);
  sgemm_("N", "N", &m, &n, &k, &onef, As, &m, Bs, &k, &zerof, Cs, &m);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) printf("sgemm %d %d %a\n", i, j, (double)Cs[i + j * M]);
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, As, M, Bs, K,
              0.0f, Cs, M);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i)
      printf("cblas_sgemm %d %d %a\n", i, j, (double)Cs[i + j * M]);
  return 0;
}
