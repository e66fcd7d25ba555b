// xnbench.cpp - the project's command-line benchmark: speed and accuracy of
// xNGEMM's routines against the vendor GEMM, measured in the same run.
//
//   xnbench gemm [options]   a table of cases (see --help, docs/xnbench.md)
//   xnbench demo             a short comparison, under a minute on a small CPU
//
// The runners (bench_gpu.cu, bench_cpu.cpp) do the work; this file parses the
// command line, builds the list of cases, prints the table and progress, and
// writes the CSV and JSON records.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "xngemm.h"

namespace xnb {
namespace {

const char *kUsage =
    R"(xnbench - speed and accuracy of xNGEMM against the vendor GEMM, same run

usage:
  xnbench gemm [options]    time and check a list of GEMM cases, print a table
  xnbench demo [options]    a short comparison (under a minute on a 2-core CPU)
  xnbench --help | --version

Each case computes C = op(A) op(B) (alpha = 1, beta = 0, column-major, no
padding) with our routine and with the baseline on the same inputs:
  GPU: xnDngemm / xnSngemm   vs cublasDgemm / cublasSgemm (same handle, stream)
  CPU: cblas_dngemm / cblas_sngemm (XN_DEVICE=cpu) vs OpenBLAS cblas_dgemm / _sgemm

gemm options:
  --routine ngemm          routine to measure (ngemm is the only one so far)
  --prec d|s|both          precision (default both)
  --sizes LIST             square sizes n (m = n = k): comma-separated items,
                           each N or FIRST:LAST[:STEP] (LAST included), e.g.
                           1024,2048,4096 or 1024:32768:1024
  --shape MxNxK[,...]      explicit shapes: C is M x N, the inner dimension is K
                           (repeatable; combines with --sizes)
  --trans LIST             comma-separated NN,TN,NT,TT: op(A) then op(B) (default NN)
  --dist u01|upm1          inputs uniform in [0,1) (default) or in [-1,1)
                           (upm1 breaks the non-negative contract on purpose)
  --reps N                 timed calls per routine (default: automatic, 3..25,
                           so that the timed calls take about --time-budget)
  --time-budget S          seconds of timed calls per case for automatic reps (default 1)
  --warmup N               untimed calls per routine before timing (default 1;
                           the accuracy call comes before them and is never timed)
  --levels L               XN_OPT_MAX_LEVELS, upper bound on recursion depth
  --leaf N                 XN_OPT_LEAF_SIZE_D and _S: recursion continues while
                           the two largest dimensions stay at least N (the
                           smallest N/2); also sets --min-size 0 unless given
  --min-size N             XN_OPT_MIN_SIZE_D and _S: no recursion for
                           (m n k)^(1/3) < N (the crossover; 0 = none)
  --ref-samples N|all      entries compared with the reference when the product
                           is large (default 512; small products: all entries)
  --device gpu|cpu|auto    where to run (default auto: the GPU if there is one)
  --cpu-leaf openblas|preload
                           CPU only. preload: compare the recursion over the
                           library's preload-loop leaf (one running sum along k
                           per entry, the order of a GPU GEMM) with that loop
                           alone, to show the accuracy effect on a CPU
  --seed S                 base seed of the inputs (default: fresh, printed)
  --csv FILE               one record per case (written as cases finish)
  --json FILE              the same records as JSON (rewritten after each case)
  --no-baseline            run our routine only
  --quiet                  no progress lines on stderr

Columns: shape (m x n x k), trans, prec; lvl = recursion levels run; ws_MiB =
workspace; ours_ms / base_ms = median time per call; ours_TF / base_TF =
2mnk / time in TFLOP/s; speedup = base_ms / ours_ms; maxrel / meanrel =
max / mean of |c - ref| / |ref| (ref != 0), maxabs = max |c - ref| over the
checked entries; acc_gain = base maxrel / ours maxrel; ref = all (every entry)
or the number of sampled entries. The reference is a double-double dot product
(error ~ k 2^-104) per checked entry.

Exit status: 0 all cases ran (skipped ones included), 1 a result had NaN/Inf
or a CUDA/cuBLAS/xNGEMM call failed, 2 bad command line.
)";

// ------------------------------------------------------------------ helpers

[[noreturn]] void usage_error(const std::string &msg) {
  std::fprintf(stderr, "xnbench: %s\n(see xnbench --help)\n", msg.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

long long parse_int(const std::string &s, const char *what, long long lo, long long hi) {
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || !end || *end != '\0' || v < lo || v > hi)
    usage_error(std::string("bad ") + what + " '" + s + "' (expected an integer in [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return v;
}

double parse_double(const std::string &s, const char *what) {
  char *end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end != '\0' || !(v > 0) || !std::isfinite(v))
    usage_error(std::string("bad ") + what + " '" + s + "'");
  return v;
}

struct Shape {
  long long m, n, k;
};

void parse_sizes(const std::string &arg, std::vector<Shape> *out) {
  for (const std::string &item : split(arg, ',')) {
    const std::vector<std::string> p = split(item, ':');
    if (p.size() == 1) {
      const long long n = parse_int(p[0], "size", 1, INT_MAX);
      out->push_back({n, n, n});
    } else if (p.size() == 2 || p.size() == 3) {
      const long long a = parse_int(p[0], "size", 1, INT_MAX);
      const long long b = parse_int(p[1], "size", 1, INT_MAX);
      const long long step = p.size() == 3 ? parse_int(p[2], "step", 1, INT_MAX) : a;
      if (b < a) usage_error("size range '" + item + "' is empty");
      for (long long n = a; n <= b; n += step) out->push_back({n, n, n});
    } else {
      usage_error("bad size item '" + item + "'");
    }
  }
}

void parse_shapes(const std::string &arg, std::vector<Shape> *out) {
  for (const std::string &item : split(arg, ',')) {
    std::string t = item;
    std::replace(t.begin(), t.end(), 'X', 'x');
    const std::vector<std::string> p = split(t, 'x');
    if (p.size() != 3) usage_error("bad shape '" + item + "' (expected MxNxK)");
    out->push_back({parse_int(p[0], "M", 1, INT_MAX), parse_int(p[1], "N", 1, INT_MAX),
                    parse_int(p[2], "K", 1, INT_MAX)});
  }
}

std::string shape_str(long long m, long long n, long long k) {
  if (m == n && n == k) return std::to_string(m) + "^3";
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string trans_str(bool ta, bool tb) {
  return std::string(ta ? "T" : "N") + (tb ? "T" : "N");
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  return mix64((std::uint64_t(rd()) << 32) ^ rd() ^ std::uint64_t(t));
}

std::string version_str() {
  return std::to_string(XNGEMM_VERSION_MAJOR) + "." +
         std::to_string(XNGEMM_VERSION_MINOR) + "." +
         std::to_string(XNGEMM_VERSION_PATCH);
}

// %.*g of a finite number, else "nan"/"inf" (table) or "" / null (files).
std::string num(double v, const char *fmt) {
  if (!std::isfinite(v)) return std::isnan(v) ? "-" : (v > 0 ? "inf" : "-inf");
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}
std::string file_num(double v) {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
std::string json_num(double v) {
  const std::string s = file_num(v);
  return s.empty() ? "null" : s;
}
std::string json_str(const std::string &s) {
  std::string o = "\"";
  for (const char ch : s) {
    switch (ch) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", ch);
          o += b;
        } else {
          o += ch;
        }
    }
  }
  return o + "\"";
}
std::string csv_str(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (const char ch : s) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return o + "\"";
}

// ------------------------------------------------------------------ options

struct Options {
  std::string command;
  std::string routine = "ngemm";
  std::vector<char> precs{'d', 's'};
  std::vector<Shape> shapes;
  std::vector<std::pair<bool, bool>> trans{{false, false}};
  Dist dist = Dist::U01;
  int reps = 0;
  double time_budget = 1.0;
  int warmup = 1;
  int levels = -1;
  long long leaf = -1;
  long long min_size = -1;
  long long ref_samples = 512;
  std::string device = "auto";
  CpuLeafKind cpu_leaf = CpuLeafKind::OpenBlas;
  bool seed_given = false;
  std::uint64_t seed = 0;
  std::string csv, json;
  bool baseline = true;
  bool quiet = false;
};

Options parse_args(int argc, char **argv) {
  Options o;
  if (argc < 2) usage_error("missing command (gemm or demo)");
  o.command = argv[1];
  if (o.command == "--help" || o.command == "-h" || o.command == "help") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  if (o.command == "--version") {
    std::printf("xnbench %s\n", version_str().c_str());
    std::exit(0);
  }
  if (o.command != "gemm" && o.command != "demo")
    usage_error("unknown command '" + o.command + "'");
  const bool demo = o.command == "demo";
  for (int i = 2; i < argc; ++i) {
    std::string key = argv[i], val;
    bool has_val = false;
    const auto eq = key.find('=');
    if (key.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = key.substr(eq + 1);
      key = key.substr(0, eq);
      has_val = true;
    }
    auto value = [&]() -> std::string {
      if (has_val) return val;
      if (i + 1 >= argc) usage_error("option " + key + " needs a value");
      return argv[++i];
    };
    auto flag = [&] {
      if (has_val) usage_error("option " + key + " takes no value");
    };
    // Options the demo accepts too.
    if (key == "--help" || key == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (key == "--device") {
      o.device = value();
      if (o.device != "gpu" && o.device != "cpu" && o.device != "auto")
        usage_error("--device must be gpu, cpu or auto");
    } else if (key == "--seed") {
      o.seed = std::uint64_t(parse_int(value(), "seed", 0, LLONG_MAX));
      o.seed_given = true;
    } else if (key == "--csv") {
      o.csv = value();
    } else if (key == "--json") {
      o.json = value();
    } else if (key == "--quiet") {
      flag();
      o.quiet = true;
    } else if (demo) {
      usage_error("demo takes only --device, --seed, --csv, --json, --quiet");
    } else if (key == "--routine") {
      o.routine = value();
      if (o.routine != "ngemm")
        usage_error("unknown routine '" + o.routine + "' (known: ngemm)");
    } else if (key == "--prec") {
      const std::string p = value();
      if (p == "d")
        o.precs = {'d'};
      else if (p == "s")
        o.precs = {'s'};
      else if (p == "both")
        o.precs = {'d', 's'};
      else
        usage_error("--prec must be d, s or both");
    } else if (key == "--sizes") {
      parse_sizes(value(), &o.shapes);
    } else if (key == "--shape") {
      parse_shapes(value(), &o.shapes);
    } else if (key == "--trans") {
      o.trans.clear();
      for (std::string t : split(value(), ',')) {
        for (char &ch : t) ch = char(std::toupper(static_cast<unsigned char>(ch)));
        if (t.size() != 2 || (t[0] != 'N' && t[0] != 'T') || (t[1] != 'N' && t[1] != 'T'))
          usage_error("bad transpose pair '" + t + "' (NN, TN, NT or TT)");
        o.trans.push_back({t[0] == 'T', t[1] == 'T'});
      }
      if (o.trans.empty()) usage_error("--trans is empty");
    } else if (key == "--dist") {
      const std::string d = value();
      if (d == "u01")
        o.dist = Dist::U01;
      else if (d == "upm1")
        o.dist = Dist::Upm1;
      else
        usage_error("--dist must be u01 or upm1");
    } else if (key == "--reps") {
      o.reps = int(parse_int(value(), "reps", 1, 100000));
    } else if (key == "--time-budget") {
      o.time_budget = parse_double(value(), "time budget");
    } else if (key == "--warmup") {
      o.warmup = int(parse_int(value(), "warmup", 0, 100000));
    } else if (key == "--levels") {
      o.levels = int(parse_int(value(), "levels", 0, 30));
    } else if (key == "--leaf") {
      o.leaf = parse_int(value(), "leaf", 1, INT_MAX);
    } else if (key == "--min-size") {
      o.min_size = parse_int(value(), "min-size", 0, INT_MAX);
    } else if (key == "--ref-samples") {
      const std::string v = value();
      o.ref_samples = v == "all" ? 0 : parse_int(v, "ref-samples", 1, LLONG_MAX);
    } else if (key == "--cpu-leaf") {
      const std::string v = value();
      if (v == "openblas")
        o.cpu_leaf = CpuLeafKind::OpenBlas;
      else if (v == "preload")
        o.cpu_leaf = CpuLeafKind::Preload;
      else
        usage_error("--cpu-leaf must be openblas or preload");
    } else if (key == "--no-baseline") {
      flag();
      o.baseline = false;
    } else {
      usage_error("unknown option '" + key + "'");
    }
  }
  return o;
}

// ------------------------------------------------------------------ output

struct Section {
  std::string title;
  std::vector<CaseSpec> cases;
};

class Reporter {
 public:
  Reporter(const Options &o, Runner &runner, std::uint64_t seed)
      : o_(o), runner_(runner), seed_(seed) {
    if (!o.csv.empty()) {
      csv_.open(o.csv);
      if (!csv_) usage_error("cannot write " + o.csv);
      csv_ << "date,device,xngemm_version,routine,ours,baseline,prec,trans,m,n,k,"
              "dist,seed,status,message,levels,leaf,max_levels,ws_bytes,"
              "ws_held_bytes,reps,warmup,ours_ms,base_ms,ours_min_ms,base_min_ms,"
              "ours_tflops,base_tflops,speedup,ours_max_rel,ours_mean_rel,"
              "ours_max_abs,ours_nonfinite,base_max_rel,base_mean_rel,"
              "base_max_abs,base_nonfinite,acc_gain,ref_mode,ref_entries,"
              "ref_zero\n";
      csv_.flush();
    }
    if (!o.json.empty()) write_json();  // fail early on a bad path
  }

  void table_header() const {
    std::printf(
        "%-4s %-5s %-18s %3s %9s %10s %10s %8s %8s %7s | %11s %11s %11s | "
        "%11s %11s %11s | %8s %5s\n",
        "prec", "trans", "m x n x k", "lvl", "ws_MiB", "ours_ms", "base_ms", "ours_TF",
        "base_TF", "speedup", "ours_maxrel", "ours_meanrel", "ours_maxabs", "base_maxrel",
        "base_meanrel", "base_maxabs", "acc_gain", "ref");
    std::fflush(stdout);
  }

  void row(const CaseSpec &c, const CaseResult &r) {
    const std::string shape = shape_str(c.m, c.n, c.k);
    const std::string tr = trans_str(c.ta, c.tb);
    if (r.status == "skipped" || (r.status == "error" && !std::isfinite(r.t_ours))) {
      std::printf("%-4c %-5s %-18s %s: %s\n", c.prec, tr.c_str(), shape.c_str(),
                  r.status == "skipped" ? "skipped" : "ERROR", r.message.c_str());
    } else {
      const double flops = 2.0 * double(c.m) * double(c.n) * double(c.k);
      const double tf_o = flops / r.t_ours * 1e-12, tf_b = flops / r.t_base * 1e-12;
      const std::string ref = r.ref_full ? "all" : std::to_string(r.ref_entries);
      std::printf(
          "%-4c %-5s %-18s %3d %9.1f %10.4g %10s %8.4g %8s %7s | %11s %11s %11s | "
          "%11s %11s %11s | %8s %5s",
          c.prec, tr.c_str(), shape.c_str(), r.levels,
          double(r.ws_bytes) / double(1 << 20), r.t_ours * 1e3,
          num(r.t_base * 1e3, "%.4g").c_str(), tf_o, num(tf_b, "%.4g").c_str(),
          num(r.t_base / r.t_ours, "%.3fx").c_str(), num(r.ours.max_rel, "%.2e").c_str(),
          num(r.ours.mean_rel, "%.2e").c_str(), num(r.ours.max_abs, "%.2e").c_str(),
          num(r.base.max_rel, "%.2e").c_str(), num(r.base.mean_rel, "%.2e").c_str(),
          num(r.base.max_abs, "%.2e").c_str(),
          num(r.base.max_rel / r.ours.max_rel, "%.2f").c_str(), ref.c_str());
      if (r.status == "error")
        std::printf("  ERROR: %s", r.message.c_str());
      else if (!r.message.empty())
        std::printf("  note: %s", r.message.c_str());
      std::printf("\n");
    }
    std::fflush(stdout);
    record(c, r);
  }

 private:
  void record(const CaseSpec &c, const CaseResult &r) {
    const double flops = 2.0 * double(c.m) * double(c.n) * double(c.k);
    const std::string date = utc_now();
    const std::string dev = runner_.device_name();
    const std::string ours = runner_.ours_name(c),
                      base = c.baseline ? runner_.base_name(c) : "";
    const std::string prec(1, c.prec), tr = trans_str(c.ta, c.tb);
    const double tf_o = flops / r.t_ours * 1e-12, tf_b = flops / r.t_base * 1e-12;
    const double speedup = r.t_base / r.t_ours;
    const double gain = r.base.max_rel / r.ours.max_rel;
    const bool ran = std::isfinite(r.t_ours);
    const std::string ref_mode = ran ? (r.ref_full ? "all" : "sampled") : "";
    if (csv_.is_open()) {
      std::ostringstream l;
      l << date << ',' << csv_str(dev) << ',' << version_str() << ',' << o_.routine << ','
        << csv_str(ours) << ',' << csv_str(base) << ',' << prec << ',' << tr << ',' << c.m
        << ',' << c.n << ',' << c.k << ',' << dist_name(c.dist) << ',' << c.seed << ','
        << r.status << ',' << csv_str(r.message) << ','
        << (ran ? std::to_string(r.levels) : "") << ','
        << (r.leaf > 0 ? std::to_string(r.leaf) : "") << ','
        << (r.max_levels >= 0 ? std::to_string(r.max_levels) : "") << ','
        << (ran ? std::to_string(r.ws_bytes) : "") << ','
        << (ran ? std::to_string(r.ws_held) : "") << ','
        << (ran ? std::to_string(r.reps) : "") << ','
        << (ran ? std::to_string(r.warmup) : "") << ',' << file_num(r.t_ours * 1e3) << ','
        << file_num(r.t_base * 1e3) << ',' << file_num(r.t_ours_min * 1e3) << ','
        << file_num(r.t_base_min * 1e3) << ',' << file_num(tf_o) << ',' << file_num(tf_b)
        << ',' << file_num(speedup) << ',' << file_num(r.ours.max_rel) << ','
        << file_num(r.ours.mean_rel) << ',' << file_num(r.ours.max_abs) << ','
        << (ran ? std::to_string(r.ours.nonfinite) : "") << ','
        << file_num(r.base.max_rel) << ',' << file_num(r.base.mean_rel) << ','
        << file_num(r.base.max_abs) << ','
        << (ran && c.baseline ? std::to_string(r.base.nonfinite) : "") << ','
        << file_num(gain) << ',' << ref_mode << ','
        << (ran ? std::to_string(r.ref_entries) : "") << ','
        << (ran ? std::to_string(r.ours.zero_ref) : "") << '\n';
      csv_ << l.str();
      csv_.flush();
    }
    if (!o_.json.empty()) {
      std::ostringstream j;
      auto opt_int = [&](bool have, long long v) {
        return have ? std::to_string(v) : std::string("null");
      };
      j << "    {\"date\": " << json_str(date) << ", \"device\": " << json_str(dev)
        << ", \"xngemm_version\": " << json_str(version_str())
        << ", \"routine\": " << json_str(o_.routine) << ", \"ours\": " << json_str(ours)
        << ", \"baseline\": " << (c.baseline ? json_str(base) : "null")
        << ", \"prec\": " << json_str(prec) << ", \"trans\": " << json_str(tr)
        << ", \"m\": " << c.m << ", \"n\": " << c.n << ", \"k\": " << c.k
        << ", \"dist\": " << json_str(dist_name(c.dist)) << ", \"seed\": " << c.seed
        << ", \"status\": " << json_str(r.status)
        << ", \"message\": " << json_str(r.message)
        << ", \"levels\": " << opt_int(ran, r.levels)
        << ", \"leaf\": " << opt_int(r.leaf > 0, r.leaf)
        << ", \"max_levels\": " << opt_int(r.max_levels >= 0, r.max_levels)
        << ", \"ws_bytes\": " << opt_int(ran, (long long)r.ws_bytes)
        << ", \"ws_held_bytes\": " << opt_int(ran, (long long)r.ws_held)
        << ", \"reps\": " << opt_int(ran, r.reps)
        << ", \"warmup\": " << opt_int(ran, r.warmup)
        << ", \"ours_ms\": " << json_num(r.t_ours * 1e3)
        << ", \"base_ms\": " << json_num(r.t_base * 1e3)
        << ", \"ours_min_ms\": " << json_num(r.t_ours_min * 1e3)
        << ", \"base_min_ms\": " << json_num(r.t_base_min * 1e3)
        << ", \"ours_tflops\": " << json_num(tf_o)
        << ", \"base_tflops\": " << json_num(tf_b)
        << ", \"speedup\": " << json_num(speedup)
        << ", \"ours_max_rel\": " << json_num(r.ours.max_rel)
        << ", \"ours_mean_rel\": " << json_num(r.ours.mean_rel)
        << ", \"ours_max_abs\": " << json_num(r.ours.max_abs)
        << ", \"ours_nonfinite\": " << opt_int(ran, r.ours.nonfinite)
        << ", \"base_max_rel\": " << json_num(r.base.max_rel)
        << ", \"base_mean_rel\": " << json_num(r.base.mean_rel)
        << ", \"base_max_abs\": " << json_num(r.base.max_abs)
        << ", \"base_nonfinite\": " << opt_int(ran && c.baseline, r.base.nonfinite)
        << ", \"acc_gain\": " << json_num(gain)
        << ", \"ref_mode\": " << (ran ? json_str(ref_mode) : "null")
        << ", \"ref_entries\": " << opt_int(ran, r.ref_entries)
        << ", \"ref_zero\": " << opt_int(ran, r.ours.zero_ref) << "}";
      json_records_.push_back(j.str());
      write_json();
    }
  }

  void write_json() const {
    const std::string tmp = o_.json + ".tmp";
    {
      std::ofstream f(tmp);
      if (!f) usage_error("cannot write " + o_.json);
      f << "{\n  \"tool\": \"xnbench\",\n  \"xngemm_version\": "
        << json_str(version_str()) << ",\n  \"version_major\": " << XNGEMM_VERSION_MAJOR
        << ",\n  \"version_minor\": " << XNGEMM_VERSION_MINOR
        << ",\n  \"version_patch\": " << XNGEMM_VERSION_PATCH
        << ",\n  \"command\": " << json_str(o_.command)
        << ",\n  \"device\": " << json_str(runner_.device_name())
        << ",\n  \"base_seed\": " << seed_ << ",\n  \"records\": [\n";
      for (std::size_t i = 0; i < json_records_.size(); ++i)
        f << json_records_[i] << (i + 1 < json_records_.size() ? ",\n" : "\n");
      f << "  ]\n}\n";
    }
    if (std::rename(tmp.c_str(), o_.json.c_str()) != 0)
      std::fprintf(stderr, "xnbench: cannot write %s\n", o_.json.c_str());
  }

  const Options &o_;
  Runner &runner_;
  std::uint64_t seed_;
  std::ofstream csv_;
  std::vector<std::string> json_records_;
};

CaseSpec base_spec(const Options &o) {
  CaseSpec c;
  c.dist = o.dist;
  c.reps = o.reps;
  c.time_budget = o.time_budget;
  c.warmup = o.warmup;
  c.levels = o.levels;
  c.leaf = o.leaf;
  c.min_size = o.min_size;
  c.ref_samples = o.ref_samples;
  c.baseline = o.baseline;
  c.cpu_leaf = o.cpu_leaf;
  return c;
}

std::vector<Section> gemm_sections(const Options &o, bool gpu) {
  std::vector<Shape> shapes = o.shapes;
  if (shapes.empty()) {
    for (long long n : gpu ? std::vector<long long>{1024, 2048, 4096, 8192, 16384}
                           : std::vector<long long>{256, 512, 1024})
      shapes.push_back({n, n, n});
  }
  Section s;
  for (char p : o.precs)
    for (const Shape &sh : shapes)
      for (const auto &t : o.trans) {
        CaseSpec c = base_spec(o);
        c.prec = p;
        c.m = sh.m;
        c.n = sh.n;
        c.k = sh.k;
        c.ta = t.first;
        c.tb = t.second;
        s.cases.push_back(c);
      }
  return {s};
}

std::vector<Section> demo_sections(const Options &o, bool gpu) {
  std::vector<Section> out;
  auto square = [&](char p, long long n, long long leaf, CpuLeafKind kind,
                    double budget) {
    CaseSpec c = base_spec(o);
    c.prec = p;
    c.m = c.n = c.k = n;
    c.leaf = leaf;
    c.min_size = leaf > 0 ? 0 : -1;
    c.cpu_leaf = kind;
    c.time_budget = budget;
    return c;
  };
  if (gpu) {
    Section a{"xnDngemm/xnSngemm vs cublasDgemm/cublasSgemm, library defaults", {}};
    for (char p : {'d', 's'})
      for (long long n : {4096, 8192, 16384})
        a.cases.push_back(square(p, n, -1, CpuLeafKind::OpenBlas, 1.0));
    Section b{"the same with leaf 1024, so the recursion runs at moderate sizes", {}};
    for (char p : {'d', 's'})
      for (long long n : {4096, 8192})
        b.cases.push_back(square(p, n, 1024, CpuLeafKind::OpenBlas, 1.0));
    out.push_back(a);
    out.push_back(b);
  } else {
    Section a{
        "cblas_dngemm/cblas_sngemm (Winograd over OpenBLAS leaves, leaf 128) vs "
        "OpenBLAS cblas_dgemm/cblas_sgemm",
        {}};
    for (char p : {'d', 's'})
      for (long long n : {256, 512, 1024})
        a.cases.push_back(square(p, n, 128, CpuLeafKind::OpenBlas, 0.5));
    Section b{
        "GPU accumulation order emulated on the CPU: Winograd over the preload-loop "
        "leaf (leaf 32) vs the preload loop alone (an accuracy comparison: the loop "
        "is naive, so its times say little)",
        {}};
    for (char p : {'d', 's'})
      for (long long n : {256, 512})
        b.cases.push_back(square(p, n, 32, CpuLeafKind::Preload, 0.3));
    out.push_back(a);
    out.push_back(b);
  }
  return out;
}

}  // namespace
}  // namespace xnb

int main(int argc, char **argv) {
  using namespace xnb;
  const Options o = parse_args(argc, argv);

  // The processor.
  const bool want_cpu = o.device == "cpu" || o.cpu_leaf == CpuLeafKind::Preload ||
                        (o.device == "auto" && cuda_device_count() == 0);
  // The library's CPU backend runs its elementwise loops with OpenMP, whose
  // threads by default spin after each parallel region and take the cores
  // from OpenBLAS's own threads (both routines then time badly and noisily).
  // The wait policy is read once at program start: restart with "passive"
  // unless the user chose a policy.
  if (want_cpu && !std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("XNBENCH_SET_OMP_WAIT_POLICY", "1", 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr,
                 "xnbench: could not restart with OMP_WAIT_POLICY=passive; "
                 "CPU timings may suffer\n");
  }
  std::unique_ptr<Runner> runner;
  if (o.device == "gpu" && o.cpu_leaf == CpuLeafKind::Preload)
    usage_error("--cpu-leaf preload needs --device cpu");
  if (o.device == "gpu" || (o.device == "auto" && o.cpu_leaf == CpuLeafKind::OpenBlas &&
                            cuda_device_count() > 0)) {
    std::string why;
    runner = make_gpu_runner(&why);
    if (!runner) {
      std::fprintf(stderr, "xnbench: cannot use the GPU: %s\n", why.c_str());
      if (o.device == "gpu") return 1;
    }
  }
  if (!runner) runner = make_cpu_runner();
  const bool gpu = runner->is_gpu();

  const std::uint64_t seed = o.seed_given ? o.seed : fresh_seed();
  std::vector<Section> sections =
      o.command == "demo" ? demo_sections(o, gpu) : gemm_sections(o, gpu);
  std::size_t total = 0, index = 0;
  for (Section &s : sections)
    for (CaseSpec &c : s.cases) c.seed = seed + 0x9E3779B97F4A7C15ull * ++total;

  std::int64_t leaf_d = 0, leaf_s = 0, levels = 0;
  xnGetOption(nullptr, XN_OPT_LEAF_SIZE_D, &leaf_d);
  xnGetOption(nullptr, XN_OPT_LEAF_SIZE_S, &leaf_s);
  xnGetOption(nullptr, XN_OPT_MAX_LEVELS, &levels);
  std::printf("xnbench %s (xNGEMM %d.%d.%d), %s, %s\n", version_str().c_str(),
              XNGEMM_VERSION_MAJOR, XNGEMM_VERSION_MINOR, XNGEMM_VERSION_PATCH,
              o.command.c_str(), utc_now().c_str());
  std::printf("%s", runner->describe().c_str());
  if (!gpu) {
    const char *pol = std::getenv("OMP_WAIT_POLICY");
    std::printf("OMP_WAIT_POLICY=%s%s\n", pol ? pol : "(unset)",
                std::getenv("XNBENCH_SET_OMP_WAIT_POLICY")
                    ? " (set by xnbench; export OMP_WAIT_POLICY to choose)"
                    : "");
  }
  std::printf(
      "library defaults: leaf d=%lld s=%lld, max levels %lld (XN_* environment "
      "applied)%s%s\n",
      (long long)leaf_d, (long long)leaf_s, (long long)levels,
      o.leaf > 0 ? ("; --leaf " + std::to_string(o.leaf)).c_str() : "",
      o.levels >= 0 ? ("; --levels " + std::to_string(o.levels)).c_str() : "");
  std::printf("inputs: %s, base seed %llu (replay with --seed %llu)\n",
              o.dist == Dist::U01 ? "uniform [0,1)" : "uniform [-1,1)",
              (unsigned long long)seed, (unsigned long long)seed);
  std::printf(
      "timing: %s around each call; accuracy call first (C poisoned with NaN), "
      "%d warm-up call(s), then %s timed calls of each routine, interleaved; "
      "median reported\n",
      gpu ? "CUDA events" : "steady_clock", o.warmup,
      o.reps > 0 ? std::to_string(o.reps).c_str() : "3..25 (automatic)");
  std::printf(
      "reference: double-double dot products (kernels/dd_reference.h) on %s, "
      "every entry when %s, else %s random entries\n",
      gpu ? "the GPU" : "the CPU", gpu ? "m*n <= 2^20" : "m*n*k <= 2^27",
      o.ref_samples > 0 ? std::to_string(o.ref_samples).c_str() : "(all)");

  Reporter rep(o, *runner, seed);
  bool failed = false, fatal = false;
  const auto t_start = std::chrono::steady_clock::now();
  for (const Section &s : sections) {
    if (fatal) break;
    std::printf("\n");
    if (!s.title.empty()) std::printf("== %s\n", s.title.c_str());
    if (!s.cases.empty()) {
      const CaseSpec &c0 = s.cases.front();
      std::printf("ours: %s; baseline: %s\n", runner->ours_name(c0).c_str(),
                  c0.baseline ? runner->base_name(c0).c_str() : "(none)");
    }
    rep.table_header();
    for (const CaseSpec &c : s.cases) {
      ++index;
      if (!o.quiet) {
        const double el =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start)
                .count();
        std::fprintf(stderr, "[%zu/%zu] %c %s %s ... (%.0f s elapsed)\n", index, total,
                     c.prec, trans_str(c.ta, c.tb).c_str(),
                     shape_str(c.m, c.n, c.k).c_str(), el);
      }
      const CaseResult r = runner->run(c);
      rep.row(c, r);
      if (r.status == "error") failed = true;
      if (r.fatal) {
        fatal = true;
        std::fprintf(stderr, "xnbench: the device is unusable, stopping: %s\n",
                     r.message.c_str());
        break;
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::printf("\n%zu case(s) in %.1f s%s\n", index, secs,
              failed ? "; SOME CASES FAILED (see ERROR rows)" : "");
  if (o.command == "demo")
    std::printf(
        "speedup = base_ms / ours_ms (> 1: ours faster); acc_gain = base_maxrel / "
        "ours_maxrel (> 1: ours more accurate)\n");
  return failed ? 1 : 0;
}
