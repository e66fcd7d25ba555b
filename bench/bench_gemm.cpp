// bench_gemm.cpp - the gemm/exdgemm/demo commands of xnbench: the list of
// cases, the runner (bench_gpu.cu or bench_cpu.cpp), and the columns of the
// tables (the recursive GEMMs: ngemm, strassen, winograd; exdgemm) and of the
// records they share, printed and written by the reporter (report.h).
#include "bench_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_random.h"
#include "report.h"
#include "xngemm.h"

namespace xnb {

namespace {

std::string shape_str(long long m, long long n, long long k) {
  if (m == n && n == k) return std::to_string(m) + "^3";
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string trans_str(bool ta, bool tb) {
  return std::string(ta ? "T" : "N") + (tb ? "T" : "N");
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
      return "ill-conditioned dot products (tests/support/exdgemm_inputs.h "
             "ex_fill_illcond)";
    case Dist::Paper:
      return "the test matrix of Li, Ranka, Sahni (ICPADS'11, section 8.1.2): A = I + "
             "u v^T, B = I - u v^T / (1 + v^T u), u_i = 1/(n+1-i), v_i = sqrt(i), in "
             "double, rounded to the precision (exact product of the unrounded ones: I)";
  }
  return "?";
}

// ------------------------------------------------------------------ columns

// Whether a case's row has timings (else: its key columns and the message).
bool ran_row(const CaseResult &r) {
  return !(r.status == "skipped" || (r.status == "error" && !std::isfinite(r.t_ours)));
}

double tflops(const CaseSpec &c, double seconds) {
  return 2.0 * double(c.m) * double(c.n) * double(c.k) / seconds * 1e-12;
}

std::string ref_cell(const CaseResult &r) {
  return r.ref_full ? "all" : std::to_string(r.ref_entries);
}

// The table of the recursive GEMMs; a skipped or failed row prints prec,
// trans and the shape. ngemm's columns, or for strassen and winograd
// (`fast`) the normalized errors instead of the relative ones (the relative
// error of entries near zero says nothing for signed data), then the
// optional groups: the errors against I (--dist paper), OpenBLAS's errors
// (--cpu-baseline), the leaf train (--leaf-train).
struct GemmColumns {
  bool fast = false, paper = false, cpu = false, train = false;
};

TableLayout gemm_table(const GemmColumns &g) {
  std::string cols =
      "prec:-4 trans:-5 m x n x k:-18 lvl:3 src:3 pred:6 ws_MiB:9 ours_ms:10 base_ms:10 ours_TF:8 "
      "base_TF:8 speedup:7 | ";
  cols += g.fast ? "ours_maxnorm:12 ours_meannorm:13 ours_maxabs:11 | base_maxnorm:12 "
                   "base_meannorm:13 base_maxabs:11 | err_ratio:9 ref:5"
                 : "ours_maxrel:11 ours_meanrel:11 ours_maxabs:11 | base_maxrel:11 "
                   "base_meanrel:11 base_maxabs:11 | acc_gain:8 ref:5";
  if (g.paper)
    cols += " | ours_maxI:9 ours_meanI:10 base_maxI:9 base_meanI:10 ref_maxI:9";
  if (g.cpu) {
    cols +=
        g.fast ? " | cpu_maxnorm:11 cpu_meannorm:12" : " | cpu_maxrel:10 cpu_meanrel:11";
    if (g.paper) cols += " cpu_maxI:9 cpu_meanI:9";
  }
  if (g.train) cols += " | leaf_ms:10 outside:7";
  return TableLayout(cols, 3);
}

std::vector<std::string> gemm_cells(const CaseSpec &c, const CaseResult &r,
                                    const GemmColumns &g) {
  std::vector<std::string> v{std::string(1, c.prec), trans_str(c.ta, c.tb),
                             shape_str(c.m, c.n, c.k)};
  if (!ran_row(r)) return v;
  auto e = [](double x) { return num(x, "%.2e"); };
  v.insert(v.end(),
           {std::to_string(r.levels), depth_source_letter(r.depth_source),
            r.predicted_speedup > 0 ? num(r.predicted_speedup, "%.3f") : "-",
            num(double(r.ws_bytes) / double(1 << 20), "%.1f"),
            num(r.t_ours * 1e3, "%.4g"), num(r.t_base * 1e3, "%.4g"),
            num(tflops(c, r.t_ours), "%.4g"), num(tflops(c, r.t_base), "%.4g"),
            num(r.t_base / r.t_ours, "%.3fx")});
  if (g.fast)
    v.insert(v.end(), {e(r.ours.max_norm), e(r.ours.mean_norm), e(r.ours.max_abs),
                       e(r.base.max_norm), e(r.base.mean_norm), e(r.base.max_abs),
                       num(r.ours.max_norm / r.base.max_norm, "%.2f"), ref_cell(r)});
  else
    v.insert(v.end(), {e(r.ours.max_rel), e(r.ours.mean_rel), e(r.ours.max_abs),
                       e(r.base.max_rel), e(r.base.mean_rel), e(r.base.max_abs),
                       num(r.base.max_rel / r.ours.max_rel, "%.2f"), ref_cell(r)});
  if (g.paper)
    v.insert(v.end(), {e(r.ours.max_id), e(r.ours.mean_id), e(r.base.max_id),
                       e(r.base.mean_id), e(r.ref_max_id)});
  if (g.cpu) {
    const ErrStats &x = r.has_cpu ? r.cpu : ErrStats{};
    v.push_back(e(g.fast ? x.max_norm : x.max_rel));
    v.push_back(e(g.fast ? x.mean_norm : x.mean_rel));
    if (g.paper) v.insert(v.end(), {e(x.max_id), e(x.mean_id)});
  }
  if (g.train)
    v.insert(v.end(),
             {num(r.t_leaf * 1e3, "%.4g"), num(1 - r.t_leaf / r.t_ours, "%.3f")});
  return v;
}

// exdgemm's table; a skipped or failed row prints trans, the shape and dist.
const TableLayout kExdgemmTable(
    "trans:-5 m x n x k:-18 dist:-9 eng:-5 s:3 t:3 prods:7 blocks:6 block:11 ws_MiB:9 "
    "wide:6 | ex_ms:10 dgemm_ms:10 ex_TF:7 dgemm_TF:8 ratio:7 model:7 model_tr:8 | "
    "ex_wrong:8 ex_maxrel:10 | dgemm_wrong:11 dgemm_maxrel:12 | ref:5 | exp_ms:7 "
    "conv_ms:8 prod_ms:8 sum_ms:7 prod_TOPS:9 i8_frac:7 i8_best:7 k_split:8",
    3);

// The engine that ran, as the table names it.
const char *engine_name(int engine) {
  return engine == 1 ? "slice" : (engine == 2 ? "mod" : "-");
}

// Tera-operations per second of the modular engine's integer products:
// moduli x 2 m n k over the products phase (k as the caller's).
double int8_tops(const CaseSpec &c, const CaseResult &r) {
  if (!r.has_ex || r.ex.engine != 2) return kNaN;
  return r.ex.moduli * 2.0 * double(c.m) * double(c.n) * double(c.k) /
         (r.ex_phase_ms[2] * 1e-3) / 1e12;
}

// The products phase against the train of cuBLAS INT8 GEMMs: 1 = the
// products run at the rate of cuBLAS's own INT8 GEMM of that shape.
double int8_fraction(const CaseResult &r) {
  if (!r.has_ex || r.ex.engine != 2) return kNaN;
  return r.t_int8_train / (r.ex_phase_ms[2] * 1e-3);  // the train is all moduli
}

// The products' rate against the best INT8 rate of the run (1 = as fast as
// cuBLAS's INT8 GEMM on its best shape).
double int8_best_fraction(const CaseSpec &c, const CaseResult &r) {
  return int8_tops(c, r) / r.best_int8_tops;
}

// The modular engine's pieces of k and how many ran side by side; "f":
// op(A)'s residues made inside the products, "ff": both operands'
// (fused_operands).
std::string k_split_cell(const CaseResult &r) {
  if (!r.has_ex || r.ex.engine != 2) return "-";
  return std::to_string(r.ex.k_chunks) + "/" + std::to_string(r.ex.k_slots) +
         std::string(std::size_t(std::max(r.ex.fused_operands, 0)), 'f');
}

// The slice engine's cost model: ex_ms / (prods * dgemm_ms) with the
// baseline's time per call `t_base`; NaN for the modular engine, whose
// products are not DGEMMs.
double model_ratio(const CaseResult &r, double t_base) {
  if (r.ex.engine == 2) return kNaN;
  return r.t_ours / (r.ex.slice_products * t_base);
}

std::vector<std::string> exdgemm_cells(const CaseSpec &c, const CaseResult &r) {
  std::vector<std::string> v{trans_str(c.ta, c.tb), shape_str(c.m, c.n, c.k),
                             dist_label(c)};
  if (!ran_row(r)) return v;
  const xnExdgemmInfo_t &x = r.ex;
  v.insert(v.end(),
           {engine_name(x.engine),
            std::to_string(x.max_slices_a),
            std::to_string(x.max_slices_b),
            num(x.slice_products, "%.2f"),
            std::to_string(x.blocks),
            std::to_string(x.block_rows) + "x" + std::to_string(x.block_cols),
            num(double(x.workspace_bytes) / double(1 << 20), "%.1f"),
            x.wide_entries >= 0 ? std::to_string(x.wide_entries) : std::string("-"),
            num(r.t_ours * 1e3, "%.4g"),
            num(r.t_base * 1e3, "%.4g"),
            num(tflops(c, r.t_ours), "%.3g"),
            num(tflops(c, r.t_base), "%.3g"),
            num(r.t_ours / r.t_base, "%.2fx"),
            num(model_ratio(r, r.t_base), "%.3f"),
            num(model_ratio(r, r.t_base_train), "%.3f"),
            std::to_string(r.ours.wrong),
            num(r.ours.max_rel, "%.2e"),
            c.baseline ? std::to_string(r.base.wrong) : std::string("-"),
            num(r.base.max_rel, "%.2e"),
            ref_cell(r),
            num(r.ex_phase_ms[0], "%.3g"),
            num(r.ex_phase_ms[1], "%.3g"),
            num(r.ex_phase_ms[2], "%.3g"),
            num(r.ex_phase_ms[3], "%.3g"),
            num(int8_tops(c, r), "%.0f"),
            num(int8_fraction(r), "%.2f"),
            num(int8_best_fraction(c, r), "%.2f"),
            k_split_cell(r)});
  return v;
}

// The record of a case (both routines; the other routine's fields missing),
// after date, device and version.
std::vector<Field> gemm_fields(const CaseSpec &c, const CaseResult &r,
                               const std::string &ours, const std::string &base) {
  const bool ran = std::isfinite(r.t_ours);
  const bool ex = c.routine == Routine::Exdgemm;
  const bool ng = !ex;  // the recursion's fields
  const bool info = ran && r.has_ex;
  const ErrStats cpu = r.has_cpu ? r.cpu : ErrStats{};
  const ErrStats nn = r.has_nn ? r.nn : ErrStats{};
  const ErrStats nn_base = r.has_nn ? r.nn_base : ErrStats{};
  return {
      {"routine", text(routine_name(c.routine))},
      {"ours", text(ours)},
      {"baseline", opt_text(c.baseline, base)},
      {"prec", text(std::string(1, c.prec))},
      {"trans", text(trans_str(c.ta, c.tb))},
      {"m", integer(c.m)},
      {"n", integer(c.n)},
      {"k", integer(c.k)},
      {"dist", text(dist_name(c.dist))},
      {"seed", uinteger(c.seed)},
      {"status", text(r.status)},
      {"message", text(r.message)},
      {"levels", opt_int(ran && ng, r.levels)},
      {"planned_levels", opt_int(ran && ng && r.planned_levels >= 0, r.planned_levels)},
      {"depth_source", opt_text(ran && ng && r.depth_source >= 0,
                                depth_source_name(r.depth_source))},
      {"predicted_speedup", number(ran && ng ? r.predicted_speedup : 0)},
      {"leaf", opt_int(ng && r.leaf > 0, r.leaf)},
      {"max_levels", opt_int(ng && r.max_levels >= 0, r.max_levels)},
      {"ws_bytes", opt_int(ran, (long long)r.ws_bytes)},
      {"ws_held_bytes", opt_int(ran && ng, (long long)r.ws_held)},
      {"reps", opt_int(ran, r.reps)},
      {"warmup", opt_int(ran, r.warmup)},
      {"train", opt_int(ran, r.train)},
      {"ours_ms", number(r.t_ours * 1e3)},
      {"base_ms", number(r.t_base * 1e3)},
      {"ours_min_ms", number(r.t_ours_min * 1e3)},
      {"base_min_ms", number(r.t_base_min * 1e3)},
      {"ours_tflops", number(tflops(c, r.t_ours))},
      {"base_tflops", number(tflops(c, r.t_base))},
      {"speedup", number(r.t_base / r.t_ours)},
      {"ours_max_rel", number(r.ours.max_rel)},
      {"ours_mean_rel", number(r.ours.mean_rel)},
      {"ours_max_abs", number(r.ours.max_abs)},
      {"ours_nonfinite", opt_int(ran, r.ours.nonfinite)},
      {"base_max_rel", number(r.base.max_rel)},
      {"base_mean_rel", number(r.base.mean_rel)},
      {"base_max_abs", number(r.base.max_abs)},
      {"base_nonfinite", opt_int(ran && c.baseline, r.base.nonfinite)},
      {"acc_gain", number(r.base.max_rel / r.ours.max_rel)},
      {"ref_mode", opt_text(ran, r.ref_full ? "all" : "sampled")},
      {"ref_entries", opt_int(ran, r.ref_entries)},
      {"ref_zero", opt_int(ran, r.ours.zero_ref)},
      {"phi", number(c.dist == Dist::Phi ? c.phi : kNaN)},
      {"ex_max_slices_a", opt_int(info, r.ex.max_slices_a)},
      {"ex_max_slices_b", opt_int(info, r.ex.max_slices_b)},
      {"slice_products", number(info ? r.ex.slice_products : kNaN)},
      {"ex_blocks", opt_int(info, r.ex.blocks)},
      {"ex_block_rows", opt_int(info, r.ex.block_rows)},
      {"ex_block_cols", opt_int(info, r.ex.block_cols)},
      {"ex_wide_entries", opt_int(info && r.ex.wide_entries >= 0, r.ex.wide_entries)},
      {"time_ratio", number(r.t_ours / r.t_base)},
      {"model_ratio", number(info ? model_ratio(r, r.t_base) : kNaN)},
      {"ours_wrong", opt_int(ran && ex, r.ours.wrong)},
      {"base_wrong", opt_int(ran && ex && c.baseline, r.base.wrong)},
      {"base_train_ms", number(r.t_base_train * 1e3)},
      {"model_train_ratio", number(info ? model_ratio(r, r.t_base_train) : kNaN)},
      // Added with strassen and winograd, after the older fields so that
      // their positions stay.
      {"level_forced", opt_int(r.level_forced >= 0, r.level_forced)},
      {"ours_maxnorm", number(r.ours.max_norm)},
      {"ours_meannorm", number(r.ours.mean_norm)},
      {"base_maxnorm", number(r.base.max_norm)},
      {"base_meannorm", number(r.base.mean_norm)},
      {"err_ratio", number(r.ours.max_norm / r.base.max_norm)},
      {"ours_maxI", number(r.ours.max_id)},
      {"ours_meanI", number(r.ours.mean_id)},
      {"base_maxI", number(r.base.max_id)},
      {"base_meanI", number(r.base.mean_id)},
      {"ref_maxI", number(r.ref_max_id)},
      {"ref_meanI", number(r.ref_mean_id)},
      {"cpu_maxrel", number(cpu.max_rel)},
      {"cpu_meanrel", number(cpu.mean_rel)},
      {"cpu_maxabs", number(cpu.max_abs)},
      {"cpu_maxnorm", number(cpu.max_norm)},
      {"cpu_meannorm", number(cpu.mean_norm)},
      {"cpu_maxI", number(cpu.max_id)},
      {"cpu_meanI", number(cpu.mean_id)},
      {"cpu_nonfinite", opt_int(r.has_cpu, cpu.nonfinite)},
      {"nn_levels", opt_int(r.has_nn, r.nn_levels)},
      {"nn_maxrel", number(nn.max_rel)},
      {"nn_meanrel", number(nn.mean_rel)},
      {"nn_maxabs", number(nn.max_abs)},
      {"nn_maxnorm", number(nn.max_norm)},
      {"nn_meannorm", number(nn.mean_norm)},
      {"nn_base_maxrel", number(nn_base.max_rel)},
      {"nn_base_meanrel", number(nn_base.mean_rel)},
      {"nn_base_maxnorm", number(nn_base.max_norm)},
      {"nn_base_meannorm", number(nn_base.mean_norm)},
      {"leaf_calls", opt_int(r.leaf_calls > 0, r.leaf_calls)},
      {"leaf_ms", number(r.t_leaf * 1e3)},
      {"outside", number(1 - r.t_leaf / r.t_ours)},
      {"timed_beta", number(c.timed_beta)},
      // Added with exdgemm's modular engine.
      {"ex_engine", opt_text(info, engine_name(r.ex.engine))},
      {"ex_moduli", opt_int(info && r.ex.engine == 2, r.ex.moduli)},
      {"ex_exponents_ms", number(r.ex_phase_ms[0])},
      {"ex_conversion_ms", number(r.ex_phase_ms[1])},
      {"ex_products_ms", number(r.ex_phase_ms[2])},
      {"ex_sums_ms", number(r.ex_phase_ms[3])},
      {"int8_train_ms", number(r.t_int8_train * 1e3)},
      {"products_tops", number(int8_tops(c, r))},
      {"int8_fraction", number(int8_fraction(r))},
      // Added with the chunked k (issue 33).
      {"best_int8_tops", number(r.best_int8_tops)},
      {"int8_best_fraction", number(int8_best_fraction(c, r))},
      {"ex_k_chunks", opt_int(info && r.ex.engine == 2, r.ex.k_chunks)},
      {"ex_k_slots", opt_int(info && r.ex.engine == 2, r.ex.k_slots)},
      {"ex_fused_operands", opt_int(info && r.ex.engine == 2, r.ex.fused_operands)},
      {"timed_alpha", number(c.timed_alpha)},
  };
}

// Totals over the exdgemm rows printed, for the closing summary.
struct ExTotals {
  std::int64_t cases = 0, checked = 0, ours_wrong = 0, base_wrong = 0, base_checked = 0;
  double max_model = kNaN, max_model_train = kNaN;
  double min_rate = kNaN, max_rate = kNaN;  // modular rows: dgemm_ms / ex_ms

  void add(const CaseSpec &c, const CaseResult &r) {
    const double rate = r.t_base / r.t_ours;
    if (r.has_ex && r.ex.engine == 2 && std::isfinite(rate)) {
      if (!(rate >= min_rate)) min_rate = rate;
      if (!(rate <= max_rate)) max_rate = rate;
    }
    ++cases;
    checked += r.ref_entries;
    ours_wrong += r.ours.wrong;
    if (c.baseline) {
      base_wrong += r.base.wrong;
      base_checked += r.ref_entries;
    }
    const double model = model_ratio(r, r.t_base);
    const double model_tr = model_ratio(r, r.t_base_train);
    if (std::isfinite(model) && !(model <= max_model)) max_model = model;
    if (std::isfinite(model_tr) && !(model_tr <= max_model_train))
      max_model_train = model_tr;
  }

  void print() const {
    if (cases == 0) return;
    if (ours_wrong == 0)
      std::printf(
          "exdgemm: 0 wrong entries: all %lld checked entries are correctly rounded",
          (long long)checked);
    else
      std::printf(
          "EXDGEMM: %lld OF %lld CHECKED ENTRIES ARE NOT CORRECTLY ROUNDED (ERROR rows)",
          (long long)ours_wrong, (long long)checked);
    if (base_checked > 0)
      std::printf("; DGEMM: %lld of %lld wrong", (long long)base_wrong,
                  (long long)base_checked);
    std::printf("\n");
    if (std::isfinite(max_model))
      std::printf(
          "model = ex_ms / (prods * dgemm_ms): largest %.3f (GPU target <= 1.15)\n",
          max_model);
    if (std::isfinite(max_model_train))
      std::printf(
          "model_tr = ex_ms / (prods * dgemm_ms of a DGEMM train as long as the "
          "products): largest %.3f\n",
          max_model_train);
    if (std::isfinite(min_rate))
      std::printf(
          "modular engine: rate against DGEMM (dgemm_ms / ex_ms) %.0f %% to %.0f %%\n",
          100 * min_rate, 100 * max_rate);
  }
};

// -------------------------------------------------------------------- cases

struct Section {
  std::string title;
  std::vector<CaseSpec> cases;
};

CaseSpec base_spec(const GemmOptions &o) {
  CaseSpec c;
  c.routine = o.routine;
  c.dist = o.dist;
  c.phi = o.phi;
  c.ex_budget = o.ex_budget;
  c.ex_block = o.ex_block;
  c.reps = o.reps;
  c.time_budget = o.time_budget;
  c.train_below = o.train_below;
  c.warmup = o.warmup;
  c.levels = o.levels;
  c.leaf = o.leaf;
  c.min_size = o.min_size;
  c.check_nonneg = o.check_nonneg;
  c.ref_samples = o.ref_samples;
  c.baseline = o.baseline;
  c.cpu_leaf = o.cpu_leaf;
  c.level_lo = o.level_lo;
  c.level_hi = o.level_hi;
  c.leaf_train = o.leaf_train;
  c.cpu_baseline = o.cpu_baseline;
  c.ngemm_u01 = o.ngemm_u01;
  c.timed_beta = o.timed_beta;
  c.timed_alpha = o.timed_alpha;
  return c;
}

std::vector<Section> gemm_sections(const GemmOptions &o, bool gpu) {
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
        // What only the GPU runner does (the CPU header says so).
        if (!gpu) {
          c.leaf_train = c.cpu_baseline = c.ngemm_u01 = false;
          c.timed_beta = 0;
          c.timed_alpha = 1;
        }
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

std::vector<Section> demo_sections(const GemmOptions &o, bool gpu) {
  std::vector<Section> out;
  // An ngemm section: d and s at each size, with the leaf (-1: the
  // library's), the CPU leaf kind and the seconds of timed calls per case.
  auto part = [&](const char *title, std::vector<long long> sizes, long long leaf,
                  CpuLeafKind kind, double budget) {
    Section s{title, {}};
    for (char p : {'d', 's'})
      for (long long n : sizes) {
        CaseSpec c = base_spec(o);
        c.prec = p;
        c.m = c.n = c.k = n;
        c.leaf = leaf;
        c.min_size = leaf > 0 ? 0 : -1;
        c.cpu_leaf = kind;
        c.time_budget = budget;
        s.cases.push_back(c);
      }
    out.push_back(s);
  };
  const CpuLeafKind blas = CpuLeafKind::OpenBlas;
  if (gpu) {
    part("xnDngemm/xnSngemm vs cublasDgemm/cublasSgemm, library defaults",
         {4096, 8192, 16384}, -1, blas, 1.0);
    part("the same with leaf 1024, so the recursion runs at moderate sizes", {4096, 8192},
         1024, blas, 1.0);
  } else {
    part(
        "cblas_dngemm/cblas_sngemm (Winograd over OpenBLAS leaves, leaf 128) vs "
        "OpenBLAS cblas_dgemm/cblas_sgemm",
        {256, 512, 1024}, 128, blas, 0.5);
    part(
        "GPU accumulation order emulated on the CPU: Winograd over the preload-loop "
        "leaf (leaf 32) vs the preload loop alone (an accuracy comparison: the loop "
        "is naive, so its times say little)",
        {256, 512}, 32, CpuLeafKind::Preload, 0.3);
  }
  // Strassen and Winograd for general (signed) inputs, one section each.
  for (Routine r : {Routine::Strassen, Routine::Winograd}) {
    Section f{std::string(
                  gpu ? (r == Routine::Strassen ? "xn?gemmStrassen" : "xn?gemmWinograd")
                      : (r == Routine::Strassen ? "cblas_?stgemm (Strassen, leaf 128)"
                                                : "cblas_?wigemm (Winograd, leaf 128)")) +
                  " on uniform [-1, 1) inputs vs " +
                  (gpu ? "cublasDgemm/cublasSgemm, library defaults"
                       : "OpenBLAS cblas_dgemm/cblas_sgemm") +
                  "; errors normalised by mean |C|",
              {}};
    for (char p : {'d', 's'})
      for (long long n :
           gpu ? std::vector<long long>{16384} : std::vector<long long>{512, 1024}) {
        CaseSpec c = base_spec(o);
        c.routine = r;
        c.dist = Dist::Upm1;
        c.prec = p;
        c.m = c.n = c.k = n;
        c.leaf = gpu ? -1 : 128;
        c.min_size = gpu ? -1 : 0;
        c.time_budget = gpu ? 1.0 : 0.3;
        f.cases.push_back(c);
      }
    out.push_back(f);
  }
  // The correctly rounded DGEMM next to the vendor's: phi = 1 and
  // ill-conditioned inputs.
  Section ex{"correctly rounded DGEMM: " +
                 std::string(gpu ? "xnExdgemm vs cublasDgemm"
                                 : "cblas_exdgemm vs OpenBLAS cblas_dgemm") +
                 "; wrong = checked entries that are not the correctly rounded value",
             {}};
  for (Dist d : {Dist::Phi, Dist::Illcond}) {
    CaseSpec c = base_spec(o);
    c.routine = Routine::Exdgemm;
    c.prec = 'd';
    c.m = c.n = c.k = gpu ? 4096 : 256;
    c.dist = d;
    c.phi = 1;
    c.time_budget = gpu ? 1.0 : 0.3;
    ex.cases.push_back(c);
  }
  out.push_back(ex);
  return out;
}

// The run's header: device, library settings, inputs, timing, reference.
void print_settings(const GemmOptions &o, const Runner &runner,
                    const std::vector<Section> &sections) {
  const bool gpu = runner.is_gpu();
  std::int64_t leaf_d = 0, leaf_s = 0, levels = 0;
  xnGetOption(nullptr, XN_OPT_LEAF_SIZE_D, &leaf_d);
  xnGetOption(nullptr, XN_OPT_LEAF_SIZE_S, &leaf_s);
  xnGetOption(nullptr, XN_OPT_MAX_LEVELS, &levels);
  std::printf("%s", runner.describe().c_str());
  if (!gpu) {
    const char *pol = std::getenv("OMP_WAIT_POLICY");
    std::printf("OMP_WAIT_POLICY=%s%s\n", pol ? pol : "(unset)",
                std::getenv("XNBENCH_SET_OMP_WAIT_POLICY")
                    ? " (set by xnbench; export OMP_WAIT_POLICY to choose)"
                    : "");
  }
  bool any_ngemm = false, any_ex = false, any_fast = false;
  for (const Section &s : sections)
    for (const CaseSpec &c : s.cases)
      (c.routine == Routine::Exdgemm ? any_ex
       : is_fast_gemm(c.routine)     ? any_fast
                                     : any_ngemm) = true;
  const std::string per_level = o.level_lo < 0
                                    ? std::string()
                                    : "; --per-level " + std::to_string(o.level_lo) +
                                          ":" + std::to_string(o.level_hi) +
                                          " (one row per depth L: max levels L, leaf "
                                          "ceil(min(m,n,k)/2^L), crossover 0)";
  // -1: "auto" (leaf: the device's model on a GPU, the rule's 4096 / 2048 on the
  // CPU), "none" (no crossover of the user's own).
  auto value = [](std::int64_t v, const char *minus_one) {
    return v == -1 ? std::string(minus_one) : std::to_string(v);
  };
  if (any_ngemm)
    std::printf(
        "library defaults: leaf d=%s s=%s, max levels %lld (XN_* environment "
        "applied)%s%s%s\n",
        value(leaf_d, "auto").c_str(), value(leaf_s, "auto").c_str(), (long long)levels,
        o.leaf > 0 ? ("; --leaf " + std::to_string(o.leaf)).c_str() : "",
        o.levels >= 0 ? ("; --levels " + std::to_string(o.levels)).c_str() : "",
        per_level.c_str());
  if (any_fast) {
    const Routine rt = o.routine;
    std::int64_t fl_d = 0, fl_s = 0, fm_d = 0, fm_s = 0;
    xnGetOption(nullptr, leaf_option(rt, true), &fl_d);
    xnGetOption(nullptr, leaf_option(rt, false), &fl_s);
    xnGetOption(nullptr, min_size_option(rt, true), &fm_d);
    xnGetOption(nullptr, min_size_option(rt, false), &fm_s);
    std::printf(
        "library defaults (%s): leaf d=%s s=%s, crossover d=%s s=%s, max levels "
        "%lld (XN_* environment applied)%s%s%s%s\n",
        routine_name(rt), value(fl_d, "auto").c_str(), value(fl_s, "auto").c_str(),
        value(fm_d, "none").c_str(), value(fm_s, "none").c_str(), (long long)levels,
        o.leaf > 0 ? ("; --leaf " + std::to_string(o.leaf)).c_str() : "",
        o.levels >= 0 ? ("; --levels " + std::to_string(o.levels)).c_str() : "",
        o.min_size >= 0 ? ("; --min-size " + std::to_string(o.min_size)).c_str() : "",
        per_level.c_str());
  }
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
                (unsigned long long)o.seed);
  else
    std::printf("inputs: %s, base seed %llu (replay with --seed %llu)\n",
                dist_description(base_spec(o)).c_str(), (unsigned long long)o.seed,
                (unsigned long long)o.seed);
  std::printf(
      "timing: %s around each call; accuracy call first (C poisoned with NaN), "
      "%d warm-up call(s), then %s timed calls of each routine, interleaved; "
      "median reported; calls under %g ms timed in trains of back-to-back calls "
      "(column train)\n",
      gpu ? "CUDA events" : "steady_clock", o.warmup,
      o.reps > 0 ? std::to_string(o.reps).c_str() : "3..25 (automatic)",
      o.train_below * 1e3);
  const std::string samples =
      o.ref_samples > 0 ? std::to_string(o.ref_samples) : std::string("(all)");
  if (any_ngemm || any_fast)
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
  if (any_fast)
    std::printf(
        "errors: maxnorm, meannorm = max, mean of |c - ref| / mean |ref| over the "
        "checked entries (Li, Ranka, Sahni, ICPADS'11, Figure 44); err_ratio = "
        "ours_maxnorm / base_maxnorm\n");
  if (o.dist == Dist::Paper && o.command != "demo")
    std::printf(
        "maxI, meanI = max, mean of |c - I| over the checked entries; ref_maxI = max "
        "|ref - I|, the exact product of the rounded A and B against I\n");
  const bool gpu_only =
      o.leaf_train || o.cpu_baseline || o.ngemm_u01 || o.timed_beta != 0 ||
      o.timed_alpha != 1;
  if (gpu_only && !gpu)
    std::printf(
        "note: --leaf-train, --cpu-baseline, --ngemm-u01, --timed-alpha and --timed-beta "
        "are GPU options: ignored on the CPU\n");
  if (gpu && o.leaf_train)
    std::printf(
        "leaf train: after a case that ran L > 0 levels, 7^L back-to-back cuBLAS GEMMs "
        "of the leaf shape (core / 2^L, NN, beta = 0) between one event pair, median of "
        "3; outside = 1 - leaf_ms / ours_ms\n");
  if (gpu && o.cpu_baseline)
    std::printf(
        "cpu baseline: OpenBLAS cblas_?gemm on the host from the same inputs (%d "
        "threads), errors only\n",
        host_blas_threads());
  if (gpu && (o.timed_beta != 0 || o.timed_alpha != 1))
    std::printf(
        "timed calls: C = %g A B + %g C, ours and the baseline (the accuracy call: C = "
        "A B)\n",
        o.timed_alpha, o.timed_beta);
  if (gpu && o.ngemm_u01)
    std::printf(
        "ngemm-u01: xn?ngemm at the same depth on fresh uniform [0,1) inputs, with "
        "cublas?gemm on them: the nn_* fields of the CSV/JSON\n");
}

// The GPU runner when the options ask for one and it can be had, else the
// CPU runner; nullptr when --device gpu cannot be honoured.
std::unique_ptr<Runner> make_runner(const GemmOptions &o) {
  if (o.device == "gpu" && o.cpu_leaf == CpuLeafKind::Preload)
    usage_error("--cpu-leaf preload needs --device cpu");
  if (o.device == "gpu" || (o.device == "auto" && o.cpu_leaf == CpuLeafKind::OpenBlas &&
                            cuda_device_count() > 0)) {
    std::string why;
    std::unique_ptr<Runner> gpu = make_gpu_runner(&why);
    if (gpu) return gpu;
    std::fprintf(stderr, "xnbench: cannot use the GPU: %s\n", why.c_str());
    if (o.device == "gpu") return nullptr;
  }
  return make_cpu_runner();
}

}  // namespace

int run_gemm(const GemmOptions &o) {
  const std::unique_ptr<Runner> runner = make_runner(o);
  if (!runner) return 1;
  const bool gpu = runner->is_gpu();

  std::vector<Section> sections =
      o.command == "demo" ? demo_sections(o, gpu) : gemm_sections(o, gpu);
  std::size_t total = 0, index = 0;
  for (Section &s : sections)
    for (CaseSpec &c : s.cases) c.seed = o.seed + kGolden * ++total;

  print_banner(o.command);
  print_settings(o, *runner, sections);

  RecordFiles files(o.command, runner->device_name(), o.seed);
  std::string error;
  if (!files.open(o.csv, o.json, gemm_fields(CaseSpec{}, CaseResult{}, "", ""), &error))
    usage_error(error);
  ExTotals ex_totals;
  bool failed = false, fatal = false;
  Progress progress(o.quiet);
  progress.set_total(total);
  for (const Section &s : sections) {
    if (fatal) break;
    std::printf("\n");
    if (!s.title.empty()) std::printf("== %s\n", s.title.c_str());
    if (!s.cases.empty()) {
      const CaseSpec &c0 = s.cases.front();
      std::printf("ours: %s; baseline: %s\n", runner->ours_name(c0).c_str(),
                  c0.baseline ? runner->base_name(c0).c_str() : "(none)");
    }
    const bool ex_section =
        !s.cases.empty() && s.cases.front().routine == Routine::Exdgemm;
    GemmColumns cols;
    if (!s.cases.empty()) {
      const CaseSpec &c0 = s.cases.front();
      cols.fast = is_fast_gemm(c0.routine);
      cols.paper = c0.dist == Dist::Paper;
      cols.cpu = c0.cpu_baseline;
      cols.train = c0.leaf_train;
    }
    const TableLayout table = ex_section ? kExdgemmTable : gemm_table(cols);
    table.print_header();
    for (const CaseSpec &c : s.cases) {
      const bool ex = c.routine == Routine::Exdgemm;
      std::string what = (ex ? "exdgemm " + dist_label(c) : std::string(1, c.prec)) +
                         " " + trans_str(c.ta, c.tb) + " " + shape_str(c.m, c.n, c.k);
      if (c.level_lo >= 0)
        what +=
            " levels " + std::to_string(c.level_lo) + ":" + std::to_string(c.level_hi);
      progress.report(++index, what);
      for (const CaseResult &r : runner->run(c)) {
        if (ex) {
          table.print_row(exdgemm_cells(c, r), ran_row(r), r.status, r.message);
          if (ran_row(r)) ex_totals.add(c, r);
        } else {
          table.print_row(gemm_cells(c, r, cols), ran_row(r), r.status, r.message);
        }
        files.record(gemm_fields(c, r, runner->ours_name(c),
                                 c.baseline ? runner->base_name(c) : ""));
        if (r.status == "error") failed = true;
        if (r.fatal) {
          fatal = true;
          std::fprintf(stderr, "xnbench: the device is unusable, stopping: %s\n",
                       r.message.c_str());
          break;
        }
      }
      if (fatal) break;
    }
  }
  print_done(index, "case(s)", progress.seconds(), failed);
  if (o.command == "demo")
    std::printf(
        "speedup = base_ms / ours_ms (> 1: ours faster); acc_gain = base_maxrel / "
        "ours_maxrel (> 1: ours more accurate)\n");
  ex_totals.print();
  return failed ? 1 : 0;
}

}  // namespace xnb
