// test_exdgemm_ieee.cpp - the IEEE contract of the correctly rounded DGEMM
// on the CPU: every entry of every family (support/ieee_families.h) bit for
// bit against the IEEE oracle (support/ieee_oracle.h), including the sign of
// zero and the class of Inf/NaN results, under all four transpose pairs with
// padded leading dimensions, with the engine forced both ways, the default
// and a forced small block (64, where C has more than one block), through
// xn::cpu_exdgemm and through the host API (exdgemm_, and cblas_exdgemm
// column-major or row-major by turns, XN_DEVICE=cpu). Each test is one
// family on one path and stops at the first wrong entry, printing its
// inputs, the expected and the computed value in %a.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_exdgemm.h"
#include "support/host_state.h"
#include "support/ieee_families.h"
#include "support/test_support.h"
#include "xngemm.h"

namespace {

using xn_test::IeeeFamily;
using xn_test::IeeeProblem;
using xn_test::IeeeStored;

enum class Path { BackendSlices, BackendModular, HostSlices, HostModular };

const char *path_name(Path p) {
  switch (p) {
    case Path::BackendSlices:
      return "cpu_exdgemm, slices";
    case Path::BackendModular:
      return "cpu_exdgemm, modular";
    case Path::HostSlices:
      return "host API, slices";
    case Path::HostModular:
      return "host API, modular";
  }
  return "?";
}

// gtest prints the parameter in test names: the path's name, not its bytes.
void PrintTo(Path p, std::ostream *os) { *os << path_name(p); }

xn::ExEngine engine_of(Path p) {
  return p == Path::BackendSlices || p == Path::HostSlices ? xn::ExEngine::Slices
                                                           : xn::ExEngine::Modular;
}

struct Tally {
  std::int64_t entries = 0, calls = 0, problems = 0;
};

std::string where(const char *api, const IeeeStored &s, std::int64_t block) {
  return std::string(api) + " ta=" + (s.ta ? "T" : "N") + " tb=" + (s.tb ? "T" : "N") +
         (s.row_major ? " row-major" : "") + " lda=" + std::to_string(s.lda) +
         " ldb=" + std::to_string(s.ldb) + " ldc=" + std::to_string(s.ldc) +
         " block=" + std::to_string(block);
}

// The blocks to force: the automatic one, and 64 (the smallest) where C has
// more than one block of it.
std::vector<std::int64_t> blocks_for(const IeeeProblem &p) {
  if (p.m > 64 || p.n > 64) return {0, 64};
  return {0};
}

std::string run_backend(const IeeeProblem &p, const std::vector<double> &want,
                        xn::ExEngine engine, std::mt19937_64 &rng, Tally &tally) {
  for (int t = 0; t < 4; ++t) {
    const IeeeStored s =
        xn_test::ieee_store(p, t & 1, t & 2, false, xn_test::ieee_pad(t, rng));
    for (const std::int64_t block : blocks_for(p)) {
      std::vector<double> got = s.C;
      xn::ExdgemmReport info{};
      const xn::Status st = xn::cpu_exdgemm(s.ta, s.tb, p.m, p.n, p.k, p.alpha,
                                            s.A.data(), s.lda, s.B.data(), s.ldb, p.beta,
                                            got.data(), s.ldc, 0, block, &info, engine);
      ++tally.calls;
      const std::string path = where("cpu_exdgemm", s, block);
      std::string msg =
          xn_test::ieee_first_mismatch(p, s, got, want, path, &tally.entries);
      if (st != xn::Status::Ok)
        msg = p.name + " [" + path + "]: status " + std::to_string(int(st)) +
              " (the call failed)\n  " + msg;
      if (!msg.empty()) return msg;
    }
  }
  return "";
}

std::string run_host(const IeeeProblem &p, const std::vector<double> &want,
                     xn::ExEngine engine, std::mt19937_64 &rng, Tally &tally) {
  const xn_test::HostStateGuard guard("cpu");
  EXPECT_EQ(xnSetOption(nullptr, XN_OPT_EXDGEMM_ENGINE, std::int64_t(engine)),
            CUBLAS_STATUS_SUCCESS);
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  for (int t = 0; t < 4; ++t)
    for (const std::int64_t block : blocks_for(p)) {
      EXPECT_EQ(xnSetOption(nullptr, XN_OPT_EXDGEMM_BLOCK, block), CUBLAS_STATUS_SUCCESS);
      const std::int64_t pad = xn_test::ieee_pad(t, rng);
      // Fortran (column-major), then CBLAS in one layout or the other.
      for (int api = 0; api < 2; ++api) {
        const bool row_major = api == 1 && t % 2 == 1;
        const IeeeStored s = xn_test::ieee_store(p, t & 1, t & 2, row_major, pad);
        std::vector<double> got = s.C;
        const int lda = int(s.lda), ldb = int(s.ldb), ldc = int(s.ldc);
        const char *name = api == 0 ? "exdgemm_" : "cblas_exdgemm";
        if (api == 0) {
          exdgemm_(s.ta ? "T" : "N", s.tb ? "T" : "N", &m, &n, &k, &p.alpha, s.A.data(),
                   &lda, s.B.data(), &ldb, &p.beta, got.data(), &ldc);
        } else {
          cblas_exdgemm(row_major ? XnRowMajor : XnColMajor, s.ta ? XnTrans : XnNoTrans,
                        s.tb ? XnTrans : XnNoTrans, m, n, k, p.alpha, s.A.data(), lda,
                        s.B.data(), ldb, p.beta, got.data(), ldc);
        }
        ++tally.calls;
        const std::string msg = xn_test::ieee_first_mismatch(
            p, s, got, want, where(name, s, block), &tally.entries);
        if (!msg.empty()) return msg;
      }
    }
  return "";
}

class ExdgemmIeee : public ::testing::TestWithParam<Path> {
 protected:
  // Every problem of the family on this test's path; fails at the first
  // wrong entry (or where the oracle contradicts a value the family states).
  // XN_IEEE_KEEP_GOING=1 (for diagnosis): report the first wrong entry of
  // every problem instead of stopping at the family's first.
  void run_family(const IeeeFamily &f, std::uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x5bd1e995u);
    const bool keep_going = std::getenv("XN_IEEE_KEEP_GOING") != nullptr;
    Tally tally;
    int failures = 0;
    for (const IeeeProblem &p : f.problems) {
      const std::vector<double> want = xn_test::ieee_expected(p);
      std::string failure = xn_test::ieee_check_known(p, want);
      if (!failure.empty()) {
        failure = "ORACLE OR FAMILY WRONG (not a library bug): " + failure;
      } else {
        ++tally.problems;
        const Path path = GetParam();
        failure = path == Path::BackendSlices || path == Path::BackendModular
                      ? run_backend(p, want, engine_of(path), rng, tally)
                      : run_host(p, want, engine_of(path), rng, tally);
      }
      if (!failure.empty()) {
        ++failures;
        ADD_FAILURE() << path_name(GetParam()) << ": " << failure << "\n"
                      << xn_test::describe_seed(seed);
        if (!keep_going) break;
      }
    }
    std::printf(
        "[ieee] %-26s %-22s %8lld entries checked, %6lld calls, %4lld/%zu problems%s\n",
        f.name.c_str(), path_name(GetParam()), (long long)tally.entries,
        (long long)tally.calls, (long long)tally.problems, f.problems.size(),
        failures ? " (stopped at a wrong entry)" : "");
  }
};

TEST_P(ExdgemmIeee, IssueExamples) {
  const std::uint64_t seed = xn_test::fresh_seed();
  run_family(xn_test::ieee_issue_family(), seed);
}

TEST_P(ExdgemmIeee, Boundaries) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_boundary_family(rng), seed);
}

TEST_P(ExdgemmIeee, Specials) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_special_family(rng), seed);
}

TEST_P(ExdgemmIeee, SignedZeros) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_signed_zero_family(rng), seed);
}

TEST_P(ExdgemmIeee, NoNonzeroFiniteEntry) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_no_finite_family(rng), seed);
}

TEST_P(ExdgemmIeee, PlantedInRandomMatrices) {
  const std::uint64_t seed = xn_test::fresh_seed();
  std::mt19937_64 rng(seed);
  run_family(xn_test::ieee_planted_family(rng), seed);
}

INSTANTIATE_TEST_SUITE_P(Paths, ExdgemmIeee,
                         ::testing::Values(Path::BackendSlices, Path::BackendModular,
                                           Path::HostSlices, Path::HostModular),
                         [](const ::testing::TestParamInfo<Path> &i) {
                           switch (i.param) {
                             case Path::BackendSlices:
                               return std::string("BackendSlices");
                             case Path::BackendModular:
                               return std::string("BackendModular");
                             case Path::HostSlices:
                               return std::string("HostSlices");
                             case Path::HostModular:
                               return std::string("HostModular");
                           }
                           return std::string("unknown");
                         });

// Rule 0: m == 0 or n == 0 touches nothing (C poisoned and compared bit for
// bit), on every path, whatever alpha, beta, A and B hold.
TEST(ExdgemmIeeeEmpty, EmptyCIsNotTouched) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a(16, nan), b(16, nan);
  for (const auto &mn : {std::pair<int, int>{0, 3}, {3, 0}, {0, 0}})
    for (const xn::ExEngine engine : {xn::ExEngine::Slices, xn::ExEngine::Modular}) {
      std::vector<double> c(16, -0.0);
      c[3] = nan;
      const std::vector<double> before = c;
      EXPECT_EQ(xn::cpu_exdgemm(false, true, mn.first, mn.second, 2, 1.0, a.data(), 4,
                                b.data(), 4, 0.0, c.data(), 4, 0, 0, nullptr, engine),
                xn::Status::Ok);
      for (std::size_t i = 0; i < c.size(); ++i)
        EXPECT_EQ(xn_test::ieee_bits(c[i]), xn_test::ieee_bits(before[i]))
            << mn.first << "x" << mn.second << " at " << i;
      const xn_test::HostStateGuard guard("cpu");
      cblas_exdgemm(XnColMajor, XnNoTrans, XnTrans, mn.first, mn.second, 2, 2.0, a.data(),
                    4, b.data(), 4, 3.0, c.data(), 4);
      for (std::size_t i = 0; i < c.size(); ++i)
        EXPECT_EQ(xn_test::ieee_bits(c[i]), xn_test::ieee_bits(before[i]))
            << "cblas " << mn.first << "x" << mn.second << " at " << i;
    }
}

}  // namespace
