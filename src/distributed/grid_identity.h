// grid_identity.h - which processes a BLACS grid is made of, in a form that
// outlives the grid: the key under which the device engine keeps a grid's
// MPI and NCCL communicators between calls (device_engine.cu).
#pragma once

#include <mpi.h>

#include <vector>

namespace xn::dist {

// The ranks in MPI_COMM_WORLD of the processes of BLACS grid `ctxt`, in the
// grid's row-major order. Not the grid's own communicator: BLACS frees it
// at Cblacs_gridexit, and MPI may give its handle to the next grid's
// communicator on some processes and not on others, so a handle compared
// across grids says nothing (and a cache keyed on it made the processes
// of one grid disagree on whether to make new communicators: a hang).
// Empty if a process of the grid is not in MPI_COMM_WORLD.
std::vector<int> grid_world_ranks(int ctxt);

// The grid's own communicator (BLACS's, valid until Cblacs_gridexit) and
// the ranks in it of the grid's processes, row-major.
MPI_Comm grid_communicator(int ctxt, std::vector<int> *members);

}  // namespace xn::dist
