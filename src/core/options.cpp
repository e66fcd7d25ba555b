// options.cpp - the option table, environment overrides and validation.
#include "core/options.h"

#include <mutex>

#include "core/environment.h"
#include "core/symv_variants.h"

namespace xn {

namespace {

constexpr std::int64_t kInt31 = std::int64_t(1) << 31;
constexpr std::int64_t kMaxI64 = INT64_MAX;

// A leaf size: -1 (the device's model chooses the depth) or at least 1.
bool is_leaf_size(std::int64_t v) { return v == -1 || v >= 1; }

bool is_compiled_symv_variant(std::int64_t v) {
  return v == 0 || symv_variant_compiled(int(v));
}

// clang-format off
// Depth: leaf sizes and crossovers default to -1, the depth from the
// device's model (core/device_model.h; docs/design.md, "Parameters from the
// device"); a value >= 0 is the user's rule and overrides it. Leaf k-chains:
// chaining k at 1024 / 2048 makes the result at least 5x more accurate than
// cuBLAS from n = 16384 for 1-2 % of the time (H200, docs/performance.md).
constexpr OptionSpec kOptionTable[] = {
  {0, "XN_OPT_LEAF_SIZE_S", "XN_LEAF_S", &Options::leaf_s, -1, kMaxI64, -1, is_leaf_size,
   "-1 = the depth from the device's model (measured rates of the leaf GEMM and of memory); N >= 1: recursion continues while the two largest dimensions stay at least N (the smallest at least N/2); single precision"},
  {1, "XN_OPT_LEAF_SIZE_D", "XN_LEAF_D", &Options::leaf_d, -1, kMaxI64, -1, is_leaf_size,
   "the same for double precision"},
  {2, "XN_OPT_MAX_LEVELS", "XN_MAX_LEVELS", &Options::max_levels, 0, 30, 6, nullptr,
   "cap on the recursion depth (0 = plain cuBLAS)"},
  {3, "XN_OPT_CHECK_NONNEG", "XN_CHECK_NONNEG", &Options::check_nonneg, 0, 1, 0, nullptr,
   "scan the inputs, fall back to the classical product on a negative entry"},
  {4, "XN_OPT_WORKSPACE_LIMIT", "XN_WORKSPACE_LIMIT", &Options::workspace_limit, -1, kMaxI64, -1, nullptr,
   "largest workspace (bytes) the library may allocate for the recursion of xn?ngemm, xn?gemmStrassen, xn?gemmWinograd (-1 = no limit)"},
  {5, "XN_OPT_LEAF_KCHAIN_S", "XN_KCHAIN_S", &Options::kchain_s, 0, kMaxI64, 1024, nullptr,
   "longest k a leaf GEMM sums in one chain (longer leaves are split along k: more accurate, 1-2 % slower); single precision"},
  {6, "XN_OPT_LEAF_KCHAIN_D", "XN_KCHAIN_D", &Options::kchain_d, 0, kMaxI64, 2048, nullptr,
   "the same for double precision"},
  {7, "XN_OPT_MIN_SIZE_S", "XN_MIN_SIZE_S", &Options::min_size_s, -1, kInt31, -1, nullptr,
   "no recursion for (m n k)^(1/3) below this: the call is exactly cuBLAS (-1 = the device's model alone; with a leaf size set, or on the CPU, 14336 single and 0 double); single precision"},
  {8, "XN_OPT_MIN_SIZE_D", "XN_MIN_SIZE_D", &Options::min_size_d, -1, kInt31, -1, nullptr,
   "the same for double precision"},
  {9, "XN_OPT_EXDGEMM_WORKSPACE_LIMIT", "XN_EXDGEMM_WORKSPACE_LIMIT", &Options::exdgemm_workspace_limit, 0, kMaxI64, 0, nullptr,
   "xnExdgemm: workspace budget in bytes (0 = a supplied workspace, else a quarter of the free device memory; 1 GiB on the CPU)"},
  {10, "XN_OPT_EXDGEMM_BLOCK", "XN_EXDGEMM_BLOCK", &Options::exdgemm_block, 0, kInt31, 0, nullptr,
   "xnExdgemm: force the block size of C (0 = chosen from the budget)"},
  {11, "XN_OPT_PACK_TRANS_B", "XN_PACK_TRANS_B", &Options::normal_b_temps, -1, 1, -1, nullptr,
   "with transb != N, store the B-side temporaries non-transposed and pack op(B)'s quadrants: -1 = double with the A side non-transposed (transa = N, or XN_OPT_PACK_TRANS_A), 0 = never, 1 = always"},
  {12, "XN_OPT_SYMV_VARIANT", "XN_SYMV_VARIANT", &Options::symv_variant, 0, kSymvMaxVariantId, 0, is_compiled_symv_variant,
   "xnSsymv/xnDsymv kernel variant (0 = the tuned default; others need XN_BUILD_TUNING)"},
  {13, "XN_OPT_STRASSEN_LEAF_S", "XN_STRASSEN_LEAF_S", &Options::strassen_leaf_s, -1, kMaxI64, -1, is_leaf_size,
   "xnSgemmStrassen: leaf size, as XN_OPT_LEAF_SIZE_S"},
  {14, "XN_OPT_STRASSEN_LEAF_D", "XN_STRASSEN_LEAF_D", &Options::strassen_leaf_d, -1, kMaxI64, -1, is_leaf_size,
   "xnDgemmStrassen: leaf size"},
  {15, "XN_OPT_STRASSEN_MIN_SIZE_S", "XN_STRASSEN_MIN_SIZE_S", &Options::strassen_min_size_s, -1, kInt31, -1, nullptr,
   "xnSgemmStrassen: no recursion for (m n k)^(1/3) below this, as XN_OPT_MIN_SIZE_S"},
  {16, "XN_OPT_STRASSEN_MIN_SIZE_D", "XN_STRASSEN_MIN_SIZE_D", &Options::strassen_min_size_d, -1, kInt31, -1, nullptr,
   "xnDgemmStrassen: crossover"},
  {17, "XN_OPT_WINOGRAD_LEAF_S", "XN_WINOGRAD_LEAF_S", &Options::winograd_leaf_s, -1, kMaxI64, -1, is_leaf_size,
   "xnSgemmWinograd: leaf size"},
  {18, "XN_OPT_WINOGRAD_LEAF_D", "XN_WINOGRAD_LEAF_D", &Options::winograd_leaf_d, -1, kMaxI64, -1, is_leaf_size,
   "xnDgemmWinograd: leaf size"},
  {19, "XN_OPT_WINOGRAD_MIN_SIZE_S", "XN_WINOGRAD_MIN_SIZE_S", &Options::winograd_min_size_s, -1, kInt31, -1, nullptr,
   "xnSgemmWinograd: crossover"},
  {20, "XN_OPT_WINOGRAD_MIN_SIZE_D", "XN_WINOGRAD_MIN_SIZE_D", &Options::winograd_min_size_d, -1, kInt31, -1, nullptr,
   "xnDgemmWinograd: crossover"},
  {21, "XN_OPT_PACK_TRANS_A", "XN_PACK_TRANS_A", &Options::normal_a_temps, -1, 1, -1, nullptr,
   "with transa != N, store the A-side temporaries non-transposed: -1 = double with transb = N, 0 = never, 1 = always"},
  {22, "XN_OPT_EXDGEMM_ENGINE", "XN_EXDGEMM_ENGINE", &Options::exdgemm_engine, 0, 2, 0, nullptr,
   "xnExdgemm: the engine of the exact products: 0 = chosen per call from the bits the inputs need, 1 = FP64 slices, 2 = modular integer products (where the inputs' range allows; else slices)"},
  {23, "XN_OPT_EXDGEMM_PHASE_TIMES", "XN_EXDGEMM_PHASE_TIMES", &Options::exdgemm_phase_times, 0, 1, 0, nullptr,
   "xnExdgemm: 1 = time each phase (waiting for the stream at every phase boundary) into xnExdgemmInfo_t's phase_ms"},
  {24, "XN_OPT_DIST_WORKSPACE_LIMIT", "XN_DIST_WORKSPACE_LIMIT", &Options::dist_workspace_limit, 0, kMaxI64, 0, nullptr,
   "PDNGEMM, PSNGEMM, PEXDGEMM: bytes per process for the gathered rows of op(A) and columns of op(B) (0 = as much as can be allocated)"},
  {25, "XN_OPT_DIST_TRANSPORT", "XN_DIST_TRANSPORT", &Options::dist_transport, 0, 2, 0, nullptr,
   "PDNGEMM, PSNGEMM, PEXDGEMM on device-resident operands: how blocks move between GPUs: 0 = NCCL where every process has its own GPU and libnccl.so.2 loads, else MPI; 1 = NCCL (else MPI); 2 = MPI (device buffers where MPI is CUDA-aware, else through pinned host memory)"},
  {26, "XN_OPT_EXDGEMM_K_CHUNK", "XN_EXDGEMM_K_CHUNK", &Options::exdgemm_k_chunk, 0, kInt31, 0, nullptr,
   "xnExdgemm, modular engine: force the length of k of each integer product (rounded up to a multiple of 16; 0 = chosen per call)"},
  {27, "XN_OPT_DEVICE_CALIBRATION", "XN_DEVICE_CALIBRATION", &Options::device_calibration, 0, 1, 1, nullptr,
   "recursive GEMMs' depth model: 1 = a calibration of this device (xnCalibrate, xnbench calibrate) where one is cached, else the built-in model; 0 = the built-in model"},
};
// clang-format on
constexpr std::size_t kOptionCount = sizeof kOptionTable / sizeof kOptionTable[0];

bool ids_are_positions() {
  for (std::size_t i = 0; i < kOptionCount; ++i)
    if (kOptionTable[i].id != int(i)) return false;
  return true;
}

// The process-wide defaults. Options has a constructor that runs code, so
// the storage is a function-local static: a static initialiser elsewhere
// may set an option before this file's own statics are initialised.
std::mutex g_defaults_mutex;  // constant-initialised
bool g_defaults_ready = false;
Options &defaults_storage() {
  static Options o;
  return o;
}

}  // namespace

Options::Options() {
  for (const OptionSpec &s : kOptionTable) this->*s.field = s.default_value;
}

const OptionSpec *option_table() { return kOptionTable; }
std::size_t option_count() { return kOptionCount; }

const OptionSpec *find_option(int id) {
  // The table is in id order (checked once; a misordered table finds nothing).
  static const bool ordered = ids_are_positions();
  if (!ordered || id < 0 || std::size_t(id) >= kOptionCount) return nullptr;
  return &kOptionTable[id];
}

Options options_from_environment() {
  Options o;
  for (const OptionSpec &s : kOptionTable) {
    // Through the row's range and check, so a bad environment value cannot
    // break an invariant; a rejected one is said once and the default kept.
    std::int64_t v = 0;
    if (env_integer(s.env, s.min, s.max, s.accept, s.default_value, &v))
      apply_option(o, s.id, v);
  }
  return o;
}

Options default_options() {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  if (!g_defaults_ready) {
    defaults_storage() = options_from_environment();
    g_defaults_ready = true;
  }
  return defaults_storage();
}

void set_default_options(const Options &o) {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  defaults_storage() = o;
  g_defaults_ready = true;
}

bool update_default_option(int option, std::int64_t value) {
  default_options();  // make sure the environment has been read
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  return apply_option(defaults_storage(), option, value);
}

bool apply_option(Options &o, int option, std::int64_t value) {
  const OptionSpec *s = find_option(option);
  if (!s || value < s->min || value > s->max || (s->accept && !s->accept(value)))
    return false;
  o.*s->field = value;
  return true;
}

bool read_option(const Options &o, int option, std::int64_t *value) {
  const OptionSpec *s = find_option(option);
  if (!s || !value) return false;
  *value = o.*s->field;
  return true;
}

HostDevice host_device_from_environment() {
  // kEnvironmentTable's words "auto|cpu|gpu", in HostDevice's order.
  static_assert(int(HostDevice::Auto) == 0 && int(HostDevice::Cpu) == 1 &&
                int(HostDevice::Gpu) == 2);
  return HostDevice(env_choice(EnvVar::Device));
}

}  // namespace xn
