// test_dist_grid_identity.cpp - the key under which the device engine keeps
// a grid's communicators (src/distributed/grid_identity.h): the grid's processes
// as ranks of MPI_COMM_WORLD, row-major, for grids made in every way BLACS
// offers (row-major, column-major, a user's map), made and freed many
// times over (so that MPI reuses the handles of freed grid communicators),
// must be the same on every process of the grid and what the grid was
// built from. Plain MPI (no GPU): runs under mpirun on 1 to 6 processes.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "distributed/grid_identity.h"
#include "distributed/scalapack.h"

extern "C" void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow, int npcol);

namespace {

int g_rank = 0, g_failures = 0, g_checks = 0;

// Checks `got` on this process against `want` (row-major world ranks) and
// that every process of the grid has the same identity.
void check(int ctxt, const std::vector<int> &want, const char *how) {
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  if (nprow < 0) return;  // not in this grid
  const std::vector<int> got = xn::dist::grid_world_ranks(ctxt);
  ++g_checks;
  if (got != want) {
    ++g_failures;
    std::fprintf(stderr, "[rank %d] %s %dx%d: identity differs from the grid's map\n",
                 g_rank, how, nprow, npcol);
  }
  // The same on every process of the grid: a hash, its least and largest.
  long long h[2] = {0, 0};
  for (int r : got) h[0] = h[0] * 1000003 + r + 1;
  h[1] = -h[0];
  std::vector<int> members;
  MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_LONG_LONG, MPI_MIN,
                xn::dist::grid_communicator(ctxt, &members));
  ++g_checks;
  if (h[0] != -h[1]) {
    ++g_failures;
    std::fprintf(stderr, "[rank %d] %s %dx%d: the processes disagree\n", g_rank, how,
                 nprow, npcol);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::mt19937 rng(12345);  // the same on every process
  for (int round = 0; round < 40; ++round) {
    for (int P = 1; P <= size; ++P) {
      if (size % P) continue;
      const int Q = size / P;
      for (const char *order : {"Row", "Col"}) {
        int ctxt = 0;
        Cblacs_get(-1, 0, &ctxt);
        Cblacs_gridinit(&ctxt, order, P, Q);
        std::vector<int> want(std::size_t(P * Q));
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q)
            want[std::size_t(p * Q + q)] = order[0] == 'R' ? p * Q + q : q * P + p;
        check(ctxt, want, order);
        Cblacs_gridexit(ctxt);
      }
    }
    // A user's map of some of the processes, in a random order.
    std::vector<int> all(static_cast<std::size_t>(size));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    const int used = 1 + int(rng() % unsigned(size));
    const int P = used % 2 == 0 ? 2 : 1, Q = used / P;
    std::vector<int> map(std::size_t(P * Q));  // column-major, as BLACS reads it
    std::vector<int> want(std::size_t(P * Q));
    for (int p = 0; p < P; ++p)
      for (int q = 0; q < Q; ++q) {
        map[std::size_t(p + q * P)] = all[std::size_t(p * Q + q)];
        want[std::size_t(p * Q + q)] = all[std::size_t(p * Q + q)];
      }
    int ctxt = 0;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridmap(&ctxt, map.data(), P, P, Q);
    check(ctxt, want, "map");
    int nprow = -1, npcol, myrow, mycol;
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (nprow >= 0) Cblacs_gridexit(ctxt);
  }
  int local[2] = {g_failures, g_checks}, sum[2] = {0, 0};
  MPI_Reduce(local, sum, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("%d processes: %d checks, %d failures\n", size, sum[1], sum[0]);
  int any = g_failures > 0, any_all = 0;
  MPI_Allreduce(&any, &any_all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_all ? 1 : 0;
}
