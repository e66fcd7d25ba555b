// device_model.cpp - the depth model's arithmetic, the library's tables of
// devices and the calibration files' text (device_model.h).
#include "core/device_model.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <locale>
#include <sstream>

#include "core/plan.h"

namespace xn {

namespace {
// The size a GEMM runs like: the side of its C while k is deep enough to
// keep the tiles' pipelines full (a few times the tile), else less.
double effective_size(double m, double n, double k) {
  return std::min(std::sqrt(m * n), 4 * k);
}
}  // namespace

double LeafRates::at(double m, double n, double k) const {
  if (tflops.empty() || m <= 0 || n <= 0 || k <= 0) return 0;
  const double s = effective_size(m, n, k);
  const double lo = double(first), hi = double(last());
  if (s <= lo) return tflops.front() * s / lo;
  if (s >= hi) return tflops.back();
  const double pos = (s - lo) / double(step);
  const std::size_t i = std::size_t(pos);
  const double w = pos - double(i);
  return tflops[i] * (1 - w) + tflops[i + 1] * w;
}

namespace {

// Elements each level's elementwise passes move, per role of their operands:
// every operand a Combine step reads or writes, the old value of C a first
// write with beta != 0 reads, and C's old value that an accumulating
// product reads (its leaf GEMM runs with beta = 1).
struct RoleMoves {
  int moves[3] = {0, 0, 0};  // A-, B-, C-shaped operands
};
RoleMoves role_moves(const Schedule &s, bool beta_nonzero) {
  RoleMoves r;
  for (const Step &st : s.steps) {
    if (st.kind == StepKind::Product) {
      r.moves[int(Role::C)] += st.accumulate;
      continue;
    }
    int n = st.nsrc + st.ndst;
    for (int d = 0; d < st.ndst; ++d) n += st.c_first[d] && beta_nonzero;
    r.moves[int(st.role)] += n;
  }
  return r;
}

}  // namespace

double predicted_ms(const DepthModel &model, const GemmAlgorithm &algo, bool is_double,
                    bool beta_nonzero, index_t m, index_t n, index_t k, int levels,
                    index_t kchain) {
  const LeafRates &rates = model.rates[is_double ? 1 : 0];
  const double elem = is_double ? 8.0 : 4.0;
  const CoreShape core = core_shape(m, n, k, levels);
  double bytes = 0, instances = 1;
  // The levels above the leaves: one table each (the level below a first
  // write of C may run the other table; their traffic differs by a few
  // percent of a few percent of the call).
  const RoleMoves moves = role_moves(algo.table_for(beta_nonzero), beta_nonzero);
  for (int l = 0; l < levels; ++l) {
    const double hm = double(core.m >> (l + 1)), hn = double(core.n >> (l + 1)),
                 hk = double(core.k >> (l + 1));
    const double per_role[3] = {hm * hk, hk * hn, hm * hn};
    for (int r = 0; r < 3; ++r) bytes += instances * moves.moves[r] * per_role[r] * elem;
    instances *= 7;
  }
  const double lm = double(core.m >> levels), ln = double(core.n >> levels),
               lk = double(core.k >> levels);
  // A leaf split along k (never the classical product of levels = 0) runs its chunks one after another, each after the
  // first reading and writing the leaf's C again (executor.h, leaf_gemm).
  double chunk_k = lk, chunks = 1;
  if (levels > 0 && kchain > 0 && lk > double(kchain)) {
    chunks = std::ceil(lk / double(kchain));
    chunk_k = lk / chunks;
    bytes += instances * (chunks - 1) * 2 * lm * ln * elem;
  }
  // Strips that do not divide by 2^levels (peeled: thin classical GEMMs).
  const double peel_flops = 2.0 * (double(m) * double(n) * double(k) -
                                   double(core.m) * double(core.n) * double(core.k));
  const double rate = rates.at(lm, ln, chunk_k) * 1e12;  // flop/s
  const double leaf_flops = instances * 2.0 * lm * ln * lk;
  const double full_rate = rates.at(double(m), double(n), double(k)) * 1e12;
  if (rate <= 0 || full_rate <= 0 || model.elementwise_bytes_per_s <= 0) return 0;
  const double seconds = leaf_flops / rate + peel_flops / full_rate +
                         bytes / model.elementwise_bytes_per_s;
  return seconds * 1e3;
}

DepthPrediction predict_depth(const DepthModel &model, const GemmAlgorithm &algo,
                              bool is_double, bool beta_nonzero, index_t m, index_t n,
                              index_t k, int max_levels, index_t kchain) {
  DepthPrediction p;
  p.ms_at_zero = p.ms_at_levels =
      predicted_ms(model, algo, is_double, beta_nonzero, m, n, k, 0, kchain);
  // Deeper levels only while every dimension still halves: the leaves of a
  // level the model rejects are only smaller at the next.
  for (int l = 1; l <= max_levels && (std::min({m, n, k}) >> l) >= 1; ++l) {
    const double t = predicted_ms(model, algo, is_double, beta_nonzero, m, n, k, l, kchain);
    const double margin = p.levels == 0 ? kFirstLevelMargin : kDepthGainMargin;
    if (t > 0 && t < p.ms_at_levels * (1 - margin)) {
      p.levels = l;
      p.ms_at_levels = t;
    }
  }
  return p;
}

namespace {

// A card the library has figures for. Compute capability and
// multiprocessor count select it: cards that share them run cuBLAS's leaf
// GEMMs at the same rates (an H100 SXM and an H200 differ by 1-3 % at every
// size measured, docs/performance.md) and differ in memory bandwidth, which
// the model takes from the device (DeviceTraits::memory_bandwidth).
struct DeviceTable {
  const char *description;
  int cc_major, cc_minor, sm_count;
  double sm_clock_khz;             // the card the rates were measured on
  double elementwise_efficiency;   // passes' bandwidth / nominal bandwidth
  index_t first, step;
  std::size_t count;
  const double *single_tflops, *double_tflops;
};

// NVIDIA Hopper, 132 multiprocessors (H100 SXM, H200): cuBLAS 13.1 SGEMM
// and DGEMM on the leaf grid, at each size the best of five measurements
// on three H100 starts: three calibrations and two runs of single timed
// calls (docs/results/device_model/). DGEMM has slow episodes (its clocks
// under power limits: a run of neighbouring sizes 15-20 % low, at other
// sizes in each run), which only ever lower a measurement. The copy ran at
// 0.88 of the nominal bandwidth; the passes fit best at about that.
constexpr double kHopper132Single[] = {
    38.2, 38.1, 34.6, 41.5, 38.5, 39.3, 42.4, 43.0, 50.2, 43.0, 40.4, 43.7, 46.3, 44.3,
    48.2, 41.5, 44.9, 44.6, 46.4, 48.8, 52.1, 46.5, 47.1, 48.0, 51.7, 46.4, 47.5, 49.6,
    52.0, 48.2, 47.8, 51.5, 47.2, 47.9, 50.6, 47.6, 49.8, 51.1, 48.7, 47.4, 51.1, 47.9,
    49.3, 48.1, 49.2, 51.4, 48.8, 50.8, 52.3, 48.9, 51.6, 48.5, 49.6, 48.8, 49.7, 49.5,
    51.7};
constexpr double kHopper132Double[] = {
    52.1, 51.1, 44.9, 51.1, 50.5, 47.9, 55.8, 54.7, 56.8, 55.5, 58.7, 57.3, 53.6, 54.9,
    56.1, 54.7, 56.3, 56.0, 53.7, 53.0, 56.5, 57.7, 56.9, 56.1, 56.1, 54.8, 55.9, 55.6,
    55.5, 55.8, 56.9, 55.5, 57.5, 56.7, 56.2, 55.4, 55.9, 55.9, 56.9, 55.6, 54.1, 55.1,
    57.2, 56.2, 55.9, 56.1, 56.3, 53.3, 56.1, 55.5, 56.0, 56.3, 55.5, 55.5, 55.0, 55.1,
    54.9};
static_assert(sizeof kHopper132Single == sizeof kHopper132Double &&
                  sizeof kHopper132Single / sizeof(double) == kLeafGridCount,
              "the tables are on the leaf grid");

constexpr DeviceTable kDeviceTables[] = {
    {"NVIDIA Hopper, 132 SMs (measured on an H100 SXM)", 9, 0, 132, 1980000, 0.88,
     kLeafGridFirst, kLeafGridStep, kLeafGridCount, kHopper132Single, kHopper132Double},
};

DepthModel model_from_table(const DeviceTable &t, const DeviceTraits &traits,
                            double rate_scale, ModelSource source) {
  DepthModel m;
  m.source = source;
  m.description = t.description;
  m.elementwise_bytes_per_s = t.elementwise_efficiency * traits.memory_bandwidth();
  for (int p = 0; p < 2; ++p) {
    const double *v = p ? t.double_tflops : t.single_tflops;
    m.rates[p].first = t.first;
    m.rates[p].step = t.step;
    m.rates[p].tflops.assign(v, v + t.count);
    for (double &r : m.rates[p].tflops) r *= rate_scale;
  }
  return m;
}

}  // namespace

DepthModel builtin_model(const DeviceTraits &traits) {
  if (traits.sm_count <= 0 || traits.memory_bandwidth() <= 0) return DepthModel{};
  for (const DeviceTable &t : kDeviceTables)
    if (t.cc_major == traits.cc_major && t.cc_minor == traits.cc_minor &&
        t.sm_count == traits.sm_count)
      return model_from_table(t, traits, 1.0, ModelSource::BuiltIn);
  // Another card: the table of the same architecture if there is one, else
  // the newest, scaled by multiprocessors x clock. A first guess: a level's
  // gain depends on the ratio of the leaf rate to the bandwidth, which this
  // keeps only roughly; xnCalibrate measures the card (docs/design.md).
  const DeviceTable *best = &kDeviceTables[0];
  for (const DeviceTable &t : kDeviceTables)
    if (t.cc_major == traits.cc_major) best = &t;
  const double clock = traits.sm_clock_khz > 0 ? traits.sm_clock_khz : best->sm_clock_khz;
  const double scale =
      (double(traits.sm_count) * clock) / (double(best->sm_count) * best->sm_clock_khz);
  DepthModel m = model_from_table(*best, traits, scale, ModelSource::Scaled);
  m.description = std::string("scaled from ") + best->description;
  return m;
}

// ---- calibration files ---------------------------------------------------

namespace {

constexpr const char *kCalibrationMagic = "xngemm-calibration 1";

std::uint64_t fnv1a(const std::string &s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Numbers in the files are written and read in the classic ("C") locale,
// whatever the program's LC_NUMERIC: a file written under a decimal comma
// must read back the same everywhere.
std::ostringstream classic_out() {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o.precision(6);
  return o;
}

// Every number of `text`, which must hold nothing else (and at least one).
bool read_numbers(const std::string &text, std::vector<double> *out) {
  std::istringstream in(text);
  in.imbue(std::locale::classic());
  double x;
  while (in >> x) out->push_back(x);
  return !out->empty() && in.eof();
}

}  // namespace

std::string format_calibration(const DeviceTraits &traits, const char *library_version,
                               const DepthModel &model) {
  std::ostringstream o = classic_out();
  o << kCalibrationMagic << "\n";
  o << "library " << library_version << "\n";
  o << "device " << traits.name << "\n";
  o << "uuid " << traits.uuid << "\n";
  o << "driver " << traits.driver_version << "\n";
  o << "cublas " << traits.blas_version << "\n";
  o << "elementwise_bytes_per_s " << model.elementwise_bytes_per_s << "\n";
  o << "leaf_first " << model.rates[0].first << "\n";
  o << "leaf_step " << model.rates[0].step << "\n";
  for (int p = 0; p < 2; ++p) {
    o << (p ? "double" : "single");
    for (double v : model.rates[p].tflops) o << ' ' << v;
    o << "\n";
  }
  const std::string body = o.str();
  char buf[40];
  std::snprintf(buf, sizeof buf, "checksum %016" PRIx64 "\n", fnv1a(body));
  return body + buf;
}

bool parse_calibration(const std::string &text, const DeviceTraits &traits,
                       const char *library_version, DepthModel *model,
                       std::string *problem) {
  // The checksum is the last line, and nothing follows it.
  const std::size_t cpos = text.rfind("checksum ");
  const std::string magic_line = std::string(kCalibrationMagic) + "\n";
  if (text.compare(0, magic_line.size(), magic_line) != 0 || cpos == std::string::npos ||
      text[cpos - 1] != '\n' || text.size() != cpos + 9 + 16 + 1 || text.back() != '\n') {
    *problem = "is not an xNGEMM calibration file";
    return false;
  }
  const std::string body = text.substr(0, cpos);
  char want[24];
  std::snprintf(want, sizeof want, "%016" PRIx64, fnv1a(body));
  if (text.compare(cpos + 9, 16, want) != 0) {
    *problem = "is damaged (its checksum does not match)";
    return false;
  }
  std::istringstream in(body);
  std::string line;
  std::getline(in, line);  // magic
  DepthModel m;
  m.source = ModelSource::Calibrated;
  std::string library, device, uuid;
  std::vector<double> driver, blas, bandwidth, first, step;
  bool numbers_ok = true;
  while (std::getline(in, line)) {
    const std::size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp),
                      value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "library") library = value;
    else if (key == "device") device = value;
    else if (key == "uuid") uuid = value;
    else if (key == "driver") numbers_ok &= read_numbers(value, &driver);
    else if (key == "cublas") numbers_ok &= read_numbers(value, &blas);
    else if (key == "elementwise_bytes_per_s") numbers_ok &= read_numbers(value, &bandwidth);
    else if (key == "leaf_first") numbers_ok &= read_numbers(value, &first);
    else if (key == "leaf_step") numbers_ok &= read_numbers(value, &step);
    else if (key == "single" || key == "double")
      numbers_ok &= read_numbers(value, &m.rates[key == "double"].tflops);
  }
  if (!numbers_ok || driver.size() != 1 || blas.size() != 1 || bandwidth.size() != 1 ||
      first.size() != 1 || step.size() != 1) {
    *problem = "has a malformed line";
    return false;
  }
  auto mismatch = [&](const char *what, const std::string &file, const std::string &here) {
    *problem = std::string("was made with ") + what + " " + file + ", this is " + here;
    return false;
  };
  if (uuid != traits.uuid) return mismatch("device", uuid, traits.uuid);
  if (driver[0] != traits.driver_version)
    return mismatch("driver", std::to_string((long long)driver[0]),
                    std::to_string(traits.driver_version));
  if (blas[0] != traits.blas_version)
    return mismatch("cuBLAS", std::to_string((long long)blas[0]),
                    std::to_string(traits.blas_version));
  if (library != library_version) return mismatch("xNGEMM", library, library_version);
  // The library's own grid, positive figures.
  m.elementwise_bytes_per_s = bandwidth[0];
  auto positive = [](const std::vector<double> &v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  const bool sane = m.elementwise_bytes_per_s > 0 && first[0] == double(kLeafGridFirst) &&
                    step[0] == double(kLeafGridStep) &&
                    m.rates[0].tflops.size() == std::size_t(kLeafGridCount) &&
                    m.rates[1].tflops.size() == std::size_t(kLeafGridCount) &&
                    positive(m.rates[0].tflops) && positive(m.rates[1].tflops);
  if (!sane) {
    *problem = "has missing, non-positive or off-grid figures";
    return false;
  }
  for (LeafRates &r : m.rates) {
    r.first = kLeafGridFirst;
    r.step = kLeafGridStep;
  }
  m.description = "calibrated on this device (" + device + ")";
  *model = m;
  return true;
}

}  // namespace xn
