// xnbench.cpp - the project's command-line benchmark: speed and accuracy of
// xNGEMM's routines against the vendor GEMM, measured in the same run.
//
//   xnbench gemm [options]   a table of cases (see --help, docs/xnbench.md)
//   xnbench exdgemm [...]    the same as gemm --routine exdgemm
//   xnbench symv [...]       xnDsymv/xnSsymv vs cuBLAS (bench_symv.cu)
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
#include "bench_symv.h"
#include "xngemm.h"

namespace xnb {
namespace {

const char *kUsage =
    R"(xnbench - speed and accuracy of xNGEMM against the vendor GEMM, same run

usage:
  xnbench gemm [options]    time and check a list of GEMM cases, print a table
  xnbench exdgemm [options] the same as: xnbench gemm --routine exdgemm
  xnbench symv [options]    xnDsymv/xnSsymv vs cublasDsymv/cublasSsymv (GPU only)
  xnbench demo [options]    a short comparison (under a minute on a 2-core CPU)
  xnbench --help | --version

Each case computes C = op(A) op(B) (alpha = 1, beta = 0, column-major, no
padding) with our routine and with the baseline on the same inputs:
  --routine ngemm (default):
    GPU: xnDngemm / xnSngemm   vs cublasDgemm / cublasSgemm (same handle, stream)
    CPU: cblas_dngemm / cblas_sngemm (XN_DEVICE=cpu) vs OpenBLAS cblas_dgemm / _sgemm
  --routine exdgemm (correctly rounded DGEMM, double only):
    GPU: xnExdgemm             vs cublasDgemm (same handle, stream)
    CPU: cblas_exdgemm (XN_DEVICE=cpu) vs OpenBLAS cblas_dgemm

gemm options:
  --routine ngemm|exdgemm  routine to measure (default ngemm)
  --prec d|s|both          precision (default both; exdgemm: d only)
  --sizes LIST             square sizes n (m = n = k): comma-separated items,
                           each N or FIRST:LAST[:STEP] (LAST included), e.g.
                           1024,2048,4096 or 1024:32768:1024
  --shape MxNxK[,...]      explicit shapes: C is M x N, the inner dimension is K
                           (repeatable; combines with --sizes)
  --trans LIST             comma-separated NN,TN,NT,TT: op(A) then op(B) (default NN)
  --dist u01|upm1|phi|illcond
                           inputs uniform in [0,1) (ngemm default) or in [-1,1)
                           (upm1 breaks the non-negative contract on purpose);
                           exdgemm only: phi = (u - 0.5) exp(phi randn) with
                           53-bit u (exdgemm default), illcond = ill-conditioned
                           dot products (condition up to 2^60)
  --phi X                  phi of --dist phi (default 0; implies --dist phi)
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
  --ex-budget BYTES        exdgemm: XN_OPT_EXDGEMM_WORKSPACE_LIMIT (suffix K, M
                           or G allowed; 0 = automatic)
  --ex-block N             exdgemm: XN_OPT_EXDGEMM_BLOCK, the block of C
                           (0 = from the budget)
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

exdgemm columns: s, t = most slices of a row block of op(A) / a column block
of op(B); prods = slice products in units of one m x n x k DGEMM; blocks,
block = blocks of C and their size; ws_MiB = workspace; wide = entries summed
by the wide accumulator; ex_ms / dgemm_ms, ex_TF / dgemm_TF as above; ratio =
ex_ms / dgemm_ms; model = ex_ms / (prods * dgemm_ms) (the cost model: 1 means
exdgemm costs exactly its slice products); model_tr = the same with dgemm_ms
from a train of round(prods) back-to-back DGEMMs (GPU: the rate a DGEMM
sustains over as long as exdgemm's products run); wrong = checked entries differing
from the correctly rounded value (exact MPFR reference: every entry when
m*n <= 4096, else --ref-samples random ones); must be 0 for exdgemm.

symv options (each case: precision, uplo, n, variant; y = alpha A x + beta y
with ours and cuBLAS in both atomics modes, same handle, stream and buffers):
  --prec d|s|both          precision (default both, double first)
  --uplo L|U|both          stored triangle (default both)
  --sizes LIST             orders n: comma-separated N or FIRST:LAST[:STEP], LAST
                           included, STEP defaults to 1 (unlike gemm), e.g.
                           14172:14200 (default 8192,16384,32768)
  --variant IDS|all        XN_OPT_SYMV_VARIANT: one id or a comma list, measured
                           together (0 = built-in default; default: the
                           process default, XN_SYMV_VARIANT); all = sweep
                           every compiled variant and rank them
  --reps R                 timed batches per routine (default 20; median reported)
  --warmup N               untimed batches per routine (default 2)
  --batch B                calls per event pair (default: about 1 ms of ours)
  --lda-pad N              lda = n rounded up to 32, plus N rows (default 0)
  --ref-rows N|all         rows of y checked against the reference (default 256)
  --alpha X, --beta X      scalars (default 1.5, 0.5; beta 0: y starts as NaN)
  --device gpu|auto        gpu: no GPU is an error (status 1); auto: a message
                           and status 0
  --seed S, --csv FILE, --json FILE, --quiet   as for gemm
symv columns: us = median time per call; GF = 2 n^2 / time; TB = stored
triangle n(n+1)/2 sizeof(T) / time in TB/s (ours, cub = cuBLAS default mode,
cubA = atomics allowed, gemv = cublas?gemv on the full n x n array); %copy,
%gemv = ours_TB against the measured device-to-device copy and gemv
bandwidth; spd, spdA = cuBLAS time / ours; err = max |y - ref| / (|alpha| |A|
|x| + |beta| |y0|) over the checked rows (double-double reference); rep, repA
= two calls bitwise identical (ours, cuBLAS atomics). NaN fills the unused
triangle and the padding: a NaN in y is an error. The CSV/JSON records add
read_tbs, the read floor: one streaming-read kernel over the stored
triangle's byte count (what any SYMV of that size needs at least), and
ours_frac_read.

Exit status: 0 all cases ran (skipped ones included), 1 a result had NaN/Inf,
an exdgemm entry was not correctly rounded, or a CUDA/cuBLAS/xNGEMM call
failed, 2 bad command line.
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

// A finite number > 0 (>= 0 with allow_zero).
double parse_double(const std::string &s, const char *what, bool allow_zero = false) {
  char *end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || !end || *end != '\0' || !(allow_zero ? v >= 0 : v > 0) ||
      !std::isfinite(v))
    usage_error(std::string("bad ") + what + " '" + s + "'");
  return v;
}

// A byte count: an integer >= 0 with an optional K, M or G (binary) suffix.
long long parse_bytes(const std::string &s, const char *what) {
  std::string digits = s;
  int shift = 0;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift) digits.pop_back();
  }
  return parse_int(digits, what, 0, LLONG_MAX >> shift) << shift;
}

struct Shape {
  long long m, n, k;
};

// A range's STEP defaults to FIRST (gemm) or to `default_step` when > 0.
void parse_sizes(const std::string &arg, std::vector<Shape> *out,
                 long long default_step = 0) {
  for (const std::string &item : split(arg, ',')) {
    const std::vector<std::string> p = split(item, ':');
    if (p.size() == 1) {
      const long long n = parse_int(p[0], "size", 1, INT_MAX);
      out->push_back({n, n, n});
    } else if (p.size() == 2 || p.size() == 3) {
      const long long a = parse_int(p[0], "size", 1, INT_MAX);
      const long long b = parse_int(p[1], "size", 1, INT_MAX);
      const long long step = p.size() == 3      ? parse_int(p[2], "step", 1, INT_MAX)
                             : default_step > 0 ? default_step
                                                : a;
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
  Routine routine = Routine::Ngemm;
  std::vector<char> precs{'d', 's'};
  bool prec_given = false;
  std::vector<Shape> shapes;
  std::vector<std::pair<bool, bool>> trans{{false, false}};
  Dist dist = Dist::U01;
  bool dist_given = false;
  double phi = 0;
  bool phi_given = false;
  long long ex_budget = -1, ex_block = -1;
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
  SymvOptions symv;  // command "symv"
};

// `xnbench symv` options (argv[2] on), into s.
void parse_symv_args(int argc, char **argv, SymvOptions *s) {
  bool seed_given = false;
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
    // Any finite number (alpha, beta may be zero or negative).
    auto finite = [&](const char *what) {
      const std::string v = value();
      char *end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || !end || *end != '\0' || !std::isfinite(x))
        usage_error(std::string("bad ") + what + " '" + v + "'");
      return x;
    };
    if (key == "--help" || key == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (key == "--prec") {
      const std::string p = value();
      if (p == "d")
        s->precs = {'d'};
      else if (p == "s")
        s->precs = {'s'};
      else if (p == "both")
        s->precs = {'d', 's'};
      else
        usage_error("--prec must be d, s or both");
    } else if (key == "--uplo") {
      const std::string u = value();
      if (u == "L" || u == "l")
        s->uplos = {'L'};
      else if (u == "U" || u == "u")
        s->uplos = {'U'};
      else if (u == "both")
        s->uplos = {'L', 'U'};
      else
        usage_error("--uplo must be L, U or both");
    } else if (key == "--sizes") {
      std::vector<Shape> shapes;
      parse_sizes(value(), &shapes, 1);
      for (const Shape &sh : shapes) s->sizes.push_back(sh.n);
    } else if (key == "--reps") {
      s->reps = int(parse_int(value(), "reps", 1, 100000));
    } else if (key == "--warmup") {
      s->warmup = int(parse_int(value(), "warmup", 0, 100000));
    } else if (key == "--batch") {
      s->batch = int(parse_int(value(), "batch", 1, 100000));
    } else if (key == "--variant") {
      const std::string v = value();
      s->all_variants = v == "all";
      s->variants.clear();
      if (!s->all_variants) {
        for (const std::string &t : split(v, ','))
          s->variants.push_back(int(parse_int(t, "variant", 0, 1000)));
        if (s->variants.empty()) usage_error("--variant: no variant id in '" + v + "'");
      }
    } else if (key == "--lda-pad") {
      s->lda_pad = parse_int(value(), "lda-pad", 0, INT_MAX);
    } else if (key == "--ref-rows") {
      const std::string v = value();
      s->ref_rows = v == "all" ? 0 : parse_int(v, "ref-rows", 1, LLONG_MAX);
    } else if (key == "--alpha") {
      s->alpha = finite("alpha");
    } else if (key == "--beta") {
      s->beta = finite("beta");
    } else if (key == "--device") {
      s->device = value();
      if (s->device == "cpu") usage_error("symv is a GPU routine (--device gpu or auto)");
      if (s->device != "gpu" && s->device != "auto")
        usage_error("--device must be gpu or auto for symv");
    } else if (key == "--seed") {
      s->seed = std::uint64_t(parse_int(value(), "seed", 0, LLONG_MAX));
      seed_given = true;
    } else if (key == "--csv") {
      s->csv = value();
    } else if (key == "--json") {
      s->json = value();
    } else if (key == "--quiet") {
      if (has_val) usage_error("option " + key + " takes no value");
      s->quiet = true;
    } else {
      usage_error("unknown symv option '" + key + "'");
    }
  }
  if (!seed_given) s->seed = fresh_seed();
}

Options parse_args(int argc, char **argv) {
  Options o;
  if (argc < 2) usage_error("missing command (gemm, exdgemm, symv or demo)");
  o.command = argv[1];
  if (o.command == "--help" || o.command == "-h" || o.command == "help") {
    std::fputs(kUsage, stdout);
    std::exit(0);
  }
  if (o.command == "--version") {
    std::printf("xnbench %s\n", version_str().c_str());
    std::exit(0);
  }
  if (o.command == "symv") {  // its own options and runner (bench_symv.cu)
    parse_symv_args(argc, argv, &o.symv);
    return o;
  }
  const bool ex_command = o.command == "exdgemm";
  if (ex_command) {  // shorthand for gemm --routine exdgemm
    o.command = "gemm";
    o.routine = Routine::Exdgemm;
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
      const std::string v = value();
      if (v == "ngemm")
        o.routine = Routine::Ngemm;
      else if (v == "exdgemm")
        o.routine = Routine::Exdgemm;
      else if (v == "symv")
        usage_error("symv has its own command: xnbench symv [options]");
      else
        usage_error("unknown routine '" + v + "' (known: ngemm, exdgemm)");
      if (ex_command && o.routine != Routine::Exdgemm)
        usage_error("xnbench exdgemm runs --routine exdgemm only");
    } else if (key == "--prec") {
      o.prec_given = true;
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
      o.dist_given = true;
      const std::string d = value();
      if (d == "u01")
        o.dist = Dist::U01;
      else if (d == "upm1")
        o.dist = Dist::Upm1;
      else if (d == "phi")
        o.dist = Dist::Phi;
      else if (d == "illcond")
        o.dist = Dist::Illcond;
      else
        usage_error("--dist must be u01, upm1, phi or illcond");
    } else if (key == "--phi") {
      o.phi = parse_double(value(), "phi", true);
      o.phi_given = true;
    } else if (key == "--ex-budget") {
      o.ex_budget = parse_bytes(value(), "ex-budget");
    } else if (key == "--ex-block") {
      o.ex_block = parse_int(value(), "ex-block", 0, INT_MAX);
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
  // Checks across options (any order on the command line).
  if (o.phi_given) {
    if (o.dist_given && o.dist != Dist::Phi) usage_error("--phi needs --dist phi");
    o.dist = Dist::Phi;
  }
  if (o.routine == Routine::Exdgemm) {
    if (!o.dist_given) o.dist = Dist::Phi;
    if (o.prec_given && o.precs != std::vector<char>{'d'})
      usage_error("exdgemm is double precision only (--prec d)");
    o.precs = {'d'};
    if (o.levels >= 0 || o.leaf > 0 || o.min_size >= 0 ||
        o.cpu_leaf != CpuLeafKind::OpenBlas)
      usage_error("--levels, --leaf, --min-size and --cpu-leaf are ngemm options");
  } else if (!demo) {
    if (o.dist == Dist::Phi || o.dist == Dist::Illcond)
      usage_error("--dist phi/illcond and --phi are exdgemm inputs (--routine exdgemm)");
    if (o.ex_budget >= 0 || o.ex_block >= 0)
      usage_error("--ex-budget and --ex-block are exdgemm options (--routine exdgemm)");
  }
  return o;
}

// "u01", "upm1", "phi=1.5", "illcond".
std::string dist_label(const CaseSpec &c) {
  if (c.dist != Dist::Phi) return dist_name(c.dist);
  char b[48];
  std::snprintf(b, sizeof b, "phi=%g", c.phi);
  return b;
}

std::string dist_description(const CaseSpec &c) {
  switch (c.dist) {
    case Dist::U01:
      return "uniform [0,1)";
    case Dist::Upm1:
      return "uniform [-1,1)";
    case Dist::Phi: {
      char b[96];
      std::snprintf(b, sizeof b, "(u - 0.5) exp(%g randn), u uniform [0,1) with 53 bits",
                    c.phi);
      return b;
    }
    case Dist::Illcond:
      return "ill-conditioned dot products (tests/support/exdgemm_inputs.h ex_fill_illcond)";
  }
  return "?";
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
              "ref_zero,phi,ex_max_slices_a,ex_max_slices_b,slice_products,"
              "ex_blocks,ex_block_rows,ex_block_cols,ex_wide_entries,time_ratio,"
              "model_ratio,ours_wrong,base_wrong,base_train_ms,model_train_ratio\n";
      csv_.flush();
    }
    if (!o.json.empty()) write_json();  // fail early on a bad path
  }

  void table_header(Routine routine) const {
    if (routine == Routine::Exdgemm) {
      std::printf(
          "%-5s %-18s %-9s %3s %3s %7s %6s %11s %9s %6s | %10s %10s %7s %8s %7s %7s %8s "
          "| "
          "%8s %10s | %11s %12s | %5s\n",
          "trans", "m x n x k", "dist", "s", "t", "prods", "blocks", "block", "ws_MiB",
          "wide", "ex_ms", "dgemm_ms", "ex_TF", "dgemm_TF", "ratio", "model", "model_tr",
          "ex_wrong", "ex_maxrel", "dgemm_wrong", "dgemm_maxrel", "ref");
      std::fflush(stdout);
      return;
    }
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
    const bool ex = c.routine == Routine::Exdgemm;
    if (r.status == "skipped" || (r.status == "error" && !std::isfinite(r.t_ours))) {
      if (ex)
        std::printf("%-5s %-18s %-9s %s: %s\n", tr.c_str(), shape.c_str(),
                    dist_label(c).c_str(), r.status == "skipped" ? "skipped" : "ERROR",
                    r.message.c_str());
      else
        std::printf("%-4c %-5s %-18s %s: %s\n", c.prec, tr.c_str(), shape.c_str(),
                    r.status == "skipped" ? "skipped" : "ERROR", r.message.c_str());
    } else if (ex) {
      ex_row(c, r, shape, tr);
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

  // Totals over the exdgemm cases run, for the closing summary.
  struct ExTotals {
    std::int64_t cases = 0, checked = 0, ours_wrong = 0, base_wrong = 0, base_checked = 0;
    double max_model = kNaN, max_model_train = kNaN;
  };
  const ExTotals &ex_totals() const { return ex_totals_; }

 private:
  void ex_row(const CaseSpec &c, const CaseResult &r, const std::string &shape,
              const std::string &tr) {
    const double flops = 2.0 * double(c.m) * double(c.n) * double(c.k);
    const double tf_o = flops / r.t_ours * 1e-12, tf_b = flops / r.t_base * 1e-12;
    const double model = r.t_ours / (r.ex.slice_products * r.t_base);
    const double model_tr = r.t_ours / (r.ex.slice_products * r.t_base_train);
    const std::string ref = r.ref_full ? "all" : std::to_string(r.ref_entries);
    const std::string block =
        std::to_string(r.ex.block_rows) + "x" + std::to_string(r.ex.block_cols);
    const std::string wide =
        r.ex.wide_entries >= 0 ? std::to_string(r.ex.wide_entries) : std::string("-");
    std::printf(
        "%-5s %-18s %-9s %3d %3d %7.2f %6lld %11s %9.1f %6s | %10.4g %10s %7.3g %8s %7s "
        "%7s %8s | %8lld %10s | %11s %12s | %5s",
        tr.c_str(), shape.c_str(), dist_label(c).c_str(), r.ex.max_slices_a,
        r.ex.max_slices_b, r.ex.slice_products, (long long)r.ex.blocks, block.c_str(),
        double(r.ex.workspace_bytes) / double(1 << 20), wide.c_str(), r.t_ours * 1e3,
        num(r.t_base * 1e3, "%.4g").c_str(), tf_o, num(tf_b, "%.3g").c_str(),
        num(r.t_ours / r.t_base, "%.2fx").c_str(), num(model, "%.3f").c_str(),
        num(model_tr, "%.3f").c_str(), (long long)r.ours.wrong,
        num(r.ours.max_rel, "%.2e").c_str(),
        c.baseline ? std::to_string(r.base.wrong).c_str() : "-",
        num(r.base.max_rel, "%.2e").c_str(), ref.c_str());
    if (r.status == "error")
      std::printf("  ERROR: %s", r.message.c_str());
    else if (!r.message.empty())
      std::printf("  note: %s", r.message.c_str());
    std::printf("\n");
    ++ex_totals_.cases;
    ex_totals_.checked += r.ref_entries;
    ex_totals_.ours_wrong += r.ours.wrong;
    if (c.baseline) {
      ex_totals_.base_wrong += r.base.wrong;
      ex_totals_.base_checked += r.ref_entries;
    }
    if (std::isfinite(model) && !(model <= ex_totals_.max_model))
      ex_totals_.max_model = model;
    if (std::isfinite(model_tr) && !(model_tr <= ex_totals_.max_model_train))
      ex_totals_.max_model_train = model_tr;
  }

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
    const bool ex = c.routine == Routine::Exdgemm;
    const bool ng = !ex;  // the recursion's fields
    const std::string routine = routine_name(c.routine);
    const bool info = ran && r.has_ex;
    const double time_ratio = r.t_ours / r.t_base;
    const double model = info ? r.t_ours / (r.ex.slice_products * r.t_base) : kNaN;
    const double model_tr =
        info ? r.t_ours / (r.ex.slice_products * r.t_base_train) : kNaN;
    const double phi = c.dist == Dist::Phi ? c.phi : kNaN;
    if (csv_.is_open()) {
      std::ostringstream l;
      auto opt_int = [&](bool have, long long v) {
        return have ? std::to_string(v) : std::string();
      };
      l << date << ',' << csv_str(dev) << ',' << version_str() << ',' << routine << ','
        << csv_str(ours) << ',' << csv_str(base) << ',' << prec << ',' << tr << ',' << c.m
        << ',' << c.n << ',' << c.k << ',' << dist_name(c.dist) << ',' << c.seed << ','
        << r.status << ',' << csv_str(r.message) << ',' << opt_int(ran && ng, r.levels)
        << ',' << opt_int(ng && r.leaf > 0, r.leaf) << ','
        << opt_int(ng && r.max_levels >= 0, r.max_levels) << ','
        << opt_int(ran, (long long)r.ws_bytes) << ','
        << opt_int(ran && ng, (long long)r.ws_held) << ',' << opt_int(ran, r.reps) << ','
        << opt_int(ran, r.warmup) << ',' << file_num(r.t_ours * 1e3) << ','
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
        << (ran ? std::to_string(r.ours.zero_ref) : "") << ',' << file_num(phi) << ','
        << opt_int(info, r.ex.max_slices_a) << ',' << opt_int(info, r.ex.max_slices_b)
        << ',' << file_num(info ? r.ex.slice_products : kNaN) << ','
        << opt_int(info, r.ex.blocks) << ',' << opt_int(info, r.ex.block_rows) << ','
        << opt_int(info, r.ex.block_cols) << ','
        << opt_int(info && r.ex.wide_entries >= 0, r.ex.wide_entries) << ','
        << file_num(time_ratio) << ',' << file_num(model) << ','
        << opt_int(ran && ex, r.ours.wrong) << ','
        << opt_int(ran && ex && c.baseline, r.base.wrong) << ','
        << file_num(r.t_base_train * 1e3) << ',' << file_num(model_tr) << '\n';
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
        << ", \"routine\": " << json_str(routine) << ", \"ours\": " << json_str(ours)
        << ", \"baseline\": " << (c.baseline ? json_str(base) : "null")
        << ", \"prec\": " << json_str(prec) << ", \"trans\": " << json_str(tr)
        << ", \"m\": " << c.m << ", \"n\": " << c.n << ", \"k\": " << c.k
        << ", \"dist\": " << json_str(dist_name(c.dist)) << ", \"seed\": " << c.seed
        << ", \"status\": " << json_str(r.status)
        << ", \"message\": " << json_str(r.message)
        << ", \"levels\": " << opt_int(ran && ng, r.levels)
        << ", \"leaf\": " << opt_int(ng && r.leaf > 0, r.leaf)
        << ", \"max_levels\": " << opt_int(ng && r.max_levels >= 0, r.max_levels)
        << ", \"ws_bytes\": " << opt_int(ran, (long long)r.ws_bytes)
        << ", \"ws_held_bytes\": " << opt_int(ran && ng, (long long)r.ws_held)
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
        << ", \"ref_zero\": " << opt_int(ran, r.ours.zero_ref)
        << ", \"phi\": " << json_num(phi)
        << ", \"ex_max_slices_a\": " << opt_int(info, r.ex.max_slices_a)
        << ", \"ex_max_slices_b\": " << opt_int(info, r.ex.max_slices_b)
        << ", \"slice_products\": " << json_num(info ? r.ex.slice_products : kNaN)
        << ", \"ex_blocks\": " << opt_int(info, r.ex.blocks)
        << ", \"ex_block_rows\": " << opt_int(info, r.ex.block_rows)
        << ", \"ex_block_cols\": " << opt_int(info, r.ex.block_cols)
        << ", \"ex_wide_entries\": "
        << opt_int(info && r.ex.wide_entries >= 0, r.ex.wide_entries)
        << ", \"time_ratio\": " << json_num(time_ratio)
        << ", \"model_ratio\": " << json_num(model)
        << ", \"ours_wrong\": " << opt_int(ran && ex, r.ours.wrong)
        << ", \"base_wrong\": " << opt_int(ran && ex && c.baseline, r.base.wrong)
        << ", \"base_train_ms\": " << json_num(r.t_base_train * 1e3)
        << ", \"model_train_ratio\": " << json_num(model_tr) << "}";
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
  ExTotals ex_totals_;
};

CaseSpec base_spec(const Options &o) {
  CaseSpec c;
  c.routine = o.routine;
  c.dist = o.dist;
  c.phi = o.phi;
  c.ex_budget = o.ex_budget;
  c.ex_block = o.ex_block;
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
    std::vector<long long> sizes;
    if (o.routine == Routine::Exdgemm)
      sizes = gpu ? std::vector<long long>{1024, 2048, 4096, 8192}
                  : std::vector<long long>{128, 256, 512};
    else
      sizes = gpu ? std::vector<long long>{1024, 2048, 4096, 8192, 16384}
                  : std::vector<long long>{256, 512, 1024};
    for (long long n : sizes) shapes.push_back({n, n, n});
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
  // The correctly rounded DGEMM next to the vendor's: phi = 1 and
  // ill-conditioned inputs.
  auto exdgemm = [&](long long n, double budget) {
    Section s{"correctly rounded DGEMM: " +
                  std::string(gpu ? "xnExdgemm vs cublasDgemm"
                                  : "cblas_exdgemm vs OpenBLAS cblas_dgemm") +
                  "; wrong = checked entries that are not the correctly rounded value",
              {}};
    for (Dist d : {Dist::Phi, Dist::Illcond}) {
      CaseSpec c = base_spec(o);
      c.routine = Routine::Exdgemm;
      c.prec = 'd';
      c.m = c.n = c.k = n;
      c.dist = d;
      c.phi = 1;
      c.time_budget = budget;
      s.cases.push_back(c);
    }
    return s;
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
    out.push_back(exdgemm(4096, 1.0));
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
    out.push_back(exdgemm(256, 0.3));
  }
  return out;
}

}  // namespace
}  // namespace xnb

int main(int argc, char **argv) {
  using namespace xnb;
  const Options o = parse_args(argc, argv);
  if (o.command == "symv") return run_symv(o.symv);

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
  bool any_ngemm = false, any_ex = false;
  for (const Section &s : sections)
    for (const CaseSpec &c : s.cases)
      (c.routine == Routine::Exdgemm ? any_ex : any_ngemm) = true;
  if (any_ngemm)
    std::printf(
        "library defaults: leaf d=%lld s=%lld, max levels %lld (XN_* environment "
        "applied)%s%s\n",
        (long long)leaf_d, (long long)leaf_s, (long long)levels,
        o.leaf > 0 ? ("; --leaf " + std::to_string(o.leaf)).c_str() : "",
        o.levels >= 0 ? ("; --levels " + std::to_string(o.levels)).c_str() : "");
  if (any_ex) {
    std::int64_t ex_limit = 0, ex_block = 0;
    xnGetOption(nullptr, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, &ex_limit);
    xnGetOption(nullptr, XN_OPT_EXDGEMM_BLOCK, &ex_block);
    const std::string lim =
        o.ex_budget >= 0 ? std::to_string(o.ex_budget) + " bytes (--ex-budget)"
        : ex_limit > 0   ? std::to_string(ex_limit) + " bytes"
                         : std::string(gpu ? "automatic (a quarter of the free memory)"
                                           : "automatic (1 GiB)");
    const std::string blk = o.ex_block >= 0 ? std::to_string(o.ex_block) + " (--ex-block)"
                            : ex_block > 0  ? std::to_string(ex_block)
                                            : std::string("from the budget");
    std::printf("exdgemm: workspace limit %s, block %s\n", lim.c_str(), blk.c_str());
  }
  if (o.command == "demo")
    std::printf("inputs: uniform [0,1) (ngemm), as titled (exdgemm); base seed %llu\n",
                (unsigned long long)seed);
  else
    std::printf("inputs: %s, base seed %llu (replay with --seed %llu)\n",
                dist_description(base_spec(o)).c_str(), (unsigned long long)seed,
                (unsigned long long)seed);
  std::printf(
      "timing: %s around each call; accuracy call first (C poisoned with NaN), "
      "%d warm-up call(s), then %s timed calls of each routine, interleaved; "
      "median reported\n",
      gpu ? "CUDA events" : "steady_clock", o.warmup,
      o.reps > 0 ? std::to_string(o.reps).c_str() : "3..25 (automatic)");
  const std::string samples =
      o.ref_samples > 0 ? std::to_string(o.ref_samples) : std::string("(all)");
  if (any_ngemm)
    std::printf(
        "reference: double-double dot products (tests/support/dd_reference.h) on %s, "
        "every entry when %s, else %s random entries\n",
        gpu ? "the GPU" : "the CPU", gpu ? "m*n <= 2^20" : "m*n*k <= 2^27",
        samples.c_str());
  if (any_ex)
    std::printf(
        "reference%s: exact (MPFR, tests/support/mpfr_oracle.cpp) on the CPU, every "
        "entry when m*n <= %lld, else %s random entries; wrong = entries that differ "
        "from the correctly rounded value\n",
        any_ngemm ? " (exdgemm)" : "", (long long)kExFullRefEntries, samples.c_str());

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
    rep.table_header(s.cases.empty() ? Routine::Ngemm : s.cases.front().routine);
    for (const CaseSpec &c : s.cases) {
      ++index;
      if (!o.quiet) {
        const double el =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start)
                .count();
        const std::string what = c.routine == Routine::Exdgemm
                                     ? "exdgemm " + dist_label(c)
                                     : std::string(1, c.prec);
        std::fprintf(stderr, "[%zu/%zu] %s %s %s ... (%.0f s elapsed)\n", index, total,
                     what.c_str(), trans_str(c.ta, c.tb).c_str(),
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
  const Reporter::ExTotals &ex = rep.ex_totals();
  if (ex.cases > 0) {
    if (ex.ours_wrong == 0)
      std::printf(
          "exdgemm: 0 wrong entries: all %lld checked entries are correctly rounded",
          (long long)ex.checked);
    else
      std::printf(
          "EXDGEMM: %lld OF %lld CHECKED ENTRIES ARE NOT CORRECTLY ROUNDED (ERROR rows)",
          (long long)ex.ours_wrong, (long long)ex.checked);
    if (ex.base_checked > 0)
      std::printf("; DGEMM: %lld of %lld wrong", (long long)ex.base_wrong,
                  (long long)ex.base_checked);
    std::printf("\n");
    if (std::isfinite(ex.max_model))
      std::printf(
          "model = ex_ms / (prods * dgemm_ms): largest %.3f (GPU target <= 1.15)\n",
          ex.max_model);
    if (std::isfinite(ex.max_model_train))
      std::printf(
          "model_tr = ex_ms / (prods * dgemm_ms of a DGEMM train as long as the "
          "products): largest %.3f\n",
          ex.max_model_train);
  }
  return failed ? 1 : 0;
}
