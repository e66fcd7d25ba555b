// environment.cpp - kEnvironmentTable, the parsers and the once-per-process
// report of rejected values (core/environment.h).
#include "core/environment.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace xn {

namespace {

// clang-format off
constexpr EnvSetting kEnvironmentTable[] = {
  {EnvVar::Device, "XN_DEVICE", EnvKind::Choice, "auto|cpu|gpu", 0, 0, "auto",
   "host API: where the host routines (`dngemm_`, `exdgemm_`, ...) run: `auto` (a GPU if there is one, for products of at least 2 * 256^3 flops), `cpu`, or `gpu` (the CPU where no GPU is usable)"},
  {EnvVar::Intercept, "XN_INTERCEPT", EnvKind::Choice, "off|exdgemm|ngemm|strassen|winograd", 0, 0, "off",
   "interposer: where the program's GEMMs (and, in `exdgemm` mode, its DGEMVs and DDOTs) go: `off`, `exdgemm`, `ngemm`, `strassen` or `winograd` (see \"the interposer\")"},
  {EnvVar::InterceptMinFlops, "XN_INTERCEPT_MIN_FLOPS", EnvKind::Number, nullptr, 0, HUGE_VAL, "0",
   "interposer: GEMM calls with 2 m n k below this pass through"},
  {EnvVar::InterceptMinVectorFlops, "XN_INTERCEPT_MIN_VECTOR_FLOPS", EnvKind::Number, nullptr, 0, HUGE_VAL, "0",
   "interposer: DGEMV calls with 2 m n and DDOT calls with 2 n below this pass through (their own threshold: they are cheap)"},
  {EnvVar::InterceptLog, "XN_INTERCEPT_LOG", EnvKind::Choice, "0|1", 0, 0, "0",
   "interposer: 1 = at exit, print per routine how many calls were rerouted and how many passed through, why and to which library"},
  {EnvVar::NcclLibrary, "XN_NCCL_LIBRARY", EnvKind::Text, nullptr, 0, 0, "libnccl.so.2",
   "PDNGEMM, PSNGEMM, PEXDGEMM: the NCCL library loaded at run time (where it does not load, MPI moves the blocks)"},
  {EnvVar::CacheDir, "XN_CACHE_DIR", EnvKind::Text, nullptr, 0, 0, "$XDG_CACHE_HOME/xngemm",
   "where `xnCalibrate` (`xnbench calibrate`) keeps each device's measured rates (default `$XDG_CACHE_HOME/xngemm`, else `$HOME/.cache/xngemm`)"},
  {EnvVar::Verbose, "XN_VERBOSE", EnvKind::Choice, "0|1", 0, 0, "0",
   "1 = say on stderr what was not accepted or could not be done (a rejected `XN_*` value, once per value; a host or distributed call that did not complete; a calibration not saved); 0 = nothing on stderr: the statuses say it (cuBLAS's, `xnGetLastHostStatus`, `xnGetLastDistStatus`)"},
};
// clang-format on
constexpr std::size_t kEnvironmentCount =
    sizeof kEnvironmentTable / sizeof kEnvironmentTable[0];

constexpr bool ids_are_positions() {
  for (std::size_t i = 0; i < kEnvironmentCount; ++i)
    if (std::size_t(kEnvironmentTable[i].id) != i) return false;
  return true;
}
static_assert(ids_are_positions(), "kEnvironmentTable must be in EnvVar order");

std::string range_text(double min, double max) {
  auto number = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  return "(" +
         (max == HUGE_VAL ? "at least " + number(min)
                          : number(min) + " to " + number(max)) +
         ")";
}

std::string integer_range_text(std::int64_t min, std::int64_t max) {
  if (max == INT64_MAX) return "(at least " + std::to_string(min) + ")";
  return "(" + std::to_string(min) + " to " + std::to_string(max) + ")";
}

std::string choice_list(const char *choices) {
  std::string s;
  for (const char *c = choices; *c; ++c)
    s += *c == '|' ? std::string(", ") : std::string(1, *c);
  return s;
}

const char *value_of(const EnvSetting &s) {
  const char *v = std::getenv(s.env);
  return v && *v ? v : nullptr;
}

}  // namespace

const EnvSetting *environment_table() { return kEnvironmentTable; }
std::size_t environment_count() { return kEnvironmentCount; }
const EnvSetting &environment_setting(EnvVar v) {
  return kEnvironmentTable[std::size_t(v)];
}

bool parse_env_integer(const char *text, std::int64_t min, std::int64_t max,
                       std::int64_t *value, std::string *problem) {
  // Whole text, base 10, no blanks: "12x", " 12" and "0x10" are mistakes.
  errno = 0;
  char *end = nullptr;
  const long long x = text && *text && !std::isspace(static_cast<unsigned char>(*text))
                          ? std::strtoll(text, &end, 10)
                          : 0;
  if (!end || end == text || *end != '\0') {
    *problem = "is not an integer";
    return false;
  }
  if (errno == ERANGE || x < min || x > max) {
    *problem = "is out of range " + integer_range_text(min, max);
    return false;
  }
  *value = x;
  return true;
}

bool parse_env_number(const char *text, double min, double max, double *value,
                      std::string *problem) {
  errno = 0;
  char *end = nullptr;
  const double x = text && *text && !std::isspace(static_cast<unsigned char>(*text))
                       ? std::strtod(text, &end)
                       : 0;
  if (!end || end == text || *end != '\0' || std::isnan(x)) {
    *problem = "is not a number";
    return false;
  }
  if (x < min || x > max) {
    *problem = "is out of range " + range_text(min, max);
    return false;
  }
  *value = x;
  return true;
}

int parse_env_choice(const char *text, const char *choices) {
  if (!text) return -1;
  const std::size_t n = std::strlen(text);
  int index = 0;
  for (const char *word = choices;; ++index) {
    const char *bar = std::strchr(word, '|');
    const std::size_t len = bar ? std::size_t(bar - word) : std::strlen(word);
    if (len == n && std::strncmp(word, text, n) == 0) return index;
    if (!bar) return -1;
    word = bar + 1;
  }
}

std::string env_choice_word(const char *choices, int index) {
  const char *word = choices;
  for (int i = 0; i < index && word; ++i) {
    word = std::strchr(word, '|');
    if (word) ++word;
  }
  if (!word) return {};
  const char *bar = std::strchr(word, '|');
  return bar ? std::string(word, bar) : std::string(word);
}

bool verbose() {
  // Not through env_choice: a rejected XN_VERBOSE could not be said.
  const char *v = std::getenv(kEnvironmentTable[std::size_t(EnvVar::Verbose)].env);
  return v && std::strcmp(v, "1") == 0;
}

void diagnostic(const char *format, ...) {
  if (!verbose()) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  std::fprintf(stderr, "xngemm: %s\n", text);
}

bool report_environment_once(const char *env, const char *value,
                             const std::string &problem, const std::string &instead) {
  if (!verbose()) return false;  // (not marked said: a later XN_VERBOSE=1 says it)
  // Never destroyed: a report may come from another library's exit path.
  static std::mutex *const mutex = new std::mutex;
  static std::set<std::string> *const said = new std::set<std::string>;
  const std::string key = std::string(env) + "=" + (value ? value : "");
  {
    std::lock_guard<std::mutex> lock(*mutex);
    if (!said->insert(key).second) return false;
  }
  diagnostic("%s %s: %s", key.c_str(), problem.c_str(), instead.c_str());
  return true;
}

bool env_is_set(EnvVar v) { return value_of(environment_setting(v)) != nullptr; }

int env_choice(EnvVar v) {
  const EnvSetting &s = environment_setting(v);
  const int fallback = parse_env_choice(s.default_text, s.choices);
  const char *text = value_of(s);
  if (!text) return fallback;
  const int index = parse_env_choice(text, s.choices);
  if (index >= 0) return index;
  report_environment_once(s.env, text, "is not one of " + choice_list(s.choices),
                          std::string("using ") + s.default_text);
  return fallback;
}

double env_number(EnvVar v) {
  const EnvSetting &s = environment_setting(v);
  const double fallback = std::strtod(s.default_text, nullptr);
  const char *text = value_of(s);
  double x = fallback;
  std::string problem;
  if (text && !parse_env_number(text, s.min, s.max, &x, &problem)) {
    report_environment_once(s.env, text, problem, std::string("using ") + s.default_text);
    return fallback;
  }
  return x;
}

std::string env_text(EnvVar v) {
  const EnvSetting &s = environment_setting(v);
  const char *text = value_of(s);
  return text ? text : s.default_text;
}

bool env_integer(const char *env, std::int64_t min, std::int64_t max,
                 bool (*accept)(std::int64_t), std::int64_t default_value,
                 std::int64_t *value) {
  const char *text = std::getenv(env);
  if (!text || !*text) return false;
  std::int64_t x = 0;
  std::string problem;
  if (parse_env_integer(text, min, max, &x, &problem) && (!accept || accept(x))) {
    *value = x;
    return true;
  }
  if (problem.empty()) problem = "is not an accepted value";
  report_environment_once(env, text, problem, "using " + std::to_string(default_value));
  return false;
}

}  // namespace xn
