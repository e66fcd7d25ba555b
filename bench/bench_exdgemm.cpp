// bench_exdgemm.cpp - what both runners' exdgemm cases share: the inputs (the
// exdgemm suites' generators, tests/support/exdgemm_inputs.h) and the exact reference
// (the suites' MPFR oracle, tests/support/mpfr_oracle.h), both on the host.
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "bench_common.h"
#include "support/exdgemm_inputs.h"
#include "support/mpfr_oracle.h"

namespace xnb {

namespace {

// The rows x cols column-major matrix x (ld = rows), transposed (ld = cols).
std::vector<double> transposed(const std::vector<double> &x, std::int64_t rows,
                               std::int64_t cols) {
  std::vector<double> t(x.size());
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      t[std::size_t(j + i * cols)] = x[std::size_t(i + j * rows)];
  return t;
}

// Entries of the phi distribution (the suites' ex_value) drawn per chunk of
// kPhiChunk stored entries, each chunk from its own generator seeded by
// (seed, salt, chunk),
// on every hardware thread: the values depend on the seed only, not on the
// thread count. Large inputs (32768^2 entries: minutes on one thread, the
// normal deviate and the exponential per entry) are made in seconds.
constexpr std::int64_t kPhiChunk = std::int64_t(1) << 20;
void fill_phi_parallel(std::vector<double> &x, std::int64_t count, double phi,
                       std::uint64_t seed, std::uint64_t salt) {
  x.resize(std::size_t(count));
  const std::int64_t chunks = (count + kPhiChunk - 1) / kPhiChunk;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t ch; (ch = next.fetch_add(1)) < chunks;) {
      std::seed_seq seq{seed, salt, std::uint64_t(ch)};
      std::mt19937_64 rng(seq);
      const std::int64_t end = std::min(count, (ch + 1) * kPhiChunk);
      for (std::int64_t e = ch * kPhiChunk; e < end; ++e)
        x[std::size_t(e)] = xn_test::ex_value(xn_test::ExKind::Phi, phi, rng, 0);
    }
  };
  std::vector<std::thread> pool;
  const unsigned extra = std::max(1u, std::thread::hardware_concurrency()) - 1;
  for (unsigned t = 0; t < extra; ++t) pool.emplace_back(work);
  work();
  for (std::thread &t : pool) t.join();
}

}  // namespace

bool ex_full_reference(const CaseSpec &c) {
  return c.ref_samples <= 0 || c.m * c.n <= kExFullRefEntries ||
         c.ref_samples >= c.m * c.n;
}

void make_ex_inputs(const CaseSpec &c, ExInputs *in) {
  const std::int64_t m = c.m, n = c.n, k = c.k;
  const std::int64_t ra = c.ta ? k : m, ca = c.ta ? m : k;  // A as stored
  const std::int64_t rb = c.tb ? n : k, cb = c.tb ? k : n;  // B as stored
  in->lda = std::max<std::int64_t>(1, ra);
  in->ldb = std::max<std::int64_t>(1, rb);
  std::mt19937_64 rng(c.seed);
  switch (c.dist) {
    case Dist::Phi:
      // (Small inputs as the test suites draw them; large ones in parallel,
      // the same distribution: every entry independent, no per-line scale.)
      if (ra * ca + rb * cb <= 2 * kPhiChunk) {
        xn_test::ex_fill(xn_test::ExKind::Phi, c.phi, c.ta, c.tb, m, n, k, in->a,
                         in->lda, in->b, in->ldb, rng);
      } else {
        fill_phi_parallel(in->a, ra * ca, c.phi, c.seed, 1);
        fill_phi_parallel(in->b, rb * cb, c.phi, c.seed, 2);
      }
      break;
    case Dist::Illcond: {
      // ex_fill_illcond writes op(A) and op(B) as they are (no transposes):
      // store their transposes where the case asks for them.
      std::vector<double> a, b;
      xn_test::ex_fill_illcond(m, n, k, a, std::max<std::int64_t>(1, m), b,
                               std::max<std::int64_t>(1, k), rng);
      in->a = c.ta ? transposed(a, m, k) : std::move(a);
      in->b = c.tb ? transposed(b, k, n) : std::move(b);
      break;
    }
    case Dist::U01:
    case Dist::Upm1:
      in->a.resize(std::size_t(ra * ca));
      in->b.resize(std::size_t(rb * cb));
      for (double &v : in->a) v = draw<double>(rng, c.dist);
      for (double &v : in->b) v = draw<double>(rng, c.dist);
      break;
    case Dist::Paper:  // not offered for exdgemm (square shapes only)
      make_paper_matrix<double>('A', m, c.ta, &in->a);
      make_paper_matrix<double>('B', m, c.tb, &in->b);
      break;
  }
}

void exact_reference(const CaseSpec &c, const ExInputs &in,
                     const std::vector<std::int64_t> &rows,
                     const std::vector<std::int64_t> &cols, std::vector<double> *hi,
                     std::vector<double> *lo) {
  const std::int64_t count = std::int64_t(rows.size());
  hi->assign(rows.size(), 0.0);
  lo->assign(rows.size(), 0.0);
  // MPFR's state is per thread only in a build with thread-local storage.
  const bool threads = mpfr_buildopt_tls_p() && count * c.k > 4096;
#pragma omp parallel for schedule(dynamic, 4) if (threads)
  for (std::int64_t s = 0; s < count; ++s) {
    // beta = 0: C0 is not read.
    const xn_test::ExactEntry e = xn_test::exact_gemm_entry<double>(
        c.ta, c.tb, c.k, 1.0, in.a.data(), in.lda, in.b.data(), in.ldb, 0.0, nullptr, 1,
        rows[std::size_t(s)], cols[std::size_t(s)]);
    (*hi)[std::size_t(s)] = e.hi;
    (*lo)[std::size_t(s)] = e.lo;
  }
}

void ex_check_result(CaseResult *r) {
  std::string msg;
  if (r->ours.wrong > 0)
    msg = "exdgemm: " + std::to_string(r->ours.wrong) + " of " +
          std::to_string(r->ref_entries) + " checked entries NOT correctly rounded";
  if (r->ours.nonfinite > 0 || r->base.nonfinite > 0)
    msg += std::string(msg.empty() ? "" : "; ") + "non-finite entries in C (ours " +
           std::to_string(r->ours.nonfinite) + ", baseline " +
           std::to_string(r->base.nonfinite) + ")";
  if (msg.empty()) return;
  r->status = "error";
  r->message += std::string(r->message.empty() ? "" : "; ") + msg;
}

}  // namespace xnb
