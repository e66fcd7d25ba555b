// xnbench_mpi_gpu.h - the GPU side of xnbench_mpi (--memory device): local
// arrays made on the process's GPU, and the local engine timed alone.
#pragma once

#include <cstdint>

namespace xnb {

enum class Routine { pdngemm, psngemm, pexdgemm };

// Binds this process to GPU local_rank mod (GPUs); the number of GPUs
// (0: none).
int bind_gpu(int local_rank);

// Holds all but `gib` GiB of this process's GPU memory until the process
// ends, so that a larger card runs as a smaller one would (--card-gib);
// false if that much cannot be held.
bool hold_all_but(double gib);

// An lr x lc local array (leading dimension lld) on the GPU holding the
// process (myrow, mycol)'s entries of matrix `which` (nb x nb blocks from
// process (0, 0) of a P x Q grid). Null if it cannot be allocated.
template <class T>
T *device_local(std::int64_t lr, std::int64_t lc, std::int64_t lld, int nb, int P, int Q,
                int myrow, int mycol, std::uint64_t seed, int which, bool signed_);
void device_free(void *p);
template <class T>
T device_read(const T *p, std::int64_t index);

// Median milliseconds of `reps` calls (after one warm-up) of the library's
// device routine for `routine` on an m x k by k x n product on this GPU,
// as the local engine of the distributed routine would run it (classical:
// XN_OPT_MAX_LEVELS = 0, cuBLAS's GEMM). Negative if memory failed.
double time_local_engine(Routine routine, bool classical, std::int64_t m, std::int64_t n,
                         std::int64_t k, int reps, std::uint64_t seed);

}  // namespace xnb
