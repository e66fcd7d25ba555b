/* A C consumer of the installed distributed library: it links
 * xngemm::xngemm_dist (libxngemm_dist, ScaLAPACK, MPI) and, run by mpiexec
 * on one or more processes (a 1 x P BLACS grid, 2 x 2 blocks), computes
 * C := alpha A B + beta C with PDNGEMM on 5 x 3 times 3 x 4 non-negative
 * matrices. The entries are small integers, so every process's part of C
 * must equal a plain loop's exactly; xnGetLastDistStatus and
 * xnGetLastDistInfo must say the call completed in one band. Rank 0 prints
 * "dist consumer: OK" when every process agrees; the exit status is nonzero
 * otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <xngemm_dist.h>

/* BLACS and ScaLAPACK's tools (no header of their own). */
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld,
               int *info);

enum { M = 5, N = 4, K = 3, NB = 2 };

static double a_at(int i, int p) { return (double)((i + 2 * p) % 5); }
static double b_at(int p, int j) { return (double)((3 * p + j) % 4); }
static double c_at(int i, int j) { return (double)(i + j); }

/* The global index of local index l (0-based) of a dimension cut into NB
 * blocks dealt round-robin from process 0 over nprocs processes. */
static int global_index(int l, int iproc, int nprocs) {
  return ((l / NB) * nprocs + iproc) * NB + l % NB;
}

/* A local block-cyclic array of the rows x cols matrix f, and its descriptor. */
static int local_array(double *x, int *desc, int rows, int cols, int ctxt, int nprow,
                       int npcol, int myrow, int mycol, double (*f)(int, int)) {
  const int nb = NB, zero = 0;
  const int mloc = numroc_(&rows, &nb, &myrow, &zero, &nprow);
  const int nloc = numroc_(&cols, &nb, &mycol, &zero, &npcol);
  const int lld = mloc > 1 ? mloc : 1;
  int info = 0;
  descinit_(desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  for (int lj = 0; lj < nloc; ++lj)
    for (int li = 0; li < mloc; ++li)
      x[li + lld * lj] =
          f(global_index(li, myrow, nprow), global_index(lj, mycol, npcol));
  return info;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, size);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);

  /* Every local array fits in M x N entries. */
  double A[M * N], B[M * N], C[M * N];
  int desca[9], descb[9], descc[9];
  int bad = local_array(A, desca, M, K, ctxt, nprow, npcol, myrow, mycol, a_at) != 0;
  bad |= local_array(B, descb, K, N, ctxt, nprow, npcol, myrow, mycol, b_at) != 0;
  bad |= local_array(C, descc, M, N, ctxt, nprow, npcol, myrow, mycol, c_at) != 0;

  const int m = M, n = N, k = K, one = 1;
  const double alpha = 2.0, beta = 0.5;
  pdngemm_("N", "N", &m, &n, &k, &alpha, A, &one, &one, desca, B, &one, &one, descb,
           &beta, C, &one, &one, descc);
  int bands = -1;
  xnGetLastDistInfo(&bands, NULL);
  if (xnGetLastDistStatus() != 0 || bands != 1) {
    fprintf(stderr, "dist consumer, rank %d: status %d, bands %d\n", rank,
            xnGetLastDistStatus(), bands);
    bad = 1;
  }

  const int nb = NB, zero = 0;
  const int mloc = numroc_(&m, &nb, &myrow, &zero, &nprow);
  const int nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  for (int lj = 0; lj < nloc; ++lj)
    for (int li = 0; li < mloc; ++li) {
      const int i = global_index(li, myrow, nprow), j = global_index(lj, mycol, npcol);
      double want = beta * c_at(i, j);
      for (int p = 0; p < K; ++p) want += alpha * a_at(i, p) * b_at(p, j);
      if (C[li + descc[8] * lj] != want) {
        fprintf(stderr, "dist consumer, rank %d: C(%d, %d) is %g, expected %g\n", rank,
                i, j, C[li + descc[8] * lj], want);
        bad = 1;
      }
    }

  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("dist consumer on %d process(es): %s\n", size, any_bad ? "MISMATCH" : "OK");
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return any_bad;
}
