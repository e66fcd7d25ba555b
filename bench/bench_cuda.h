// bench_cuda.h - what the GPU routines of xnbench (bench_gpu.cu for gemm and
// exdgemm, bench_symv.cu for symv) share: the error policy, device memory,
// and one device session (stream, events, cuBLAS handle) with its timing.
//
// Error policy: every CUDA runtime call is checked; a failing one throws
// CudaFatal and ends the whole run (the context may be broken). A routine or
// cuBLAS call returning a status other than success throws CaseFailure: the
// case is reported as an error and the run goes on if the device still
// synchronises cleanly (device_fault).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace xnb {

struct CudaFatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CaseFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "EXPR: NAME (text) at FILE:LINE", FILE without its directories.
std::string cuda_message(const char *expr, cudaError_t e, const char *file, int line);
// CudaFatal unless e is cudaSuccess.
void check_cuda(cudaError_t e, const char *expr, const char *file, int line);
// CaseFailure "EXPR: NAME at FILE:LINE" unless s is success.
void check_cublas(cublasStatus_t s, const char *expr, const char *file, int line);

#define XNB_CUDA(expr) ::xnb::check_cuda((expr), #expr, __FILE__, __LINE__)
#define XNB_CUBLAS(expr) ::xnb::check_cublas((expr), #expr, __FILE__, __LINE__)

// CaseFailure "NAME returned STATUS" unless s is success.
void check_status(cublasStatus_t s, const std::string &name);

// After a CaseFailure: "" if the device still synchronises, else the error
// (a fault in a kernel shows here as a sticky error). Clears the last error.
std::string device_fault();

// Device memory freed on scope exit (errors ignored: the run is ending or
// the memory is already gone with the context).
struct DevMem {
  void *p = nullptr;
  DevMem() = default;
  DevMem(const DevMem &) = delete;
  DevMem &operator=(const DevMem &) = delete;
  ~DevMem() {
    if (p) cudaFree(p);
  }
  template <class U>
  U *as() const {
    return static_cast<U *>(p);
  }
};

// cudaMalloc into d; false (and *why) when the device is out of memory (the
// case is skipped); any other error is fatal.
bool try_alloc(DevMem &d, std::size_t bytes, std::string *why);

// Thread blocks for `items` at `per_block` each, at least 1, at most `cap`.
inline unsigned grid_for(long long items, long long per_block, long long cap) {
  const long long g = (items + per_block - 1) / per_block;
  return unsigned(std::max<long long>(1, std::min(g, cap)));
}

// The device, a non-blocking stream, two timing events and a cuBLAS handle
// on that stream; released (xnRelease first) on destruction.
class GpuSession {
 public:
  GpuSession() = default;
  GpuSession(const GpuSession &) = delete;
  GpuSession &operator=(const GpuSession &) = delete;
  ~GpuSession();

  // False (and a reason) if no device can be set up.
  bool init(std::string *why);

  int device() const { return dev_; }
  const cudaDeviceProp &properties() const { return prop_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t handle() const { return handle_; }
  std::string device_name() const { return prop_.name; }
  // "device: GPU ..." and the CUDA, driver and cuBLAS versions (two lines);
  // with_l2: the L2 size too.
  std::string describe(bool with_l2) const;

  // Fresh library state on the handle (so the workspace held is the next
  // case's): xnRelease, then the stream-ordered memory pool trimmed.
  void release_library_state();

  // Seconds per call of `count` back-to-back calls between two events on
  // the stream (CaseFailure `name` if a call fails).
  template <class Call>
  double time_calls(Call &&call, int count, const std::string &name) {
    XNB_CUDA(cudaEventRecord(ev0_, stream_));
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < count && s == CUBLAS_STATUS_SUCCESS; ++i) s = call();
    XNB_CUDA(cudaEventRecord(ev1_, stream_));
    XNB_CUDA(cudaEventSynchronize(ev1_));
    check_status(s, name);
    float ms = 0;
    XNB_CUDA(cudaEventElapsedTime(&ms, ev0_, ev1_));
    return double(ms) * 1e-3 / count;
  }

 private:
  int dev_ = 0;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  int runtime_version_ = 0, driver_version_ = 0, cublas_version_ = 0;
  cublasMath_t math_mode_ = CUBLAS_DEFAULT_MATH;
};

}  // namespace xnb
