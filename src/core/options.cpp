// options.cpp - option defaults, environment overrides and validation.
#include "core/options.h"

#include "kernels/symv_launch.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "xngemm.h"

namespace xn {

namespace {

// Reads an integer environment variable; leaves `out` alone if unset or junk.
void env_int(const char *name, std::int64_t &out) {
  const char *v = std::getenv(name);
  if (!v || !*v) return;
  errno = 0;
  char *end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (errno == 0 && end && *end == '\0') out = x;
}

std::mutex g_defaults_mutex;
bool g_defaults_ready = false;
Options g_defaults;

}  // namespace

Options options_from_environment() {
  Options o;
  Options e = o;
  env_int("XN_LEAF_S", e.leaf_s);
  env_int("XN_LEAF_D", e.leaf_d);
  env_int("XN_MAX_LEVELS", e.max_levels);
  env_int("XN_CHECK_NONNEG", e.check_nonneg);
  env_int("XN_WORKSPACE_LIMIT", e.workspace_limit);
  env_int("XN_KCHAIN_S", e.kchain_s);
  env_int("XN_KCHAIN_D", e.kchain_d);
  env_int("XN_MIN_SIZE_S", e.min_size_s);
  env_int("XN_MIN_SIZE_D", e.min_size_d);
  env_int("XN_PACK_TRANS_B", e.normal_b_temps);
  env_int("XN_EXDGEMM_WORKSPACE_LIMIT", e.exdgemm_workspace_limit);
  env_int("XN_EXDGEMM_BLOCK", e.exdgemm_block);
  env_int("XN_SYMV_VARIANT", e.symv_variant);
  // Apply through the validator so a bad environment value cannot break an
  // invariant; invalid ones are ignored.
  apply_option(o, XN_OPT_LEAF_SIZE_S, e.leaf_s);
  apply_option(o, XN_OPT_LEAF_SIZE_D, e.leaf_d);
  apply_option(o, XN_OPT_MAX_LEVELS, e.max_levels);
  apply_option(o, XN_OPT_CHECK_NONNEG, e.check_nonneg);
  apply_option(o, XN_OPT_WORKSPACE_LIMIT, e.workspace_limit);
  apply_option(o, XN_OPT_LEAF_KCHAIN_S, e.kchain_s);
  apply_option(o, XN_OPT_LEAF_KCHAIN_D, e.kchain_d);
  apply_option(o, XN_OPT_MIN_SIZE_S, e.min_size_s);
  apply_option(o, XN_OPT_MIN_SIZE_D, e.min_size_d);
  apply_option(o, XN_OPT_PACK_TRANS_B, e.normal_b_temps);
  apply_option(o, XN_OPT_EXDGEMM_WORKSPACE_LIMIT, e.exdgemm_workspace_limit);
  apply_option(o, XN_OPT_EXDGEMM_BLOCK, e.exdgemm_block);
  apply_option(o, XN_OPT_SYMV_VARIANT, e.symv_variant);
  return o;
}

Options default_options() {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  if (!g_defaults_ready) {
    g_defaults = options_from_environment();
    g_defaults_ready = true;
  }
  return g_defaults;
}

void set_default_options(const Options &o) {
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  g_defaults = o;
  g_defaults_ready = true;
}

bool update_default_option(int option, std::int64_t value) {
  default_options();  // make sure the environment has been read
  std::lock_guard<std::mutex> lock(g_defaults_mutex);
  return apply_option(g_defaults, option, value);
}

bool apply_option(Options &o, int option, std::int64_t value) {
  switch (option) {
    case XN_OPT_LEAF_SIZE_S:
      if (value < 1) return false;
      o.leaf_s = value;
      return true;
    case XN_OPT_LEAF_SIZE_D:
      if (value < 1) return false;
      o.leaf_d = value;
      return true;
    case XN_OPT_MAX_LEVELS:
      if (value < 0 || value > 30) return false;
      o.max_levels = value;
      return true;
    case XN_OPT_CHECK_NONNEG:
      if (value != 0 && value != 1) return false;
      o.check_nonneg = value;
      return true;
    case XN_OPT_WORKSPACE_LIMIT:
      if (value < -1) return false;
      o.workspace_limit = value;
      return true;
    case XN_OPT_LEAF_KCHAIN_S:
    case XN_OPT_LEAF_KCHAIN_D:
      if (value < 0) return false;
      (option == XN_OPT_LEAF_KCHAIN_S ? o.kchain_s : o.kchain_d) = value;
      return true;
    case XN_OPT_MIN_SIZE_S:
    case XN_OPT_MIN_SIZE_D:
      if (value < 0 || value > (std::int64_t(1) << 31)) return false;
      (option == XN_OPT_MIN_SIZE_S ? o.min_size_s : o.min_size_d) = value;
      return true;
    case XN_OPT_PACK_TRANS_B:
      if (value < -1 || value > 1) return false;
      o.normal_b_temps = value;
      return true;
    case XN_OPT_EXDGEMM_WORKSPACE_LIMIT:
      if (value < 0) return false;
      o.exdgemm_workspace_limit = value;
      return true;
    case XN_OPT_EXDGEMM_BLOCK:
      if (value < 0 || value > (std::int64_t(1) << 31)) return false;
      o.exdgemm_block = value;
      return true;
    case XN_OPT_SYMV_VARIANT:
      if (value < 0 || value > symv_variant_count()) return false;
      o.symv_variant = value;
      return true;
    default:
      return false;
  }
}

bool read_option(const Options &o, int option, std::int64_t *value) {
  if (!value) return false;
  switch (option) {
    case XN_OPT_LEAF_SIZE_S:
      *value = o.leaf_s;
      return true;
    case XN_OPT_LEAF_SIZE_D:
      *value = o.leaf_d;
      return true;
    case XN_OPT_MAX_LEVELS:
      *value = o.max_levels;
      return true;
    case XN_OPT_CHECK_NONNEG:
      *value = o.check_nonneg;
      return true;
    case XN_OPT_WORKSPACE_LIMIT:
      *value = o.workspace_limit;
      return true;
    case XN_OPT_LEAF_KCHAIN_S:
      *value = o.kchain_s;
      return true;
    case XN_OPT_LEAF_KCHAIN_D:
      *value = o.kchain_d;
      return true;
    case XN_OPT_MIN_SIZE_S:
      *value = o.min_size_s;
      return true;
    case XN_OPT_MIN_SIZE_D:
      *value = o.min_size_d;
      return true;
    case XN_OPT_PACK_TRANS_B:
      *value = o.normal_b_temps;
      return true;
    case XN_OPT_EXDGEMM_WORKSPACE_LIMIT:
      *value = o.exdgemm_workspace_limit;
      return true;
    case XN_OPT_EXDGEMM_BLOCK:
      *value = o.exdgemm_block;
      return true;
    case XN_OPT_SYMV_VARIANT:
      *value = o.symv_variant;
      return true;
    default:
      return false;
  }
}

HostDevice host_device_from_environment() {
  const char *v = std::getenv("XN_DEVICE");
  if (!v) return HostDevice::Auto;
  if (std::strcmp(v, "cpu") == 0) return HostDevice::Cpu;
  if (std::strcmp(v, "gpu") == 0) return HostDevice::Gpu;
  return HostDevice::Auto;
}

}  // namespace xn
