// native_dgemm.cpp - see native_dgemm.h.
#include "backend/cuda/native_dgemm.h"

#include <atomic>

namespace xn {

namespace {
std::atomic<bool> g_disabled{false};
std::atomic<std::uint64_t> g_native{0}, g_fallback{0};

// Plans kept per handle: exdgemm uses a few shapes per call (full and edge
// blocks of C, times the slice counts), so a small cache holds them all.
constexpr std::size_t kMaxPlans = 16;
// Heuristic candidates examined for a native one.
constexpr int kCandidates = 8;
}  // namespace

namespace testing {
void set_native_dgemm_disabled(bool disabled) { g_disabled = disabled; }
bool native_dgemm_disabled() { return g_disabled; }
void count_native_dgemm(bool native) { ++(native ? g_native : g_fallback); }
void native_dgemm_counts(std::uint64_t *native, std::uint64_t *fallback) {
  *native = g_native;
  *fallback = g_fallback;
}
void reset_native_dgemm_counts() {
  g_native = 0;
  g_fallback = 0;
}
}  // namespace testing

NativeDgemm::~NativeDgemm() {
  for (Plan &p : plans_) destroy(p);
  if (lt_) cublasLtDestroy(lt_);
}

void NativeDgemm::destroy(Plan &p) {
  if (p.lc) cublasLtMatrixLayoutDestroy(p.lc);
  if (p.lb) cublasLtMatrixLayoutDestroy(p.lb);
  if (p.la) cublasLtMatrixLayoutDestroy(p.la);
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  p.desc = nullptr;
  p.la = p.lb = p.lc = nullptr;
}

// Descriptors for the plan's problem and the first heuristic candidate that
// is native FP64 and needs no workspace. False if cuBLASLt failed.
bool NativeDgemm::make_plan(Plan &p) {
  const cublasOperation_t ta = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Stored shapes: op(A) is m x k, op(B) is k x n.
  const std::uint64_t ar = p.trans_a ? p.k : p.m, ac = p.trans_a ? p.m : p.k;
  const std::uint64_t br = p.trans_b ? p.n : p.k, bc = p.trans_b ? p.k : p.n;
  if (cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_64F, CUDA_R_64F) !=
          CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                     sizeof ta) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                     sizeof tb) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&p.la, CUDA_R_64F, ar, ac, p.lda) !=
          CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_64F, br, bc, p.ldb) !=
          CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_64F, std::uint64_t(p.m),
                                 std::uint64_t(p.n), p.ldc) != CUBLAS_STATUS_SUCCESS)
    return false;

  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return false;
  const std::size_t no_workspace = 0;
  const std::uint32_t align_d = p.align_c;
  bool ok = cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &no_workspace,
                sizeof no_workspace) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &p.align_a,
                sizeof p.align_a) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &p.align_b,
                sizeof p.align_b) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &p.align_c,
                sizeof p.align_c) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulPreferenceSetAttribute(
                pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d,
                sizeof align_d) == CUBLAS_STATUS_SUCCESS;
  cublasLtMatmulHeuristicResult_t cand[kCandidates];
  int got = 0;
  // A heuristic that finds nothing is not an error: the plan stays non-native.
  if (ok &&
      cublasLtMatmulAlgoGetHeuristic(lt_, p.desc, p.la, p.lb, p.lc, p.lc, pref,
                                     kCandidates, cand, &got) != CUBLAS_STATUS_SUCCESS)
    got = 0;
  cublasLtMatmulPreferenceDestroy(pref);
  if (!ok) return false;
  for (int i = 0; i < got && !p.native; ++i) {
    if (cand[i].state != CUBLAS_STATUS_SUCCESS || cand[i].workspaceSize != 0) continue;
    std::uint64_t flags = 0;
    int emulation = 1;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(
            &cand[i].algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags, sizeof flags,
            &written) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoCapGetAttribute(
            &cand[i].algo, CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT, &emulation,
            sizeof emulation, &written) != CUBLAS_STATUS_SUCCESS)
      continue;
    if (is_native_fp64_algo(flags, emulation)) {
      p.algo = cand[i].algo;
      p.native = true;
    }
  }
  return true;
}

NativeDgemm::Result NativeDgemm::run(cudaStream_t stream, bool trans_a, bool trans_b,
                                     index_t m, index_t n, index_t k, const double *A,
                                     index_t lda, const double *B, index_t ldb, double *C,
                                     index_t ldc) {
  if (testing::native_dgemm_disabled() || lt_unusable_) return Result::NoNativeAlgorithm;
  if (!lt_ && cublasLtCreate(&lt_) != CUBLAS_STATUS_SUCCESS) {
    lt_ = nullptr;
    lt_unusable_ = true;
    return Result::NoNativeAlgorithm;
  }
  const std::uint32_t aa = lt_alignment(A, lda), ab = lt_alignment(B, ldb),
                      ac = lt_alignment(C, ldc);
  Plan *plan = nullptr;
  for (Plan &p : plans_)
    if (p.trans_a == trans_a && p.trans_b == trans_b && p.m == m && p.n == n &&
        p.k == k && p.lda == lda && p.ldb == ldb && p.ldc == ldc && p.align_a == aa &&
        p.align_b == ab && p.align_c == ac) {
      plan = &p;
      break;
    }
  if (!plan) {
    Plan fresh{trans_a, trans_b, m, n, k, lda, ldb, ldc, aa, ab, ac};
    if (!make_plan(fresh)) {
      destroy(fresh);
      return Result::NoNativeAlgorithm;
    }
    if (plans_.size() < kMaxPlans) {
      plans_.push_back(fresh);
      plan = &plans_.back();
    } else {
      Plan &victim = plans_[next_victim_];
      next_victim_ = (next_victim_ + 1) % kMaxPlans;
      destroy(victim);
      victim = fresh;
      plan = &victim;
    }
  }
  if (!plan->native) return Result::NoNativeAlgorithm;
  static const double one = 1.0, zero = 0.0;
  const cublasStatus_t cs =
      cublasLtMatmul(lt_, plan->desc, &one, A, plan->la, B, plan->lb, &zero, C, plan->lc,
                     C, plan->lc, &plan->algo, nullptr, 0, stream);
  return cs == CUBLAS_STATUS_SUCCESS ? Result::Ran : Result::Failed;
}

}  // namespace xn
