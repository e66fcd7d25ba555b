// bench_common.cpp - names, the recursive GEMMs' options and depths, error
// statistics, repetition counts, the host's uniform deviates and the paper's
// test matrix of the gemm/exdgemm runners.
#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "bench_random.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "support/dd_reference.h"
#include "support/paper_matrix.h"

namespace xnb {

const char *routine_name(Routine r) {
  switch (r) {
    case Routine::Ngemm:
      return "ngemm";
    case Routine::Exdgemm:
      return "exdgemm";
    case Routine::Strassen:
      return "strassen";
    case Routine::Winograd:
      return "winograd";
  }
  return "?";
}

const char *dist_name(Dist d) {
  switch (d) {
    case Dist::U01:
      return "u01";
    case Dist::Upm1:
      return "upm1";
    case Dist::Phi:
      return "phi";
    case Dist::Illcond:
      return "illcond";
    case Dist::Paper:
      return "paper";
  }
  return "?";
}

const xn::GemmAlgorithm &algorithm_of(Routine r) {
  return r == Routine::Strassen   ? xn::strassen_algorithm()
         : r == Routine::Winograd ? xn::winograd_algorithm()
                                  : xn::nonneg_winograd_algorithm();
}

xnOption_t leaf_option(Routine r, bool is_double) {
  if (r == Routine::Strassen)
    return is_double ? XN_OPT_STRASSEN_LEAF_D : XN_OPT_STRASSEN_LEAF_S;
  if (r == Routine::Winograd)
    return is_double ? XN_OPT_WINOGRAD_LEAF_D : XN_OPT_WINOGRAD_LEAF_S;
  return is_double ? XN_OPT_LEAF_SIZE_D : XN_OPT_LEAF_SIZE_S;
}

xnOption_t min_size_option(Routine r, bool is_double) {
  if (r == Routine::Strassen)
    return is_double ? XN_OPT_STRASSEN_MIN_SIZE_D : XN_OPT_STRASSEN_MIN_SIZE_S;
  if (r == Routine::Winograd)
    return is_double ? XN_OPT_WINOGRAD_MIN_SIZE_D : XN_OPT_WINOGRAD_MIN_SIZE_S;
  return is_double ? XN_OPT_MIN_SIZE_D : XN_OPT_MIN_SIZE_S;
}

std::string depth_source_letter(int source) {
  static const char *letters[] = {"o", "b", "s", "c"};
  return source >= 0 && source < 4 ? letters[source] : "-";
}

std::string depth_source_name(int source) {
  static const char *names[] = {"options", "built-in", "scaled", "calibrated"};
  return source >= 0 && source < 4 ? names[source] : "";
}

void depth_model_seen(const char *text) {
  static std::set<std::string> seen;
  if (seen.insert(text).second) std::printf("depth model: %s\n", text);
}

bool leaf_for_levels(std::int64_t m, std::int64_t n, std::int64_t k, int levels,
                     std::int64_t *leaf) {
  if (levels < 0 || levels > 30) return false;
  auto exact = [&](std::int64_t l) {
    return l >= 1 && xn::choose_levels(m, n, k, l, levels, 0) == levels;
  };
  const std::int64_t step = std::int64_t(1) << levels;
  std::int64_t l = (std::min({m, n, k}) + step - 1) / step;
  if (exact(l)) {
    *leaf = l;
    return true;
  }
  // Odd sizes: halved `levels` times, the two smallest dimensions a <= b
  // must stay at least leaf / 2 and leaf, so the largest leaf that allows
  // the depth is min(b, 2a + 1).
  std::int64_t d[3] = {m >> levels, n >> levels, k >> levels};
  std::sort(d, d + 3);
  l = std::min(d[1], 2 * d[0] + 1);
  if (!exact(l)) return false;
  *leaf = l;
  return true;
}

void reference_identity_errors(const std::vector<double> &ref_hi,
                               const std::vector<double> &ref_lo,
                               const std::vector<std::int64_t> &rows,
                               const std::vector<std::int64_t> &cols, CaseResult *r) {
  double max_id = 0, sum_id = 0;
  for (std::size_t s = 0; s < ref_hi.size(); ++s) {
    const double id = rows[s] == cols[s] ? 1.0 : 0.0;
    const double e = std::fabs((ref_hi[s] - id) + ref_lo[s]);
    max_id = std::max(max_id, e);
    sum_id += e;
  }
  if (ref_hi.empty()) return;
  r->ref_max_id = max_id;
  r->ref_mean_id = sum_id / double(ref_hi.size());
}

std::vector<int> case_levels(const CaseSpec &c) {
  if (c.level_lo < 0) return {-1};
  std::vector<int> v;
  for (int l = c.level_lo; l <= c.level_hi; ++l) v.push_back(l);
  return v;
}

CaseSpec level_spec(const CaseSpec &c, int levels, CaseResult *r) {
  CaseSpec s = c;
  r->level_forced = levels;
  if (levels < 0) return s;
  std::int64_t leaf = 0;
  if (!leaf_for_levels(c.m, c.n, c.k, levels, &leaf)) {
    r->status = "error";
    r->message =
        "no leaf size gives exactly " + std::to_string(levels) + " levels at this shape";
  }
  s.levels = levels;
  s.leaf = leaf;
  s.min_size = 0;
  return s;
}

ErrStats error_stats(const std::vector<double> &ref_hi, const std::vector<double> &ref_lo,
                     const std::vector<double> &values, std::int64_t nonfinite,
                     const std::vector<std::int64_t> *rows,
                     const std::vector<std::int64_t> *cols) {
  ErrStats e;
  e.nonfinite = nonfinite;
  double max_rel = 0, sum_rel = 0, max_abs = 0, sum_abs = 0, sum_ref = 0;
  double max_id = 0, sum_id = 0;
  std::int64_t rel_count = 0;
  for (std::size_t s = 0; s < values.size(); ++s) {
    const double v = values[s];
    e.wrong += !(v == ref_hi[s]);     // NaN included
    if (!std::isfinite(v)) continue;  // counted in `nonfinite`
    // (v - hi) is exact when v and hi are close (Sterbenz); lo then adds
    // the reference's low part.
    const double err = std::fabs((v - ref_hi[s]) - ref_lo[s]);
    ++e.checked;
    max_abs = std::max(max_abs, err);
    sum_abs += err;
    sum_ref += std::fabs(ref_hi[s] + ref_lo[s]);
    if (rows && cols) {
      const double id = std::fabs(v - ((*rows)[s] == (*cols)[s] ? 1.0 : 0.0));
      max_id = std::max(max_id, id);
      sum_id += id;
    }
    const double r = std::fabs(ref_hi[s]);
    if (r == 0) {
      ++e.zero_ref;
      continue;
    }
    const double rel = err / r;
    max_rel = std::max(max_rel, rel);
    sum_rel += rel;
    ++rel_count;
  }
  if (e.checked > 0) {
    e.max_abs = max_abs;
    const double mean_ref = sum_ref / double(e.checked);
    if (mean_ref > 0) {
      e.max_norm = max_abs / mean_ref;
      e.mean_norm = sum_abs / double(e.checked) / mean_ref;
    }
    if (rows && cols) {
      e.max_id = max_id;
      e.mean_id = sum_id / double(e.checked);
    }
  }
  if (rel_count > 0) {
    e.max_rel = max_rel;
    e.mean_rel = sum_rel / double(rel_count);
  }
  return e;
}

int auto_reps(double pair_seconds, double budget) {
  if (!(pair_seconds > 0)) return 25;
  const double r = std::floor(budget / pair_seconds);
  return int(std::clamp(r, 3.0, 25.0));
}

int train_calls(double seconds, double train_below) {
  if (!(train_below > 0) || !(seconds > 0) || seconds >= train_below) return 1;
  return int(std::min<double>(kMaxTrainCalls, std::ceil(train_below / seconds)));
}

template <class T>
T draw(std::mt19937_64 &rng, Dist d) {
  return uniform<T>(rng(), d != Dist::U01);
}
template double draw<double>(std::mt19937_64 &rng, Dist d);
template float draw<float>(std::mt19937_64 &rng, Dist d);

template <class T>
void make_paper_matrix(char which, std::int64_t n, bool trans, std::vector<T> *out) {
  // The tests' generator (tests/support/paper_matrix.h), in parallel.
  const xn_test::PaperMatrix p(n);
  out->resize(std::size_t(n) * std::size_t(n));
  T *x = out->data();
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < n; ++c)  // stored column c, stored row r
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t i = trans ? c : r, j = trans ? r : c;  // op(X)(i, j)
      x[std::size_t(r + c * n)] = T(which == 'A' ? p.a(i, j) : p.b(i, j));
    }
}
template void make_paper_matrix<double>(char, std::int64_t, bool, std::vector<double> *);
template void make_paper_matrix<float>(char, std::int64_t, bool, std::vector<float> *);

}  // namespace xnb
