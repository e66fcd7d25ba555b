// bench_cpu.cpp - the CPU runner: cblas_dngemm/cblas_sngemm (host API, forced
// onto the CPU with XN_DEVICE=cpu) against OpenBLAS cblas_dgemm/cblas_sgemm,
// or, with --cpu-leaf preload, the recursion over the library's preload-loop
// leaf against that loop alone (the accumulation order of a GPU GEMM).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "bench_common.h"
#include "core/options.h"
#include "core/plan.h"
#include "dd_reference.h"
#include "xngemm.h"

namespace xnb {

namespace {

using Clock = std::chrono::steady_clock;

// Full reference up to this many multiply-adds (m * n * k).
constexpr std::int64_t kCpuFullRefTerms = std::int64_t(1) << 27;

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) {
        std::string s = line.substr(p + 1);
        s.erase(0, s.find_first_not_of(" \t"));
        return s;
      }
    }
  return "unknown CPU";
}

// MemAvailable in bytes (0 if unknown).
std::uint64_t host_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

template <class T>
struct Blas;
template <>
struct Blas<double> {
  static void gemm(bool ta, bool tb, int m, int n, int k, const double *A, int lda,
                   const double *B, int ldb, double *C, int ldc) {
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, A, lda, B, ldb, 0.0, C,
                ldc);
  }
  static void ngemm(bool ta, bool tb, int m, int n, int k, const double *A, int lda,
                    const double *B, int ldb, double *C, int ldc) {
    cblas_dngemm(XnColMajor, ta ? XnTrans : XnNoTrans, tb ? XnTrans : XnNoTrans, m, n, k,
                 1.0, A, lda, B, ldb, 0.0, C, ldc);
  }
};
template <>
struct Blas<float> {
  static void gemm(bool ta, bool tb, int m, int n, int k, const float *A, int lda,
                   const float *B, int ldb, float *C, int ldc) {
    cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C,
                ldc);
  }
  static void ngemm(bool ta, bool tb, int m, int n, int k, const float *A, int lda,
                    const float *B, int ldb, float *C, int ldc) {
    cblas_sngemm(XnColMajor, ta ? XnTrans : XnNoTrans, tb ? XnTrans : XnNoTrans, m, n, k,
                 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  }
};

class CpuRunner final : public Runner {
 public:
  CpuRunner() {
    // The host API must not move the work to a GPU, even if one is present.
    setenv("XN_DEVICE", "cpu", 1);
  }
  std::string device_name() const override { return "CPU: " + cpu_model(); }
  std::string describe() const override {
    std::ostringstream o;
    o << "device: CPU " << cpu_model() << ", OpenBLAS " << openblas_get_config() << " ("
      << openblas_get_num_threads() << " threads)\n";
    return o.str();
  }
  std::string ours_name(const CaseSpec &c) const override {
    return c.cpu_leaf == CpuLeafKind::Preload
               ? std::string("winograd over preload-loop leaves (") + c.prec + ")"
               : std::string("cblas_") + c.prec + "ngemm";
  }
  std::string base_name(const CaseSpec &c) const override {
    return c.cpu_leaf == CpuLeafKind::Preload
               ? std::string("preload loop (") + c.prec + ")"
               : std::string("OpenBLAS cblas_") + c.prec + "gemm";
  }
  bool is_gpu() const override { return false; }
  bool full_reference(const CaseSpec &c) const override {
    return c.ref_samples <= 0 || c.m * c.n * c.k <= kCpuFullRefTerms ||
           c.ref_samples >= c.m * c.n;
  }
  CaseResult run(const CaseSpec &c) override {
    preload_ = c.cpu_leaf == CpuLeafKind::Preload;
    try {
      return c.prec == 'd' ? run_t<double>(c) : run_t<float>(c);
    } catch (const std::bad_alloc &) {
      CaseResult r;
      r.status = "skipped";
      r.message = "out of host memory";
      return r;
    }
  }

 private:
  bool preload_ = false;

  template <class T>
  CaseResult run_t(const CaseSpec &c);
};

template <class T>
CaseResult CpuRunner::run_t(const CaseSpec &c) {
  CaseResult r;
  r.seed = c.seed;
  const bool is_d = sizeof(T) == sizeof(double);
  const std::int64_t m = c.m, n = c.n, k = c.k;
  const std::int64_t ra = c.ta ? k : m, ca = c.ta ? m : k;  // stored A
  const std::int64_t rb = c.tb ? n : k, cb = c.tb ? k : n;  // stored B
  const int lda = int(std::max<std::int64_t>(1, ra));
  const int ldb = int(std::max<std::int64_t>(1, rb));
  const int ldc = int(std::max<std::int64_t>(1, m));

  // Options: process-wide defaults, which the host API uses. Each case starts
  // from the library's defaults (and XN_* environment), as a GPU case starts
  // from a fresh handle state, so one case's --leaf never leaks into the next.
  xn::set_default_options(xn::options_from_environment());
  if (c.levels >= 0 &&
      xnSetOption(nullptr, XN_OPT_MAX_LEVELS, c.levels) != CUBLAS_STATUS_SUCCESS) {
    r.status = "error";
    r.message = "xnSetOption(MAX_LEVELS) rejected the value";
    return r;
  }
  if (c.leaf > 0 &&
      (xnSetOption(nullptr, XN_OPT_LEAF_SIZE_D, c.leaf) != CUBLAS_STATUS_SUCCESS ||
       xnSetOption(nullptr, XN_OPT_LEAF_SIZE_S, c.leaf) != CUBLAS_STATUS_SUCCESS)) {
    r.status = "error";
    r.message = "xnSetOption(LEAF_SIZE) rejected the value";
    return r;
  }
  const std::int64_t min_size = c.min_size >= 0 ? c.min_size : (c.leaf > 0 ? 0 : -1);
  if (min_size >= 0 &&
      (xnSetOption(nullptr, XN_OPT_MIN_SIZE_D, min_size) != CUBLAS_STATUS_SUCCESS ||
       xnSetOption(nullptr, XN_OPT_MIN_SIZE_S, min_size) != CUBLAS_STATUS_SUCCESS)) {
    r.status = "error";
    r.message = "xnSetOption(MIN_SIZE) rejected the value";
    return r;
  }
  const xn::Options opt = xn::default_options();
  r.leaf = opt.leaf_for(is_d);
  r.max_levels = opt.max_levels;
  // The depth cpu_ngemm picks (same rule, crossover and workspace limit).
  int levels =
      xn::choose_levels(m, n, k, r.leaf, int(opt.max_levels), opt.min_size_for(is_d));
  for (; levels > 0; --levels) {
    const std::int64_t bytes =
        xn::workspace_elems(m, n, k, levels, c.ta, c.tb) * std::int64_t(sizeof(T));
    if (opt.workspace_limit < 0 || bytes <= opt.workspace_limit) break;
  }
  r.levels = levels;
  r.ws_bytes =
      std::uint64_t(xn::workspace_elems(m, n, k, levels, c.ta, c.tb)) * sizeof(T);

  const std::uint64_t need =
      std::uint64_t(ra * ca + rb * cb + m * n) * sizeof(T) + r.ws_bytes;
  const std::uint64_t avail = host_available_bytes();
  if (avail > 0 && double(need) > 0.85 * double(avail)) {
    r.status = "skipped";
    r.message = "needs " + std::to_string(need >> 20) + " MiB of host memory, " +
                std::to_string(avail >> 20) + " MiB available";
    return r;
  }

  std::vector<T> A(std::size_t(ra * ca)), B(std::size_t(rb * cb));
  std::vector<T> C(std::size_t(m * n));
  {
    std::mt19937_64 rng(c.seed);
    for (T &v : A) v = draw<T>(rng, c.dist);
    for (T &v : B) v = draw<T>(rng, c.dist);
  }

  // Reference at the sampled entries (every entry for small products).
  r.ref_full = full_reference(c);
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, r.ref_full, c.ref_samples, c.seed, &si, &sj);
  const std::int64_t S = std::int64_t(si.size());
  r.ref_entries = S;
  const std::size_t nS = static_cast<std::size_t>(S);
  std::vector<double> ref_hi(nS), ref_lo(nS);
  if (r.ref_full) {
    // Rows of op(A) and columns of op(B) made contiguous, so every dot
    // product runs over unit strides.
    std::vector<T> Ar(std::size_t(m * k)), Bc(std::size_t(k * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p)
        Ar[std::size_t(p + i * k)] =
            c.ta ? A[std::size_t(p + i * lda)] : A[std::size_t(i + p * lda)];
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p)
        Bc[std::size_t(p + j * k)] =
            c.tb ? B[std::size_t(j + p * ldb)] : B[std::size_t(p + j * ldb)];
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t s = 0; s < S; ++s) {
      const xn::DD d =
          xn::dd_dot<T>(k, Ar.data() + si[s] * k, 1, Bc.data() + sj[s] * k, 1);
      ref_hi[std::size_t(s)] = d.hi;
      ref_lo[std::size_t(s)] = d.lo;
    }
  } else {
#pragma omp parallel for schedule(dynamic, 4)
    for (std::int64_t s = 0; s < S; ++s) {
      const std::int64_t i = si[s], j = sj[s];
      // op(A)(i, p) = A[i + p*lda] or, transposed, A[p + i*lda];
      // op(B)(p, j) = B[p + j*ldb] or, transposed, B[j + p*ldb].
      const T *x = c.ta ? A.data() + i * lda : A.data() + i;
      const std::int64_t incx = c.ta ? 1 : lda;
      const T *y = c.tb ? B.data() + j : B.data() + j * ldb;
      const std::int64_t incy = c.tb ? ldb : 1;
      const xn::DD d = xn::dd_dot<T>(k, x, incx, y, incy);
      ref_hi[std::size_t(s)] = d.hi;
      ref_lo[std::size_t(s)] = d.lo;
    }
  }

  const int im = int(m), in = int(n), ik = int(k);
  auto call_ours = [&] {
    if (preload_) {
      xn::cpu_ngemm<T>(c.ta, c.tb, m, n, k, T(1), A.data(), lda, B.data(), ldb, T(0),
                       C.data(), ldc, opt, -1, xn::CpuLeaf::PreloadLoop);
    } else {
      Blas<T>::ngemm(c.ta, c.tb, im, in, ik, A.data(), lda, B.data(), ldb, C.data(), ldc);
    }
  };
  auto call_base = [&] {
    if (preload_) {
      xn::cpu_ngemm<T>(c.ta, c.tb, m, n, k, T(1), A.data(), lda, B.data(), ldb, T(0),
                       C.data(), ldc, opt, 0, xn::CpuLeaf::PreloadLoop);
    } else {
      Blas<T>::gemm(c.ta, c.tb, im, in, ik, A.data(), lda, B.data(), ldb, C.data(), ldc);
    }
  };

  // Accuracy: C poisoned with NaN first, so an entry left unwritten shows.
  auto accuracy = [&](auto &&call) {
    std::fill(C.begin(), C.end(), std::numeric_limits<T>::quiet_NaN());
    call();
    std::int64_t bad = 0;
    for (const T v : C) bad += !std::isfinite(v);
    std::vector<double> vals(nS);
    for (std::int64_t s = 0; s < S; ++s)
      vals[std::size_t(s)] = double(C[std::size_t(si[s] + sj[s] * ldc)]);
    return error_stats(ref_hi, ref_lo, vals, bad);
  };
  r.ours = accuracy(call_ours);
  if (c.baseline) r.base = accuracy(call_base);

  auto timed = [&](auto &&call) {
    const auto t0 = Clock::now();
    call();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (int w = 0; w < c.warmup; ++w) {
    call_ours();
    if (c.baseline) call_base();
  }
  std::vector<double> to, tb;
  to.push_back(timed(call_ours));
  if (c.baseline) tb.push_back(timed(call_base));
  const int reps =
      c.reps > 0 ? c.reps : auto_reps(to[0] + (tb.empty() ? 0 : tb[0]), c.time_budget);
  for (int i = 1; i < reps; ++i) {  // interleaved: both see the same conditions
    to.push_back(timed(call_ours));
    if (c.baseline) tb.push_back(timed(call_base));
  }
  r.reps = reps;
  r.warmup = c.warmup;
  r.t_ours = median_of(to);
  r.t_ours_min = min_of(to);
  if (c.baseline) {
    r.t_base = median_of(tb);
    r.t_base_min = min_of(tb);
  }
  if (r.ours.nonfinite > 0 || r.base.nonfinite > 0) {
    r.status = "error";
    r.message = "non-finite entries in C (ours " + std::to_string(r.ours.nonfinite) +
                ", baseline " + std::to_string(r.base.nonfinite) + ")";
  }
  return r;
}

}  // namespace

std::unique_ptr<Runner> make_cpu_runner() { return std::make_unique<CpuRunner>(); }

}  // namespace xnb
