// options.h - tuning and behaviour options, per handle and process-wide,
// described once: kOptionTable (options.cpp) gives each option's id (the
// value of its xnOption_t enumerator in include/xngemm.h), name,
// environment variable, field of Options, range, default and a one-line
// doc. Parsing of the environment, xnSetOption/xnGetOption and the host
// API's copy of the process-wide options into its handles all walk that
// table; a test checks that include/xngemm.h and the README's options table
// agree with it.
//
// Precedence: the table's defaults, then XN_* environment variables (read
// once, through core/environment.h's validator), then explicit xnSetOption
// calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.h"

namespace xn {

// One field per option; every field's default comes from the table.
struct Options {
  std::int64_t leaf_s, leaf_d;          // leaf sizes (single, double); -1 = the model
  std::int64_t max_levels;              // recursion depth cap
  std::int64_t check_nonneg;            // scan inputs for negatives
  std::int64_t workspace_limit;         // bytes the handle may allocate; -1 = none
  std::int64_t kchain_s, kchain_d;      // longest k of one leaf chain; 0 = no split
  std::int64_t min_size_s, min_size_d;  // no recursion below (m n k)^(1/3) = this; -1 = none
  // Store the B-side temporaries non-transposed when op(B) is transposed
  // (XN_OPT_PACK_TRANS_B): -1 automatic, 0 never, 1 always; plan.h's
  // stores_t_normal() decides.
  std::int64_t normal_b_temps;
  // The same for the A-side temporaries when op(A) is transposed
  // (XN_OPT_PACK_TRANS_A; plan.h, stores_s_normal).
  std::int64_t normal_a_temps;
  std::int64_t exdgemm_workspace_limit;  // exdgemm budget, bytes; 0 = automatic
  std::int64_t exdgemm_block;            // forced block of C; 0 = automatic
  std::int64_t exdgemm_engine;           // ExEngine (core/exdgemm.h): 0 = automatic
  std::int64_t exdgemm_phase_times;      // 1 = time the phases (ExdgemmReport)
  std::int64_t exdgemm_k_chunk;          // forced k of each modular product; 0 = automatic
  std::int64_t device_calibration;       // 1 = use this device's cached calibration
  std::int64_t dist_workspace_limit;     // P?NGEMM/PEXDGEMM strips, bytes; 0 = none
  std::int64_t dist_transport;           // device-resident P?GEMM: 0 auto, 1 NCCL, 2 MPI
  std::int64_t symv_variant;             // SYMV kernel variant; 0 = tuned default
  // xn?gemmStrassen / xn?gemmWinograd: leaf sizes and crossovers, as above
  std::int64_t strassen_leaf_s, strassen_leaf_d, strassen_min_size_s, strassen_min_size_d;
  std::int64_t winograd_leaf_s, winograd_leaf_d, winograd_min_size_s, winograd_min_size_d;

  Options();  // the table's defaults

  // A recursive GEMM's parameters for one precision, from kGemmKindFields
  // below: the NonNegWinograd row for the forms without a kind.
  std::int64_t leaf_for(GemmKind kind, bool is_double) const;
  std::int64_t min_size_for(GemmKind kind, bool is_double) const;
  std::int64_t kchain_for(GemmKind kind, bool is_double) const;
  std::int64_t leaf_for(bool is_double) const {
    return leaf_for(GemmKind::NonNegWinograd, is_double);
  }
  std::int64_t min_size_for(bool is_double) const {
    return min_size_for(GemmKind::NonNegWinograd, is_double);
  }
  std::int64_t kchain_for(bool is_double) const {
    return kchain_for(GemmKind::NonNegWinograd, is_double);
  }
};

// Which fields hold each recursive GEMM's options, single then double: one
// row per GemmKind, in its order. The general-input algorithms split no
// leaf along k (no k-chain fields): they are for speed, and the k-chain
// (1-2 % of a call) is part of ?ngemm's accuracy claim; not measured for
// them.
// (Through an alias: nvcc's front end prints arrays of member pointers with
// parentheses that GCC then warns about, in every .cu including this.)
using OptionField = std::int64_t Options::*;
struct GemmKindFields {
  GemmKind kind;
  OptionField leaf[2];
  OptionField min_size[2];
  OptionField kchain[2];  // nullptr: no k-chain (0)
};
inline constexpr GemmKindFields kGemmKindFields[] = {
    {GemmKind::NonNegWinograd,
     {&Options::leaf_s, &Options::leaf_d},
     {&Options::min_size_s, &Options::min_size_d},
     {&Options::kchain_s, &Options::kchain_d}},
    {GemmKind::Strassen,
     {&Options::strassen_leaf_s, &Options::strassen_leaf_d},
     {&Options::strassen_min_size_s, &Options::strassen_min_size_d},
     {nullptr, nullptr}},
    {GemmKind::Winograd,
     {&Options::winograd_leaf_s, &Options::winograd_leaf_d},
     {&Options::winograd_min_size_s, &Options::winograd_min_size_d},
     {nullptr, nullptr}},
};

inline std::int64_t Options::leaf_for(GemmKind kind, bool is_double) const {
  return this->*kGemmKindFields[int(kind)].leaf[is_double];
}
inline std::int64_t Options::min_size_for(GemmKind kind, bool is_double) const {
  return this->*kGemmKindFields[int(kind)].min_size[is_double];
}
inline std::int64_t Options::kchain_for(GemmKind kind, bool is_double) const {
  const OptionField field = kGemmKindFields[int(kind)].kchain[is_double];
  return field ? this->*field : 0;
}

constexpr bool gemm_kind_rows_in_order() {
  constexpr int rows = int(sizeof kGemmKindFields / sizeof kGemmKindFields[0]);
  for (int i = 0; i < rows; ++i)
    if (int(kGemmKindFields[i].kind) != i) return false;
  return rows == int(GemmKind::Winograd) + 1;  // (the last kind: types.h)
}
static_assert(gemm_kind_rows_in_order(), "kGemmKindFields: one row per GemmKind, in order");

struct OptionSpec {
  int id;                        // the xnOption_t value
  const char *name;              // the enumerator's name, "XN_OPT_..."
  const char *env;               // environment variable, "XN_..."
  OptionField field;             // where the value lives
  std::int64_t min, max;         // accepted range, inclusive
  std::int64_t default_value;    // built-in value
  bool (*accept)(std::int64_t);  // further check within the range, or nullptr
  const char *doc;               // one line for the README's table
};

// The table, in id order (ids 0 .. option_count() - 1).
const OptionSpec *option_table();
std::size_t option_count();
// The entry for `id`, or nullptr for an unknown option.
const OptionSpec *find_option(int id);

// Built-in values overridden by the environment (core/environment.h: a
// rejected value keeps the default, said once under XN_VERBOSE=1).
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

// Which processor the host API uses (XN_DEVICE=auto|cpu|gpu, a row of
// kEnvironmentTable; read at every call, a rejected value said once under
// XN_VERBOSE=1).
enum class HostDevice { Auto, Cpu, Gpu };
HostDevice host_device_from_environment();

}  // namespace xn
