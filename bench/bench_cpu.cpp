// bench_cpu.cpp - the CPU runner: cblas_dngemm/cblas_sngemm, or for strassen
// and winograd cblas_?stgemm/cblas_?wigemm (host API, forced onto the CPU
// with XN_DEVICE=cpu), against OpenBLAS cblas_dgemm/cblas_sgemm, or, with
// --cpu-leaf preload, the recursion over the library's preload-loop leaf
// against that loop alone (the accumulation order of a GPU GEMM); for
// exdgemm cases, cblas_exdgemm against OpenBLAS cblas_dgemm.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "bench_common.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/dd_reference.h"
#include "xngemm.h"

namespace xnb {

namespace {

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

// Calls `call` on C poisoned with NaN (so an entry left unwritten shows) and
// compares the entries (rows[s], cols[s]) with the reference.
// With `identity` (--dist paper), the errors against I too.
template <class T, class Call>
ErrStats accuracy_of(Call &&call, std::vector<T> &C, std::int64_t ldc,
                     const std::vector<std::int64_t> &rows,
                     const std::vector<std::int64_t> &cols,
                     const std::vector<double> &ref_hi, const std::vector<double> &ref_lo,
                     bool identity = false) {
  std::fill(C.begin(), C.end(), std::numeric_limits<T>::quiet_NaN());
  call();
  std::int64_t bad = 0;
  for (const T v : C) bad += !std::isfinite(v);
  std::vector<double> vals(rows.size());
  for (std::size_t s = 0; s < rows.size(); ++s)
    vals[s] = double(C[std::size_t(rows[s] + cols[s] * ldc)]);
  return identity ? error_stats(ref_hi, ref_lo, vals, bad, &rows, &cols)
                  : error_stats(ref_hi, ref_lo, vals, bad);
}

// After the host routine's accuracy call: false, and r an error row, if it
// did not run or failed part-way (xnGetLastHostStatus; its output is then
// the poison, not a result to count as wrong entries), as a GPU case
// reports the status its call returned.
bool host_call_ran(const std::string &routine, CaseResult *r) {
  const int st = xnGetLastHostStatus();
  if (st == 0) return true;
  r->status = "error";
  r->message = routine +
               (st == XN_STATUS_UNCHANGED ? ": did not run (XN_STATUS_UNCHANGED: too little "
                                            "workspace or memory?), C unchanged"
                : st == XN_STATUS_PARTIAL ? ": failed part-way (XN_STATUS_PARTIAL)"
                                          : ": argument " + std::to_string(-st) + " rejected");
  return false;
}

// The case's options on the process-wide defaults, which the host API uses.
// Each case starts from the library's defaults (and XN_* environment), as a
// GPU case starts from a fresh handle state, so one case's --leaf never leaks
// into the next. False (and r an error) if the library rejects a value.
bool set_host_options(const CaseSpec &c, CaseResult *r) {
  xn::set_default_options(xn::options_from_environment());
  auto set = [&](xnOption_t opt, std::int64_t v, const char *name) {
    if (xnSetOption(nullptr, opt, v) == CUBLAS_STATUS_SUCCESS) return true;
    r->status = "error";
    r->message = std::string("xnSetOption(") + name + ") rejected the value";
    return false;
  };
  // The routine's own leaf and crossover options (MAX_LEVELS is shared).
  const Routine rt = c.routine;
  if (c.levels >= 0 && !set(XN_OPT_MAX_LEVELS, c.levels, "MAX_LEVELS")) return false;
  if (c.leaf > 0 && (!set(leaf_option(rt, true), c.leaf, "LEAF_SIZE") ||
                     !set(leaf_option(rt, false), c.leaf, "LEAF_SIZE")))
    return false;
  const std::int64_t min_size = c.min_size >= 0 ? c.min_size : (c.leaf > 0 ? 0 : -1);
  if (min_size >= 0 && (!set(min_size_option(rt, true), min_size, "MIN_SIZE") ||
                        !set(min_size_option(rt, false), min_size, "MIN_SIZE")))
    return false;
  if (c.check_nonneg >= 0 && !set(XN_OPT_CHECK_NONNEG, c.check_nonneg, "CHECK_NONNEG"))
    return false;
  if (c.ex_budget >= 0 &&
      !set(XN_OPT_EXDGEMM_WORKSPACE_LIMIT, c.ex_budget, "EXDGEMM_WORKSPACE_LIMIT"))
    return false;
  if (c.ex_block >= 0 && !set(XN_OPT_EXDGEMM_BLOCK, c.ex_block, "EXDGEMM_BLOCK"))
    return false;
  return true;
}

// "skipped" (true) when `need` bytes exceed 85% of the available memory.
bool skip_for_memory(std::uint64_t need, CaseResult *r) {
  const std::uint64_t avail = host_available_bytes();
  if (avail == 0 || double(need) <= 0.85 * double(avail)) return false;
  r->status = "skipped";
  r->message = "needs " + std::to_string(need >> 20) + " MiB of host memory, " +
               std::to_string(avail >> 20) + " MiB available";
  return true;
}

// C = op(A) op(B) by OpenBLAS (gemm) or by the library's host API (ngemm).
template <class T>
void blas_gemm(bool ta, bool tb, int m, int n, int k, const T *A, int lda, const T *B,
               int ldb, T *C, int ldc) {
  const CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE ob = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasColMajor, oa, ob, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
  else
    cblas_sgemm(CblasColMajor, oa, ob, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
}

// The library's host API for routine r: cblas_?ngemm, cblas_?stgemm or
// cblas_?wigemm.
template <class T>
void blas_ours(Routine r, bool ta, bool tb, int m, int n, int k, const T *A, int lda,
               const T *B, int ldb, T *C, int ldc) {
  const int oa = ta ? XnTrans : XnNoTrans, ob = tb ? XnTrans : XnNoTrans;
  const int L = XnColMajor;
  if constexpr (std::is_same_v<T, double>) {
    if (r == Routine::Strassen)
      cblas_dstgemm(L, oa, ob, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    else if (r == Routine::Winograd)
      cblas_dwigemm(L, oa, ob, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    else
      cblas_dngemm(L, oa, ob, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
  } else {
    if (r == Routine::Strassen)
      cblas_sstgemm(L, oa, ob, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    else if (r == Routine::Winograd)
      cblas_swigemm(L, oa, ob, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    else
      cblas_sngemm(L, oa, ob, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  }
}

// "cblas_dstgemm" etc.
std::string host_name(Routine r, char prec) {
  const char *algo = r == Routine::Strassen ? "st" : r == Routine::Winograd ? "wi" : "n";
  return std::string("cblas_") + prec + algo + "gemm";
}

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
    if (c.routine == Routine::Exdgemm) return "cblas_exdgemm";
    if (c.cpu_leaf != CpuLeafKind::Preload) return host_name(c.routine, c.prec);
    return std::string(is_fast_gemm(c.routine) ? routine_name(c.routine) : "winograd") +
           " over preload-loop leaves (" + c.prec + ")";
  }
  std::string base_name(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return "OpenBLAS cblas_dgemm";
    return c.cpu_leaf == CpuLeafKind::Preload
               ? std::string("preload loop (") + c.prec + ")"
               : std::string("OpenBLAS cblas_") + c.prec + "gemm";
  }
  bool is_gpu() const override { return false; }
  bool full_reference(const CaseSpec &c) const override {
    if (c.routine == Routine::Exdgemm) return ex_full_reference(c);
    return c.ref_samples <= 0 || c.m * c.n * c.k <= kCpuFullRefTerms ||
           c.ref_samples >= c.m * c.n;
  }
  std::vector<CaseResult> run(const CaseSpec &c) override {
    preload_ = c.cpu_leaf == CpuLeafKind::Preload;
    level_ = -1;
    std::vector<CaseResult> rows;
    try {
      if (c.routine == Routine::Exdgemm)
        rows.push_back(run_ex(c));
      else if (c.prec == 'd')
        run_t<double>(c, &rows);
      else
        run_t<float>(c, &rows);
    } catch (const std::bad_alloc &) {
      CaseResult r;
      r.seed = c.seed;
      r.level_forced = level_;
      r.status = "skipped";
      r.message = "out of host memory";
      rows.push_back(r);
    }
    return rows;
  }

 private:
  bool preload_ = false;
  int level_ = -1;  // the --per-level depth being run

  // Appends one result per row of the case (case_levels).
  template <class T>
  void run_t(const CaseSpec &c, std::vector<CaseResult> *rows);
  CaseResult run_ex(const CaseSpec &c);
};

template <class T>
void CpuRunner::run_t(const CaseSpec &c, std::vector<CaseResult> *rows) {
  const bool is_d = sizeof(T) == sizeof(double);
  const std::int64_t m = c.m, n = c.n, k = c.k;
  const std::int64_t ra = c.ta ? k : m, ca = c.ta ? m : k;  // stored A
  const std::int64_t rb = c.tb ? n : k, cb = c.tb ? k : n;  // stored B
  const int lda = int(std::max<std::int64_t>(1, ra));
  const int ldb = int(std::max<std::int64_t>(1, rb));
  const int ldc = int(std::max<std::int64_t>(1, m));
  const xn::GemmAlgorithm &algo = algorithm_of(c.routine);
  // ?ngemm's one table runs with any beta; the general-input algorithms
  // run their beta = 0 tables (two temporaries per level) for beta = 0.
  const bool beta_nonzero = !is_fast_gemm(c.routine);
  const bool paper = c.dist == Dist::Paper;

  // The depth of a row: set its options, then the depth the host call picks
  // (same rule, crossover and workspace limit) and the workspace it uses.
  xn::Options opt;
  auto plan_row = [&](const CaseSpec &s, CaseResult *r) {
    if (!set_host_options(s, r)) return false;
    opt = xn::default_options();
    r->leaf = opt.leaf_for(algo.kind, is_d);
    r->max_levels = opt.max_levels;
    int levels = xn::planned_levels(algo, opt, nullptr, is_d, beta_nonzero, m, n, k);
    const xn::TempOrientation o = xn::temp_orientation(opt, is_d, c.ta, c.tb);
    bool pack = false;
    levels = xn::choose_workspace(
        algo, beta_nonzero, m, n, k, levels, o.a_layout, c.tb, o.t_normal,
        [&](std::int64_t e) {
          return opt.workspace_limit < 0 ||
                 e * std::int64_t(sizeof(T)) <= opt.workspace_limit;
        },
        &pack);
    r->levels = levels;
    // What the call uses: plan.h's size of the whole call at that depth.
    r->ws_bytes =
        std::uint64_t(xn::call_workspace_elems(algo, beta_nonzero, m, n, k, levels,
                                               o.a_layout, c.tb, o.t_normal, pack)) *
        sizeof(T);
    return true;
  };

  const std::vector<int> levels = case_levels(c);
  CaseResult first;
  first.seed = c.seed;
  level_ = levels.front();
  const CaseSpec s0 = level_spec(c, levels.front(), &first);
  if (first.status == "ok" && !plan_row(s0, &first)) {
    rows->push_back(first);
    return;
  }
  if (skip_for_memory(
          std::uint64_t(ra * ca + rb * cb + m * n) * sizeof(T) + first.ws_bytes,
          &first)) {
    rows->push_back(first);
    return;
  }

  std::vector<T> A, B;
  std::vector<T> C(std::size_t(m * n));
  if (paper) {
    make_paper_matrix<T>('A', m, c.ta, &A);
    make_paper_matrix<T>('B', m, c.tb, &B);
  } else {
    A.resize(std::size_t(ra * ca));
    B.resize(std::size_t(rb * cb));
    std::mt19937_64 rng(c.seed);
    for (T &v : A) v = draw<T>(rng, c.dist);
    for (T &v : B) v = draw<T>(rng, c.dist);
  }

  // Reference at the sampled entries (every entry for small products).
  const bool ref_full = full_reference(c);
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, ref_full, c.ref_samples, c.seed, &si, &sj);
  const std::int64_t S = std::int64_t(si.size());
  const std::size_t nS = static_cast<std::size_t>(S);
  std::vector<double> ref_hi(nS), ref_lo(nS);
  if (ref_full) {
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
      xn::cpu_recursive_gemm<T>(algo, c.ta, c.tb, m, n, k, T(1), A.data(), lda, B.data(),
                                ldb, T(0), C.data(), ldc, opt, -1,
                                xn::CpuLeaf::PreloadLoop);
    } else {
      blas_ours<T>(c.routine, c.ta, c.tb, im, in, ik, A.data(), lda, B.data(), ldb,
                   C.data(), ldc);
    }
  };
  auto call_base = [&] {
    if (preload_) {
      xn::cpu_recursive_gemm<T>(algo, c.ta, c.tb, m, n, k, T(1), A.data(), lda, B.data(),
                                ldb, T(0), C.data(), ldc, opt, 0,
                                xn::CpuLeaf::PreloadLoop);
    } else {
      blas_gemm<T>(c.ta, c.tb, im, in, ik, A.data(), lda, B.data(), ldb, C.data(), ldc);
    }
  };

  // One row per depth; the baseline runs once, with the first row that
  // runs, and its figures repeat on the others.
  bool base_done = false;
  CaseResult base;
  for (std::size_t li = 0; li < levels.size(); ++li) {
    CaseResult r;
    CaseSpec s;
    if (li == 0) {
      r = first;
      s = s0;
    } else {
      r.seed = c.seed;
      level_ = levels[li];
      s = level_spec(c, levels[li], &r);
      if (r.status == "ok") plan_row(s, &r);
    }
    if (r.status != "ok") {
      rows->push_back(r);
      continue;
    }
    r.ref_full = ref_full;
    r.ref_entries = S;
    if (paper) reference_identity_errors(ref_hi, ref_lo, si, sj, &r);
    r.ours = accuracy_of(call_ours, C, ldc, si, sj, ref_hi, ref_lo, paper);
    if (!preload_ && !host_call_ran(host_name(c.routine, c.prec), &r)) {
      rows->push_back(r);
      continue;
    }
    CaseSpec timing = s;
    if (c.baseline && !base_done)
      base.base = accuracy_of(call_base, C, ldc, si, sj, ref_hi, ref_lo, paper);
    else
      timing.baseline = false;
    time_interleaved(
        timing, [&](int count) { return wall_seconds(call_ours, count); },
        [&](int count) { return wall_seconds(call_base, count); }, &r);
    if (c.baseline) {
      if (!base_done) {
        base.t_base = r.t_base;
        base.t_base_min = r.t_base_min;
        base_done = true;
      }
      r.base = base.base;
      r.t_base = base.t_base;
      r.t_base_min = base.t_base_min;
    }
    if (r.ours.nonfinite > 0 || r.base.nonfinite > 0) {
      r.status = "error";
      r.message = "non-finite entries in C (ours " + std::to_string(r.ours.nonfinite) +
                  ", baseline " + std::to_string(r.base.nonfinite) + ")";
    }
    rows->push_back(r);
  }
}

CaseResult CpuRunner::run_ex(const CaseSpec &c) {
  CaseResult r;
  r.seed = c.seed;
  const std::int64_t m = c.m, n = c.n, k = c.k;
  if (!set_host_options(c, &r)) return r;
  const xn::Options opt = xn::default_options();
  // The inputs, C, and at most the workspace budget (0 = 1 GiB on the CPU).
  const std::uint64_t budget = opt.exdgemm_workspace_limit > 0
                                   ? std::uint64_t(opt.exdgemm_workspace_limit)
                                   : std::uint64_t(1) << 30;
  if (skip_for_memory(std::uint64_t(m * k + k * n + m * n) * 8 + budget, &r)) return r;

  ExInputs inp;
  make_ex_inputs(c, &inp);
  std::vector<double> C(std::size_t(m * n));
  const int ldc = int(std::max<std::int64_t>(1, m));

  // The exact reference at the checked entries.
  r.ref_full = full_reference(c);
  std::vector<std::int64_t> si, sj;
  choose_samples(m, n, r.ref_full, c.ref_samples, c.seed, &si, &sj);
  r.ref_entries = std::int64_t(si.size());
  std::vector<double> ref_hi, ref_lo;
  exact_reference(c, inp, si, sj, &ref_hi, &ref_lo);

  const CBLAS_TRANSPOSE ta = c.ta ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = c.tb ? CblasTrans : CblasNoTrans;
  const int im = int(m), in = int(n), ik = int(k);
  const int lda = int(inp.lda), ldb = int(inp.ldb);
  auto call_ours = [&] {
    cblas_exdgemm(XnColMajor, ta, tb, im, in, ik, 1.0, inp.a.data(), lda, inp.b.data(),
                  ldb, 0.0, C.data(), ldc);
  };
  auto call_base = [&] {
    cblas_dgemm(CblasColMajor, ta, tb, im, in, ik, 1.0, inp.a.data(), lda, inp.b.data(),
                ldb, 0.0, C.data(), ldc);
  };
  r.ours = accuracy_of(call_ours, C, ldc, si, sj, ref_hi, ref_lo);
  if (!host_call_ran("cblas_exdgemm", &r)) return r;
  xnGetLastExdgemmInfo(nullptr, &r.ex);  // this thread's last host exdgemm
  r.has_ex = true;
  r.ws_bytes = r.ex.workspace_bytes;
  if (c.baseline) r.base = accuracy_of(call_base, C, ldc, si, sj, ref_hi, ref_lo);
  time_interleaved(
      c, [&](int count) { return wall_seconds(call_ours, count); },
      [&](int count) { return wall_seconds(call_base, count); }, &r);
  // Where the time goes: one more call with its phases timed.
  xnSetOption(nullptr, XN_OPT_EXDGEMM_PHASE_TIMES, 1);
  call_ours();
  xnExdgemmInfo_t phased{};
  xnGetLastExdgemmInfo(nullptr, &phased);
  xnSetOption(nullptr, XN_OPT_EXDGEMM_PHASE_TIMES, 0);
  for (int p = 0; p < 4; ++p) r.ex_phase_ms[p] = phased.phase_ms[p];
  ex_check_result(&r);
  return r;
}

}  // namespace

std::unique_ptr<Runner> make_cpu_runner() { return std::make_unique<CpuRunner>(); }

int host_blas_threads() { return openblas_get_num_threads(); }

template <class T>
ErrStats host_blas_errors(const CaseSpec &c, const T *A, int lda, const T *B, int ldb,
                          const std::vector<std::int64_t> &rows,
                          const std::vector<std::int64_t> &cols,
                          const std::vector<double> &ref_hi,
                          const std::vector<double> &ref_lo) {
  const int ldc = int(std::max<std::int64_t>(1, c.m));
  std::vector<T> C(std::size_t(c.m * c.n));
  return accuracy_of(
      [&] {
        blas_gemm<T>(c.ta, c.tb, int(c.m), int(c.n), int(c.k), A, lda, B, ldb, C.data(),
                     ldc);
      },
      C, ldc, rows, cols, ref_hi, ref_lo, c.dist == Dist::Paper);
}
template ErrStats host_blas_errors<double>(const CaseSpec &, const double *, int,
                                           const double *, int,
                                           const std::vector<std::int64_t> &,
                                           const std::vector<std::int64_t> &,
                                           const std::vector<double> &,
                                           const std::vector<double> &);
template ErrStats host_blas_errors<float>(const CaseSpec &, const float *, int,
                                          const float *, int,
                                          const std::vector<std::int64_t> &,
                                          const std::vector<std::int64_t> &,
                                          const std::vector<double> &,
                                          const std::vector<double> &);

}  // namespace xnb
