// bench_batched.cu - `xnbench batched`: xnExdgemmStridedBatched and
// xnExdgemmBatched against cublasDgemmStridedBatched and cublasDgemmBatched
// on the same handle, stream and buffers (docs/xnbench.md, "batched").
// Calls alternated with cuBLAS's, events around each, warm-up calls, median
// of the timed ones; rate = cuBLAS's time / ours. Every call's C starts as
// NaN; sampled entries of sampled products are compared bit for bit with
// the exact IEEE value (tests/support/ieee_oracle.h). One more call with
// XN_OPT_EXDGEMM_PHASE_TIMES gives the phase split (waits at each phase
// boundary: not part of the timed calls).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_batched.h"
#include "bench_cuda.h"
#include "bench_gemm.h"
#include "bench_util.h"
#include "core/exdgemm_batched.h"
#include "support/exdgemm_inputs.h"
#include "support/ieee_oracle.h"
#include "xngemm.h"

namespace xnb {

namespace {

struct BatchedCase {
  long long batch, m, n, k;
  double phi;
};

struct BatchedRow {
  BatchedCase c;
  bool array = false;
  double ours_ms = 0, cublas_ms = 0;
  xnExdgemmInfo_t info{};
  long long checked = 0, wrong = 0;
};

float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  XNB_CUDA(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

// One case: both forms share the operands; C (ours) and C (cuBLAS) apart.
void run_case(cublasHandle_t h, const BatchedOptions &o, const BatchedCase &c,
              std::vector<BatchedRow> *rows) {
  const std::size_t sa = std::size_t(c.m * c.k), sb = std::size_t(c.k * c.n),
                    sc = std::size_t(c.m * c.n);
  const std::size_t count = std::size_t(c.batch);
  std::vector<double> hA(sa * count), hB(sb * count);
  std::mt19937_64 rng(o.seed);
  for (double &v : hA) v = xn_test::ex_value(xn_test::ExKind::Phi, c.phi, rng, 0);
  for (double &v : hB) v = xn_test::ex_value(xn_test::ExKind::Phi, c.phi, rng, 0);
  DevMem A, B, C, Cref, ptrs;
  std::string why;
  if (!try_alloc(A, hA.size() * 8, &why) || !try_alloc(B, hB.size() * 8, &why) ||
      !try_alloc(C, sc * count * 8, &why) || !try_alloc(Cref, sc * count * 8, &why) ||
      !try_alloc(ptrs, 4 * count * sizeof(void *), &why)) {
    std::printf("batched %lld x %lldx%lldx%lld: skipped (%s)\n", c.batch, c.m, c.n, c.k,
                why.c_str());
    return;
  }
  XNB_CUDA(cudaMemcpy(A.p, hA.data(), hA.size() * 8, cudaMemcpyHostToDevice));
  XNB_CUDA(cudaMemcpy(B.p, hB.data(), hB.size() * 8, cudaMemcpyHostToDevice));
  std::vector<const double *> hp(4 * count);
  for (std::size_t b = 0; b < count; ++b) {
    hp[b] = A.as<double>() + b * sa;
    hp[count + b] = B.as<double>() + b * sb;
    hp[2 * count + b] = C.as<double>() + b * sc;
    hp[3 * count + b] = Cref.as<double>() + b * sc;
  }
  XNB_CUDA(cudaMemcpy(ptrs.p, hp.data(), 4 * count * sizeof(void *), cudaMemcpyHostToDevice));
  const double *const *pa = ptrs.as<const double *>();
  const double *const *pb = pa + count;
  double *const *pc = ptrs.as<double *>() + 2 * count;
  double *const *pr = ptrs.as<double *>() + 3 * count;
  const double one = 1.0, zero = 0.0;
  const int m = int(c.m), n = int(c.n), k = int(c.k), bc = int(c.batch);
  cudaEvent_t e0, e1;
  XNB_CUDA(cudaEventCreate(&e0));
  XNB_CUDA(cudaEventCreate(&e1));
  for (int form = 0; form < 2; ++form) {
    const bool array = form == 1;
    if ((array && !o.array) || (!array && !o.strided)) continue;
    auto ours = [&] {
      return array ? xnExdgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, pa, m, pb, k,
                                      &zero, pc, m, bc)
                   : xnExdgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                             A.as<double>(), m, (long long)sa, B.as<double>(),
                                             k, (long long)sb, &zero, C.as<double>(), m,
                                             (long long)sc, bc);
    };
    auto theirs = [&] {
      return array ? cublasDgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, pa, m, pb,
                                        k, &zero, pr, m, bc)
                   : cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                               A.as<double>(), m, (long long)sa,
                                               B.as<double>(), k, (long long)sb, &zero,
                                               Cref.as<double>(), m, (long long)sc, bc);
    };
    std::vector<double> to, tc;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
      XNB_CUDA(cudaMemset(C.p, 0xff, sc * count * 8));  // NaN: every entry must be written
      XNB_CUDA(cudaEventRecord(e0));
      check_status(ours(), array ? "xnExdgemmBatched" : "xnExdgemmStridedBatched");
      XNB_CUDA(cudaEventRecord(e1));
      XNB_CUDA(cudaEventSynchronize(e1));
      if (r >= o.warmup) to.push_back(elapsed(e0, e1));
      XNB_CUDA(cudaEventRecord(e0));
      check_status(theirs(), "cublasDgemm(Strided)Batched");
      XNB_CUDA(cudaEventRecord(e1));
      XNB_CUDA(cudaEventSynchronize(e1));
      if (r >= o.warmup) tc.push_back(elapsed(e0, e1));
    }
    BatchedRow row;
    row.c = c;
    row.array = array;
    row.ours_ms = median_of(to);
    row.cublas_ms = median_of(tc);
    // The last timed call's C against the exact values.
    std::vector<double> hC(sc * count);
    XNB_CUDA(cudaMemcpy(hC.data(), C.p, hC.size() * 8, cudaMemcpyDeviceToHost));
    std::mt19937_64 pick(o.seed + 7);
    for (long long s = 0; s < o.check; ++s) {
      const std::size_t b = pick() % count, i = pick() % sc % std::size_t(c.m),
                        j = pick() % std::size_t(c.n);
      const double want =
          xn_test::exact_gemm_entry_ieee(false, false, c.k, 1.0, hA.data() + b * sa, c.m,
                                hB.data() + b * sb, c.k, 0.0, nullptr, c.m, std::int64_t(i),
                                std::int64_t(j));
      ++row.checked;
      row.wrong += !xn_test::ex_same_bits(hC[b * sc + i + j * std::size_t(c.m)], want);
    }
    // The phase split: one more call with waits at the phase boundaries.
    check_status(xnSetOption(h, XN_OPT_EXDGEMM_PHASE_TIMES, 1), "xnSetOption");
    check_status(ours(), "phase-timed call");
    XNB_CUDA(cudaDeviceSynchronize());
    check_status(xnGetLastExdgemmInfo(h, &row.info), "xnGetLastExdgemmInfo");
    check_status(xnSetOption(h, XN_OPT_EXDGEMM_PHASE_TIMES, 0), "xnSetOption");
    rows->push_back(row);
    const double rate = row.ours_ms > 0 ? row.cublas_ms / row.ours_ms : 0;
    std::printf(
        "%-7s %5lld x %5lldx%lldx%lld phi %.0f: ours %8.3f ms, cuBLAS %7.3f ms, rate %.3f; "
        "moduli %d, groups %lld, phases %.3f/%.3f/%.3f/%.3f ms; %lld checked, %lld wrong\n",
        array ? "array" : "strided", c.batch, c.m, c.n, c.k, c.phi, row.ours_ms, row.cublas_ms,
        rate, row.info.moduli, (long long)row.info.blocks, row.info.phase_ms[0],
        row.info.phase_ms[1], row.info.phase_ms[2], row.info.phase_ms[3], row.checked,
        row.wrong);
  }
  XNB_CUDA(cudaEventDestroy(e0));
  XNB_CUDA(cudaEventDestroy(e1));
}

}  // namespace

int run_batched(const BatchedOptions &o) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    std::printf("batched: no GPU, nothing measured\n");
    return o.device == "gpu" ? 1 : 0;
  }
  std::vector<BatchedCase> cases;
  if (o.sizes.empty()) {
    cases = {{64, 1024, 1024, 1024, 0.0}, {512, 256, 256, 256, 1.0}};
  } else {
    for (const Shape &s : o.sizes) cases.push_back({o.batch, s.m, s.n, s.k, o.phi});
  }
  cudaDeviceProp prop{};
  XNB_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s; seed %llu; medians of %d calls alternated with cuBLAS; products: %s\n",
              prop.name, (unsigned long long)o.seed, o.reps, o.products.c_str());
  xn::testing::set_batched_digits(o.products == "sums" ? -1 : o.products == "digits" ? 1 : 0);
  cublasHandle_t h = nullptr;
  XNB_CUBLAS(cublasCreate(&h));
  std::vector<BatchedRow> rows;
  for (const BatchedCase &c : cases) {
    BatchedCase d = c;
    if (o.phi_given) d.phi = o.phi;
    run_case(h, o, d, &rows);
  }
  XNB_CUBLAS(cublasDestroy(h));
  long long wrong = 0;
  for (const BatchedRow &r : rows) wrong += r.wrong;
  return wrong ? 1 : 0;
}

}  // namespace xnb
