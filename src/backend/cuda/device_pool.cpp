// device_pool.cpp - see device_pool.h.
#include "backend/cuda/device_pool.h"

#include <cstdint>
#include <mutex>

namespace xn {

namespace {

constexpr int kMaxDevices = 64;

struct PoolSlot {
  bool tried = false;
  cudaMemPool_t pool = nullptr;
};

std::mutex g_pools_mutex;
PoolSlot g_pools[kMaxDevices];

// The library pool of `device`, made at first use with the maximal release
// threshold; nullptr where it cannot be made (or the device is out of range).
cudaMemPool_t device_pool(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  PoolSlot &slot = g_pools[device];
  if (slot.tried) return slot.pool;
  slot.tried = true;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  std::uint64_t keep_all = UINT64_MAX;  // (cuuint64_t)
  if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all) !=
      cudaSuccess) {
    cudaGetLastError();
    cudaMemPoolDestroy(pool);
    return nullptr;
  }
  slot.pool = pool;
  return pool;
}

cudaMemPool_t current_device_pool() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return device_pool(device);
}

}  // namespace

cudaError_t pool_malloc_async(void **p, std::size_t bytes, cudaStream_t stream) {
  if (cudaMemPool_t pool = current_device_pool())
    return cudaMallocFromPoolAsync(p, bytes, pool, stream);
  return cudaMallocAsync(p, bytes, stream);
}

std::size_t pool_unused_bytes(int device) {
  cudaMemPool_t pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    if (device < 0 || device >= kMaxDevices) return 0;
    pool = g_pools[device].pool;
  }
  std::uint64_t reserved = 0, used = 0;
  if (!pool ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) !=
          cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return reserved > used ? std::size_t(reserved - used) : 0;
}

void trim_device_pool_if_unused() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  cudaMemPool_t pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pools_mutex);
    if (device < 0 || device >= kMaxDevices) return;
    pool = g_pools[device].pool;
  }
  std::uint64_t used = 0;
  if (!pool || cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) !=
                   cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (used == 0 && cudaMemPoolTrimTo(pool, 0) != cudaSuccess) cudaGetLastError();
}

}  // namespace xn
