// test_symv_api.cpp - xnSsymv/xnDsymv's argument checks and workspace calls
// without a device (label api): every check returns before any CUDA or
// cuBLAS call, so a fake non-null handle can be passed.
//
// Oracle: cublas?symv's documented checks (NOT_INITIALIZED for a NULL
// handle; INVALID_VALUE for uplo other than LOWER/UPPER, n < 0,
// lda < n, incx == 0, incy == 0), as cublas?symv (which accepts lda = 0 when n = 0).
// test_symv_gpu.cpp compares the same cases with the real cuBLAS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "api/args.h"
#include "core/options.h"
#include "core/symv_variants.h"
#include "numerics/symv_layout.h"
#include "xngemm.h"

namespace {

const cublasStatus_t kOk = CUBLAS_STATUS_SUCCESS;
const cublasStatus_t kBad = CUBLAS_STATUS_INVALID_VALUE;
const cublasStatus_t kNoInit = CUBLAS_STATUS_NOT_INITIALIZED;
const cublasFillMode_t kLower = CUBLAS_FILL_MODE_LOWER, kUpper = CUBLAS_FILL_MODE_UPPER;
const cublasFillMode_t kFull = CUBLAS_FILL_MODE_FULL;
const cublasFillMode_t kJunk = static_cast<cublasFillMode_t>(7);
const cublasFillMode_t kNegative = static_cast<cublasFillMode_t>(-1);
const xn::Fill kL = xn::Fill::Lower, kU = xn::Fill::Upper;
// Not a real handle: only compared with NULL before the checks return.
const cublasHandle_t kFake = reinterpret_cast<cublasHandle_t>(std::uintptr_t(0x1));

struct Case {
  const char *what;
  bool null_handle;
  cublasFillMode_t uplo;
  int n, lda, incx, incy;
  cublasStatus_t want;
};

std::string describe(const Case &c) {
  return std::string(c.what) + " (uplo=" + std::to_string(int(c.uplo)) +
         " n=" + std::to_string(c.n) + " lda=" + std::to_string(c.lda) +
         " incx=" + std::to_string(c.incx) + " incy=" + std::to_string(c.incy) + ")";
}

const Case kValid[] = {
    {"lower minimal lda", false, kLower, 5, 5, 1, 1, kOk},
    {"upper minimal lda", false, kUpper, 5, 5, 1, 1, kOk},
    {"large lda", false, kLower, 5, 100, 1, 1, kOk},
    {"negative increments", false, kUpper, 5, 5, -1, -3, kOk},
    {"large increments", false, kLower, 5, 7, 4, -2, kOk},
    {"n = 0, lda = 1", false, kLower, 0, 1, 1, 1, kOk},
    {"n = 1, lda = 1", false, kUpper, 1, 1, -1, 1, kOk},
};

const Case kInvalid[] = {
    {"NULL handle", true, kLower, 5, 5, 1, 1, kNoInit},
    {"NULL handle wins over bad args", true, kJunk, -1, 0, 0, 0, kNoInit},
    {"uplo FULL", false, kFull, 5, 5, 1, 1, kBad},
    {"uplo out of range", false, kJunk, 5, 5, 1, 1, kBad},
    {"uplo negative", false, kNegative, 5, 5, 1, 1, kBad},
    {"n < 0", false, kLower, -1, 5, 1, 1, kBad},
    {"n very negative", false, kUpper, std::numeric_limits<int>::min(), 5, 1, 1, kBad},
    {"lda = n - 1", false, kLower, 5, 4, 1, 1, kBad},
    {"lda = 0, n = 1", false, kUpper, 1, 0, 1, 1, kBad},
    {"lda = 0, n = 0 (accepted, as cuBLAS does)", false, kLower, 0, 0, 1, 1, kOk},
    {"lda < 0", false, kLower, 0, -1, 1, 1, kBad},
    {"incx = 0", false, kLower, 5, 5, 0, 1, kBad},
    {"incy = 0", false, kUpper, 5, 5, 1, 0, kBad},
    {"incx = 0, n = 0", false, kLower, 0, 1, 0, 1, kBad},
    {"incy = 0, n = 0", false, kUpper, 0, 1, 1, 0, kBad},
    {"everything bad", false, kFull, -1, 0, 0, 0, kBad},
};

TEST(SymvApi, CheckerTable) {
  for (const Case *table : {kValid, kInvalid}) {
    const std::size_t count = table == kValid ? sizeof kValid / sizeof kValid[0]
                                              : sizeof kInvalid / sizeof kInvalid[0];
    for (std::size_t i = 0; i < count; ++i) {
      const Case &c = table[i];
      const void *h = c.null_handle ? nullptr : static_cast<const void *>(kFake);
      EXPECT_EQ(xn::check_symv_device_args(h, c.uplo, c.n, c.lda, c.incx, c.incy), c.want)
          << describe(c);
    }
  }
}

// The public entry points on the invalid table (and n = 0, which returns
// before touching the handle): the status, and y - a host array here - is
// neither read nor written (compared bit for bit, NaN and -0 included).
template <class T, class F>
void check_entry_point(F symv) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> A(64, T(1)), x(16, T(2)), y = {nan, T(-0.0), T(3), T(7)};
  y.resize(16, T(5));
  const std::vector<T> before = y;
  const T alpha = 1, beta = 0;
  for (const Case &c : kInvalid) {
    const cublasHandle_t h = c.null_handle ? nullptr : kFake;
    EXPECT_EQ(symv(h, c.uplo, c.n, &alpha, A.data(), c.lda, x.data(), c.incx, &beta,
                   y.data(), c.incy),
              c.want)
        << describe(c);
    // NULL scalars and arrays must not be dereferenced either.
    EXPECT_EQ(symv(h, c.uplo, c.n, nullptr, nullptr, c.lda, nullptr, c.incx, nullptr,
                   nullptr, c.incy),
              c.want)
        << describe(c) << " with NULL pointers";
  }
  EXPECT_EQ(
      symv(nullptr, kLower, 4, &alpha, A.data(), 4, x.data(), 1, &beta, y.data(), 1),
      kNoInit);
  // n = 0: success, nothing touched (the handle is not used either).
  EXPECT_EQ(symv(kFake, kLower, 0, &alpha, A.data(), 1, x.data(), 1, &beta, y.data(), 1),
            kOk);
  EXPECT_EQ(symv(kFake, kUpper, 0, nullptr, nullptr, 1, nullptr, -1, nullptr, nullptr, 2),
            kOk);
  EXPECT_EQ(std::memcmp(before.data(), y.data(), y.size() * sizeof(T)), 0);
}

TEST(SymvApi, EntryPointsRejectBadArgumentsWithoutTouchingY) {
  check_entry_point<float>(xnSsymv);
  check_entry_point<double>(xnDsymv);
}

// Workspace bytes counted from the definition: x packed and zero-padded to
// nt * nb elements (symv_layout.h, packed_x_elems), then the partials: block
// row p of the stored triangle holds row_len(p) tiles cut into chunks of
// `chunk` (one own partial each), and every off-diagonal stored tile gives
// one cross partial; each partial is nb elements. The partials are counted
// with plain loops over the rows, not the library's closed forms.
std::size_t expected_bytes(const xn::SymvVariant &v, int n, bool lower,
                           std::size_t elem) {
  if (n == 0) return 0;
  const std::int64_t nt = (n + v.nb - 1) / v.nb;
  const std::int64_t chunk = v.chunk > 0 ? v.chunk : nt;
  // Own partials: chunks are column ranges [g chunk - s, (g+1) chunk - s),
  // the s that makes the group dispatched last (lower: the first, upper:
  // the last) min(2, chunk) wide, or 0 when one chunk covers a row; a
  // lower row spans columns 0..p, an upper row columns p..nt-1.
  const std::int64_t w = std::min<std::int64_t>(2, chunk);
  std::int64_t s = 0;
  if (chunk < nt) s = lower ? chunk - w : ((w - nt) % chunk + chunk) % chunk;
  std::int64_t slots = 0;
  for (std::int64_t p = 0; p < nt; ++p) {
    const std::int64_t tiles = lower ? p + 1 : nt - p;
    std::int64_t own = 0;
    for (std::int64_t g = 0; g * chunk - s < nt; ++g) {
      const std::int64_t c0 = std::max<std::int64_t>(0, g * chunk - s),
                         c1 = std::min(nt, (g + 1) * chunk - s);
      const std::int64_t r0 = lower ? 0 : p, r1 = lower ? p + 1 : nt;
      if (std::max(c0, r0) < std::min(c1, r1)) ++own;
    }
    slots += own;
    slots += tiles - 1;  // cross partials of its tiles
  }
  const std::int64_t packed_x =
      xn::symv::packed_x_elems(xn::symv::make_layout(n, v.nb, chunk, lower));
  EXPECT_GE(packed_x, nt * v.nb);
  return (std::size_t(packed_x) + std::size_t(slots) * std::size_t(v.nb)) * elem;
}

const int kSizes[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 129, 1000, 1025, 4097, 20000};

void check_sizes_for_defaults(const char *what) {
  const std::int64_t variant = xn::default_options().symv_variant;
  for (char prec : {'s', 'S', 'd', 'D'}) {
    const bool dbl = prec == 'd' || prec == 'D';
    for (cublasFillMode_t uplo : {kLower, kUpper})
      for (int n : kSizes) {
        const xn::SymvVariant &v =
            xn::symv_variant(int(variant), dbl, n, uplo == kLower ? kL : kU);
        std::size_t bytes = 12345;
        ASSERT_EQ(xnGetSymvWorkspaceSize(nullptr, prec, uplo, n, &bytes), kOk);
        EXPECT_EQ(bytes, expected_bytes(v, n, uplo == kLower, dbl ? 8 : 4))
            << what << " prec=" << prec << " uplo=" << int(uplo) << " n=" << n
            << " variant=" << v.id;
        // At least one slot per block row (n elements), and the workspace is
        // a small fraction of the stored triangle for large n (docs: about
        // 1/nb of it).
        if (n > 0) {
          EXPECT_GE(bytes, std::size_t(n) * (dbl ? 8 : 4));
        }
        if (n >= 1000) {
          EXPECT_LE(bytes * 16, std::size_t(n) * (n + 1) / 2 * (dbl ? 8 : 4)) << n;
        }
        // Upper rows start mid-chunk, so with the same variant they may have
        // a few more own partials than lower rows, never fewer. (The default
        // may depend on the triangle: symv_default_variant takes it.)
        std::size_t other = 0;
        ASSERT_EQ(xnGetSymvWorkspaceSize(nullptr, prec, uplo == kLower ? kUpper : kLower,
                                         n, &other),
                  kOk);
        if (&xn::symv_variant(int(variant), dbl, n, kL) !=
            &xn::symv_variant(int(variant), dbl, n, kU)) {
          continue;
        }
        if (uplo == kLower) {
          EXPECT_GE(other, bytes) << "upper needs at least lower's workspace, n=" << n;
        } else {
          EXPECT_LE(other, bytes) << "upper needs at least lower's workspace, n=" << n;
        }
      }
  }
}

TEST(SymvApi, WorkspaceSizeQueryWithoutHandle) {
  check_sizes_for_defaults("process defaults");
  // Invalid queries: INVALID_VALUE, *bytes untouched.
  std::size_t bytes = 777;
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 'd', kLower, 4, nullptr), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 'z', kLower, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 'c', kLower, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, '\0', kLower, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 'd', kFull, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 's', kJunk, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 's', kNegative, 4, &bytes), kBad);
  EXPECT_EQ(xnGetSymvWorkspaceSize(nullptr, 'd', kUpper, -1, &bytes), kBad);
  EXPECT_EQ(bytes, 777u);
}

// The process-wide default variant (xnSetOption with a NULL handle) decides
// what a NULL-handle query reports; restored afterwards.
TEST(SymvApi, WorkspaceSizeFollowsTheDefaultVariant) {
  std::int64_t saved = -1;
  ASSERT_EQ(xnGetOption(nullptr, XN_OPT_SYMV_VARIANT, &saved), kOk);
  ASSERT_EQ(saved, xn::default_options().symv_variant);
  struct Restore {
    std::int64_t v;
    ~Restore() { xnSetOption(nullptr, XN_OPT_SYMV_VARIANT, v); }
  } restore{saved};
  // Every id a build can have: the compiled ones (the defaults, and the
  // tuning variants with XN_BUILD_TUNING) are accepted, the others rejected.
  int last = 0;
  for (int id = 0; id <= xn::kSymvMaxVariantId; ++id) {
    if (id > 0 && !xn::symv_variant_compiled(id)) {
      EXPECT_EQ(xnSetOption(nullptr, XN_OPT_SYMV_VARIANT, id), kBad) << id;
      continue;
    }
    last = id;
    ASSERT_EQ(xnSetOption(nullptr, XN_OPT_SYMV_VARIANT, id), kOk) << id;
    std::int64_t got = -1;
    ASSERT_EQ(xnGetOption(nullptr, XN_OPT_SYMV_VARIANT, &got), kOk);
    EXPECT_EQ(got, id);
    check_sizes_for_defaults(("variant " + std::to_string(id)).c_str());
    if (HasFailure()) return;
  }
  EXPECT_EQ(xnSetOption(nullptr, XN_OPT_SYMV_VARIANT, -1), kBad);
  EXPECT_EQ(xnSetOption(nullptr, XN_OPT_SYMV_VARIANT, xn::kSymvMaxVariantId + 1), kBad);
  std::int64_t got = -1;
  ASSERT_EQ(xnGetOption(nullptr, XN_OPT_SYMV_VARIANT, &got), kOk);
  EXPECT_EQ(got, last) << "a rejected value must change nothing";
}

TEST(SymvApi, SetWorkspaceChecksBeforeTouchingTheHandle) {
  void *const aligned = reinterpret_cast<void *>(std::uintptr_t(0x10000));
  void *const misaligned = reinterpret_cast<void *>(std::uintptr_t(0x10008));
  EXPECT_EQ(xnSetSymvWorkspace(nullptr, nullptr, 0), kNoInit);
  EXPECT_EQ(xnSetSymvWorkspace(nullptr, aligned, 4096), kNoInit);
  EXPECT_EQ(xnSetSymvWorkspace(nullptr, nullptr, 16), kNoInit);
  // Inconsistent pointer and size, or a pointer not 16-byte aligned.
  EXPECT_EQ(xnSetSymvWorkspace(kFake, nullptr, 16), kBad);
  EXPECT_EQ(xnSetSymvWorkspace(kFake, aligned, 0), kBad);
  EXPECT_EQ(xnSetSymvWorkspace(kFake, misaligned, 4096), kBad);
}

}  // namespace
