// per_device.h - what a launcher does once per device: set an attribute
// that belongs to the device's context (a kernel's shared memory beyond
// 48 KB), or ask the device a question (does this kernel's image run
// there). Host code. Device ordinals below 64 are remembered a bit each;
// any other does the work at every call.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace xn {

namespace per_device_detail {
inline std::uint64_t bit_of(int device) {
  return device >= 0 && device < 64 ? std::uint64_t(1) << device : 0;
}
}  // namespace per_device_detail

// ensure(setup) runs setup() (returning cudaError_t) on the current device
// until it succeeds there, then never again; its error, or cudaGetDevice's,
// is the caller's. (Two threads may both run it the first time: a set
// attribute is the same whoever sets it.)
class OncePerDevice {
 public:
  template <class Setup>
  cudaError_t ensure(Setup &&setup) {
    int device = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
    const std::uint64_t bit = per_device_detail::bit_of(device);
    if (bit != 0 && (done_.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
    const cudaError_t e = setup();
    if (e == cudaSuccess) done_.fetch_or(bit, std::memory_order_release);
    return e;
  }

 private:
  std::atomic<std::uint64_t> done_{0};
};

// ask(probe) runs probe(device) (returning bool) the first time for the
// current device and remembers the answer, yes or no. A device that
// cannot be named answers no (and leaves no error behind).
class AnswerPerDevice {
 public:
  template <class Probe>
  bool ask(Probe &&probe) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    const std::uint64_t bit = per_device_detail::bit_of(device);
    if (bit == 0) return probe(device);
    if ((seen_.load(std::memory_order_acquire) & bit) == 0) {
      if (probe(device)) yes_.fetch_or(bit, std::memory_order_relaxed);
      seen_.fetch_or(bit, std::memory_order_release);
    }
    return (yes_.load(std::memory_order_relaxed) & bit) != 0;
  }

 private:
  std::atomic<std::uint64_t> seen_{0}, yes_{0};
};

}  // namespace xn
