// device_pool.cpp - see device_pool.h.
#include "backend/cuda/device_pool.h"

#include <cstdint>
#include <mutex>

#include "backend/cuda/handle_state.h"
#include "core/environment.h"

namespace xn {

namespace {

constexpr int kMaxDevices = 64;

struct PoolSlot {
  bool tried = false;
  cudaMemPool_t pool = nullptr;
  // Made at the first pool_free_completed on the device (nullptr until then
  // or where it cannot be made).
  cudaStream_t free_stream = nullptr;
};

// Guards the table, and makes an allocation and a trim's check-then-trim
// exclusive (no allocation lands between the check and the trim).
std::mutex g_pools_mutex;
PoolSlot g_pools[kMaxDevices];

// The library pool of `device` (caller holds g_pools_mutex), made at first
// use with the maximal release threshold; nullptr where it cannot be made.
cudaMemPool_t device_pool_locked(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  PoolSlot &slot = g_pools[device];
  if (slot.tried) return slot.pool;
  slot.tried = true;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  cudaError_t e = cudaMemPoolCreate(&pool, &props);
  if (e == cudaSuccess) {
    std::uint64_t keep_all = UINT64_MAX;  // (a cuuint64_t)
    e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all);
    if (e != cudaSuccess) cudaMemPoolDestroy(pool);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    diagnostic("workspaces on device %d from its current pool: no pool of the library's (%s)",
               device, cudaGetErrorString(e));
    return nullptr;
  }
  slot.pool = pool;
  return pool;
}

}  // namespace

cudaError_t stream_device(cudaStream_t stream, int *device) {
#if CUDART_VERSION >= 12080
  if (cudaStreamGetDevice(stream, device) == cudaSuccess) return cudaSuccess;
  cudaGetLastError();
#else
  (void)stream;
#endif
  return cudaGetDevice(device);
}

cudaError_t pool_malloc_async(void **p, std::size_t bytes, cudaStream_t stream, int *device) {
  if (const cudaError_t e = stream_device(stream, device); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  if (cudaMemPool_t pool = device_pool_locked(*device))
    return cudaMallocFromPoolAsync(p, bytes, pool, stream);
  return cudaMallocAsync(p, bytes, stream);
}

cudaError_t pool_free_completed(void *p, int device) {
  if (!p) return cudaSuccess;
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  // On the block's device: its free stream is made there, and the
  // per-thread stream is the current device's.
  const OnDevice on_device(device);
  cudaStream_t stream = cudaStreamPerThread;
  if (device >= 0 && device < kMaxDevices) {
    PoolSlot &slot = g_pools[device];
    // A stream that waits for nothing of the program's: the free completes
    // at once (the per-thread one would wait for the legacy stream's work).
    if (!slot.free_stream &&
        cudaStreamCreateWithFlags(&slot.free_stream, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      slot.free_stream = nullptr;
    }
    if (slot.free_stream) stream = slot.free_stream;
  }
  cudaError_t e = cudaFreeAsync(p, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  return e;
}

PoolBytes pool_bytes(int device) {
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  if (device < 0 || device >= kMaxDevices || !g_pools[device].pool) return PoolBytes{};
  return pool_bytes_of(g_pools[device].pool);
}

PoolBytes pool_bytes_of(cudaMemPool_t pool) {
  PoolBytes b;
  std::uint64_t reserved = 0, used = 0;  // (cuuint64_t)
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) !=
          cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
    cudaGetLastError();
    return b;
  }
  b.reserved = std::size_t(reserved);
  b.used = std::size_t(used);
  return b;
}

void trim_device_pool_if_unused(int device) {
  const RelaxedCaptureMode relaxed;  // (another thread may capture globally)
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  if (device < 0 || device >= kMaxDevices || !g_pools[device].pool) return;
  cudaMemPool_t pool = g_pools[device].pool;
  std::uint64_t used = 0;
  cudaError_t e = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
  if (e == cudaSuccess && used == 0) e = cudaMemPoolTrimTo(pool, 0);
  if (e != cudaSuccess) cudaGetLastError();
}

}  // namespace xn
