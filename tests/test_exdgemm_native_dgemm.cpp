// test_exdgemm_native_dgemm.cpp - the host-side rules of native_dgemm.h (label unit):
// which cuBLASLt algorithms count as native IEEE double (exdgemm's slice
// products must never be emulated), and the alignment passed to cuBLASLt.
#include <gtest/gtest.h>

#include <cstdint>

#include "backend/cuda/native_dgemm.h"

namespace {

constexpr std::uint64_t kAcc64 = CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F;
constexpr std::uint64_t kIn64 = CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F;

TEST(NativeDgemm, OnlyPlainDoubleAlgorithmsAreNative) {
  // DGEMM's tensor-core (DMMA) and FMA algorithms, as cuBLASLt 13 reports them.
  EXPECT_TRUE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA | kAcc64 | kIn64, 0));
  EXPECT_TRUE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA | kAcc64 | kIn64, 0));
  // The fixed-point emulation algorithm (integer tensor cores).
  EXPECT_FALSE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA | kAcc64 | kIn64, 1));
  EXPECT_FALSE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA | kAcc64 | kIn64, 0));
  // Any emulation support disqualifies, whatever the other flags say.
  EXPECT_FALSE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA | kAcc64 | kIn64, 1));
  // Narrower inputs or accumulators, other tensor-core types, nothing known.
  EXPECT_FALSE(xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA | kAcc64 |
                                           CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F,
                                       0));
  EXPECT_FALSE(xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA |
                                           CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F |
                                           kIn64,
                                       0));
  EXPECT_FALSE(
      xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA | kAcc64 | kIn64, 0));
  EXPECT_FALSE(xn::is_native_fp64_algo(CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA |
                                           CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA | kAcc64 |
                                           kIn64,
                                       0));
  EXPECT_FALSE(xn::is_native_fp64_algo(0, 0));
}

TEST(NativeDgemm, AlignmentIsTheLargestCommonPowerOfTwoUpTo256) {
  auto at = [](std::uintptr_t a) { return reinterpret_cast<const void *>(a); };
  EXPECT_EQ(xn::lt_alignment(at(0x10000), 8192), 256u);
  EXPECT_EQ(xn::lt_alignment(at(0x10000 + 8), 8192), 8u);
  EXPECT_EQ(xn::lt_alignment(at(0x10000 + 16), 8192), 16u);
  EXPECT_EQ(xn::lt_alignment(at(0x10000), 301), 8u);   // ld 301 doubles = 2408 bytes
  EXPECT_EQ(xn::lt_alignment(at(0x10000), 302), 16u);  // 2416 bytes
  EXPECT_EQ(xn::lt_alignment(at(0x10000 + 64), 4096), 64u);
}

}  // namespace
