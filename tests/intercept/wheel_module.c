/* wheel_module.c - an extension module as NumPy's and SciPy's are: linked
 * against its own bundled BLAS (wheel_blas.c, under plain, prefixed and 64-bit
 * names) and loaded by its program with RTLD_LOCAL (wheel_client.c).
 * wheel_run() calls every DGEMM, DGEMV and DDOT of every build once on
 * fresh signed data with wide exponents (plain double sums round wrongly
 * somewhere) and prints, per call, "name" and the operands and results in
 * hexadecimal for tests/intercept/check_intercept.py ("wheels"); then one
 * 64-bit call whose lda exceeds 32 bits ("toolarge": it must pass through). */
#include <stdint.h>
#include <stdio.h>

enum { M = 5, N = 4, K = 96, GM = 6, GN = 80, DN = 200 };

static uint64_t state = 0x2545F4914F6CDD1Dull;
static double draw(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  const uint64_t r = state;
  const double mant = (double)(r >> 11) / 9007199254740992.0;
  const int e = (int)((r >> 3) % 41) - 20;
  const double v = (1.0 + mant) * (e >= 0 ? (double)(1ull << e) : 1.0 / (double)(1ull << -e));
  return (r & 1) ? -v : v;
}
static void fill(double *p, int n) {
  for (int i = 0; i < n; ++i) p[i] = draw();
}
static void show(const char *what, const double *p, int n) {
  printf("%s", what);
  for (int i = 0; i < n; ++i) printf(" %a", p[i]);
  printf("\n");
}

#define DECLARE(PREFIX, FSUF, CSUF, INT)                                                      \
  void PREFIX##dgemm##FSUF(const char *, const char *, const INT *, const INT *, const INT *, \
                           const double *, const double *, const INT *, const double *,       \
                           const INT *, const double *, double *, const INT *);               \
  void PREFIX##cblas_dgemm##CSUF(int, int, int, INT, INT, INT, double, const double *, INT,   \
                                 const double *, INT, double, double *, INT);                 \
  void PREFIX##dgemv##FSUF(const char *, const INT *, const INT *, const double *,            \
                           const double *, const INT *, const double *, const INT *,          \
                           const double *, double *, const INT *);                            \
  void PREFIX##cblas_dgemv##CSUF(int, int, INT, INT, double, const double *, INT,             \
                                 const double *, INT, double, double *, INT);                 \
  double PREFIX##ddot##FSUF(const INT *, const double *, const INT *, const double *,         \
                            const INT *);                                                     \
  double PREFIX##cblas_ddot##CSUF(INT, const double *, INT, const double *, INT);

#define RUN(PREFIX, FSUF, CSUF, INT)                                                         \
  {                                                                                          \
    const INT m = M, n = N, k = K, gm = GM, gn = GN, dn = DN, one = 1;                       \
    const double alpha = 1.0, beta = 0.0;                                                    \
    double A[M * K], B[K * N], C[M * N], GA[GM * GN], x[GN], y[GN], d;                       \
    fill(A, M * K), fill(B, K * N);                                                          \
    PREFIX##dgemm##FSUF("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, C, &m);           \
    printf("gemm %s\n", #PREFIX "dgemm" #FSUF);                                              \
    show("A", A, M * K), show("B", B, K * N), show("C", C, M * N);                           \
    fill(A, M * K), fill(B, K * N);                                                          \
    PREFIX##cblas_dgemm##CSUF(102, 111, 111, m, n, k, alpha, A, m, B, k, beta, C, m);        \
    printf("gemm %s\n", #PREFIX "cblas_dgemm" #CSUF);                                        \
    show("A", A, M * K), show("B", B, K * N), show("C", C, M * N);                           \
    fill(GA, GM * GN), fill(x, GN);                                                          \
    PREFIX##dgemv##FSUF("N", &gm, &gn, &alpha, GA, &gm, x, &one, &beta, y, &one);            \
    printf("gemv %s\n", #PREFIX "dgemv" #FSUF);                                              \
    show("A", GA, GM * GN), show("x", x, GN), show("y", y, GM);                              \
    fill(GA, GM * GN), fill(x, GM);                                                          \
    PREFIX##cblas_dgemv##CSUF(102, 112, gm, gn, alpha, GA, gm, x, one, beta, y, one);        \
    printf("gemvt %s\n", #PREFIX "cblas_dgemv" #CSUF);                                       \
    show("A", GA, GM * GN), show("x", x, GM), show("y", y, GN);                              \
    double dx[DN], dy[DN];                                                                   \
    fill(dx, DN), fill(dy, DN);                                                              \
    d = PREFIX##ddot##FSUF(&dn, dx, &one, dy, &one);                                         \
    printf("dot %s\n", #PREFIX "ddot" #FSUF);                                                \
    show("x", dx, DN), show("y", dy, DN), show("r", &d, 1);                                  \
    fill(dx, DN), fill(dy, DN);                                                              \
    d = PREFIX##cblas_ddot##CSUF(dn, dx, one, dy, one);                                      \
    printf("dot %s\n", #PREFIX "cblas_ddot" #CSUF);                                          \
    show("x", dx, DN), show("y", dy, DN), show("r", &d, 1);                                  \
  }

DECLARE(, _, , int32_t)
DECLARE(scipy_, _, , int32_t)
DECLARE(scipy_, _64_, 64_, int64_t)
DECLARE(, _64_, 64_, int64_t)

void wheel_run(void) {
  RUN(, _, , int32_t)
  RUN(scipy_, _, , int32_t)
  RUN(scipy_, _64_, 64_, int64_t)
  RUN(, _64_, 64_, int64_t)
  /* A 64-bit lda beyond 32 bits (one column: only m elements are read). */
  const int64_t m = GM, n = 1, lda = (int64_t)1 << 33, one = 1;
  const double alpha = 1.0, beta = 0.0;
  double A[GM], x[1], y[GM];
  fill(A, GM), fill(x, 1);
  scipy_dgemv_64_("N", &m, &n, &alpha, A, &lda, x, &one, &beta, y, &one);
  printf("toolarge scipy_dgemv_64_\n");
  show("A", A, GM), show("x", x, 1), show("y", y, GM);
  fflush(stdout);
}
