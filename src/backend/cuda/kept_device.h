// kept_device.h - the GPU context that the host-side front ends keep between
// calls: the host BLAS routines (one a host thread, src/api/host_api.cpp)
// and the distributed routines (one a GPU, src/distributed/device_engine.cu).
// A stream, a cuBLAS handle on it that follows the process-wide options, and
// buffers that only grow, so that a call allocates nothing once they are
// large enough.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace xn {

struct Options;

// Device memory that only grows, stream-ordered on the stream it is given.
class GrowingDeviceBuffer {
 public:
  // At least n bytes at data() (contents not kept); false where they cannot
  // be had. `headroom`: bytes that must stay free beyond the growth (memory
  // others allocate later: the distributed routines' transports), checked
  // before anything is freed: a refusal there keeps the buffer; a failed
  // allocation leaves it empty.
  bool reserve(std::size_t n, cudaStream_t stream, int device, std::size_t headroom = 0);
  void release(cudaStream_t stream);
  void *data() const { return p_; }

 private:
  void *p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Pinned host memory that only grows.
class GrowingHostBuffer {
 public:
  bool reserve(std::size_t n);  // at least n bytes at data(); false where not had
  void release();
  void *data() const { return p_; }

 private:
  void *p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Whether n more bytes could be had on `device`: the free memory plus what
// the stream-ordered pool holds freed but not yet given back (true where
// CUDA cannot say).
bool device_could_have(std::size_t n, int device);

struct KeptDevice {
  enum class StreamKind { NonBlocking, Blocking };

  int device = -1;
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  GrowingDeviceBuffer work;

  KeptDevice() = default;
  KeptDevice(const KeptDevice &) = delete;
  KeptDevice &operator=(const KeptDevice &) = delete;
  ~KeptDevice() { release(); }

  // The stream and the handle, made on the current device at first use.
  // False, for good, where they cannot be made. A Blocking stream follows
  // the caller's work on the legacy default stream, as a host routine does.
  bool ready(StreamKind kind);
  // Every option of the table (core/options.h) set on the handle: the
  // process-wide ones (xnSetOption(NULL, ...)) as a host routine sees them,
  // not what the kept handle had from an earlier call.
  void follow(const Options &o);
  void follow_process_options();  // follow(default_options())
  // The handle's library state, the handle, the buffer and the stream.
  void release();

 private:
  bool broken_ = false;
};

}  // namespace xn
