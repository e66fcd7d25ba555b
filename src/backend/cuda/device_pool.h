// device_pool.h - the library's own stream-ordered memory pool, one per
// device, for the handles' workspaces (handle_state.cpp, acquire_workspace).
//
// Not the device's default pool (plain cudaMallocAsync): its release
// threshold is 0, so each synchronisation unmaps what was freed into it,
// and with the GPU time-sliced between processes that unmapped memory a
// live or queued use still read. On an H200 (CUDA 13, driver 580.159), a
// handle on the legacy default stream whose workspace grew from 50 to
// 117 MB faulted (illegal address) in 12 of 12 processes run at once, also
// with the old workspace freed only after an event said its uses had
// completed; with the pool's threshold at its maximum, 0 of 12, also with
// stream-ordered frees (docs/design.md, "The workspace"). So this pool keeps
// freed memory mapped and reuses it, as CCCL's and RMM's pools do by
// default, and gives it back to the device only when nothing in it is
// allocated (trim_device_pool_if_unused). The host front ends' buffers
// (kept_device.h) stay in the default pool: they run on streams of their
// own, where no fault was seen, and the distributed engine counts what the
// default pool gives back as free for NCCL's later allocations.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace xn {

// cudaMallocAsync of `bytes` on `stream` from the current device's library
// pool (the default pool where a pool cannot be made).
cudaError_t pool_malloc_async(void **p, std::size_t bytes, cudaStream_t stream);

// Bytes the library pool of `device` holds mapped that no allocation uses
// (0 where there is no pool): free to the library's next allocation.
std::size_t pool_unused_bytes(int device);

// Gives the current device's library pool's memory back to the device
// when no allocation in it is live (after the last workspace in it is
// freed, its handle's last call waited for: then no queued work can read
// what is unmapped).
void trim_device_pool_if_unused();

}  // namespace xn
