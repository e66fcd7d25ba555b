/* A C consumer of the installed distributed library: it links
 * xngemm::xngemm_dist (libxngemm_dist, ScaLAPACK, MPI) and, without starting
 * MPI, asks what the last distributed call did (nothing yet). */
#include <stdio.h>
#include <xngemm_dist.h>

int main(void) {
  int bands = -1, panels = -1;
  void (*routine)(const char *, const char *, const int *, const int *, const int *,
                  const double *, const double *, const int *, const int *, const int *,
                  const double *, const int *, const int *, const int *, const double *,
                  double *, const int *, const int *, const int *) = pexdgemm_;
  xnGetLastDistInfo(&bands, &panels);
  if (routine == 0 || bands != 0 || panels != 0) {
    fprintf(stderr, "dist consumer: bands %d, panels %d\n", bands, panels);
    return 1;
  }
  printf("dist consumer: OK\n");
  return 0;
}
