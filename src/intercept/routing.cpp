// routing.cpp - the interposer's tables (modes, symbols), its environment,
// counts and exit log (routing.h).
#include "intercept/routing.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/interposer_support.h"
#include "core/environment.h"

namespace xn::intercept {

namespace {

// Why, as the exit summary says it (no comma, no parenthesis: its
// separators).
constexpr const char *kOutcomeNames[kOutcomes] = {
    "rerouted",
    "XN_INTERCEPT=off",
    "below the threshold",
    "negative entries",
    "NaN or Inf entries",
    "no routine in the mode",
    "bad arguments",
    "the library's own calls",
    "quick return",
    "libxngemm not loadable",
    "xNGEMM could not run them",
    "rerouted and failed",
    "sizes beyond 32-bit integers",
    "operand or compute types other than FP64"};

// The library's routines of each mode, by form (symbols.h's Form order):
// {double, single}; {} is none.
// clang-format off
#define XN_GEMM_ONLY(fortran_d, fortran_s, cblas_d, cblas_s, device_d, device_s) \
  {{fortran_d, fortran_s}, {cblas_d, cblas_s}, {}, {}, {}, {}, {device_d, device_s}, \
   {}, {}, {}, {}, {}, {}}
const Mode kModes[] = {
    {"exdgemm", Scan::None,
     {/* FortranGemm */ {"exdgemm_", nullptr}, /* CblasGemm */ {"cblas_exdgemm", nullptr},
      /* FortranGemv */ {"exdgemv_", nullptr}, /* CblasGemv */ {"cblas_exdgemv", nullptr},
      /* FortranDot */ {"exddot_", nullptr},   /* CblasDot */ {"cblas_exddot", nullptr},
      /* CublasGemm */ {"xnExdgemm", nullptr}, /* CublasGemmEx */ {"xnExdgemm", nullptr},
      /* CublasGemv */ {"xnExdgemv", nullptr},
      /* CublasDot */ {"xnExddot", nullptr},
      /* CublasGemmStridedBatched */ {"xnExdgemmStridedBatched", nullptr},
      /* CublasGemmBatched */ {"xnExdgemmBatched", nullptr},
      /* CublasDestroy */ {}}},
    {"ngemm", Scan::NonNeg,
     XN_GEMM_ONLY("dngemm_", "sngemm_", "cblas_dngemm", "cblas_sngemm", "xnDngemm", "xnSngemm")},
    {"strassen", Scan::Finite,
     XN_GEMM_ONLY("dstgemm_", "sstgemm_", "cblas_dstgemm", "cblas_sstgemm", "xnDgemmStrassen",
                  "xnSgemmStrassen")},
    {"winograd", Scan::Finite,
     XN_GEMM_ONLY("dwigemm_", "swigemm_", "cblas_dwigemm", "cblas_swigemm", "xnDgemmWinograd",
                  "xnSgemmWinograd")},
};
#undef XN_GEMM_ONLY
static_assert(int(Form::kForms) == 13, "kModes lists every form");
// clang-format on

// Every symbol, in SymbolId order (symbols.h).
#define XN_HOST_SYMBOL_ROW(name, form, T, Int) {#name, Form::form, true},
#define XN_CUBLAS_SYMBOL_ROW(name, form) {#name, Form::form, false},
Symbol g_symbols[kSymbols] = {XN_HOST_SYMBOLS(XN_HOST_SYMBOL_ROW)
                                  XN_CUBLAS_SYMBOLS(XN_CUBLAS_SYMBOL_ROW)};
#undef XN_HOST_SYMBOL_ROW
#undef XN_CUBLAS_SYMBOL_ROW

// XN_INTERCEPT_LOG=1, at exit: the totals, then one line per symbol that
// was called.
void print_log() {
  const Config &c = config();
  std::uint64_t total[2] = {0, 0};  // rerouted (including failed), passed through
  for (const Symbol &sym : g_symbols)
    for (int o = 0; o < kOutcomes; ++o)
      total[o == kRerouted || o == kDeviceError ? 0 : 1] += sym.count[o].load();
  std::fprintf(stderr,
               "xngemm intercept: %llu rerouted, %llu passed through (XN_INTERCEPT=%s, "
               "XN_INTERCEPT_MIN_FLOPS=%g, XN_INTERCEPT_MIN_VECTOR_FLOPS=%g)\n",
               static_cast<unsigned long long>(total[0]),
               static_cast<unsigned long long>(total[1]), c.mode_name, c.min_flops,
               c.min_vector_flops);
  for (const Symbol &sym : g_symbols) {
    std::uint64_t n[kOutcomes], passed = 0;
    for (int o = 0; o < kOutcomes; ++o) {
      n[o] = sym.count[o].load();
      if (o != kRerouted && o != kDeviceError) passed += n[o];
    }
    if (n[kRerouted] + n[kDeviceError] + passed == 0) continue;
    std::string line =
        std::string(sym.next.name()) + ": " + std::to_string(n[kRerouted]) + " rerouted";
    if (n[kDeviceError])
      line += ", " + std::to_string(n[kDeviceError]) + " " + kOutcomeNames[kDeviceError];
    if (passed) {
      line += ", " + std::to_string(passed) + " passed through (";
      const char *sep = "";
      for (int o = 0; o < kOutcomes; ++o)
        if (o != kRerouted && o != kDeviceError && n[o]) {
          line += sep + std::to_string(n[o]) + " " + kOutcomeNames[o];
          sep = ", ";
        }
      line += ") to " + targets(sym.next);
    }
    std::fprintf(stderr, "xngemm intercept:   %s\n", line.c_str());
  }
}

std::atomic<int (*)()> g_loaded_depth{nullptr};  // set once the library is loaded

}  // namespace

Symbol &symbol(SymbolId id) { return g_symbols[id]; }

void count(SymbolId id, Outcome o) {
  g_symbols[id].count[o].fetch_add(1, std::memory_order_relaxed);
}

const Config &config() {
  static const Config c = [] {
    Config r;
    const EnvSetting &s = environment_setting(EnvVar::Intercept);
    const std::string word = env_choice_word(s.choices, env_choice(s.id));
    for (const Mode &mode : kModes)
      if (word == mode.name) r.mode = &mode;
    if (r.mode) {
      r.mode_name = r.mode->name;
    } else if (word != "off") {  // kEnvironmentTable and kModes disagree
      diagnostic("intercept: no mode %s: every call passes through", word.c_str());
    }
    r.min_flops = env_number(EnvVar::InterceptMinFlops);
    r.min_vector_flops = env_number(EnvVar::InterceptMinVectorFlops);
    r.log = env_choice(EnvVar::InterceptLog) == 1;
    if (r.log) std::atexit(print_log);
    return r;
  }();
  return c;
}

namespace {
// At load: a bad value is said once, whether or not a routine is ever called.
__attribute__((constructor)) void read_environment_at_load() { config(); }
}  // namespace

bool inside_library() {
  static int (*const linked)() =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "xn_internal_call_depth"));
  if (linked && linked() > 0) return true;
  int (*const loaded)() = g_loaded_depth.load(std::memory_order_acquire);
  return loaded && loaded() > 0;
}

void *library_routine(const char *name) {
  void *h = library();
  if (!h) return nullptr;
  if (!g_loaded_depth.load(std::memory_order_acquire))
    g_loaded_depth.store(reinterpret_cast<int (*)()>(dlsym(h, "xn_internal_call_depth")),
                         std::memory_order_release);
  return dlsym(h, name);
}

const char *mode_routine(Form form, int precision) {
  const Mode *m = config().mode;
  return m ? m->routine[int(form)][precision] : nullptr;
}

void *mode_routine_address(Form form, int precision) {
  // Resolved once per form and precision (dlsym costs about a microsecond:
  // more than a short DDOT); a race resolves the same address twice.
  static std::atomic<void *> cache[int(Form::kForms)][2] = {};
  std::atomic<void *> &slot = cache[int(form)][precision];
  void *p = slot.load(std::memory_order_acquire);
  if (!p) {
    const char *name = mode_routine(form, precision);
    p = name ? library_routine(name) : nullptr;
    if (p) slot.store(p, std::memory_order_release);
  }
  return p;
}

double min_flops(Form form) {
  switch (form) {
    case Form::FortranGemv:
    case Form::CblasGemv:
    case Form::FortranDot:
    case Form::CblasDot:
    case Form::CublasGemv:
    case Form::CublasDot:
      return config().min_vector_flops;
    default:
      return config().min_flops;
  }
}

void prepare_host_call() {
  // ngemm mode keeps the non-negative product's accuracy promise on badly
  // scaled data: the host routines scan their operands and limit the depth
  // by their block maxima (docs/design.md, "Non-negative check"); the cuBLAS
  // path gets the depth from its own scan.
  static const bool checked = [] {
    if (config().mode->scan == Scan::NonNeg)
      if (const auto set = routine<decltype(&xn_internal_host_check_nonneg)>(
              "xn_internal_host_check_nonneg"))
        set(1);
    return true;
  }();
  (void)checked;
}

bool host_call_failed() {
  static const auto failed =
      routine<decltype(&xn_internal_host_call_failed)>("xn_internal_host_call_failed");
  return failed && failed() != 0;
}

}  // namespace xn::intercept
