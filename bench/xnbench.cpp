// xnbench.cpp - the project's command-line benchmark: speed and accuracy of
// xNGEMM's routines against the vendor GEMM, measured in the same run.
//
//   xnbench gemm [options]   a table of cases (see --help, docs/xnbench.md)
//   xnbench exdgemm [...]    the same as gemm --routine exdgemm
//   xnbench symv [...]       xnDsymv/xnSsymv vs cuBLAS (bench_symv.cu)
//   xnbench exblas [...]     xnExdgemv/xnExddot vs cuBLAS (bench_exblas.cu)
//   xnbench batched [...]    xnExdgemm(Strided)Batched vs cuBLAS (bench_batched.cu)
//   xnbench demo             a short comparison, under a minute on a small CPU
//
// This file is the front end: it parses the command line and hands over to
// the command (bench_gemm.cpp, bench_symv.cu, bench_exblas.cu,
// bench_batched.cu), which runs
// the cases through its runners and prints and writes them through the
// reporter (report.h).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_batched.h"
#include "bench_calibrate.h"
#include "bench_exblas.h"
#include "bench_gemm.h"
#include "bench_symv.h"
#include "bench_util.h"

namespace xnb {
namespace {

const char *kUsage =
    R"(xnbench - speed and accuracy of xNGEMM against the vendor GEMM, same run

usage:
  xnbench gemm [options]    time and check a list of GEMM cases, print a table
  xnbench exdgemm [options] the same as: xnbench gemm --routine exdgemm
  xnbench symv [options]    xnDsymv/xnSsymv vs cublasDsymv/cublasSsymv (GPU only)
  xnbench exblas [options]  the correctly rounded xnExdgemv/xnExddot vs cublasDgemv/
                            cublasDdot (GPU only)
  xnbench batched [options] xnExdgemmStridedBatched/xnExdgemmBatched vs
                            cublasDgemmStridedBatched/cublasDgemmBatched (GPU only):
                            --sizes MxNxK[,...] --batch B --phi P --form strided|array|both
                            --reps R --warmup W --check E (sampled entries, exact)
                            --products auto|digits|sums (the INT8 products' output)
  xnbench calibrate [--no-measure]
                            measure this GPU for the recursive GEMMs' depth model
                            (xnCalibrate: about 30 s), cache it, print its rates and the
                            depths the built-in model and the calibration choose
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
  --routine strassen|winograd (general inputs, Li, Ranka, Sahni, ICPADS'11):
    GPU: xn?gemmStrassen / xn?gemmWinograd vs cublas?gemm (same handle, stream)
    CPU: cblas_?stgemm / cblas_?wigemm (XN_DEVICE=cpu) vs OpenBLAS cblas_?gemm

gemm options:
  --routine ngemm|exdgemm|strassen|winograd
                           routine to measure (default ngemm)
  --prec d|s|both          precision (default both; exdgemm: d only)
  --sizes LIST             square sizes n (m = n = k): comma-separated items,
                           each N or FIRST:LAST[:STEP] (LAST included), e.g.
                           1024,2048,4096 or 1024:32768:1024
  --shape MxNxK[,...]      explicit shapes: C is M x N, the inner dimension is K
                           (repeatable; combines with --sizes)
  --trans LIST             comma-separated NN,TN,NT,TT: op(A) then op(B) (default NN)
  --dist u01|upm1|phi|illcond|paper
                           inputs uniform in [0,1) (ngemm default) or in [-1,1)
                           (strassen/winograd default; for ngemm it breaks the
                           non-negative contract on purpose); exdgemm only:
                           phi = (u - 0.5) exp(phi randn) with 53-bit u
                           (exdgemm default), illcond = ill-conditioned dot
                           products (condition up to 2^60); not exdgemm, square
                           sizes only: paper = A = I + u v^T, B = I - u v^T /
                           (1 + v^T u), u_i = 1/(n+1-i), v_i = sqrt(i) (Li,
                           Ranka, Sahni, section 8.1.2; exact product I)
  --phi X                  phi of --dist phi (default 0; implies --dist phi)
  --reps N                 timed calls per routine (default: automatic, 3..25,
                           so that the timed calls take about --time-budget)
  --time-budget S          seconds of timed calls per case for automatic reps (default 1)
  --train-below MS         a call shorter than MS milliseconds is timed in trains of
                           back-to-back calls at least that long (at most 100), as a
                           program's stream of calls runs (default 1; 0: every call
                           timed alone, its host time before the launch included)
  --warmup N               untimed calls per routine before timing (default 1;
                           the accuracy call comes before them and is never timed)
  --levels L               XN_OPT_MAX_LEVELS, upper bound on recursion depth
  --leaf N                 XN_OPT_LEAF_SIZE_D and _S (strassen, winograd: their
                           own XN_OPT_STRASSEN_LEAF_* / XN_OPT_WINOGRAD_LEAF_*):
                           recursion continues while the two largest dimensions
                           stay at least N (the smallest N/2); also sets
                           --min-size 0 unless given
  --min-size N             XN_OPT_MIN_SIZE_D and _S (or the routine's own
                           ..._MIN_SIZE_*): no recursion for (m n k)^(1/3) < N
                           (the crossover; 0 = none)
  --check-nonneg 0|1       ngemm: XN_OPT_CHECK_NONNEG (1: every call scans A and B
                           for signs and block maxima; the timed calls include the
                           scan: run with 0 and 1 to measure its cost)
  --per-level L0:L1        one row per depth L = L0..L1 (or one L), each run
                           with exactly L levels (max levels L, leaf
                           ceil(min(m,n,k) / 2^L), crossover 0); the baseline
                           runs once per case and repeats on each row
  --leaf-train             GPU: after a case that ran L > 0 levels, time the
                           7^L leaf GEMMs back to back (cuBLAS, leaf shape):
                           leaf_ms, outside = 1 - leaf_ms / ours_ms
  --cpu-baseline           GPU: also OpenBLAS cblas_?gemm on the host from the
                           same inputs (errors only: cpu_* fields)
  --ngemm-u01              GPU, strassen/winograd: also xn?ngemm at the same
                           depth on fresh uniform [0,1) inputs (nn_* fields)
  --timed-beta X           GPU: the timed calls (ours and the baseline) compute
                           C = A B + X C (default 0; the accuracy call is C = A B)
  --timed-alpha X          GPU: the timed calls compute C = X A B + beta C
                           (default 1; with --timed-beta for both)
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

Columns: shape (m x n x k), trans, prec; lvl = recursion levels run; src =
where the depth came from (o = the options' leaf size, b = the built-in model
of the device, s = a model scaled from another card, c = this device's
calibration; xnGetLastGemmInfo); pred = the model's predicted speedup at the
planned depth over one vendor GEMM; ws_MiB =
workspace; ours_ms / base_ms = median time per call; ours_TF / base_TF =
2mnk / time in TFLOP/s; speedup = base_ms / ours_ms; maxrel / meanrel =
max / mean of |c - ref| / |ref| (ref != 0), maxabs = max |c - ref| over the
checked entries; acc_gain = base maxrel / ours maxrel; ref = all (every entry)
or the number of sampled entries. The reference is a double-double dot product
(error ~ k 2^-104) per checked entry. strassen/winograd show maxnorm /
meannorm = max / mean of |c - ref| / mean |ref| instead of maxrel / meanrel,
and err_ratio = ours maxnorm / base maxnorm. --dist paper adds maxI / meanI
= max / mean of |c - I|; --cpu-baseline the OpenBLAS errors (cpu_*);
--leaf-train leaf_ms and outside.

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

exblas options (each case: routine, op, n; ours and cuBLAS on the same handle,
stream and buffers; every checked output of ours compared bit for bit with the
exact IEEE value):
  --routine gemv|dot|all   routines (default all: gemv, then dot)
  --sizes LIST             gemv: n x n; dot: the vectors' length; comma-separated
                           N or FIRST:LAST[:STEP], LAST included, STEP defaults to
                           1; every selected routine runs at every size (use
                           --routine to give gemv and dot sizes of their own).
                           Default: the issue's cases, gemv N n=16384 phi 0,
                           T 16384 phi 1, N and T 8191 phi 0; dot n=2^24 and
                           2^20 phi 0 (kept where --routine and --trans select
                           them; --phi replaces their phi)
  --trans LIST             gemv: N,T or one of them (default N,T)
  --phi X                  entries (u - 0.5) exp(phi randn), 53-bit u, as
                           exdgemm's phi inputs (default 0)
  --inc I                  incx = incy = I (default 1; negative: from the far
                           end, BLAS order; not 0)
  --lda-pad P              gemv: lda = n + P, rows n..lda-1 NaN (default 0)
  --reps R                 timed samples per routine (default 15; median reported)
  --warmup W               untimed samples per routine (default 2)
  --train C                calls per timed sample (default: about 2 ms of the
                           faster routine, at most 50)
  --ref-rows N|all         gemv outputs checked per accuracy call (default 64)
  --device gpu|auto        gpu: no GPU is an error (status 1); auto: a message
                           and status 0
  --seed S, --csv FILE, --json FILE, --quiet   as for gemm
exblas columns: train = calls per sample; us = median time per call (ours,
cub = cuBLAS); TB = operand bytes (gemv 8 m n + 8 (m + n), dot 16 n) / time in
TB/s, floor = a streaming read of the same byte count; %floor = ours_TB /
floor_TB; rate = cub_us / ours_us; target, met = the issue's minimum rate
(its cases only) and whether it is met; wrong = checked outputs of ours not
bitwise the correctly rounded value (must be 0), of checked (gemv: two
calls, alpha 1 beta 0 on y = NaN and alpha 1.5 beta -0.5 on a random y; dot:
device and host pointer mode); cub_err = cuBLAS's max |y - exact| / |exact|.

Exit status: 0 all cases ran (skipped ones included), 1 a result had NaN/Inf,
an exdgemm entry or exblas output was not correctly rounded, or a
CUDA/cuBLAS/xNGEMM call failed, 2 bad command line.
)";

// ------------------------------------------------------------------ options

// MxNxK[,...] (x or X).
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

// `xnbench batched` options (argv[2] on), into b.
void parse_batched_args(int argc, char **argv, BatchedOptions *b) {
  ArgReader a(argc, argv, 2);
  while (a.next()) {
    const std::string key = a.key();
    if (parse_common_option(a, b, kUsage)) continue;
    if (key == "--sizes") {
      parse_shapes(a.value(), &b->sizes);
    } else if (key == "--batch") {
      b->batch = parse_int(a.value(), "batch", 1, 65535 * 16);
    } else if (key == "--phi") {
      b->phi = parse_double(a.value(), "phi", true);
      b->phi_given = true;
    } else if (key == "--form") {
      const std::string v = a.value();
      if (v != "strided" && v != "array" && v != "both")
        usage_error("--form must be strided, array or both");
      b->strided = v != "array";
      b->array = v != "strided";
    } else if (key == "--reps") {
      b->reps = int(parse_int(a.value(), "reps", 1, 100000));
    } else if (key == "--warmup") {
      b->warmup = int(parse_int(a.value(), "warmup", 0, 100000));
    } else if (key == "--check") {
      b->check = parse_int(a.value(), "check", 0, 1 << 30);
    } else if (key == "--products") {
      b->products = a.value();
      if (b->products != "auto" && b->products != "digits" && b->products != "sums")
        usage_error("--products must be auto, digits or sums");
    } else if (key == "--device") {
      b->device = a.value();
      if (b->device != "gpu" && b->device != "auto")
        usage_error("--device must be gpu or auto for batched");
    } else {
      usage_error("unknown batched option '" + key + "'");
    }
  }
}

// `xnbench symv` options (argv[2] on), into s.
void parse_symv_args(int argc, char **argv, SymvOptions *s) {
  ArgReader a(argc, argv, 2);
  while (a.next()) {
    const std::string key = a.key();
    if (parse_common_option(a, s, kUsage)) continue;
    if (key == "--prec") {
      s->precs = parse_precs(a.value());
    } else if (key == "--uplo") {
      s->uplos = parse_choice<std::vector<char>>(
          a.value(),
          {{"L", {'L'}}, {"l", {'L'}}, {"U", {'U'}}, {"u", {'U'}}, {"both", {'L', 'U'}}},
          "--uplo must be L, U or both");
    } else if (key == "--sizes") {
      for (long long n : parse_sizes(a.value(), 1)) s->sizes.push_back(n);
    } else if (key == "--reps") {
      s->reps = int(parse_int(a.value(), "reps", 1, 100000));
    } else if (key == "--warmup") {
      s->warmup = int(parse_int(a.value(), "warmup", 0, 100000));
    } else if (key == "--batch") {
      s->batch = int(parse_int(a.value(), "batch", 1, 100000));
    } else if (key == "--variant") {
      const std::string v = a.value();
      s->all_variants = v == "all";
      s->variants.clear();
      if (!s->all_variants) {
        for (const std::string &t : split(v, ','))
          s->variants.push_back(int(parse_int(t, "variant", 0, 1000)));
        if (s->variants.empty()) usage_error("--variant: no variant id in '" + v + "'");
      }
    } else if (key == "--lda-pad") {
      s->lda_pad = parse_int(a.value(), "lda-pad", 0, INT_MAX);
    } else if (key == "--ref-rows") {
      s->ref_rows = parse_count_or_all(a.value(), "ref-rows");
    } else if (key == "--alpha") {
      s->alpha = parse_finite(a.value(), "alpha");
    } else if (key == "--beta") {
      s->beta = parse_finite(a.value(), "beta");
    } else if (key == "--device") {
      s->device = a.value();
      if (s->device == "cpu") usage_error("symv is a GPU routine (--device gpu or auto)");
      if (s->device != "gpu" && s->device != "auto")
        usage_error("--device must be gpu or auto for symv");
    } else {
      usage_error("unknown symv option '" + key + "'");
    }
  }
}

// `xnbench exblas` options (argv[2] on), into e.
void parse_exblas_args(int argc, char **argv, ExblasOptions *e) {
  bool lda_pad_given = false, ref_rows_given = false;
  ArgReader a(argc, argv, 2);
  while (a.next()) {
    const std::string key = a.key();
    if (parse_common_option(a, e, kUsage)) continue;
    if (key == "--routine") {
      const std::string v = a.value();
      if (v != "gemv" && v != "dot" && v != "all")
        usage_error("--routine must be gemv, dot or all for exblas");
      e->gemv = v != "dot";
      e->dot = v != "gemv";
    } else if (key == "--sizes") {
      for (long long n : parse_sizes(a.value(), 1)) e->sizes.push_back(n);
    } else if (key == "--trans") {
      e->trans.clear();
      e->trans_given = true;
      for (std::string t : split(a.value(), ',')) {
        for (char &ch : t) ch = char(std::toupper(static_cast<unsigned char>(ch)));
        if (t != "N" && t != "T") usage_error("bad --trans item '" + t + "' (N or T)");
        if (std::find(e->trans.begin(), e->trans.end(), t[0]) == e->trans.end())
          e->trans.push_back(t[0]);
      }
      if (e->trans.empty()) usage_error("--trans is empty");
    } else if (key == "--phi") {
      e->phi = parse_double(a.value(), "phi", true);
      e->phi_given = true;
    } else if (key == "--inc") {
      e->inc = parse_int(a.value(), "inc", -1000000, 1000000);
      if (e->inc == 0) usage_error("--inc must not be 0");
    } else if (key == "--lda-pad") {
      e->lda_pad = parse_int(a.value(), "lda-pad", 0, INT_MAX);
      lda_pad_given = true;
    } else if (key == "--reps") {
      e->reps = int(parse_int(a.value(), "reps", 1, 100000));
    } else if (key == "--warmup") {
      e->warmup = int(parse_int(a.value(), "warmup", 0, 100000));
    } else if (key == "--train") {
      e->train = int(parse_int(a.value(), "train", 1, 100000));
    } else if (key == "--ref-rows") {
      e->ref_rows = parse_count_or_all(a.value(), "ref-rows");
      ref_rows_given = true;
    } else if (key == "--device") {
      e->device = a.value();
      if (e->device == "cpu")
        usage_error("exblas measures the GPU routines (--device gpu or auto)");
      if (e->device != "gpu" && e->device != "auto")
        usage_error("--device must be gpu or auto for exblas");
    } else {
      usage_error("unknown exblas option '" + key + "'");
    }
  }
  if (!e->gemv && (e->trans_given || lda_pad_given || ref_rows_given))
    usage_error("--trans, --lda-pad and --ref-rows are gemv options (--routine gemv or all)");
}

// `xnbench gemm|exdgemm|demo` options (argv[2] on), into o; o->command set.
void parse_gemm_args(int argc, char **argv, GemmOptions *o) {
  const bool ex_command = o->command == "exdgemm";
  if (ex_command) {  // shorthand for gemm --routine exdgemm
    o->command = "gemm";
    o->routine = Routine::Exdgemm;
  }
  const bool demo = o->command == "demo";
  ArgReader a(argc, argv, 2);
  while (a.next()) {
    const std::string key = a.key();
    // Options the demo accepts too.
    if (parse_common_option(a, o, kUsage)) continue;
    if (key == "--device") {
      o->device = a.value();
      if (o->device != "gpu" && o->device != "cpu" && o->device != "auto")
        usage_error("--device must be gpu, cpu or auto");
    } else if (demo) {
      usage_error("demo takes only --device, --seed, --csv, --json, --quiet");
    } else if (key == "--routine") {
      const std::string v = a.value();
      if (v == "symv") usage_error("symv has its own command: xnbench symv [options]");
      o->routine = parse_choice<Routine>(
          v,
          {{"ngemm", Routine::Ngemm},
           {"exdgemm", Routine::Exdgemm},
           {"strassen", Routine::Strassen},
           {"winograd", Routine::Winograd}},
          "unknown routine '" + v + "' (known: ngemm, exdgemm, strassen, winograd)");
      if (ex_command && o->routine != Routine::Exdgemm)
        usage_error("xnbench exdgemm runs --routine exdgemm only");
    } else if (key == "--prec") {
      o->prec_given = true;
      o->precs = parse_precs(a.value());
    } else if (key == "--sizes") {
      for (long long n : parse_sizes(a.value())) o->shapes.push_back({n, n, n});
    } else if (key == "--shape") {
      parse_shapes(a.value(), &o->shapes);
    } else if (key == "--trans") {
      o->trans.clear();
      for (std::string t : split(a.value(), ',')) {
        for (char &ch : t) ch = char(std::toupper(static_cast<unsigned char>(ch)));
        if (t.size() != 2 || (t[0] != 'N' && t[0] != 'T') || (t[1] != 'N' && t[1] != 'T'))
          usage_error("bad transpose pair '" + t + "' (NN, TN, NT or TT)");
        o->trans.push_back({t[0] == 'T', t[1] == 'T'});
      }
      if (o->trans.empty()) usage_error("--trans is empty");
    } else if (key == "--dist") {
      o->dist_given = true;
      o->dist = parse_choice<Dist>(a.value(),
                                   {{"u01", Dist::U01},
                                    {"upm1", Dist::Upm1},
                                    {"phi", Dist::Phi},
                                    {"illcond", Dist::Illcond},
                                    {"paper", Dist::Paper}},
                                   "--dist must be u01, upm1, phi, illcond or paper");
    } else if (key == "--phi") {
      o->phi = parse_double(a.value(), "phi", true);
      o->phi_given = true;
    } else if (key == "--ex-budget") {
      o->ex_budget = parse_bytes(a.value(), "ex-budget");
    } else if (key == "--ex-block") {
      o->ex_block = parse_int(a.value(), "ex-block", 0, INT_MAX);
    } else if (key == "--reps") {
      o->reps = int(parse_int(a.value(), "reps", 1, 100000));
    } else if (key == "--time-budget") {
      o->time_budget = parse_double(a.value(), "time budget");
    } else if (key == "--train-below") {
      o->train_below = parse_double(a.value(), "train below", true) * 1e-3;
    } else if (key == "--warmup") {
      o->warmup = int(parse_int(a.value(), "warmup", 0, 100000));
    } else if (key == "--levels") {
      o->levels = int(parse_int(a.value(), "levels", 0, 30));
    } else if (key == "--leaf") {
      o->leaf = parse_int(a.value(), "leaf", 1, INT_MAX);
    } else if (key == "--min-size") {
      o->min_size = parse_int(a.value(), "min-size", 0, INT_MAX);
    } else if (key == "--check-nonneg") {
      o->check_nonneg = int(parse_int(a.value(), "check-nonneg", 0, 1));
    } else if (key == "--per-level") {
      const std::string v = a.value();
      const std::vector<std::string> p = split(v, ':');
      if (p.empty() || p.size() > 2 || v.front() == ':' || v.back() == ':')
        usage_error("bad --per-level '" + v + "' (expected L0:L1 or L)");
      o->level_lo = int(parse_int(p[0], "level", 0, 30));
      o->level_hi = p.size() == 2 ? int(parse_int(p[1], "level", 0, 30)) : o->level_lo;
      if (o->level_hi < o->level_lo)
        usage_error("--per-level range '" + v + "' is empty");
    } else if (key == "--leaf-train") {
      a.flag();
      o->leaf_train = true;
    } else if (key == "--cpu-baseline") {
      a.flag();
      o->cpu_baseline = true;
    } else if (key == "--ngemm-u01") {
      a.flag();
      o->ngemm_u01 = true;
    } else if (key == "--timed-beta") {
      o->timed_beta = parse_finite(a.value(), "timed-beta");
    } else if (key == "--timed-alpha") {
      o->timed_alpha = parse_finite(a.value(), "timed-alpha");
    } else if (key == "--ref-samples") {
      o->ref_samples = parse_count_or_all(a.value(), "ref-samples");
    } else if (key == "--cpu-leaf") {
      o->cpu_leaf = parse_choice<CpuLeafKind>(
          a.value(),
          {{"openblas", CpuLeafKind::OpenBlas}, {"preload", CpuLeafKind::Preload}},
          "--cpu-leaf must be openblas or preload");
    } else if (key == "--no-baseline") {
      a.flag();
      o->baseline = false;
    } else {
      usage_error("unknown option '" + key + "'");
    }
  }
  // Checks across options (any order on the command line).
  if (o->phi_given) {
    if (o->dist_given && o->dist != Dist::Phi) usage_error("--phi needs --dist phi");
    o->dist = Dist::Phi;
  }
  if (o->routine == Routine::Exdgemm) {
    if (!o->dist_given) o->dist = Dist::Phi;
    if (o->prec_given && o->precs != std::vector<char>{'d'})
      usage_error("exdgemm is double precision only (--prec d)");
    o->precs = {'d'};
    if (o->levels >= 0 || o->leaf > 0 || o->min_size >= 0 ||
        o->cpu_leaf != CpuLeafKind::OpenBlas)
      usage_error(
          "--levels, --leaf, --min-size and --cpu-leaf are options of ngemm, strassen "
          "and winograd");
    if (o->level_lo >= 0 || o->leaf_train || o->cpu_baseline || o->ngemm_u01)
      usage_error(
          "--per-level, --leaf-train, --cpu-baseline and --ngemm-u01 are options of "
          "ngemm, strassen and winograd");
    if (o->dist == Dist::Paper)
      usage_error("--dist paper is an input of ngemm, strassen and winograd");
  } else if (!demo) {
    // General-input routines: signed inputs unless asked otherwise.
    if (is_fast_gemm(o->routine) && !o->dist_given) o->dist = Dist::Upm1;
    if (o->dist == Dist::Phi || o->dist == Dist::Illcond)
      usage_error("--dist phi/illcond and --phi are exdgemm inputs (--routine exdgemm)");
    if (o->ex_budget >= 0 || o->ex_block >= 0)
      usage_error("--ex-budget and --ex-block are exdgemm options (--routine exdgemm)");
    if (o->dist == Dist::Paper)
      for (const Shape &sh : o->shapes)
        if (sh.m != sh.n || sh.n != sh.k)
          usage_error("--dist paper needs square shapes (m = n = k)");
    if (o->level_lo >= 0 && (o->levels >= 0 || o->leaf > 0 || o->min_size >= 0))
      usage_error("--per-level sets the depth itself: no --levels, --leaf or --min-size");
    if (o->check_nonneg >= 0 && o->routine != Routine::Ngemm)
      usage_error("--check-nonneg is an option of ngemm");
    if (o->ngemm_u01 && !is_fast_gemm(o->routine))
      usage_error("--ngemm-u01 goes with --routine strassen or winograd");
    if ((o->leaf_train || o->cpu_baseline || o->ngemm_u01 || o->timed_beta != 0 ||
         o->timed_alpha != 1) &&
        (o->device == "cpu" || o->cpu_leaf == CpuLeafKind::Preload))
      usage_error(
          "--leaf-train, --cpu-baseline, --ngemm-u01, --timed-alpha and --timed-beta are "
          "GPU options");
  }
}

}  // namespace
}  // namespace xnb

int main(int argc, char **argv) {
  using namespace xnb;
  if (argc < 2) usage_error("missing command (gemm, exdgemm, symv, exblas, batched or demo)");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("xnbench %s\n", version_str().c_str());
    return 0;
  }
  if (command == "calibrate") return run_calibrate(argc, argv);  // bench_calibrate.cpp
  if (command == "symv") {  // its own options and runner (bench_symv.cu)
    SymvOptions s;
    parse_symv_args(argc, argv, &s);
    if (!s.seed_given) s.seed = fresh_seed();
    return run_symv(s);
  }
  if (command == "exblas") {  // its own options and runner (bench_exblas.cu)
    ExblasOptions e;
    parse_exblas_args(argc, argv, &e);
    if (!e.seed_given) e.seed = fresh_seed();
    return run_exblas(e);
  }
  if (command == "batched") {  // its own options and runner (bench_batched.cu)
    BatchedOptions b;
    parse_batched_args(argc, argv, &b);
    if (!b.seed_given) b.seed = fresh_seed();
    return run_batched(b);
  }
  if (command != "gemm" && command != "exdgemm" && command != "demo")
    usage_error("unknown command '" + command + "'");
  GemmOptions o;
  o.command = command;
  parse_gemm_args(argc, argv, &o);

  // The library's CPU backend runs its elementwise loops with OpenMP, whose
  // threads by default spin after each parallel region and take the cores
  // from OpenBLAS's own threads (both routines then time badly and noisily).
  // The wait policy is read once at program start: restart with "passive"
  // unless the user chose a policy.
  const bool want_cpu = o.device == "cpu" || o.cpu_leaf == CpuLeafKind::Preload ||
                        (o.device == "auto" && cuda_device_count() == 0);
  if (want_cpu && !std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("XNBENCH_SET_OMP_WAIT_POLICY", "1", 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr,
                 "xnbench: could not restart with OMP_WAIT_POLICY=passive; "
                 "CPU timings may suffer\n");
  }
  if (!o.seed_given) o.seed = fresh_seed();
  return run_gemm(o);
}
