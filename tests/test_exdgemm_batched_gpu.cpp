// test_exdgemm_batched_gpu.cpp - xnExdgemmStridedBatched and xnExdgemmBatched
// on the GPU (label gpu, skipped without a device): every entry of every
// product bit for bit the exact IEEE value (the oracle of xnExdgemm's
// contract), over transposes, padded leading dimensions, strides with gaps
// (left untouched) and a stride of 0 (one A for every product), alpha and
// beta including beta = 0 (C poisoned with NaN, never read), both pointer
// modes and a non-default stream; pointer arrays in device memory in any
// order; the batched engine at its boundaries (groups of products, chunks
// of k, specials, wide ranges, shapes it declines; the products' CRT
// digits against cuBLAS's int32 sums); bad arguments
// (INVALID_VALUE, every C untouched) and the quick returns.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/exdgemm_batched.h"
#include "kernels/exdgemm_launch.h"
#include "support/exdgemm_inputs.h"
#include "support/gpu_support.h"
#include "support/ieee_oracle.h"
#include "xngemm.h"

namespace {

using xn_test::DeviceBuffer;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr auto &same_bits = xn_test::ex_same_bits;

// (u - 0.5) exp(phi randn), every 7th entry scaled by 2^+-40 (plain sums
// lose digits).
std::vector<double> draw(std::size_t count, double phi, std::mt19937_64 &rng) {
  std::normal_distribution<double> randn(0.0, 1.0);
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = (xn_test::u53(rng) - 0.5) * std::exp(phi * randn(rng));
    if (i % 7 == 3) v[i] = std::ldexp(v[i], (rng() & 1) ? 40 : -40);
  }
  return v;
}

struct Batch {
  bool ta, tb;
  int m, n, k, lda, ldb, ldc, count;
  std::int64_t stride_a, stride_b, stride_c;
  double alpha, beta;
};

// The expected C storage after the batch (gaps keep their values).
std::vector<double> expected(const Batch &b, const std::vector<double> &A,
                             const std::vector<double> &B, const std::vector<double> &C) {
  std::vector<double> want = C;
  for (int p = 0; p < b.count; ++p) {
    const double *Ap = A.data() + p * b.stride_a, *Bp = B.data() + p * b.stride_b;
    const double *Cp = C.data() + p * b.stride_c;
    std::vector<double> out;
    xn_test::exact_gemm_ieee(b.ta, b.tb, b.m, b.n, b.k, b.alpha, Ap, b.lda, Bp, b.ldb, b.beta,
                             b.beta != 0.0 ? Cp : nullptr, b.ldc, out);
    for (int j = 0; j < b.n; ++j)
      for (int i = 0; i < b.m; ++i)
        want[std::size_t(p * b.stride_c + i + std::int64_t(j) * b.ldc)] =
            out[std::size_t(i + std::int64_t(j) * b.m)];
  }
  return want;
}

cublasOperation_t op(bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

// xnExdgemmBatched's pointer arrays in device memory for the batch's
// products in dA, dB, dC (allocated), listed last first.
struct PointerArrays {
  DeviceBuffer<const double *> a, b;
  DeviceBuffer<double *> c;
  PointerArrays(const Batch &bt, const DeviceBuffer<double> &dA, const DeviceBuffer<double> &dB,
                const DeviceBuffer<double> &dC, cudaStream_t s) {
    std::vector<const double *> pa, pb;
    std::vector<double *> pc;
    for (int p = bt.count - 1; p >= 0; --p) {
      pa.push_back(dA.get() + p * bt.stride_a);
      pb.push_back(dB.get() + p * bt.stride_b);
      pc.push_back(dC.get() + p * bt.stride_c);
    }
    a.upload(pa, s), b.upload(pb, s), c.upload(pc, s);
  }
};

// Elements of A, B and C storage for the batch (strides and leading
// dimensions included).
std::array<std::size_t, 3> storage_sizes(const Batch &b) {
  return {std::size_t(b.stride_a * (b.count - 1)) +
              std::size_t(b.lda) * std::size_t(b.ta ? b.m : b.k),
          std::size_t(b.stride_b * (b.count - 1)) +
              std::size_t(b.ldb) * std::size_t(b.tb ? b.k : b.n),
          std::size_t(b.stride_c * (b.count - 1)) + std::size_t(b.ldc) * std::size_t(b.n)};
}

class GpuExdgemmBatched : public xn_test::CublasHandleFixture<> {
 protected:
  // Runs one batch both ways (strided; pointer arrays in reverse order)
  // and checks every stored element.
  void check(const Batch &b, std::mt19937_64 &rng, bool device_scalars, cudaStream_t s) {
    const auto [size_a, size_b, size_c] = storage_sizes(b);
    const std::vector<double> A = draw(size_a, 1.0, rng), B = draw(size_b, 1.0, rng);
    std::vector<double> C(size_c, kNaN);
    if (b.beta != 0.0) C = draw(size_c, 0.0, rng);
    const std::vector<double> want = expected(b, A, B, C);
    DeviceBuffer<double> dA, dB, dC, dscal(2);
    dA.upload(A, s);
    dB.upload(B, s);
    const double *alpha = &b.alpha, *beta = &b.beta;
    if (device_scalars) {
      dscal.upload({b.alpha, b.beta}, s);
      alpha = dscal.get(), beta = dscal.get() + 1;
    }
    for (int way = 0; way < 2; ++way) {
      dC.upload(C, s);
      cublasStatus_t st;
      if (way == 0) {
        st = xnExdgemmStridedBatched(h_, op(b.ta), op(b.tb), b.m, b.n, b.k, alpha, dA.get(),
                                     b.lda, b.stride_a, dB.get(), b.ldb, b.stride_b, beta,
                                     dC.get(), b.ldc, b.stride_c, b.count);
      } else {
        const PointerArrays arrays(b, dA, dB, dC, s);
        st = xnExdgemmBatched(h_, op(b.ta), op(b.tb), b.m, b.n, b.k, alpha, arrays.a.get(),
                              b.lda, arrays.b.get(), b.ldb, beta, arrays.c.get(), b.ldc,
                              b.count);
      }
      ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS) << "way " << way;
      const std::vector<double> got = dC.download(s);
      for (std::size_t e = 0; e < got.size(); ++e)
        ASSERT_TRUE(same_bits(got[e], want[e]))
            << (way ? "Batched" : "StridedBatched") << " ta " << b.ta << " tb " << b.tb
            << " m " << b.m << " n " << b.n << " k " << b.k << " count " << b.count
            << ": C storage [" << e << "] = " << got[e] << ", want " << want[e];
    }
  }
};

TEST_F(GpuExdgemmBatched, EveryProductIsTheExactValueRoundedOnce) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  // clang-format off
  const Batch batches[] = {
      // ta, tb, m, n, k, lda, ldb, ldc, count, strides (A, B, C), alpha, beta
      {false, false, 7, 5, 9, 7, 9, 7, 3, 7 * 9, 9 * 5, 7 * 5, 1.0, 0.0},
      {true, false, 33, 17, 64, 66, 64, 35, 4, 66 * 33 + 5, 64 * 17, 35 * 17 + 3, -0.75, 1.5},
      {false, true, 16, 16, 16, 16, 16, 16, 5, 0, 16 * 16, 16 * 16, 3e-5, -2.0},  // one A
      {true, true, 1, 65, 130, 130, 65, 1, 2, 130, 65 * 130, 65, 2.0, 0.0},
      {false, false, 64, 64, 1000, 64, 1000, 64, 3, 64 * 1000, 1000 * 64, 64 * 64, 1.0, 1.0},
  };
  // clang-format on
  for (const Batch &b : batches) check(b, rng, false, nullptr);
}

TEST_F(GpuExdgemmBatched, DeviceScalarsAndANonDefaultStream) {
  cudaStream_t s = nullptr;
  XN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  XN_CUBLAS_OK(cublasSetStream(h_, s));
  XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_DEVICE));
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  check({false, true, 31, 9, 47, 32, 9, 33, 4, 32 * 47, 9 * 47 + 1, 33 * 9, 1.25, -0.5}, rng,
        true, s);
  check({true, false, 12, 12, 12, 12, 12, 12, 3, 144, 144, 144, 0.0, 2.0}, rng, true, s);
  XN_CUBLAS_OK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
  XN_CUBLAS_OK(cublasSetStream(h_, nullptr));
  XN_CUDA_OK(cudaStreamDestroy(s));
}

// The batched engine (one launch per phase over a group of products) at
// its boundaries, each entry checked against the oracle and the report
// saying which path ran: several groups (a small workspace budget, and
// more products than one grid takes), k in several chunks reduced between
// them, products whose operand is zero or holds Inf and NaN beside
// ordinary ones, one set of moduli for products of very different ranges,
// and the shapes it declines (op(B) of at most 4 columns: one xnExdgemm
// per product).
TEST_F(GpuExdgemmBatched, TheBatchedEngineAtItsBoundaries) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  struct Case {
    Batch b;
    std::int64_t workspace_limit, k_chunk;
    int specials;  // 1: product 1's A zero, product 2's A with Inf and NaN
    double wide;   // product 0's A scaled by 2^wide: the batch's moduli from it
    bool batched;  // the engine takes it
    int min_groups;
  };
  // clang-format off
  const Case cases[] = {
      // ta, tb, m, n, k, lda, ldb, ldc, count, strides, alpha, beta
      {{false, false, 40, 24, 300, 40, 300, 40, 9, 40 * 300, 300 * 24, 40 * 24, 1.0, 0.0},
       (1 << 20), 0, 0, 0, true, 3},   // about three products a group
      // More products than one scan launch takes (65535) and a group holds.
      {{false, false, 2, 5, 3, 2, 3, 2, 70000, 6, 15, 10, -1.5, 0.5}, 0, 0, 0, 0, true, 17},
      {{true, false, 19, 21, 1000, 1000, 1000, 19, 4, 1000 * 19, 1000 * 21, 19 * 21, 0.5, 2.0},
       0, 64, 0, 0, true, 1},   // 16 chunks of 64
      {{false, true, 17, 13, 90, 17, 13, 17, 5, 17 * 90, 13 * 90, 17 * 13, 1.0, -1.0},
       0, 0, 1, 0, true, 1},
      {{false, false, 9, 11, 40, 9, 40, 9, 4, 9 * 40, 40 * 11, 9 * 11, 1.0, 0.0},
       0, 0, 0, 100, true, 1},  // about 30 moduli
      {{false, false, 33, 3, 70, 33, 70, 33, 4, 33 * 70, 70 * 3, 33 * 3, 1.0, 0.25},
       0, 0, 1, 0, false, 0},
  };
  // clang-format on
  for (const Case &c : cases) {
    const Batch &b = c.b;
    XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, c.workspace_limit));
    XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, c.k_chunk));
    const auto [size_a, size_b, size_c] = storage_sizes(b);
    // (u - 0.5) exp(randn / 2): rows of about 60 bits, about 16 moduli.
    auto fill = [&](std::size_t count) {
      std::vector<double> v(count);
      for (double &x : v) x = xn_test::ex_value(xn_test::ExKind::Phi, 0.5, rng, 0);
      return v;
    };
    std::vector<double> A = fill(size_a), B = fill(size_b);
    std::vector<double> C = b.beta != 0.0 ? fill(size_c) : std::vector<double>(size_c, kNaN);
    const std::size_t one_a = std::size_t(b.lda) * std::size_t(b.ta ? b.m : b.k);
    if (c.wide != 0)  // every other entry of product 0's A: its rows 2^wide wider
      for (std::size_t e = 0; e < one_a; e += 2) A[e] = std::ldexp(A[e], int(c.wide));
    if (c.specials) {
      for (std::size_t e = 0; e < one_a; ++e) A[std::size_t(b.stride_a) + e] = 0.0;
      A[std::size_t(2 * b.stride_a) + 1] = std::numeric_limits<double>::infinity();
      A[std::size_t(2 * b.stride_a) + 5] = kNaN;
    }
    const std::vector<double> want = expected(b, A, B, C);
    DeviceBuffer<double> dA, dB, dC;
    dA.upload(A), dB.upload(B), dC.upload(C);  // (allocated before its pointers are taken)
    const PointerArrays pointers(b, dA, dB, dC, nullptr);
    for (const bool arrays : {false, true}) {
      dC.upload(C);
      const cublasStatus_t st =
          arrays ? xnExdgemmBatched(h_, op(b.ta), op(b.tb), b.m, b.n, b.k, &b.alpha,
                                    pointers.a.get(), b.lda, pointers.b.get(), b.ldb, &b.beta,
                                    pointers.c.get(), b.ldc, b.count)
                 : xnExdgemmStridedBatched(h_, op(b.ta), op(b.tb), b.m, b.n, b.k, &b.alpha,
                                           dA.get(), b.lda, b.stride_a, dB.get(), b.ldb,
                                           b.stride_b, &b.beta, dC.get(), b.ldc, b.stride_c,
                                           b.count);
      ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS) << "arrays " << arrays;
      const std::vector<double> got = dC.download();
      for (std::size_t e = 0; e < got.size(); ++e)
        ASSERT_TRUE(same_bits(got[e], want[e]))
            << (arrays ? "Batched" : "StridedBatched") << " m " << b.m << " n " << b.n
            << " k " << b.k << " count " << b.count << ": C storage [" << e
            << "] = " << got[e] << ", want " << want[e];
      xnExdgemmInfo_t info{};
      XN_CUBLAS_OK(xnGetLastExdgemmInfo(h_, &info));
      EXPECT_EQ(info.engine, 2);
      if (c.batched) {
        // The engine's report: the whole product one block, one slot, its groups.
        EXPECT_EQ(info.block_rows, b.m);
        EXPECT_EQ(info.block_cols, b.n);
        EXPECT_EQ(info.k_slots, 1);
        EXPECT_GE(info.blocks, c.min_groups) << "m " << b.m << " count " << b.count;
        if (c.k_chunk > 0) {
          EXPECT_EQ(info.k_chunks, (b.k + c.k_chunk - 1) / c.k_chunk);
        }
        if (c.wide != 0) {
          EXPECT_GT(info.moduli, 24);
        }
      } else {
        EXPECT_EQ(info.fused_operands, 1);  // the last product's own xnExdgemm
      }
    }
  }
  XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 0));
  XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_K_CHUNK, 0));
}

// The products with the CRT digit in their epilogue (forced on: the engine
// takes them where k is one chunk and they pay), on the device's own kernel
// (wgmma on Hopper) and on mma.sync (forced), against the int32 sums of
// cuBLAS's INT8 GEMM (forced off), bit for bit over every stored element,
// and sampled entries against the oracle: tiles of 128 x 128 cut by m and n
// (the digits' columns padded to 16 bytes where m is no multiple of 16),
// k no multiple of the kernels' steps of 64 and 128, below them, or no
// multiple of 16 (residues padded with zeros), 20 moduli and more (draw's
// 2^+-40 entries widen every row), over 32, gaps between products,
// several groups of products (a small workspace), beta = 0 over NaN. The
// digits use fewer product bytes than the sums: the workspace says which
// path ran, also under the engine's own choice (digit_products_pay's
// regions, which differ between the kernels).
TEST_F(GpuExdgemmBatched, DigitProductsGiveTheSumsBits) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  struct Case {
    Batch b;
    double phi;
    int min_moduli, min_groups;
    std::int64_t workspace_limit;
    // The engine's own choice where the digits' products run on wgmma, and
    // elsewhere: 1 digits, -1 sums, 0 not checked.
    int automatic_wgmma, automatic_elsewhere;
  };
  // clang-format off
  const Case cases[] = {
      // ta, tb, m, n, k, lda, ldb, ldc, count, strides (A, B, C), alpha, beta
      {{false, false, 200, 300, 272, 201, 272, 203, 3, 201 * 272 + 7, 272 * 300, 203 * 300 + 1,
        1.5, 0.0}, 1.0, 20, 1, 0, 0, 0},
      {{true, false, 256, 130, 1024, 1024, 1030, 256, 2, 1024 * 256, 1030 * 130, 256 * 130,
        -1.0, -0.5}, 0.0, 20, 1, 0, 1, -1},
      {{false, false, 300, 260, 600, 300, 600, 300, 2, 300 * 600, 600 * 260, 300 * 260,
        1.0, 0.0}, 1.0, 20, 1, 0, -1, -1},
      {{true, true, 129, 257, 48, 48, 260, 129, 5, 48 * 129, 260 * 48, 129 * 257 + 9,
        0.75, 2.0}, 2.0, 30, 1, 0, 0, 0},
      {{false, true, 16, 144, 4000, 16, 144, 16, 4, 16 * 4000, 144 * 4000, 16 * 144,
        1.0, 1.0}, 0.5, 20, 1, 0, 0, 0},
      {{false, false, 150, 140, 301, 150, 301, 151, 6, 150 * 301, 301 * 140, 151 * 140,
        -2.0, 0.0}, 1.0, 20, 1, 0, 1, 1},
      {{true, false, 70, 90, 333, 333, 333, 70, 7, 333 * 70, 333 * 90, 70 * 90,
        1.0, 0.5}, 1.0, 20, 2, 4 << 20, 0, 0},
      // Over 32 moduli: the reconstruction's tensor-core sums take two k
      // steps (m a multiple of 16, and not: padded columns).
      {{false, false, 96, 40, 64, 96, 64, 96, 2, 96 * 64, 64 * 40, 96 * 40,
        1.0, 0.25}, 3.0, 33, 1, 0, 0, 0},
      {{false, true, 61, 33, 80, 61, 33, 61, 2, 61 * 80, 33 * 80, 61 * 33,
        -1.0, 0.0}, 3.0, 33, 1, 0, 0, 0},
      // Few rows: below 4 a padded column of digits (16 bytes) outweighs
      // the int32 sums' column, and the engine keeps the sums (at 3 rows);
      // above, the digits (at 5: 16 bytes against 20).
      {{false, false, 3, 200, 256, 3, 256, 3, 4, 3 * 256, 256 * 200, 3 * 200,
        1.0, 0.0}, 1.0, 20, 1, 0, -1, -1},
      {{true, false, 5, 180, 256, 256, 256, 6, 3, 256 * 5, 256 * 180, 6 * 180 + 2,
        1.0, 0.5}, 1.0, 20, 1, 0, 1, 1},
  };
  const bool wgmma = xn::ex_digit_products_on_wgmma();
  // clang-format on
  for (const Case &c : cases) {
    const Batch &b = c.b;
    const int automatic = wgmma ? c.automatic_wgmma : c.automatic_elsewhere;
    XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, c.workspace_limit));
    const auto [size_a, size_b, size_c] = storage_sizes(b);
    const std::vector<double> A = draw(size_a, c.phi, rng), B = draw(size_b, c.phi, rng);
    const std::vector<double> C =
        b.beta != 0.0 ? draw(size_c, 0.0, rng) : std::vector<double>(size_c, kNaN);
    DeviceBuffer<double> dA, dB, dC;
    dA.upload(A), dB.upload(B);
    std::vector<double> got[3];  // sums, digits (wgmma on Hopper), digits by mma.sync
    std::size_t workspace[3] = {};  // sums, digits, the engine's choice
    for (const int digits : {-1, 1, 2, 0}) {
      if (digits == 0 && automatic == 0) continue;
      xn::testing::set_batched_digits(digits == 2 ? 1 : digits);
      xn::testing::set_digit_products_by_mma_sync(digits == 2);
      dC.upload(C);
      const cublasStatus_t st = xnExdgemmStridedBatched(
          h_, op(b.ta), op(b.tb), b.m, b.n, b.k, &b.alpha, dA.get(), b.lda, b.stride_a,
          dB.get(), b.ldb, b.stride_b, &b.beta, dC.get(), b.ldc, b.stride_c, b.count);
      xn::testing::set_batched_digits(0);
      xn::testing::set_digit_products_by_mma_sync(false);
      ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
      {  // (a fault names its case)
        SCOPED_TRACE(::testing::Message() << "m " << b.m << " n " << b.n << " k " << b.k
                                          << ", digits " << digits);
        XN_CUDA_OK(cudaDeviceSynchronize());
      }
      xnExdgemmInfo_t info{};
      XN_CUBLAS_OK(xnGetLastExdgemmInfo(h_, &info));
      EXPECT_EQ(info.engine, 2);
      EXPECT_EQ(info.block_rows, b.m);  // the batched engine ran
      EXPECT_EQ(info.k_chunks, 1);
      EXPECT_GE(info.moduli, c.min_moduli);
      EXPECT_GE(info.blocks, c.min_groups) << "groups of products";
      if (digits == 2) {
        got[2] = dC.download();
        continue;
      }
      const int path = digits < 0 ? 0 : digits > 0 ? 1 : 2;
      workspace[path] = info.workspace_bytes;
      if (path < 2) got[path] = dC.download();
    }
    // (Under a limit, the digits' groups hold more products; in columns of
    // at most 4 rows, padded to 16 bytes, the digits take no fewer.)
    if (c.workspace_limit == 0 && xn::ex_digit_column_stride(b.m) < 4 * b.m) {
      EXPECT_LT(workspace[1], workspace[0]) << "the digits' path ran";
    }
    if (automatic != 0) {
      EXPECT_EQ(workspace[2], workspace[automatic > 0 ? 1 : 0])
          << "m " << b.m << " n " << b.n << " k " << b.k << ": the engine's choice";
    }
    for (std::size_t e = 0; e < got[0].size(); ++e) {
      ASSERT_TRUE(same_bits(got[1][e], got[0][e]))
          << "m " << b.m << " n " << b.n << " k " << b.k << ": C storage [" << e
          << "] = " << got[1][e] << " from the digits, " << got[0][e] << " from the sums";
      ASSERT_TRUE(same_bits(got[2][e], got[0][e]))
          << "m " << b.m << " n " << b.n << " k " << b.k << ": C storage [" << e
          << "] = " << got[2][e] << " from the mma.sync digits, " << got[0][e]
          << " from the sums";
    }
    // Sampled entries (every product, corners included) against the oracle.
    std::uniform_int_distribution<int> row(0, b.m - 1), col(0, b.n - 1);
    for (int p = 0; p < b.count; ++p)
      for (int t = 0; t < 40; ++t) {
        const int i = t == 0 ? b.m - 1 : row(rng), j = t == 0 ? b.n - 1 : col(rng);
        const std::size_t at = std::size_t(p * b.stride_c + i + std::int64_t(j) * b.ldc);
        const double want = xn_test::exact_gemm_entry_ieee(
            b.ta, b.tb, b.k, b.alpha, A.data() + p * b.stride_a, b.lda,
            B.data() + p * b.stride_b, b.ldb, b.beta, C.data() + p * b.stride_c, b.ldc, i, j);
        ASSERT_TRUE(same_bits(got[1][at], want))
            << "product " << p << " (" << i << ", " << j << ") = " << got[1][at] << ", want "
            << want;
      }
  }
  XN_CUBLAS_OK(xnSetOption(h_, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, 0));
}

// The reconstruction's tensor-core sums of int8 digits (the batched first
// pass's digit_fraction_sums) against the FMA chain on the host
// (exact::fraction_sums), bit for bit, for every L (one and two k steps of
// 32 moduli, every lane's moduli), rows multiples of 4 and not (the last
// word's other bytes are the plane's padding), partial warps, and plane
// strides of the engine's padding and not. A stride the words cannot take
// is refused.
TEST_F(GpuExdgemmBatched, TensorCoreSumsOfDigitsAreTheFmaChains) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> digit(-127, 127);
  constexpr int LMax = xn::exact::kMaxModuli;
  for (const std::int64_t rows : {64, 61, 130, 200}) {
    for (const std::int64_t pstride : {rows + (-rows & 15), rows + (-rows & 3) + 4}) {
      for (int L = 1; L <= LMax; ++L) {
        std::vector<std::int8_t> P(std::size_t(pstride * L));
        for (std::int8_t &y : P) y = std::int8_t(digit(rng));
        if (L == LMax)  // the byte sums' largest magnitudes
          for (std::int64_t r = 0; r < 2; ++r)
            for (int l = 0; l < L; ++l) P[std::size_t(r + l * pstride)] = r ? -127 : 127;
        DeviceBuffer<std::int8_t> dP;
        dP.upload(P);
        DeviceBuffer<double> dsums(std::size_t(4 * rows));
        dsums.upload(std::vector<double>(std::size_t(4 * rows), kNaN));
        XN_CUDA_OK(xn::testing::launch_digit_fraction_sums(nullptr, dP.get(), pstride, L, rows,
                                                           dsums.get()));
        const std::vector<double> got = dsums.download();
        const xn::exact::CrtBasis &B = xn::exact::crt_basis(L);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int8_t *const entry[1] = {P.data() + r};
          double want[1][4];
          xn::exact::fraction_sums<LMax>(entry, pstride, B, xn::exact::kModularTables, want);
          for (int j = 0; j < 4; ++j)
            ASSERT_TRUE(same_bits(got[std::size_t(4 * r + j)], want[0][j]))
                << "rows " << rows << " pstride " << pstride << " L " << L << ": row " << r
                << " piece " << j << " = " << got[std::size_t(4 * r + j)] << ", want "
                << want[0][j];
        }
      }
    }
  }
  DeviceBuffer<std::int8_t> dP(std::size_t(65 * 24));
  DeviceBuffer<double> dsums(std::size_t(4 * 64));
  EXPECT_EQ(xn::testing::launch_digit_fraction_sums(nullptr, dP.get(), 65, 24, 64, dsums.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(xn::testing::launch_digit_fraction_sums(nullptr, dP.get() + 1, 64, 24, 64,
                                                    dsums.get()),
            cudaErrorInvalidValue);
}

// Where this build has the wgmma products and the device is Hopper's sm_90,
// they run (else the tests above would check mma.sync twice).
TEST_F(GpuExdgemmBatched, HopperTakesTheWgmmaProducts) {
  int device = 0, major = 0, minor = 0;
  XN_CUDA_OK(cudaGetDevice(&device));
  XN_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  XN_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0 || !xn::ex_digit_products_wgmma_built())
    GTEST_SKIP() << "not an sm_90 device with the wgmma kernel built";
  EXPECT_TRUE(xn::ex_digit_products_on_wgmma());
  xn::testing::set_digit_products_by_mma_sync(true);
  EXPECT_FALSE(xn::ex_digit_products_on_wgmma());
  xn::testing::set_digit_products_by_mma_sync(false);
}

// strideC = 0: the products run one after another into the one C, the
// last product's value remaining (beta = 0).
TEST_F(GpuExdgemmBatched, ZeroStrideCKeepsTheLastProduct) {
  const std::uint64_t seed = xn_test::fresh_seed();
  SCOPED_TRACE(xn_test::describe_seed(seed));
  std::mt19937_64 rng(seed);
  const int m = 9, n = 7, k = 11, count = 3;
  const std::vector<double> A = draw(std::size_t(m * k * count), 0.5, rng),
                            B = draw(std::size_t(k * n * count), 0.5, rng);
  std::vector<double> want;
  xn_test::exact_gemm_ieee(false, false, m, n, k, 1.0, A.data() + (count - 1) * m * k, m,
                           B.data() + (count - 1) * k * n, k, 0.0, nullptr, m, want);
  DeviceBuffer<double> dA, dB, dC;
  dA.upload(A), dB.upload(B), dC.upload(std::vector<double>(std::size_t(m * n), kNaN));
  const double one = 1.0, zero = 0.0;
  ASSERT_EQ(xnExdgemmStridedBatched(h_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.get(), m,
                                    m * k, dB.get(), k, k * n, &zero, dC.get(), m, 0, count),
            CUBLAS_STATUS_SUCCESS);
  const std::vector<double> got = dC.download();
  for (std::size_t e = 0; e < got.size(); ++e)
    ASSERT_TRUE(same_bits(got[e], want[e])) << "C[" << e << "] = " << got[e];
}

TEST_F(GpuExdgemmBatched, BadArgumentsLeaveEveryProductUntouched) {
  const double one = 1.0, zero = 0.0;
  DeviceBuffer<double> dA(64), dB(64), dC(64);
  dC.upload(std::vector<double>(64, 7.0));
  DeviceBuffer<const double *> pa(2), pb(2);
  DeviceBuffer<double *> pc(2);
  pa.upload({dA.get(), dA.get()}), pb.upload({dB.get(), dB.get()});
  pc.upload({dC.get(), dC.get() + 16});
  struct Bad {
    cublasOperation_t ta;
    int m, n, k, lda, ldc, count;
    cublasStatus_t want;
  };
  const Bad cases[] = {
      {cublasOperation_t(9), 4, 4, 4, 4, 4, 2, CUBLAS_STATUS_INVALID_VALUE},
      {CUBLAS_OP_N, -1, 4, 4, 4, 4, 2, CUBLAS_STATUS_INVALID_VALUE},
      {CUBLAS_OP_N, 4, 4, 4, 3, 4, 2, CUBLAS_STATUS_INVALID_VALUE},
      {CUBLAS_OP_N, 4, 4, 4, 4, 3, 2, CUBLAS_STATUS_INVALID_VALUE},
      {CUBLAS_OP_N, 4, 4, 4, 4, 4, -1, CUBLAS_STATUS_INVALID_VALUE},
      {CUBLAS_OP_N, 4, 4, 4, 4, 4, 0, CUBLAS_STATUS_SUCCESS},  // nothing to do
      {CUBLAS_OP_N, 0, 4, 4, 4, 4, 2, CUBLAS_STATUS_SUCCESS},
  };
  for (const Bad &c : cases) {
    EXPECT_EQ(xnExdgemmStridedBatched(h_, c.ta, CUBLAS_OP_N, c.m, c.n, c.k, &one, dA.get(),
                                      c.lda, 16, dB.get(), 4, 16, &zero, dC.get(), c.ldc, 16,
                                      c.count),
              c.want);
    EXPECT_EQ(xnExdgemmBatched(h_, c.ta, CUBLAS_OP_N, c.m, c.n, c.k, &one, pa.get(), c.lda,
                               pb.get(), 4, &zero, pc.get(), c.ldc, c.count),
              c.want);
    EXPECT_EQ(dC.download(), std::vector<double>(64, 7.0));
  }
  EXPECT_EQ(xnExdgemmBatched(h_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, nullptr, 4,
                             pb.get(), 4, &zero, pc.get(), 4, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(xnExdgemmStridedBatched(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one,
                                    dA.get(), 4, 16, dB.get(), 4, 16, &zero, dC.get(), 4, 16,
                                    2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(dC.download(), std::vector<double>(64, 7.0));
}

}  // namespace
