// cublas_client.cpp - an unchanged CUDA program for the interposer's cuBLAS
// test (tests/intercept/check_intercept.py, part "cublas"): it links cuBLAS
// only and calls cublasDgemm/cublasSgemm on the cases of cublas_cases.h,
// printing each call's status and a hash of C. Exit status 77 without a GPU.
#include "cublas_cases.h"

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  const cublas_cases::Gemms cublas{cublasDgemm, cublasSgemm};
  cublas_cases::run_all([&](const cublas_cases::Case &) { return cublas; });
  return 0;
}
