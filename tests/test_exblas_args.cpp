// test_exblas_args.cpp - the argument checks of the correctly rounded DGEMV
// and DDOT: the pure checkers of src/api/args.h (table driven, and the CBLAS
// one exhaustively on a grid), what the host entry points report through
// XERBLA, and the device entry points' refusals that run without a GPU (a
// NULL handle, or a handle that is not one with bad arguments).
//
// Oracles: cublasDgemv's documented checks for the device API; reference
// DGEMV's INFO order for the Fortran API; reference CBLAS cblas_dgemv, which
// checks layout and trans itself and then calls DGEMV (row-major: on the
// transposed n x m problem, so N is checked before M and LDA against N),
// for the CBLAS API.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/args.h"
#include "support/host_state.h"
#include "support/xerbla_log.h"
#include "xngemm.h"

namespace {

using xn::check_gemv_cblas_args;
using xn::check_gemv_device_args;
using xn::check_gemv_fortran_args;
using xn_test::g_xerbla;
using xn_test::XerblaLog;

const cublasStatus_t kOk = CUBLAS_STATUS_SUCCESS;
const cublasStatus_t kBad = CUBLAS_STATUS_INVALID_VALUE;
const cublasStatus_t kNoInit = CUBLAS_STATUS_NOT_INITIALIZED;
const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, C = CUBLAS_OP_C;
const cublasOperation_t kConjg = CUBLAS_OP_CONJG;
const cublasOperation_t kJunkOp = static_cast<cublasOperation_t>(7);
const cublasOperation_t kNegOp = static_cast<cublasOperation_t>(-1);
// Not a real handle: the checks only compare it with NULL, and only calls
// that must fail before using it are made with it.
const void *const kHandle = &kHandle;

cublasHandle_t fake_handle() {
  return static_cast<cublasHandle_t>(const_cast<void *>(kHandle));
}

// Bitwise equality (NaN payloads included): "untouched" means the same bytes.
bool same_bytes(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 8) == 0;
}

// A y the calls must not write: NaNs with distinct payloads, signed zeros
// and distinctive finite values.
std::vector<double> poisoned_y(std::size_t n) {
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t nan_bits = 0x7ff80000dead0000ull | i;
    switch (i % 4) {
      case 0:
        std::memcpy(&y[i], &nan_bits, 8);
        break;
      case 1:
        y[i] = -0.0;
        break;
      case 2:
        y[i] = 0x1.23456789abcdep-3 * double(i);
        break;
      default:
        y[i] = -std::numeric_limits<double>::infinity();
    }
  }
  return y;
}

// ------------------------------------------------------------ device checks

struct GemvDeviceCase {
  const char *what;
  bool null_handle;
  cublasOperation_t trans;
  int m, n, lda, incx, incy;
  cublasStatus_t want;
};

std::string describe(const GemvDeviceCase &c) {
  return std::string(c.what) + " (trans=" + std::to_string(int(c.trans)) +
         " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " lda=" + std::to_string(c.lda) + " incx=" + std::to_string(c.incx) +
         " incy=" + std::to_string(c.incy) + ")";
}

const GemvDeviceCase kGemvDeviceCases[] = {
    // Valid: lda is A's row count m whatever trans is.
    {"N minimal lda", false, N, 4, 5, 4, 1, 1, kOk},
    {"T minimal lda", false, T, 4, 5, 4, 1, 1, kOk},
    {"T: lda = m < n is enough", false, T, 4, 9, 4, 2, 3, kOk},
    {"C is T for real data", false, C, 4, 5, 4, 1, 1, kOk},
    {"large lda, negative increments", false, N, 4, 5, 100, -1, -3, kOk},
    {"m = 0, lda = 1", false, N, 0, 5, 1, 1, 1, kOk},
    {"n = 0", false, T, 4, 0, 4, 1, 1, kOk},
    {"m = n = 0, lda = 1", false, N, 0, 0, 1, -2, 7, kOk},
    // The handle first.
    {"NULL handle", true, N, 4, 5, 4, 1, 1, kNoInit},
    {"NULL handle wins over bad args", true, kJunkOp, -1, -1, 0, 0, 0, kNoInit},
    // Operation.
    {"trans out of range", false, kJunkOp, 4, 5, 4, 1, 1, kBad},
    {"trans negative", false, kNegOp, 4, 5, 4, 1, 1, kBad},
    {"trans CONJG", false, kConjg, 4, 5, 4, 1, 1, kBad},
    // Dimensions.
    {"m < 0", false, N, -1, 5, 4, 1, 1, kBad},
    {"n < 0", false, N, 4, -1, 4, 1, 1, kBad},
    {"m < 0 (T)", false, T, -3, 5, 4, 1, 1, kBad},
    {"lda < m (N)", false, N, 4, 5, 3, 1, 1, kBad},
    {"lda < m (T)", false, T, 4, 2, 3, 1, 1, kBad},
    {"lda = 0 with m = 0 (as cuBLAS 13.1)", false, N, 0, 5, 0, 1, 1, kOk},
    {"lda negative", false, N, 4, 5, -4, 1, 1, kBad},
    // Increments.
    {"incx = 0", false, N, 4, 5, 4, 0, 1, kBad},
    {"incy = 0", false, N, 4, 5, 4, 1, 0, kBad},
    {"incx = 0 (T)", false, T, 4, 5, 4, 0, -1, kBad},
    {"incy = 0 with m = n = 0", false, N, 0, 0, 1, 1, 0, kBad},
    {"everything but the handle bad", false, kJunkOp, -1, -1, 0, 0, 0, kBad},
};

TEST(ExblasArgs, GemvDeviceChecksTable) {
  for (const GemvDeviceCase &c : kGemvDeviceCases) {
    const void *h = c.null_handle ? nullptr : kHandle;
    EXPECT_EQ(check_gemv_device_args(h, c.trans, c.m, c.n, c.lda, c.incx, c.incy), c.want)
        << describe(c);
  }
}

// xnExdgemv refuses every failing case of the table before using the handle
// or the device: y (a host array here) is neither read nor written.
TEST(ExblasArgs, DeviceGemvRefusesBadArgumentsWithoutTouchingY) {
  const std::vector<double> A(64, 1.0), x(64, 2.0);
  std::vector<double> y = poisoned_y(64);
  const std::vector<double> before = y;
  const double alpha = 1, beta = 0.5;
  int checked = 0;
  for (const GemvDeviceCase &c : kGemvDeviceCases) {
    if (c.want == kOk) continue;
    EXPECT_EQ(xnExdgemv(c.null_handle ? nullptr : fake_handle(), c.trans, c.m, c.n, &alpha,
                        A.data(), c.lda, x.data(), c.incx, &beta, y.data(), c.incy),
              c.want)
        << describe(c);
    ++checked;
  }
  EXPECT_GT(checked, 15);
  EXPECT_TRUE(same_bytes(y, before)) << "y written by a refused xnExdgemv";
}

TEST(ExblasArgs, DeviceEntryPointsNullHandle) {
  const std::vector<double> A(16, 1.0), x(16, 2.0);
  std::vector<double> y = poisoned_y(16);
  const std::vector<double> before = y;
  const double alpha = 1, beta = 0;
  EXPECT_EQ(xnExdgemv(nullptr, N, 4, 4, &alpha, A.data(), 4, x.data(), 1, &beta, y.data(),
                      1),
            kNoInit);
  // NULL scalars and arrays must not be dereferenced either.
  EXPECT_EQ(xnExdgemv(nullptr, T, 4, 4, nullptr, nullptr, 4, nullptr, 1, nullptr, nullptr,
                      1),
            kNoInit);
  EXPECT_TRUE(same_bytes(y, before));

  double result = -7.25;
  EXPECT_EQ(xnExddot(nullptr, 4, x.data(), 1, y.data(), 1, &result), kNoInit);
  EXPECT_EQ(xnExddot(nullptr, -1, nullptr, 0, nullptr, 0, &result), kNoInit);
  EXPECT_EQ(result, -7.25) << "result written after NOT_INITIALIZED";
  // The handle is checked before the result pointer.
  EXPECT_EQ(xnExddot(nullptr, 4, x.data(), 1, y.data(), 1, nullptr), kNoInit);
  EXPECT_TRUE(same_bytes(y, before));
}

// DDOT has no bad argument but a NULL result (n <= 0 and zero increments
// are valid): MAPPING_ERROR (cuBLAS 13.1's status with a host result),
// refused before the handle is read (here one that is not one).
TEST(ExblasArgs, DeviceDotNullResult) {
  const std::vector<double> x(8, 1.0), y(8, 2.0);
  for (int n : {4, 0, -3})
    for (int incx : {1, 0, -2})
      EXPECT_EQ(xnExddot(fake_handle(), n, x.data(), incx, y.data(), 1, nullptr),
                CUBLAS_STATUS_MAPPING_ERROR)
          << "n=" << n << " incx=" << incx;
}

// ----------------------------------------------------------- Fortran checks

struct GemvFortranCase {
  const char *what;
  char trans;
  int m, n, lda, incx, incy;
  int want;  // reference DGEMV's INFO
};

const GemvFortranCase kGemvFortranCases[] = {
    {"N minimal", 'N', 4, 5, 4, 1, 1, 0},
    {"T minimal (lda = m)", 'T', 4, 5, 4, 1, 1, 0},
    {"C minimal", 'C', 4, 5, 4, 1, 1, 0},
    {"lowercase n", 'n', 4, 5, 4, -1, 2, 0},
    {"lowercase t", 't', 4, 5, 6, 3, -2, 0},
    {"lowercase c", 'c', 4, 5, 4, 1, 1, 0},
    {"m = 0 lda = 1", 'N', 0, 5, 1, 1, 1, 0},
    {"n = 0", 'T', 4, 0, 4, 1, 1, 0},
    {"all zero, lda = 1", 'N', 0, 0, 1, 1, 1, 0},
    // One bad parameter at a time.
    {"trans X", 'X', 4, 5, 4, 1, 1, 1},
    {"trans blank", ' ', 4, 5, 4, 1, 1, 1},
    {"trans R", 'R', 4, 5, 4, 1, 1, 1},
    {"trans NUL", '\0', 4, 5, 4, 1, 1, 1},
    {"m < 0", 'N', -1, 5, 4, 1, 1, 2},
    {"n < 0", 'N', 4, -1, 4, 1, 1, 3},
    {"lda < m", 'N', 4, 5, 3, 1, 1, 6},
    {"lda < m (T)", 'T', 4, 2, 3, 1, 1, 6},
    {"lda = 0, m = 0", 'N', 0, 5, 0, 1, 1, 6},
    {"incx = 0", 'N', 4, 5, 4, 0, 1, 8},
    {"incy = 0", 'N', 4, 5, 4, 1, 0, 11},
    // Several bad: the first in DGEMV's order wins.
    {"everything bad", 'X', -1, -1, 0, 0, 0, 1},
    {"m before n", 'N', -1, -1, 0, 0, 0, 2},
    {"n before lda", 'N', 4, -1, 0, 0, 0, 3},
    {"lda before incx", 'T', 4, 5, 3, 0, 0, 6},
    {"incx before incy", 'c', 4, 5, 4, 0, 0, 8},
};

TEST(ExblasArgs, GemvFortranChecksTable) {
  for (const GemvFortranCase &c : kGemvFortranCases)
    EXPECT_EQ(check_gemv_fortran_args(c.trans, c.m, c.n, c.lda, c.incx, c.incy), c.want)
        << c.what;
}

// ------------------------------------------------------------- CBLAS checks

const int kRow = 101, kCol = 102, kNoT = 111, kT = 112, kConjT = 113;

struct GemvCblasCase {
  const char *what;
  int layout, trans, m, n, lda, incx, incy;
  int want;  // reference CBLAS position
};

const GemvCblasCase kGemvCblasCases[] = {
    {"col N minimal", kCol, kNoT, 4, 5, 4, 1, 1, 0},
    {"col T minimal", kCol, kT, 4, 5, 4, 1, 1, 0},
    {"row N minimal (lda = n)", kRow, kNoT, 4, 5, 5, 1, 1, 0},
    {"row C minimal", kRow, kConjT, 4, 5, 5, -1, -1, 0},
    {"row m = 0", kRow, kNoT, 0, 5, 5, 1, 1, 0},
    {"row n = 0, lda = 1", kRow, kT, 4, 0, 1, 1, 1, 0},
    {"layout 0", 0, kNoT, 4, 5, 4, 1, 1, 1},
    {"layout wins over all", 103, 0, -1, -1, 0, 0, 0, 1},
    {"trans 110", kCol, 110, 4, 5, 4, 1, 1, 2},
    {"trans 'N'", kRow, 'N', 4, 5, 5, 1, 1, 2},
    {"col m < 0", kCol, kNoT, -1, 5, 4, 1, 1, 3},
    {"col n < 0", kCol, kNoT, 4, -1, 4, 1, 1, 4},
    {"col m before n", kCol, kNoT, -1, -1, 4, 1, 1, 3},
    {"col lda < m", kCol, kT, 4, 5, 3, 1, 1, 7},
    {"col lda = n is not m", kCol, kNoT, 6, 5, 5, 1, 1, 7},
    {"col incx = 0", kCol, kNoT, 4, 5, 4, 0, 1, 9},
    {"col incy = 0", kCol, kNoT, 4, 5, 4, 1, 0, 12},
    {"row m < 0", kRow, kNoT, -1, 5, 5, 1, 1, 3},
    {"row n < 0", kRow, kNoT, 4, -1, 5, 1, 1, 4},
    {"row n before m", kRow, kNoT, -1, -1, 5, 1, 1, 4},
    {"row lda < n", kRow, kNoT, 4, 5, 4, 1, 1, 7},
    {"row lda = m is too small", kRow, kT, 4, 5, 4, 1, 1, 7},
    {"row lda = 0, n = 0", kRow, kNoT, 4, 0, 0, 1, 1, 7},
    {"row incx = 0", kRow, kNoT, 4, 5, 5, 0, 1, 9},
    {"row incy = 0", kRow, kT, 4, 5, 5, 1, 0, 12},
    {"row lda before incs", kRow, kNoT, 4, 5, 4, 0, 0, 7},
};

TEST(ExblasArgs, GemvCblasChecksTable) {
  for (const GemvCblasCase &c : kGemvCblasCases)
    EXPECT_EQ(check_gemv_cblas_args(c.layout, c.trans, c.m, c.n, c.lda, c.incx, c.incy),
              c.want)
        << c.what;
}

// Written from the meaning of each argument, not from the Fortran checker:
// column-major A is M x N with leading dimension >= M; row-major A is M x N
// stored by rows (leading dimension >= N), which DGEMV sees as the N x M
// column-major matrix, so its N is checked first.
int gemv_cblas_oracle(int layout, int trans, int m, int n, int lda, int incx, int incy) {
  if (layout != kRow && layout != kCol) return 1;
  if (trans != kNoT && trans != kT && trans != kConjT) return 2;
  const auto at_least = [](int ld, int rows) { return ld >= (rows > 1 ? rows : 1); };
  if (layout == kCol) {
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (!at_least(lda, m)) return 7;
  } else {
    if (n < 0) return 4;
    if (m < 0) return 3;
    if (!at_least(lda, n)) return 7;
  }
  if (incx == 0) return 9;
  if (incy == 0) return 12;
  return 0;
}

TEST(ExblasArgs, GemvCblasMatchesOracleOnGrid) {
  int checked = 0, bad = 0;
  for (int layout : {0, kRow, kCol, 103})
    for (int trans : {110, kNoT, kT, kConjT, 114})
      for (int m : {-1, 0, 2})
        for (int n : {-1, 0, 3})
          for (int lda : {-1, 0, 1, 2, 3, 4})
            for (int incx : {-2, 0, 1})
              for (int incy : {-1, 0, 3}) {
                const int want = gemv_cblas_oracle(layout, trans, m, n, lda, incx, incy);
                ASSERT_EQ(check_gemv_cblas_args(layout, trans, m, n, lda, incx, incy), want)
                    << "layout " << layout << " trans " << trans << " m " << m << " n "
                    << n << " lda " << lda << " incx " << incx << " incy " << incy;
                ++checked;
                bad += want != 0;
              }
  EXPECT_GT(bad, 0);
  EXPECT_LT(bad, checked);
}

// ------------------------------------------------- host entries and XERBLA

// The host entry points read XN_DEVICE on every call: the CPU, whatever the
// machine has.
const bool kCpuForced = [] { return setenv("XN_DEVICE", "cpu", 1) == 0; }();

TEST(ExblasArgs, HostGemvReportsThroughXerbla) {
  ASSERT_TRUE(kCpuForced);
  const xn_test::HostStateGuard guard("cpu");
  const std::vector<double> A(64, 1.0), x(64, 2.0);
  const std::vector<double> pattern = poisoned_y(64);
  const double alpha = 1, beta = 0;

  // exdgemv_: reference DGEMV's name and positions, one bad argument at a time.
  int checked = 0;
  for (const GemvFortranCase &c : kGemvFortranCases) {
    if (c.want == 0) continue;
    std::vector<double> y = pattern;
    g_xerbla = XerblaLog{};
    exdgemv_(&c.trans, &c.m, &c.n, &alpha, A.data(), &c.lda, x.data(), &c.incx, &beta,
             y.data(), &c.incy);
    SCOPED_TRACE(std::string("exdgemv_ ") + c.what);
    EXPECT_EQ(g_xerbla.calls, 1);
    EXPECT_EQ(g_xerbla.name, "EXDGEMV");
    EXPECT_EQ(g_xerbla.info, c.want);
    EXPECT_TRUE(same_bytes(y, pattern)) << "y written after a bad argument";
    ++checked;
  }
  EXPECT_GE(checked, 12);

  // cblas_exdgemv: the CBLAS name and positions.
  checked = 0;
  for (const GemvCblasCase &c : kGemvCblasCases) {
    if (c.want == 0) continue;
    std::vector<double> y = pattern;
    g_xerbla = XerblaLog{};
    cblas_exdgemv(c.layout, c.trans, c.m, c.n, alpha, A.data(), c.lda, x.data(), c.incx,
                  beta, y.data(), c.incy);
    SCOPED_TRACE(std::string("cblas_exdgemv ") + c.what);
    EXPECT_EQ(g_xerbla.calls, 1);
    EXPECT_EQ(g_xerbla.name, "cblas_exdgemv");
    EXPECT_EQ(g_xerbla.info, c.want);
    EXPECT_TRUE(same_bytes(y, pattern)) << "y written after a bad argument";
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

// Valid calls report nothing (and do write y: the checks above are not
// passing merely because nothing ever runs).
TEST(ExblasArgs, HostValidCallsDoNotReport) {
  const xn_test::HostStateGuard guard("cpu");
  const std::vector<double> A = {1, 2, 3, 4, 5, 6}, x = {1, 1, 1};
  const double alpha = 1, beta = 0;
  const int m = 2, n = 3, lda = 2, inc = 1;
  std::vector<double> y = poisoned_y(2);
  g_xerbla = XerblaLog{};
  exdgemv_("n", &m, &n, &alpha, A.data(), &lda, x.data(), &inc, &beta, y.data(), &inc);
  EXPECT_EQ(g_xerbla.calls, 0);
  EXPECT_EQ(y[0], 9.0);
  EXPECT_EQ(y[1], 12.0);
  y = poisoned_y(2);
  // Row-major 2 x 3 with lda = 3: rows (1 2 3) and (4 5 6).
  cblas_exdgemv(kRow, kNoT, 2, 3, alpha, A.data(), 3, x.data(), 1, beta, y.data(), 1);
  EXPECT_EQ(g_xerbla.calls, 0);
  EXPECT_EQ(y[0], 6.0);
  EXPECT_EQ(y[1], 15.0);
  // DDOT has no bad argument: nothing to report, even for n < 0 or inc 0.
  const int neg = -2, zero = 0;
  EXPECT_EQ(exddot_(&neg, x.data(), &inc, x.data(), &inc), 0.0);
  EXPECT_EQ(exddot_(&n, x.data(), &zero, A.data(), &inc), 6.0);
  EXPECT_EQ(cblas_exddot(3, A.data(), 2, x.data(), 0), 9.0);
  EXPECT_EQ(g_xerbla.calls, 0);
}

}  // namespace
