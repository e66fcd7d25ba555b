// device_pool.h - the library's own stream-ordered memory pool, one per
// device, for the handles' workspaces (handle_state.cpp, acquire_workspace).
//
// Not the pool plain cudaMallocAsync takes (the stream's device's current
// pool: the default one, unless the program set another), whose release
// threshold is 0 by default, so that each synchronisation unmaps what was
// freed into it. On an H200 (CUDA 13, driver 580.159), a handle on the
// legacy default stream whose workspace grew from 50 to 117 MB, with 12
// processes sharing the GPU, faulted (illegal address) in 12 of 12 of them
// with that pool; with a pool whose threshold is at its maximum, in 0 of 12
// (docs/design.md, "Workspace": "Where the memory comes from"). So this pool
// keeps freed memory mapped and reuses it, as CCCL's pools do by default,
// and gives it back to the device only when nothing in it is allocated
// (trim_device_pool_if_unused).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace xn {

// The device of `stream` (cudaStreamGetDevice, CUDA 12.8 and later), else
// the current device, which the library's calls otherwise take to be the
// handle's.
cudaError_t stream_device(cudaStream_t stream, int *device);

// Makes `device` current for the scope and puts the previous device back
// at its end. ok() is false where the switch failed (the error is cleared;
// the current device is then unchanged). A negative device switches
// nothing and is ok().
class OnDevice {
 public:
  explicit OnDevice(int device) {
    if (device < 0) return;
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      ok_ = false;
      previous_ = -1;
      return;
    }
    if (previous_ == device) {
      previous_ = -1;  // nothing to put back
      return;
    }
    if (cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      ok_ = false;
      previous_ = -1;
    }
  }
  ~OnDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  OnDevice(const OnDevice &) = delete;
  OnDevice &operator=(const OnDevice &) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;  // the device to put back, or -1
  bool ok_ = true;
};

// A stream-ordered allocation of `bytes` on `stream` from the library pool
// of `stream`'s device (from that device's current pool where the library
// pool cannot be made; said once under XN_VERBOSE=1). *device is set to
// that device (for trim_device_pool_if_unused).
cudaError_t pool_malloc_async(void **p, std::size_t bytes, cudaStream_t stream, int *device);

// Frees `p`, allocated by pool_malloc_async on `device`, whose last use has
// completed (the caller waited for it), and returns once the free has: then
// trim_device_pool_if_unused can give it back. The free runs on a
// non-blocking stream of the library's (where that cannot be made, on the
// per-thread default stream of `device`). Not cudaFree: on an H200
// (CUDA 13, driver 580.159) cudaFree of a block from a pool gives the block
// back but leaves the pool's count of used bytes as it was, so the pool
// would never look unused again.
cudaError_t pool_free_completed(void *p, int device);

// What the library pool of `device` holds mapped, and what of that its
// allocations use (both 0 where there is no pool yet).
struct PoolBytes {
  std::size_t reserved = 0, used = 0;
  std::size_t unused() const { return reserved > used ? reserved - used : 0; }
};
PoolBytes pool_bytes(int device);
// The same of any pool (both 0 where they cannot be read).
PoolBytes pool_bytes_of(cudaMemPool_t pool);

// Gives the library pool of `device` back to the device if no allocation
// in it is live: call after freeing a workspace outside any call, its
// handle's last call waited for (then no queued work of the library reads
// the pool). Allocations from the pool wait while it trims.
void trim_device_pool_if_unused(int device);

}  // namespace xn
