// options.h - tuning and behaviour options (xnOption_t), per handle and
// process-wide. Built-in defaults, then XN_* environment variables, then
// explicit xnSetOption calls.
#pragma once

#include <cstdint>

namespace xn {

struct Options {
  // Leaf sizes and k-splits tuned on the H200 (docs/performance.md): single
  // precision's elementwise passes move half the bytes, so one more level pays.
  std::int64_t leaf_s = 2048;
  std::int64_t leaf_d = 4096;
  std::int64_t max_levels = 6;
  std::int64_t check_nonneg = 0;
  std::int64_t workspace_limit = -1;  // bytes; -1 = unlimited
  // Longest k a leaf GEMM sums in one chain (0 = no split): at least 5x more
  // accurate than cuBLAS from n = 16384 for 1-2% of the time.
  std::int64_t kchain_s = 1024;
  std::int64_t kchain_d = 2048;
  // No recursion below (m n k)^(1/3) = min_size. Single precision with one
  // or two levels (n = 7168..13312, leaves of 2304-3584) measured 0.97-1.09x
  // of cuBLAS on the H200; from 14336 up, 1.04-1.36x (docs/performance.md).
  std::int64_t min_size_s = 14336;
  std::int64_t min_size_d = 0;
  // Store the B-side temporaries non-transposed when op(B) is transposed
  // (XN_OPT_PACK_TRANS_B, a name kept from the packing it replaced): -1
  // automatic (double precision with op(A) = A: cuBLAS's double NT leaves
  // are slower than NN on the H200), 0 never, 1 whenever op(B) is
  // transposed. plan.h's stores_t_normal() decides.
  std::int64_t normal_b_temps = -1;
  // xnExdgemm: workspace budget in bytes (0 = a quarter of the free device
  // memory; 1 GiB on the CPU) and a forced block size of C (0 = automatic).
  std::int64_t exdgemm_workspace_limit = 0;
  std::int64_t exdgemm_block = 0;
  // xnSsymv/xnDsymv: kernel variant (symv_launch.h table; 0 = tuned default).
  std::int64_t symv_variant = 0;

  std::int64_t leaf_for(bool is_double) const { return is_double ? leaf_d : leaf_s; }
  std::int64_t kchain_for(bool is_double) const {
    return is_double ? kchain_d : kchain_s;
  }
  std::int64_t min_size_for(bool is_double) const {
    return is_double ? min_size_d : min_size_s;
  }
};

// Built-in values overridden by the environment, read once.
Options options_from_environment();

// The process-wide defaults: what new handles and the host API start from.
Options default_options();
void set_default_options(const Options &o);
// Applies one option to the process-wide defaults atomically (validated as
// apply_option); concurrent setters of different options never lose updates.
bool update_default_option(int option, std::int64_t value);

// Validates and applies one option; false for an unknown option or a value out
// of range (the option is then unchanged).
bool apply_option(Options &o, int option, std::int64_t value);
bool read_option(const Options &o, int option, std::int64_t *value);

// Which processor the host API uses (XN_DEVICE=cpu|gpu|auto).
enum class HostDevice { Auto, Cpu, Gpu };
HostDevice host_device_from_environment();

}  // namespace xn
