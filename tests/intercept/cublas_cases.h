// cublas_cases.h - the GEMM calls of the interposer's cuBLAS test, shared by
// the unchanged CUDA program (cublas_client.cpp, cuBLAS only) and the
// program that says what the interposer must turn them into
// (cublas_reference.cpp, which calls xNGEMM's routines directly).
//
// Each case fills op(A), op(B) and C from a fixed generator, makes one call
// through the GEMM it is handed and prints
//     NAME STATUS HASH
// where HASH is the FNV-1a hash of C's whole buffer (ldc x n, the rows
// between m and ldc included, which must stay untouched): two runs print the
// same line only if the call returned the same status and left the same
// bits. Then "threads" (4 host threads, each its own handle and stream) and
// "handles" (handles created, used and destroyed in turn), and a comment
// line "# leak_mib X": the device memory those handles left behind.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace cublas_cases {

template <class T>
using Gemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                int, int, const T *, const T *, int, const T *, int,
                                const T *, T *, int);
// The routines a case is run with, one per precision.
struct Gemms {
  Gemm<double> d;
  Gemm<float> s;
};

// What op(A) and op(B) hold: it decides where each interposer mode sends a
// call (negative entries: not ngemm; NaN or Inf: not the recursive modes).
enum class Data { Signed, NonNeg, NonFinite };

struct Case {
  const char *name;
  char precision;  // 'd' or 's'
  Data data;
  cublasOperation_t ta, tb;
  int m, n, k;
  double alpha, beta;
  bool device_scalars;  // CUBLAS_POINTER_MODE_DEVICE
  bool own_stream;      // a non-blocking stream of its own, not the default
  bool bad_lda;         // lda one row short: cuBLAS's INVALID_VALUE
  std::uint64_t seed;
};

// Odd and prime sizes, leading dimensions larger than needed, every
// transpose, both pointer modes, beta = 0 over a NaN-poisoned C.
inline const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {"d_nn_signed", 'd', Data::Signed, CUBLAS_OP_N, CUBLAS_OP_N, 193, 127, 301, 1.5,
       -0.75, false, false, false, 1},
      {"d_tt_nonneg_beta0", 'd', Data::NonNeg, CUBLAS_OP_T, CUBLAS_OP_T, 160, 200, 96,
       1.0, 0.0, false, false, false, 2},
      {"d_tn_nonneg_device_scalars", 'd', Data::NonNeg, CUBLAS_OP_T, CUBLAS_OP_N, 256,
       192, 320, 0.5, 2.0, true, true, false, 3},
      {"d_nt_nan_inf", 'd', Data::NonFinite, CUBLAS_OP_N, CUBLAS_OP_T, 128, 131, 127, 1.0,
       1.0, false, false, false, 4},
      {"d_nn_alpha0", 'd', Data::Signed, CUBLAS_OP_N, CUBLAS_OP_N, 64, 65, 66, 0.0, 3.0,
       false, false, false, 5},
      {"d_nn_bad_lda", 'd', Data::NonNeg, CUBLAS_OP_N, CUBLAS_OP_N, 70, 71, 72, 1.0, 1.0,
       false, false, true, 6},
      {"s_nn_nonneg", 's', Data::NonNeg, CUBLAS_OP_N, CUBLAS_OP_N, 200, 150, 250, 1.0,
       0.5, false, false, false, 7},
      {"s_tn_signed_device_scalars", 's', Data::Signed, CUBLAS_OP_T, CUBLAS_OP_N, 129,
       131, 137, -2.0, 0.25, true, false, false, 8},
  };
  return c;
}

// The cases run by each of the 4 threads, and by each short-lived handle.
inline Case thread_case(int t, char precision) {
  return {"thread",     precision,
          Data::NonNeg, CUBLAS_OP_N,
          CUBLAS_OP_T,  200 + t,
          190,          210,
          1.0,          1.0,
          false,        true,
          false,        std::uint64_t(100 + t)};
}
inline Case handle_case(int i) {
  return {"handle",     'd',
          Data::NonNeg, CUBLAS_OP_N,
          CUBLAS_OP_N,  512,
          512,          512,
          1.0,          0.0,
          false,        false,
          false,        std::uint64_t(200 + i)};
}
constexpr int kThreads = 4, kHandles = 12;

// A 64-bit LCG: signed values with exponents 2^-8..2^8 (products that
// cancel), or non-negative ones in [0, 1).
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  double next(bool nonneg) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(state >> 11) / 9007199254740992.0;
    if (nonneg) return u;
    const int e = int((state >> 3) % 17) - 8;
    return ((state & 1) ? -1 : 1) * std::ldexp(1.0 + u, e);
  }
};

inline std::uint64_t fnv1a(const void *p, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < bytes; ++i)
    h = (h ^ static_cast<const unsigned char *>(p)[i]) * 1099511628211ull;
  return h;
}

#define CASES_CHECK(call)                                                    \
  do {                                                                       \
    if ((call) != 0) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// Runs one case on `handle` with `gemm`; returns its line's status and hash.
template <class T>
void run_case(cublasHandle_t handle, Gemm<T> gemm, const Case &c, int *status,
              std::uint64_t *hash) {
  const bool ta = c.ta != CUBLAS_OP_N, tb = c.tb != CUBLAS_OP_N;
  const int rows_a = ta ? c.k : c.m, cols_a = ta ? c.m : c.k;
  const int rows_b = tb ? c.n : c.k, cols_b = tb ? c.k : c.n;
  const int lda = rows_a + 3, ldb = rows_b + 1, ldc = c.m + 2;
  Rng rng(c.seed);
  const bool nonneg = c.data != Data::Signed;
  std::vector<T> A(std::size_t(lda) * cols_a), B(std::size_t(ldb) * cols_b),
      C(std::size_t(ldc) * c.n);
  for (T &x : A) x = T(rng.next(nonneg));
  for (T &x : B) x = T(rng.next(nonneg));
  for (std::size_t j = 0; j < std::size_t(c.n); ++j)
    for (std::size_t i = 0; i < std::size_t(ldc); ++i)
      C[i + j * ldc] = i >= std::size_t(c.m) ? T(777)  // outside C: untouched
                       : c.beta == 0         ? T(NAN)  // beta = 0 never reads C
                                             : T(rng.next(nonneg));
  if (c.data == Data::NonFinite) {
    A[5 + 3 * std::size_t(lda)] = T(NAN);
    B[2] = T(INFINITY);
  }
  cudaStream_t stream = nullptr;
  if (c.own_stream)
    CASES_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CASES_CHECK(cublasSetStream(handle, stream));
  T *dA, *dB, *dC, *dScalars;
  CASES_CHECK(cudaMalloc(&dA, A.size() * sizeof(T)));
  CASES_CHECK(cudaMalloc(&dB, B.size() * sizeof(T)));
  CASES_CHECK(cudaMalloc(&dC, C.size() * sizeof(T)));
  CASES_CHECK(cudaMalloc(&dScalars, 2 * sizeof(T)));
  const T scalars[2] = {T(c.alpha), T(c.beta)};
  CASES_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
  CASES_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice));
  CASES_CHECK(cudaMemcpy(dC, C.data(), C.size() * sizeof(T), cudaMemcpyHostToDevice));
  CASES_CHECK(cudaMemcpy(dScalars, scalars, sizeof scalars, cudaMemcpyHostToDevice));
  CASES_CHECK(cublasSetPointerMode(
      handle, c.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
  const T *alpha = c.device_scalars ? dScalars : &scalars[0];
  const T *beta = c.device_scalars ? dScalars + 1 : &scalars[1];
  *status = int(gemm(handle, c.ta, c.tb, c.m, c.n, c.k, alpha, dA,
                     c.bad_lda ? rows_a - 1 : lda, dB, ldb, beta, dC, ldc));
  CASES_CHECK(cudaStreamSynchronize(stream));
  CASES_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(T), cudaMemcpyDeviceToHost));
  *hash = fnv1a(C.data(), C.size() * sizeof(T));
  CASES_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  CASES_CHECK(cublasSetStream(handle, nullptr));
  for (T *p : {dA, dB, dC, dScalars}) CASES_CHECK(cudaFree(p));
  if (stream) CASES_CHECK(cudaStreamDestroy(stream));
}

inline void run_any(cublasHandle_t handle, const Gemms &g, const Case &c, int *status,
                    std::uint64_t *hash) {
  if (c.precision == 'd')
    run_case<double>(handle, g.d, c, status, hash);
  else
    run_case<float>(handle, g.s, c, status, hash);
}

// Every case, then the threads and the handles; `pick(case)` gives the
// routines for it.
template <class Pick>
void run_all(Pick &&pick) {
  cublasHandle_t handle;
  CASES_CHECK(cublasCreate(&handle));
  for (const Case &c : cases()) {
    int status;
    std::uint64_t hash;
    run_any(handle, pick(c), c, &status, &hash);
    std::printf("%s %d %016llx\n", c.name, status, (unsigned long long)hash);
  }
  CASES_CHECK(cublasDestroy(handle));

  // Threads: each its own handle and stream, both precisions, at once.
  int status[kThreads][2];
  std::uint64_t hash[kThreads][2];
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([&, t] {
      cublasHandle_t h;
      CASES_CHECK(cublasCreate(&h));
      for (int p = 0; p < 2; ++p) {
        const Case c = thread_case(t, p == 0 ? 'd' : 's');
        run_any(h, pick(c), c, &status[t][p], &hash[t][p]);
      }
      CASES_CHECK(cublasDestroy(h));
    });
  for (std::thread &w : workers) w.join();
  for (int t = 0; t < kThreads; ++t)
    for (int p = 0; p < 2; ++p)
      std::printf("thread%d_%c %d %016llx\n", t, p == 0 ? 'd' : 's', status[t][p],
                  (unsigned long long)hash[t][p]);

  // Handles: kHandles live at once (so that none reuses another's address),
  // each used, then all destroyed. Whatever a call made for a handle must go
  // with it. One handle first makes the process-wide state (cuBLAS's, the
  // library's), so the memory is measured from after it.
  const auto one_cycle = [&](int first, int count) {
    std::uint64_t all = 0;
    std::vector<cublasHandle_t> hs(count);
    for (int i = 0; i < count; ++i) {
      CASES_CHECK(cublasCreate(&hs[i]));
      int st;
      std::uint64_t hh;
      const Case c = handle_case(first + i);
      run_any(hs[i], pick(c), c, &st, &hh);
      all = all * 31 + hh + std::uint64_t(st);
    }
    for (cublasHandle_t h : hs) CASES_CHECK(cublasDestroy(h));
    CASES_CHECK(cudaDeviceSynchronize());
    return all;
  };
  std::uint64_t all = one_cycle(0, 1);
  std::size_t free_before = 0, free_after = 0, total = 0;
  CASES_CHECK(cudaMemGetInfo(&free_before, &total));
  all = all * 31 + one_cycle(1, kHandles);
  CASES_CHECK(cudaMemGetInfo(&free_after, &total));
  std::printf("handles 0 %016llx\n", (unsigned long long)all);
  const double leak = (double(free_before) - double(free_after)) / (1 << 20);
  std::printf("# leak_mib %.1f\n", leak > 0 ? leak : 0.0);
}

}  // namespace cublas_cases
