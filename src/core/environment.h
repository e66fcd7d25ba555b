// environment.h - the one reader and validator of the XN_* environment
// variables (docs/design.md, "Options: one table"). Every variable the
// library or the interposer reads is a row of a table: kOptionTable
// (options.cpp) for the options xnSetOption also sets, kEnvironmentTable
// (environment.cpp) for the settings only the environment gives (XN_DEVICE,
// the interposer's XN_INTERCEPT*, XN_NCCL_LIBRARY, XN_VERBOSE). A value its
// row does not accept is said on stderr under XN_VERBOSE=1, one line naming
// the variable, the value and what is used instead, once per process for
// each variable and value; the row's default is then used.
//
// The library's diagnostics all go through diagnostic() here: nothing goes
// to stderr unless XN_VERBOSE=1 asks for it. What a caller must be able to
// act on is a status instead (cuBLAS's, xnGetLastHostStatus,
// xnGetLastDistStatus: docs/design.md, "One error model").
//
// CUDA-free and self-contained (no other xNGEMM source): the interposer
// compiles this file too, so it validates its variables without loading
// libxngemm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace xn {

// The settings of kEnvironmentTable, in table order.
enum class EnvVar {
  Device,
  Intercept,
  InterceptMinFlops,
  InterceptMinVectorFlops,
  InterceptLog,
  NcclLibrary,
  CacheDir,
  Verbose
};

// How a setting's text is read.
enum class EnvKind {
  Choice,  // one of the words in `choices`; its value is the word's index
  Number,  // a decimal number (strtod's syntax) in [min, max]
  Text,    // any non-empty text (a path), checked where it is used
};

struct EnvSetting {
  EnvVar id;        // its position in the table
  const char *env;  // "XN_..."
  EnvKind kind;
  const char *choices;       // Choice: the accepted words, '|'-separated
  double min, max;           // Number: accepted range, inclusive
  const char *default_text;  // the built-in value, as the README shows it
  const char *doc;           // one line for the README's table
};

const EnvSetting *environment_table();
std::size_t environment_count();
const EnvSetting &environment_setting(EnvVar v);

// Pure parsers (no environment, no output). On failure *problem gets what
// is wrong with `text` ("is not an integer", "is not one of auto, cpu, gpu").
bool parse_env_integer(const char *text, std::int64_t min, std::int64_t max,
                       std::int64_t *value, std::string *problem);
bool parse_env_number(const char *text, double min, double max, double *value,
                      std::string *problem);
// The index of `text` among `choices` ("a|b|c"), or -1.
int parse_env_choice(const char *text, const char *choices);
// The index-th word of `choices`.
std::string env_choice_word(const char *choices, int index);

// Readers of the process environment. Unset or empty: the default, silently.
// A value the row does not accept: reported once, then the default.
int env_choice(EnvVar v);  // the chosen word's index
double env_number(EnvVar v);
std::string env_text(EnvVar v);  // the value, or the default text
// Whether the variable is set to a non-empty value.
bool env_is_set(EnvVar v);
// An integer option of kOptionTable (env, accepted range, an extra check or
// nullptr): *value set and true if the variable holds an accepted value;
// false (reported once if set) otherwise, *value untouched.
bool env_integer(const char *env, std::int64_t min, std::int64_t max,
                 bool (*accept)(std::int64_t), std::int64_t default_value,
                 std::int64_t *value);

// Whether XN_VERBOSE is 1 (any other value, or none: no). Read at every
// call, so a program may turn it on at any time; diagnostics are rare.
bool verbose();

// Says "xngemm: " and the printf-formatted text, with a newline, on stderr
// when verbose(); nothing otherwise.
void diagnostic(const char *format, ...) __attribute__((format(printf, 1, 2)));

// Says "xngemm: ENV=VALUE PROBLEM: INSTEAD" (a diagnostic) unless this
// process said it already (one line per variable and value); true if said.
// Also for problems found where a value is used (XN_DEVICE=gpu without a
// GPU, an XN_NCCL_LIBRARY that does not load).
bool report_environment_once(const char *env, const char *value,
                             const std::string &problem, const std::string &instead);

}  // namespace xn
