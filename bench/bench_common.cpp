// bench_common.cpp - sample choice, error statistics and repetition counts.
#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace xnb {

const char *routine_name(Routine r) {
  return r == Routine::Exdgemm ? "exdgemm" : "ngemm";
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
  }
  return "?";
}

void choose_samples(std::int64_t m, std::int64_t n, bool full, std::int64_t count,
                    std::uint64_t seed, std::vector<std::int64_t> *rows,
                    std::vector<std::int64_t> *cols) {
  rows->clear();
  cols->clear();
  const std::int64_t total = m * n;
  if (total <= 0) return;
  if (full || count >= total) {
    rows->reserve(std::size_t(total));
    cols->reserve(std::size_t(total));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        rows->push_back(i);
        cols->push_back(j);
      }
    return;
  }
  std::unordered_set<std::int64_t> seen;
  auto add = [&](std::int64_t i, std::int64_t j) {
    if (std::int64_t(rows->size()) >= count) return;
    if (!seen.insert(i + j * m).second) return;
    rows->push_back(i);
    cols->push_back(j);
  };
  // The corners: the last row and column are where peeled strips live.
  add(0, 0);
  add(m - 1, 0);
  add(0, n - 1);
  add(m - 1, n - 1);
  std::mt19937_64 rng(seed ^ 0x5eed5a3b1e5ull);
  std::uniform_int_distribution<std::int64_t> di(0, m - 1), dj(0, n - 1);
  while (std::int64_t(rows->size()) < count) add(di(rng), dj(rng));
}

ErrStats error_stats(const std::vector<double> &ref_hi, const std::vector<double> &ref_lo,
                     const std::vector<double> &values, std::int64_t nonfinite) {
  ErrStats e;
  e.nonfinite = nonfinite;
  double max_rel = 0, sum_rel = 0, max_abs = 0;
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
  if (e.checked > 0) e.max_abs = max_abs;
  if (rel_count > 0) {
    e.max_rel = max_rel;
    e.mean_rel = sum_rel / double(rel_count);
  }
  return e;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double min_of(const std::vector<double> &v) {
  return v.empty() ? kNaN : *std::min_element(v.begin(), v.end());
}

int auto_reps(double pair_seconds, double budget) {
  if (!(pair_seconds > 0)) return 25;
  const double r = std::floor(budget / pair_seconds);
  return int(std::clamp(r, 3.0, 25.0));
}

template <>
double draw<double>(std::mt19937_64 &rng, Dist d) {
  const double u = double(rng() >> 11) * 0x1.0p-53;
  return d == Dist::U01 ? u : 2 * u - 1;  // both exact
}
template <>
float draw<float>(std::mt19937_64 &rng, Dist d) {
  const float u = float(rng() >> 40) * 0x1.0p-24f;
  return d == Dist::U01 ? u : 2 * u - 1;
}

}  // namespace xnb
