// mpi_entries.h - xnbench_mpi's matrices: entry (i, j) of matrix `which`
// from its global indices alone (a hash), so the data does not depend on
// the grid, the block size or where it is made (host or GPU: one rule).
#pragma once

#include <cstdint>

#include "numerics/hd.h"

namespace xnb {

// Uniform in [0, 1) for the non-negative routines, 53-bit (u - 0.5) for
// pexdgemm.
XN_HD double entry(std::uint64_t seed, int which, std::int64_t i, std::int64_t j,
                   bool signed_) {
  std::uint64_t z =
      seed ^ (std::uint64_t(which) << 60) ^ (std::uint64_t(i) << 30) ^ std::uint64_t(j);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double u = double(z >> 11) * 0x1p-53;
  return signed_ ? u - 0.5 : u;
}

// The global index of local index l of a dimension dealt in blocks of nb
// from process 0 over `procs` processes, on process `proc`.
XN_HD std::int64_t global_of(std::int64_t l, int nb, int proc, int procs) {
  return (l / nb * procs + proc) * nb + l % nb;
}

}  // namespace xnb
