// test_api_args.cpp - the pure argument checkers of src/api/args.h, table
// driven, and the NULL-handle path of the device entry points (the only part
// of the device API that runs without a GPU).
//
// Oracles: cublas?gemm's documented checks for the device API; reference
// DGEMM (its INFO order) for the Fortran API; reference CBLAS cblas_dgemm,
// which checks layout and transposes itself and then calls DGEMM with m/n,
// A/B and lda/ldb swapped for row-major, mapping DGEMM's INFO back through
// its xerbla, for the CBLAS API.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/args.h"
#include "backend/cuda/device_model_cuda.h"
#include "core/blas_conventions.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/schedule.h"
#include "xngemm.h"

namespace {

using xn::check_gemm_cblas_args;
using xn::check_gemm_device_args;
using xn::check_gemm_fortran_args;

const cublasStatus_t kOk = CUBLAS_STATUS_SUCCESS;
const cublasStatus_t kBad = CUBLAS_STATUS_INVALID_VALUE;
const cublasStatus_t kNoInit = CUBLAS_STATUS_NOT_INITIALIZED;
const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, C = CUBLAS_OP_C;
// Not a real handle: the checker only compares it with NULL.
const void *const kHandle = &kHandle;

// ------------------------------------------------------------ device checks

struct DeviceCase {
  const char *what;
  bool null_handle;
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc;
  cublasStatus_t want;
};

std::string describe(const DeviceCase &c) {
  return std::string(c.what) + " (ta=" + std::to_string(int(c.ta)) +
         " tb=" + std::to_string(int(c.tb)) + " m=" + std::to_string(c.m) +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " lda=" + std::to_string(c.lda) + " ldb=" + std::to_string(c.ldb) +
         " ldc=" + std::to_string(c.ldc) + ")";
}

const cublasOperation_t kConjg = CUBLAS_OP_CONJG;
const cublasOperation_t kJunkOp = static_cast<cublasOperation_t>(7);
const cublasOperation_t kNegOp = static_cast<cublasOperation_t>(-1);

const DeviceCase kDeviceCases[] = {
    // Valid calls, including the smallest legal leading dimensions.
    {"NN minimal ld", false, N, N, 4, 5, 6, 4, 6, 4, kOk},
    {"TN minimal ld", false, T, N, 4, 5, 6, 6, 6, 4, kOk},
    {"NT minimal ld", false, N, T, 4, 5, 6, 4, 5, 4, kOk},
    {"TT minimal ld", false, T, T, 4, 5, 6, 6, 5, 4, kOk},
    {"CC is T for real data", false, C, C, 4, 5, 6, 6, 5, 4, kOk},
    {"large ld", false, N, N, 4, 5, 6, 100, 100, 100, kOk},
    {"m=0, lda=ldc=1", false, N, N, 0, 5, 6, 1, 6, 1, kOk},
    {"n=0, ldb=1 for T", false, N, T, 4, 0, 6, 4, 1, 4, kOk},
    {"k=0, lda (T) = 1, ldb = 1", false, T, N, 4, 5, 0, 1, 1, 4, kOk},
    {"all zero, all ld 1", false, N, N, 0, 0, 0, 1, 1, 1, kOk},
    // The handle is checked before anything else.
    {"NULL handle", true, N, N, 4, 5, 6, 4, 6, 4, kNoInit},
    {"NULL handle wins over bad args", true, kJunkOp, N, -1, -1, -1, 0, 0, 0, kNoInit},
    // Operations.
    {"transa CONJG", false, kConjg, N, 4, 5, 6, 6, 6, 4, kBad},
    {"transb CONJG", false, N, kConjg, 4, 5, 6, 4, 6, 4, kBad},
    {"transa out of range", false, kJunkOp, N, 4, 5, 6, 6, 6, 4, kBad},
    {"transb out of range", false, N, kJunkOp, 4, 5, 6, 4, 6, 4, kBad},
    {"transa negative", false, kNegOp, N, 4, 5, 6, 6, 6, 4, kBad},
    // Dimensions.
    {"m < 0", false, N, N, -1, 5, 6, 4, 6, 4, kBad},
    {"n < 0", false, N, N, 4, -1, 6, 4, 6, 4, kBad},
    {"k < 0", false, N, N, 4, 5, -1, 4, 6, 4, kBad},
    // lda: m rows for N, k rows for T; at least 1.
    {"lda < m (N)", false, N, N, 4, 5, 6, 3, 6, 4, kBad},
    {"lda < k (T)", false, T, N, 4, 5, 6, 5, 6, 4, kBad},
    {"lda = m but T needs k", false, T, N, 4, 5, 6, 4, 6, 4, kBad},
    {"lda = 0 with m = 0", false, N, N, 0, 5, 6, 0, 6, 1, kBad},
    {"lda negative", false, N, N, 4, 5, 6, -4, 6, 4, kBad},
    // ldb: k rows for N, n rows for T; at least 1.
    {"ldb < k (N)", false, N, N, 4, 5, 6, 4, 5, 4, kBad},
    {"ldb < n (T)", false, N, T, 4, 5, 6, 4, 4, 4, kBad},
    {"ldb = n but N needs k", false, N, N, 4, 5, 6, 4, 5, 4, kBad},
    {"ldb = 0 with k = 0", false, N, N, 4, 5, 0, 4, 0, 4, kBad},
    // ldc: at least max(1, m), whatever the operations.
    {"ldc < m", false, N, N, 4, 5, 6, 4, 6, 3, kBad},
    {"ldc < m (TT)", false, T, T, 4, 5, 6, 6, 5, 3, kBad},
    {"ldc = 0 with m = 0", false, N, N, 0, 5, 6, 1, 6, 0, kBad},
};

TEST(ApiArgs, DeviceChecksTable) {
  for (const DeviceCase &c : kDeviceCases) {
    const void *h = c.null_handle ? nullptr : kHandle;
    EXPECT_EQ(check_gemm_device_args(h, c.ta, c.tb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc),
              c.want)
        << describe(c);
  }
}

// Public entry points: a NULL handle is reported before anything is touched.
// C is a host array here; the library must neither read nor write it.
template <class U, class F>
void check_null_handle(F gemm) {
  const U nan = std::numeric_limits<U>::quiet_NaN();
  std::vector<U> A(16, U(1)), B(16, U(2)), Cm = {nan, U(-0.0), U(3), U(7)};
  Cm.resize(16, U(5));
  const std::vector<U> before = Cm;
  const U alpha = 1, beta = 0;
  EXPECT_EQ(
      gemm(nullptr, N, N, 4, 4, 4, &alpha, A.data(), 4, B.data(), 4, &beta, Cm.data(), 4),
      kNoInit);
  // Bad arguments too: the handle is still what is reported.
  EXPECT_EQ(gemm(nullptr, kConjg, N, -1, 4, 4, &alpha, A.data(), 0, B.data(), 4, &beta,
                 Cm.data(), 0),
            kNoInit);
  // NULL scalars and matrices: must not be dereferenced either.
  EXPECT_EQ(
      gemm(nullptr, N, N, 4, 4, 4, nullptr, nullptr, 4, nullptr, 4, nullptr, nullptr, 4),
      kNoInit);
  EXPECT_EQ(std::memcmp(before.data(), Cm.data(), Cm.size() * sizeof(U)), 0);
}

TEST(ApiArgs, DeviceEntryPointsNullHandle) {
  check_null_handle<double>(xnDngemm);
  check_null_handle<float>(xnSngemm);
}

// The handle-state calls that must refuse a NULL handle without CUDA.
TEST(ApiArgs, HandleCallsNullHandle) {
  size_t bytes = 123;
  EXPECT_EQ(xnSetWorkspace(nullptr, nullptr, 0), kNoInit);
  EXPECT_EQ(xnGetWorkspaceHeld(nullptr, &bytes), kNoInit);
  EXPECT_EQ(bytes, 123u);
  EXPECT_EQ(xnRelease(nullptr), kNoInit);
  // The workspace query is pure for a NULL handle: bad precision or
  // arguments are INVALID_VALUE, a valid query succeeds.
  EXPECT_EQ(xnGetWorkspaceSize(nullptr, 'z', N, N, 4, 4, 4, &bytes), kBad);
  EXPECT_EQ(xnGetWorkspaceSize(nullptr, 'd', N, N, -1, 4, 4, &bytes), kBad);
  EXPECT_EQ(xnGetWorkspaceSize(nullptr, 'd', kConjg, N, 4, 4, 4, &bytes), kBad);
  EXPECT_EQ(xnGetWorkspaceSize(nullptr, 'd', N, N, 4, 4, 4, nullptr), kBad);
  EXPECT_EQ(xnGetWorkspaceSize(nullptr, 's', T, T, 4, 4, 4, &bytes), kOk);
}

// ----------------------------------------------------------- Fortran checks

struct FortranCase {
  const char *what;
  char ta, tb;
  int m, n, k, lda, ldb, ldc;
  int want;  // reference DGEMM's INFO
};

const FortranCase kFortranCases[] = {
    {"NN minimal", 'N', 'N', 4, 5, 6, 4, 6, 4, 0},
    {"TT minimal", 'T', 'T', 4, 5, 6, 6, 5, 4, 0},
    {"CC minimal", 'C', 'C', 4, 5, 6, 6, 5, 4, 0},
    {"lowercase n t", 'n', 't', 4, 5, 6, 4, 5, 4, 0},
    {"lowercase c n", 'c', 'n', 4, 5, 6, 6, 6, 4, 0},
    {"m=0 lda=ldc=1", 'N', 'N', 0, 5, 6, 1, 6, 1, 0},
    {"k=0 lda(T)=ldb=1", 'T', 'N', 4, 5, 0, 1, 1, 4, 0},
    {"all zero", 'N', 'N', 0, 0, 0, 1, 1, 1, 0},
    // One bad parameter at a time.
    {"transa X", 'X', 'N', 4, 5, 6, 4, 6, 4, 1},
    {"transa blank", ' ', 'N', 4, 5, 6, 4, 6, 4, 1},
    {"transa R (conj, no trans) is not DGEMM's", 'R', 'N', 4, 5, 6, 4, 6, 4, 1},
    {"transb X", 'N', 'x', 4, 5, 6, 4, 6, 4, 2},
    {"m<0", 'N', 'N', -1, 5, 6, 4, 6, 4, 3},
    {"n<0", 'N', 'N', 4, -1, 6, 4, 6, 4, 4},
    {"k<0", 'N', 'N', 4, 5, -1, 4, 6, 4, 5},
    {"lda<m (N)", 'N', 'N', 4, 5, 6, 3, 6, 4, 8},
    {"lda<k (T)", 't', 'N', 4, 5, 6, 4, 6, 4, 8},
    {"lda=0 m=0", 'N', 'N', 0, 5, 6, 0, 6, 1, 8},
    {"ldb<k (N)", 'N', 'N', 4, 5, 6, 4, 5, 4, 10},
    {"ldb<n (T)", 'N', 'c', 4, 5, 6, 4, 4, 4, 10},
    {"ldb=0 k=0", 'N', 'N', 4, 5, 0, 4, 0, 4, 10},
    {"ldc<m", 'N', 'N', 4, 5, 6, 4, 6, 3, 13},
    {"ldc=0 m=0", 'N', 'N', 0, 5, 6, 1, 6, 0, 13},
    // Several bad: the first in DGEMM's order wins.
    {"everything bad", 'X', 'X', -1, -1, -1, 0, 0, 0, 1},
    {"transb then dims", 'N', 'X', -1, -1, -1, 0, 0, 0, 2},
    {"m before n, k", 'N', 'N', -1, -1, -1, 0, 0, 0, 3},
    {"n before k", 'N', 'N', 4, -1, -1, 0, 0, 0, 4},
    {"k before lds", 'N', 'N', 4, 5, -1, 0, 0, 0, 5},
    {"lda before ldb, ldc", 'N', 'N', 4, 5, 6, 3, 5, 3, 8},
    {"ldb before ldc", 'N', 'N', 4, 5, 6, 4, 5, 3, 10},
};

TEST(ApiArgs, FortranChecksTable) {
  for (const FortranCase &c : kFortranCases)
    EXPECT_EQ(check_gemm_fortran_args(c.ta, c.tb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc),
              c.want)
        << c.what;
}

// The conventions every front end decodes through (core/blas_conventions.h).
TEST(ApiArgs, BlasConventionsDecodeEveryTransAndCblasValue) {
  namespace blas = xn::blas;
  for (int c = 0; c < 256; ++c) {
    const char t = char(c);
    const bool valid = std::strchr("NnTtCc", t) != nullptr && t != '\0';
    EXPECT_EQ(blas::valid_trans(t), valid) << c;
    if (valid) {
      EXPECT_EQ(blas::transposes(t), t != 'N' && t != 'n') << t;
    }
  }
  EXPECT_EQ(blas::kRowMajor, int(XnRowMajor));
  EXPECT_EQ(blas::kColMajor, int(XnColMajor));
  for (int v = 100; v < 115; ++v) {
    EXPECT_EQ(blas::valid_layout(v), v == 101 || v == 102) << v;
    EXPECT_EQ(blas::valid_cblas_trans(v), v >= 111 && v <= 113) << v;
    EXPECT_EQ(blas::trans_char(v), v == 111 ? 'N' : v == 112 ? 'T' : v == 113 ? 'C' : '?') << v;
  }
  EXPECT_EQ(blas::trans_char(XnConjTrans), 'C');
}

// ------------------------------------------------------------- CBLAS checks

const int kRow = 101, kCol = 102, kN = 111, kT = 112, kC = 113;

struct CblasCase {
  const char *what;
  int layout, ta, tb, m, n, k, lda, ldb, ldc;
  int want;  // reference CBLAS position (layout = 1)
};

// Shapes used below: m = 4, n = 5, k = 6.
// Column-major: lda >= (N ? m : k), ldb >= (N ? k : n), ldc >= m.
// Row-major:    lda >= (N ? k : m), ldb >= (N ? n : k), ldc >= n.
const CblasCase kCblasCases[] = {
    {"col NN minimal", kCol, kN, kN, 4, 5, 6, 4, 6, 4, 0},
    {"col TT minimal", kCol, kT, kT, 4, 5, 6, 6, 5, 4, 0},
    {"col CC minimal", kCol, kC, kC, 4, 5, 6, 6, 5, 4, 0},
    {"row NN minimal", kRow, kN, kN, 4, 5, 6, 6, 5, 5, 0},
    {"row TT minimal", kRow, kT, kT, 4, 5, 6, 4, 6, 5, 0},
    {"row TN minimal", kRow, kT, kN, 4, 5, 6, 4, 5, 5, 0},
    {"row NC minimal", kRow, kN, kC, 4, 5, 6, 6, 6, 5, 0},
    {"row m=0 lda,ldb,ldc", kRow, kT, kN, 0, 5, 6, 1, 5, 5, 0},
    {"row n=0 ldc=1", kRow, kN, kN, 4, 0, 6, 6, 1, 1, 0},
    {"col all zero", kCol, kN, kN, 0, 0, 0, 1, 1, 1, 0},
    {"row all zero", kRow, kN, kN, 0, 0, 0, 1, 1, 1, 0},
    // Layout, transposes.
    {"layout 0", 0, kN, kN, 4, 5, 6, 4, 6, 4, 1},
    {"layout 103", 103, kN, kN, 4, 5, 6, 4, 6, 4, 1},
    {"layout wins over all", 100, 0, 0, -1, -1, -1, 0, 0, 0, 1},
    {"col transa 114", kCol, 114, kN, 4, 5, 6, 4, 6, 4, 2},
    {"row transa 110", kRow, 110, kN, 4, 5, 6, 6, 5, 5, 2},
    {"col transb 0", kCol, kN, 0, 4, 5, 6, 4, 6, 4, 3},
    {"row transb 'N'", kRow, kN, 'N', 4, 5, 6, 6, 5, 5, 3},
    {"row transa before transb", kRow, 1, 1, 4, 5, 6, 6, 5, 5, 2},
    // Column-major: DGEMM's order, positions shifted by one.
    {"col m<0", kCol, kN, kN, -1, 5, 6, 4, 6, 4, 4},
    {"col n<0", kCol, kN, kN, 4, -1, 6, 4, 6, 4, 5},
    {"col k<0", kCol, kN, kN, 4, 5, -1, 4, 6, 4, 6},
    {"col lda<m (N)", kCol, kN, kN, 4, 5, 6, 3, 6, 4, 9},
    {"col lda<k (T)", kCol, kT, kN, 4, 5, 6, 5, 6, 4, 9},
    {"col ldb<k (N)", kCol, kN, kN, 4, 5, 6, 4, 5, 4, 11},
    {"col ldb<n (T)", kCol, kN, kT, 4, 5, 6, 4, 4, 4, 11},
    {"col ldc<m", kCol, kN, kN, 4, 5, 6, 4, 6, 3, 14},
    {"col m before n", kCol, kN, kN, -1, -1, 6, 4, 6, 4, 4},
    {"col lda before ldb", kCol, kN, kN, 4, 5, 6, 3, 5, 4, 9},
    // Row-major: the single bad parameter, with row-major meaning.
    {"row m<0", kRow, kN, kN, -1, 5, 6, 6, 5, 5, 4},
    {"row n<0", kRow, kN, kN, 4, -1, 6, 6, 5, 5, 5},
    {"row k<0", kRow, kN, kN, 4, 5, -1, 6, 5, 5, 6},
    {"row lda<k (N)", kRow, kN, kN, 4, 5, 6, 5, 5, 5, 9},
    {"row lda=m is too small for N", kRow, kN, kN, 4, 5, 6, 4, 5, 5, 9},
    {"row lda<m (T)", kRow, kT, kN, 4, 5, 6, 3, 5, 5, 9},
    {"row ldb<n (N)", kRow, kN, kN, 4, 5, 6, 6, 4, 5, 11},
    {"row ldb<k (T)", kRow, kN, kT, 4, 5, 6, 6, 5, 5, 11},
    {"row ldc<n", kRow, kN, kN, 4, 5, 6, 6, 5, 4, 14},
    {"row ldc=m is too small", kRow, kT, kT, 6, 7, 2, 6, 2, 6, 14},
    {"row ldc=0 n=0", kRow, kN, kN, 4, 0, 6, 6, 1, 0, 14},
    // Row-major order: reference CBLAS calls DGEMM(TB, TA, N, M, K, ..., B,
    // LDB, A, LDA, ..., C, LDC), so N is checked before M, LDB before LDA.
    {"row n before m", kRow, kN, kN, -1, -1, 6, 6, 5, 5, 5},
    {"row m before k", kRow, kN, kN, -1, 5, -1, 6, 5, 5, 4},
    {"row ldb before lda", kRow, kN, kN, 4, 5, 6, 5, 4, 5, 11},
    {"row ldb before lda (TT)", kRow, kT, kT, 4, 5, 6, 3, 5, 4, 11},
    {"row lda before ldc", kRow, kN, kN, 4, 5, 6, 5, 5, 4, 9},
    {"row dims before lds", kRow, kN, kN, 4, 5, -1, 0, 0, 0, 6},
};

TEST(ApiArgs, CblasChecksTable) {
  for (const CblasCase &c : kCblasCases)
    EXPECT_EQ(
        check_gemm_cblas_args(c.layout, c.ta, c.tb, c.m, c.n, c.k, c.lda, c.ldb, c.ldc),
        c.want)
        << c.what;
}

// Exhaustive check on a small grid against an oracle written from the
// row-major and column-major meaning of each argument (not from
// check_gemm_fortran_args), in reference CBLAS's reporting order.
int cblas_oracle(int layout, int ta, int tb, int m, int n, int k, int lda, int ldb,
                 int ldc) {
  auto at_least = [](int ld, int rows) { return ld >= (rows > 1 ? rows : 1); };
  if (layout == kCol) {
    if (m < 0) return 4;
    if (n < 0) return 5;
    if (k < 0) return 6;
    if (!at_least(lda, ta == kN ? m : k)) return 9;
    if (!at_least(ldb, tb == kN ? k : n)) return 11;
    if (!at_least(ldc, m)) return 14;
    return 0;
  }
  // Row-major: A is M x K (N) or K x M (T) stored by rows, so its leading
  // dimension is its column count; likewise B and C.
  if (n < 0) return 5;
  if (m < 0) return 4;
  if (k < 0) return 6;
  if (!at_least(ldb, tb == kN ? n : k)) return 11;
  if (!at_least(lda, ta == kN ? k : m)) return 9;
  if (!at_least(ldc, n)) return 14;
  return 0;
}

TEST(ApiArgs, CblasMatchesOracleOnGrid) {
  int checked = 0, bad = 0;
  for (int layout : {kRow, kCol})
    for (int ta : {kN, kT, kC})
      for (int tb : {kN, kT, kC})
        for (int m : {-1, 0, 2})
          for (int n : {-1, 0, 3})
            for (int k : {-1, 0, 2})
              for (int lda : {0, 1, 2, 3})
                for (int ldb : {0, 1, 2, 3})
                  for (int ldc : {0, 1, 2, 3}) {
                    const int want = cblas_oracle(layout, ta, tb, m, n, k, lda, ldb, ldc);
                    ASSERT_EQ(
                        check_gemm_cblas_args(layout, ta, tb, m, n, k, lda, ldb, ldc),
                        want)
                        << "layout " << layout << " ta " << ta << " tb " << tb << " m "
                        << m << " n " << n << " k " << k << " lda " << lda << " ldb "
                        << ldb << " ldc " << ldc;
                    ++checked;
                    bad += want != 0;
                  }
  // The grid exercises both outcomes.
  EXPECT_GT(bad, 0);
  EXPECT_LT(bad, checked);
}

// ------------------------------------- Strassen and Winograd (general inputs)

// The four device entry points of the general-input family check their
// arguments exactly as cublas?gemm does (check_gemm_device_args, the table
// above), before any use of the handle or the device: every bad case runs
// here without a GPU, with a handle that is not one (a valid call would use
// it, so only the failing cases are called). C is a host array the library
// must neither read nor write.
template <class U, class F>
void check_device_bad_args(F gemm, const char *name) {
  const U nan = std::numeric_limits<U>::quiet_NaN();
  const std::vector<U> A(64, U(1)), B(64, U(2));
  std::vector<U> Cm(64, U(5));
  Cm[0] = nan;
  Cm[1] = U(-0.0);
  const std::vector<U> before = Cm;
  const U alpha = 1, beta = 0;
  cublasHandle_t fake = static_cast<cublasHandle_t>(const_cast<void *>(kHandle));
  int checked = 0;
  for (const DeviceCase &c : kDeviceCases) {
    if (c.want == kOk) continue;
    EXPECT_EQ(gemm(c.null_handle ? nullptr : fake, c.ta, c.tb, c.m, c.n, c.k, &alpha,
                   A.data(), c.lda, B.data(), c.ldb, &beta, Cm.data(), c.ldc),
              c.want)
        << name << ": " << describe(c);
    ++checked;
  }
  EXPECT_GT(checked, 20) << name;
  EXPECT_EQ(std::memcmp(before.data(), Cm.data(), Cm.size() * sizeof(U)), 0) << name;
}

TEST(ApiArgs, FastGemmDeviceEntryPointsCheckLikeCublasGemm) {
  check_device_bad_args<double>(xnDgemmStrassen, "xnDgemmStrassen");
  check_device_bad_args<float>(xnSgemmStrassen, "xnSgemmStrassen");
  check_device_bad_args<double>(xnDgemmWinograd, "xnDgemmWinograd");
  check_device_bad_args<float>(xnSgemmWinograd, "xnSgemmWinograd");
}

TEST(ApiArgs, FastGemmDeviceEntryPointsNullHandle) {
  check_null_handle<double>(xnDgemmStrassen);
  check_null_handle<float>(xnSgemmStrassen);
  check_null_handle<double>(xnDgemmWinograd);
  check_null_handle<float>(xnSgemmWinograd);
}

// Sets every process-wide option to the table's default for the scope (so
// that XN_* variables in the environment cannot change what "default
// options" means below) and restores the previous values after it.
class DefaultOptionsScope {
 public:
  DefaultOptionsScope() : saved_(xn::option_count()) {
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      const xn::OptionSpec &spec = xn::option_table()[i];
      EXPECT_EQ(xnGetOption(nullptr, xnOption_t(spec.id), &saved_[i]), kOk) << spec.name;
      EXPECT_EQ(xnSetOption(nullptr, xnOption_t(spec.id), spec.default_value), kOk)
          << spec.name;
    }
  }
  ~DefaultOptionsScope() {
    for (std::size_t i = 0; i < saved_.size(); ++i)
      xnSetOption(nullptr, xnOption_t(xn::option_table()[i].id), saved_[i]);
  }
  DefaultOptionsScope(const DefaultOptionsScope &) = delete;
  DefaultOptionsScope &operator=(const DefaultOptionsScope &) = delete;

 private:
  std::vector<std::int64_t> saved_;
};

TEST(ApiArgs, FastGemmWorkspaceQueryArguments) {
  const xnFastGemm_t S = XN_FAST_GEMM_STRASSEN, W = XN_FAST_GEMM_WINOGRAD;
  size_t bytes = 123;
  // Bad algorithm, precision, output pointer, operation or dimension:
  // INVALID_VALUE, and nothing written.
  EXPECT_EQ(
      xnGetFastGemmWorkspaceSize(nullptr, xnFastGemm_t(2), 'd', N, N, 4, 4, 4, 1, &bytes),
      kBad);
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, xnFastGemm_t(-1), 'd', N, N, 4, 4, 4, 1,
                                       &bytes),
            kBad);
  for (char bad : {'z', 'c', 'D', 'S', '\0'})
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, S, bad, N, N, 4, 4, 4, 1, &bytes), kBad)
        << int(bad);
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, W, 'd', N, N, 4, 4, 4, 1, nullptr), kBad);
  for (cublasOperation_t op : {kConjg, kJunkOp, kNegOp}) {
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, S, 's', op, N, 4, 4, 4, 0, &bytes),
              kBad);
    EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, W, 'd', N, op, 4, 4, 4, 0, &bytes),
              kBad);
  }
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, S, 'd', N, N, -1, 4, 4, 1, &bytes), kBad);
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, W, 's', T, N, 4, -1, 4, 1, &bytes), kBad);
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, W, 'd', N, T, 4, 4, -1, 0, &bytes), kBad);
  EXPECT_EQ(bytes, 123u);
  // Valid: C (transposes) and 0 dimensions are fine; below the crossover 0.
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, S, 'd', C, C, 0, 0, 0, 1, &bytes), kOk);
  EXPECT_EQ(bytes, 0u);
  bytes = 123;
  EXPECT_EQ(xnGetFastGemmWorkspaceSize(nullptr, W, 's', N, N, 100, 200, 300, 0, &bytes),
            kOk);
  EXPECT_EQ(bytes, 0u);
}

// The query reports the planner's size (gemm_driver.h) for the depth the
// options choose, times the element size, and stays within the documented
// totals for square n: with beta = 0 two temporaries of a quadrant per
// level, 2 (n/2)^2 (1 + 1/4 + ...) < 2 n^2 / 3; with beta != 0 three of
// n^2/4 at the top and those below, 3/4 + 1/6 = 11/12 of n^2. The packed
// quadrant of op(B) (XN_OPT_PACK_TRANS_B, automatic for double NT) comes on
// top of the temporaries, k n / 4 more: the totals are checked on the
// temporaries, the packed quadrant on its own.
TEST(ApiArgs, FastGemmWorkspaceQueryMatchesThePlanner) {
  const DefaultOptionsScope defaults;
  const xn::Options o = xn::default_options();
  // The query plans with the current device's model (none without a GPU).
  const std::shared_ptr<const xn::DepthModel> model =
      xn::device_depth_model(o.device_calibration != 0);
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{8192, 8192, 8192},
                          {16384, 16384, 16384},
                          {10000, 6000, 9000},
                          {8191, 4097, 20000},
                          {100, 200, 300}};
  for (int a = 0; a < 2; ++a) {
    const xn::GemmAlgorithm &algo =
        a == 0 ? xn::strassen_algorithm() : xn::winograd_algorithm();
    for (char prec : {'s', 'd'})
      for (cublasOperation_t ta : {N, T})
        for (cublasOperation_t tb : {N, T})
          for (const Shape &s : shapes)
            for (int beta_is_zero : {0, 1}) {
              const bool is_double = prec == 'd';
              const size_t elem = is_double ? sizeof(double) : sizeof(float);
              size_t bytes = 1;
              ASSERT_EQ(xnGetFastGemmWorkspaceSize(nullptr, xnFastGemm_t(a), prec, ta, tb,
                                                   s.m, s.n, s.k, beta_is_zero, &bytes),
                        kOk);
              const bool nz = beta_is_zero == 0;
              const xn::index_t want = xn::planned_workspace_elems(
                  algo, o, model.get(), is_double, nz, s.m, s.n, s.k, ta == T, tb == T);
              const std::string what =
                  std::string(algo.name) + " " + prec + " ta=" + std::to_string(ta) +
                  " tb=" + std::to_string(tb) + " " + std::to_string(s.m) + "x" +
                  std::to_string(s.n) + "x" + std::to_string(s.k) +
                  " beta_is_zero=" + std::to_string(beta_is_zero);
              EXPECT_EQ(bytes, size_t(want) * elem) << what;
              if (s.m != s.n || s.n != s.k || s.m < 8192) continue;
              const double n2 = double(s.n) * s.n;
              const int levels =
                  xn::planned_levels(algo, o, model.get(), is_double, nz, s.m, s.n, s.k);
              const xn::TempOrientation to =
                  xn::temp_orientation(o, is_double, ta == T, tb == T);
              const double packed = double(xn::packed_b_elems(
                  algo, nz, s.m, s.n, s.k, levels, to.a_layout, tb == T, to.t_normal));
              EXPECT_LE(packed, n2 / 4) << what;
              EXPECT_LE(double(want) - packed, 2.0 / 3 * n2) << what;
              // A call the plan does not recurse (single precision at 8192
              // under the CPU's rule) needs no workspace.
              if (levels == 0) {
                EXPECT_EQ(bytes, 0u) << what;
              } else {
                EXPECT_GT(bytes, 0u) << what;
              }
            }
  }
}

}  // namespace
