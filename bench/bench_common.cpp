// bench_common.cpp - names, error statistics, repetition counts and the
// host's uniform deviates of the gemm/exdgemm runners.
#include "bench_common.h"

#include <algorithm>
#include <cmath>

#include "bench_random.h"

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

int auto_reps(double pair_seconds, double budget) {
  if (!(pair_seconds > 0)) return 25;
  const double r = std::floor(budget / pair_seconds);
  return int(std::clamp(r, 3.0, 25.0));
}

template <class T>
T draw(std::mt19937_64 &rng, Dist d) {
  return uniform<T>(rng(), d != Dist::U01);
}
template double draw<double>(std::mt19937_64 &rng, Dist d);
template float draw<float>(std::mt19937_64 &rng, Dist d);

}  // namespace xnb
