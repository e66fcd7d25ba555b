// bench_cuda.cu - the GPU session and error policy shared by xnbench's GPU
// routines (bench_cuda.h).
#include <cstring>
#include <sstream>
#include <string>

#include "bench_cuda.h"
#include "bench_util.h"
#include "xngemm.h"

namespace xnb {

namespace {

const char *base_name(const char *file) {
  const char *slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

}  // namespace

std::string cuda_message(const char *expr, cudaError_t e, const char *file, int line) {
  std::ostringstream o;
  o << expr << ": " << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ") at "
    << base_name(file) << ":" << line;
  return o.str();
}

void check_cuda(cudaError_t e, const char *expr, const char *file, int line) {
  if (e != cudaSuccess) throw CudaFatal(cuda_message(expr, e, file, line));
}

void check_cublas(cublasStatus_t s, const char *expr, const char *file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::ostringstream o;
  o << expr << ": " << cublasGetStatusName(s) << " at " << base_name(file) << ":" << line;
  throw CaseFailure(o.str());
}

void check_status(cublasStatus_t s, const std::string &name) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CaseFailure(name + " returned " + cublasGetStatusName(s));
}

std::string device_fault() {
  const cudaError_t s = cudaDeviceSynchronize();
  cudaGetLastError();
  return s == cudaSuccess ? std::string() : std::string(cudaGetErrorString(s));
}

bool try_alloc(DevMem &d, std::size_t bytes, std::string *why) {
  const cudaError_t e = cudaMalloc(&d.p, bytes == 0 ? 1 : bytes);
  if (e == cudaSuccess) return true;
  d.p = nullptr;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    *why = "cudaMalloc of " + std::to_string(bytes >> 20) + " MiB failed (out of memory)";
    return false;
  }
  throw CudaFatal(cuda_message("cudaMalloc", e, __FILE__, __LINE__));
}

GpuSession::~GpuSession() {
  if (handle_) {
    xnRelease(handle_);
    cublasDestroy(handle_);
  }
  if (ev0_) cudaEventDestroy(ev0_);
  if (ev1_) cudaEventDestroy(ev1_);
  if (stream_) cudaStreamDestroy(stream_);
}

bool GpuSession::init(std::string *why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e)
                            : "no CUDA device";
    return false;
  }
  e = cudaGetDevice(&dev_);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop_, dev_);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreate(&ev0_);
  if (e == cudaSuccess) e = cudaEventCreate(&ev1_);
  if (e == cudaSuccess) e = cudaRuntimeGetVersion(&runtime_version_);
  if (e == cudaSuccess) e = cudaDriverGetVersion(&driver_version_);
  if (e != cudaSuccess) {
    *why = std::string("CUDA setup: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return false;
  }
  cublasStatus_t s = cublasCreate(&handle_);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetStream(handle_, stream_);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasGetVersion(handle_, &cublas_version_);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasGetMathMode(handle_, &math_mode_);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = std::string("cuBLAS setup: ") + cublasGetStatusName(s);
    return false;
  }
  return true;
}

std::string GpuSession::describe(bool with_l2) const {
  std::ostringstream o;
  o << "device: GPU " << dev_ << " " << prop_.name << ", " << prop_.multiProcessorCount
    << " SMs, " << fmt_gib(double(prop_.totalGlobalMem)) << " GiB, compute capability "
    << prop_.major << "." << prop_.minor;
  if (with_l2) o << ", L2 " << (prop_.l2CacheSize >> 20) << " MiB";
  o << "\n        CUDA runtime " << runtime_version_ / 1000 << "."
    << runtime_version_ % 1000 / 10 << ", driver " << driver_version_ / 1000 << "."
    << driver_version_ % 1000 / 10 << ", cuBLAS " << cublas_version_ / 10000 << "."
    << cublas_version_ % 10000 / 100 << "." << cublas_version_ % 100 << " (math mode "
    << int(math_mode_) << (math_mode_ == CUBLAS_DEFAULT_MATH ? " = default" : "")
    << ")\n";
  return o.str();
}

void GpuSession::release_library_state() {
  XNB_CUDA(cudaStreamSynchronize(stream_));
  XNB_CUBLAS(xnRelease(handle_));
  XNB_CUDA(cudaDeviceSynchronize());
  cudaMemPool_t pool = nullptr;
  XNB_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev_));
  XNB_CUDA(cudaMemPoolTrimTo(pool, 0));  // stream-ordered frees back to the device
}

}  // namespace xnb
