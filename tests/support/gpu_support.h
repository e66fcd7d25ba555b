// gpu_support.h - device buffers and typed cuBLAS/xNGEMM calls for the GPU
// suites. Every CUDA call is checked; a failure names the call and the CUDA
// error (XN_CUDA_OK stops the test, a DeviceBuffer's copies record it).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/test_support.h"
#include "xngemm.h"

namespace xn_test {

#define XN_CUDA_OK(call)                                                   \
  do {                                                                     \
    const cudaError_t e_ = (call);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_); \
  } while (0)

#define XN_CUBLAS_OK(call)                         \
  do {                                             \
    const cublasStatus_t s_ = (call);              \
    ASSERT_EQ(s_, CUBLAS_STATUS_SUCCESS) << #call; \
  } while (0)

// The GPU suites' fixtures: a cuBLAS handle per test, released with
// xNGEMM's state after it; the test is skipped without a device. `Base` is
// ::testing::Test or a ::testing::TestWithParam<...>.
template <class Base = ::testing::Test>
class CublasHandleFixture : public Base {
 protected:
  void SetUp() override {
    XN_REQUIRE_GPU();
    ASSERT_EQ(cublasCreate(&h_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (h_) {
      xnRelease(h_);
      cublasDestroy(h_);
    }
  }
  cublasHandle_t h_ = nullptr;
};

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) { resize(n); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void resize(std::size_t n) {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = n;
    const std::size_t bytes = (n ? n : 1) * sizeof(T);
    if (const cudaError_t e = cudaMalloc(&p_, bytes); e != cudaSuccess) {
      ADD_FAILURE() << "device allocation of " << bytes
                    << " bytes failed: " << cudaGetErrorString(e);
      p_ = nullptr;
      n_ = 0;
    }
  }
  void upload(const std::vector<T> &h, cudaStream_t s = nullptr) {
    resize_if_needed(h.size());
    copy_and_wait(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s, "upload");
  }
  std::vector<T> download(cudaStream_t s = nullptr) const {
    std::vector<T> h(n_);
    copy_and_wait(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost, s, "download");
    return h;
  }
  T *get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  // One copy on stream s, waited for; a failure names what and the error.
  static void copy_and_wait(void *dst, const void *src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s, const char *what) {
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) ADD_FAILURE() << what << " failed: " << cudaGetErrorString(e);
  }
  void resize_if_needed(std::size_t n) {
    if (n != n_ || !p_) resize(n);
  }
  T *p_ = nullptr;
  std::size_t n_ = 0;
};

inline cublasStatus_t xn_gemm(cublasHandle_t h, cublasOperation_t ta,
                              cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B,
                              int ldb, const float *beta, float *C, int ldc) {
  return xnSngemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t xn_gemm(cublasHandle_t h, cublasOperation_t ta,
                              cublasOperation_t tb, int m, int n, int k,
                              const double *alpha, const double *A, int lda,
                              const double *B, int ldb, const double *beta, double *C,
                              int ldc) {
  return xnDngemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <class T>
bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace xn_test
