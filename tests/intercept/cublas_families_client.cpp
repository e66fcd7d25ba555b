// cublas_families_client.cpp - an unchanged CUDA program for the
// interposer's cuBLAS families test (check_blas_families.py, part "cublas"):
// cublasDgemv_v2, cublasDdot_v2 (host and device result), the batched GEMMs
// (cublasDgemmStridedBatched, cublasDgemmBatched, cublasGemmStridedBatchedEx,
// cublasGemmBatchedEx) and cublasGemmEx, FP64, on signed data with wide
// exponents; and one FP32 cublasGemmEx (must stay cuBLAS's). Prints
//     NAME STATUS HASH
// per call (FNV-1a of the output's whole buffer). Built twice: as the
// unchanged program (cuBLAS only), and with XN_DIRECT as the reference that
// calls the routines the interposer must turn them into (xnExdgemv,
// xnExddot, xnExdgemmStridedBatched, xnExdgemmBatched, xnExdgemm).
// Exit status 77 without a GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef XN_DIRECT
#include "xngemm.h"
#endif

namespace {

std::uint64_t g_state = 0x853C49E6748FEA9Bull;
double draw() {
  g_state = g_state * 6364136223846793005ull + 1442695040888963407ull;
  const std::uint64_t r = g_state;
  const double v = (1.0 + double(r >> 11) * 0x1p-53) * std::ldexp(1.0, int((r >> 3) % 41) - 20);
  return (r & 1) ? -v : v;
}
std::vector<double> fill(std::size_t n) {
  std::vector<double> v(n);
  for (double &x : v) x = draw();
  return v;
}

void check(cudaError_t e) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA: %s\n", cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class T>
T *upload(const std::vector<T> &h) {
  T *d = nullptr;
  check(cudaMalloc(&d, h.size() * sizeof(T)));
  check(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
void print(const char *name, cublasStatus_t s, const T *d, std::size_t n) {
  std::vector<T> h(n);
  check(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::uint64_t hash = 1469598103934665603ull;
  const auto *bytes = reinterpret_cast<const unsigned char *>(h.data());
  for (std::size_t i = 0; i < n * sizeof(T); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  std::printf("%s %d %016llx\n", name, int(s), static_cast<unsigned long long>(hash));
}

#ifdef XN_DIRECT
// What the interposer must call instead.
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const double *a,
                    const double *A, int lda, const double *x, int incx, const double *b,
                    double *y, int incy) {
  return xnExdgemv(h, t, m, n, a, A, lda, x, incx, b, y, incy);
}
cublasStatus_t dot(cublasHandle_t h, int n, const double *x, int incx, const double *y,
                   int incy, double *r) {
  return xnExddot(h, n, x, incx, y, incy, r);
}
#define STRIDED xnExdgemmStridedBatched
#define POINTERS xnExdgemmBatched
#define GEMM_EX(h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc) \
  xnExdgemm(h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc)
#else
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const double *a,
                    const double *A, int lda, const double *x, int incx, const double *b,
                    double *y, int incy) {
  return cublasDgemv(h, t, m, n, a, A, lda, x, incx, b, y, incy);
}
cublasStatus_t dot(cublasHandle_t h, int n, const double *x, int incx, const double *y,
                   int incy, double *r) {
  return cublasDdot(h, n, x, incx, y, incy, r);
}
#define STRIDED cublasDgemmStridedBatched
#define POINTERS cublasDgemmBatched
#define GEMM_EX(h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc)                             \
  cublasGemmEx(h, ta, tb, m, n, k, a, A, CUDA_R_64F, lda, B, CUDA_R_64F, ldb, b, C, CUDA_R_64F, \
               ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT)
#endif

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  const double one = 1.0, zero = 0.0, half = 0.5;

  // GEMV, N and T, with a beta.
  const int m = 300, n = 257, lda = 301;
  double *A = upload(fill(std::size_t(lda) * n)), *x = upload(fill(2 * (m + n))),
         *y = upload(fill(2 * (m + n)));
  print("gemv_n", gemv(h, CUBLAS_OP_N, m, n, &one, A, lda, x, 1, &zero, y, 1), y, 2 * (m + n));
  print("gemv_t", gemv(h, CUBLAS_OP_T, m, n, &half, A, lda, x, 2, &half, y, -1), y,
        2 * (m + n));

  // DOT: host and device result.
  double r = 0.0, *dr = upload(std::vector<double>(1, 0.0));
  const cublasStatus_t sh = dot(h, 4000, A, 1, A + 4000, 1, &r);
  std::printf("dot_host %d %a\n", int(sh), r);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  print("dot_device", dot(h, 5000, A, 3, A + 1, -2, dr), dr, 1);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);

  // Batched: 6 products of 40 x 33 x 70, TN, one with a stride of 0 for A.
  const int bm = 40, bn = 33, bk = 70, batch = 6;
  const long long sa = bk * bm, sb = bk * bn, sc = bm * bn + 7;
  double *BA = upload(fill(std::size_t(sa) * batch)), *BB = upload(fill(std::size_t(sb) * batch)),
         *BC = upload(fill(std::size_t(sc) * batch));
  print("strided", STRIDED(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &one, BA, bk, sa, BB, bk, sb,
                           &half, BC, bm, sc, batch),
        BC, std::size_t(sc) * batch);
  print("strided_a0", STRIDED(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &one, BA, bk, 0, BB, bk,
                              sb, &zero, BC, bm, sc, batch),
        BC, std::size_t(sc) * batch);
  std::vector<const double *> pa, pb;
  std::vector<double *> pc;
  for (int i = 0; i < batch; ++i) {
    pa.push_back(BA + (batch - 1 - i) * sa);
    pb.push_back(BB + i * sb);
    pc.push_back(BC + i * sc);
  }
  const double **dpa = upload(pa), **dpb = upload(pb);
  double **dpc = upload(pc);
  print("pointers", POINTERS(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &one, dpa, bk, dpb, bk,
                             &zero, dpc, bm, batch),
        BC, std::size_t(sc) * batch);
#ifdef XN_DIRECT
  print("strided_ex", STRIDED(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &half, BA, bk, sa, BB, bk,
                              sb, &one, BC, bm, sc, batch),
        BC, std::size_t(sc) * batch);
  print("pointers_ex", POINTERS(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &half, dpa, bk, dpb, bk,
                                &one, dpc, bm, batch),
        BC, std::size_t(sc) * batch);
#else
  print("strided_ex",
        cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &half, BA,
                                   CUDA_R_64F, bk, sa, BB, CUDA_R_64F, bk, sb, &one, BC,
                                   CUDA_R_64F, bm, sc, batch, CUBLAS_COMPUTE_64F,
                                   CUBLAS_GEMM_DEFAULT),
        BC, std::size_t(sc) * batch);
  print("pointers_ex",
        cublasGemmBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &half,
                            reinterpret_cast<const void *const *>(dpa), CUDA_R_64F, bk,
                            reinterpret_cast<const void *const *>(dpb), CUDA_R_64F, bk, &one,
                            reinterpret_cast<void *const *>(dpc), CUDA_R_64F, bm, batch,
                            CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
        BC, std::size_t(sc) * batch);
#endif

  // cublasGemmEx, FP64: 129 x 65 x 1000 NT.
  const int gm = 129, gn = 65, gk = 1000;
  double *GA = upload(fill(std::size_t(gm) * gk)), *GB = upload(fill(std::size_t(gn) * gk)),
         *GC = upload(fill(std::size_t(gm) * gn));
  print("gemm_ex", GEMM_EX(h, CUBLAS_OP_N, CUBLAS_OP_T, gm, gn, gk, &one, GA, gm, GB, gn, &half,
                           GC, gm),
        GC, std::size_t(gm) * gn);

  // cublasGemmEx, FP32 (both programs call cuBLAS: it must pass through).
  std::vector<float> fa(64 * 64), fb(64 * 64);
  for (float &v : fa) v = float(draw());
  for (float &v : fb) v = float(draw());
  float *FA = upload(fa), *FB = upload(fb), *FC = upload(std::vector<float>(64 * 64, 0.f));
  const float fone = 1.f, fzero = 0.f;
  print("fp32_gemm_ex",
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &fone, FA, CUDA_R_32F, 64, FB,
                     CUDA_R_32F, 64, &fzero, FC, CUDA_R_32F, 64, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT),
        FC, 64 * 64);
  check(cudaDeviceSynchronize());
  cublasDestroy(h);
  return 0;
}
