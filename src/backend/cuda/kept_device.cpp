// kept_device.cpp - the GPU context the host-side front ends keep
// (kept_device.h).
#include "backend/cuda/kept_device.h"

#include <algorithm>
#include <cstdint>

#include "backend/cuda/device_pool.h"
#include "backend/cuda/handle_state.h"
#include "core/options.h"
#include "xngemm.h"

namespace xn {

bool device_could_have(std::size_t n, int device) {
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
    free_b += pool_bytes_of(pool).unused();
  cudaGetLastError();
  return n <= free_b;
}

bool GrowingDeviceBuffer::reserve(std::size_t n, cudaStream_t stream, int device,
                                  std::size_t headroom) {
  if (n <= bytes_) return true;
  // A size the device cannot give even with this buffer back fails at once
  // and keeps the buffer (the caller may try a smaller one).
  if (headroom > 0 && !device_could_have(n - bytes_ + headroom, device)) return false;
  release(stream);
  if (cudaMallocAsync(&p_, std::max<std::size_t>(n, 1), stream) != cudaSuccess) {
    cudaGetLastError();
    p_ = nullptr;
    return false;
  }
  bytes_ = n;
  return true;
}

void GrowingDeviceBuffer::release(cudaStream_t stream) {
  if (p_) cudaFreeAsync(p_, stream);
  p_ = nullptr;
  bytes_ = 0;
}

bool GrowingHostBuffer::reserve(std::size_t n) {
  if (n <= bytes_) return true;
  release();
  if (cudaMallocHost(&p_, std::max<std::size_t>(n, 1)) != cudaSuccess) {
    cudaGetLastError();
    p_ = nullptr;
    return false;
  }
  bytes_ = n;
  return true;
}

void GrowingHostBuffer::release() {
  if (p_) cudaFreeHost(p_);
  p_ = nullptr;
  bytes_ = 0;
}

bool KeptDevice::ready(StreamKind kind) {
  if (broken_) return false;
  if (handle) return true;
  if (cudaGetDevice(&device) != cudaSuccess ||
      (kind == StreamKind::NonBlocking
           ? cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)
           : cudaStreamCreate(&stream)) != cudaSuccess ||
      cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
    cudaGetLastError();
    broken_ = true;
    return false;
  }
  return true;
}

void KeptDevice::follow(const Options &o) {
  for (std::size_t i = 0; i < option_count(); ++i) {
    const OptionSpec &spec = option_table()[i];
    xnSetOption(handle, xnOption_t(spec.id), o.*spec.field);
  }
}

void KeptDevice::follow_process_options() { follow(default_options()); }

void KeptDevice::release() {
  // (Outside any stream capture: this may run at a thread's exit while
  // another thread captures in global mode.)
  const RelaxedCaptureMode relaxed;
  if (stream) work.release(stream);
  if (handle) {
    xnRelease(handle);
    cublasDestroy(handle);
    handle = nullptr;
  }
  if (stream) {
    cudaStreamSynchronize(stream);  // the buffer's stream-ordered free
    cudaStreamDestroy(stream);
    stream = nullptr;
  }
}

}  // namespace xn
