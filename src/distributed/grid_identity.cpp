// grid_identity.cpp - see grid_identity.h.
#include "distributed/grid_identity.h"

#include "distributed/scalapack.h"

// Not in scalapack.h (only the grid identity asks): the MPI communicator
// behind a BLACS system handle, and a grid process's number in it.
extern "C" {
MPI_Comm Cblacs2sys_handle(int sys_ctxt);
int Cblacs_pnum(int ctxt, int prow, int pcol);
}

namespace xn::dist {

MPI_Comm grid_communicator(int ctxt, std::vector<int> *members) {
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  int handle = 0;
  Cblacs_get(ctxt, 10, &handle);  // the grid's communicator, as a system handle
  members->clear();
  for (int p = 0; p < nprow; ++p)
    for (int q = 0; q < npcol; ++q) members->push_back(Cblacs_pnum(ctxt, p, q));
  return Cblacs2sys_handle(handle);
}

std::vector<int> grid_world_ranks(int ctxt) {
  std::vector<int> members;
  const MPI_Comm comm = grid_communicator(ctxt, &members);
  std::vector<int> world(members.size(), MPI_UNDEFINED);
  MPI_Group grid = MPI_GROUP_NULL, all = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &grid);
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  MPI_Group_translate_ranks(grid, int(members.size()), members.data(), all, world.data());
  MPI_Group_free(&grid);
  MPI_Group_free(&all);
  for (int r : world)
    if (r == MPI_UNDEFINED) return {};
  return world;
}

}  // namespace xn::dist
