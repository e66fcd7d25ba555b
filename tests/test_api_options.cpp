// test_api_options.cpp - the option table (src/core/options.cpp) is the one
// description of the options: include/xngemm.h's enumerators and the
// README's options table must agree with it, and every entry must round-trip
// through xnSetOption/xnGetOption and the environment (label api). The
// environment-only settings (kEnvironmentTable, src/core/environment.cpp) and
// the validator both tables go through: bad numbers, bad words, ranges, one
// line on stderr per variable and value, and only under XN_VERBOSE=1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/environment.h"
#include "core/options.h"
#include "xngemm.h"

namespace {

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An accepted value other than the default: the bound on the other side of
// it, or the default plus one; the SYMV variant's next compiled id.
std::int64_t another_valid_value(const xn::OptionSpec &s) {
  for (std::int64_t v : {s.min, s.default_value + 1, s.max, std::int64_t(33)})
    if (v != s.default_value && v >= s.min && v <= s.max && (!s.accept || s.accept(v)))
      return v;
  ADD_FAILURE() << s.name << " accepts only its default";
  return s.default_value;
}

std::string readme_row(const xn::OptionSpec &s) {
  return "| `" + std::string(s.name) + "` | `" + s.env + "` | " +
         std::to_string(s.default_value) + " | " + s.doc + " |";
}

TEST(OptionTable, IdsAreDenseAndNamesUnique) {
  std::set<std::string> names, envs;
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const xn::OptionSpec &s = xn::option_table()[i];
    EXPECT_EQ(s.id, int(i));
    EXPECT_EQ(xn::find_option(s.id), &s);
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_TRUE(envs.insert(s.env).second) << s.env;
    EXPECT_LE(s.min, s.default_value) << s.name;
    EXPECT_GE(s.max, s.default_value) << s.name;
    EXPECT_EQ(std::string(s.name).rfind("XN_OPT_", 0), 0u) << s.name;
    EXPECT_EQ(std::string(s.env).rfind("XN_", 0), 0u) << s.env;
  }
  EXPECT_EQ(xn::find_option(-1), nullptr);
  EXPECT_EQ(xn::find_option(int(xn::option_count())), nullptr);
}

// Every enumerator of xnOption_t is a table entry with the same value, and
// its doc comment names the entry's environment variable.
TEST(OptionTable, PublicHeaderAgrees) {
  const std::string h = read_file(std::string(XN_SOURCE_DIR) + "/include/xngemm.h");
  const std::regex enumerator(R"(\b(XN_OPT_[A-Z0-9_]+)\s*=\s*(\d+))");
  std::map<std::string, int> header;
  std::map<std::string, std::string> comment_before;
  const std::size_t start = h.find("typedef enum {\n  /** Leaf size");
  ASSERT_NE(start, std::string::npos) << "xnOption_t not found";
  std::size_t last_end = start;
  for (auto it = std::sregex_iterator(h.begin() + long(start), h.end(), enumerator);
       it != std::sregex_iterator(); ++it) {
    const std::size_t at = std::size_t(it->position(0)) + start;
    header[(*it)[1]] = std::stoi((*it)[2]);
    comment_before[(*it)[1]] = h.substr(last_end, at - last_end);
    last_end = at + std::size_t(it->length(0));
  }
  EXPECT_EQ(header.size(), xn::option_count());
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const xn::OptionSpec &s = xn::option_table()[i];
    ASSERT_TRUE(header.count(s.name)) << s.name << " missing from xngemm.h";
    EXPECT_EQ(header[s.name], s.id) << s.name;
    EXPECT_NE(comment_before[s.name].find(std::string("(") + s.env), std::string::npos)
        << s.name << ": its comment in xngemm.h does not name " << s.env;
  }
  // The compiled enumerators too (a mismatch here would not even build the
  // library's callers correctly).
  EXPECT_EQ(xn::find_option(XN_OPT_SYMV_VARIANT)->name,
            std::string("XN_OPT_SYMV_VARIANT"));
  EXPECT_EQ(xn::find_option(XN_OPT_LEAF_SIZE_S)->name, std::string("XN_OPT_LEAF_SIZE_S"));
}

// The README's options table is the two tables, row for row: the options,
// then the environment-only settings (no option: "—").
TEST(OptionTable, ReadmeAgrees) {
  const std::string readme = read_file(std::string(XN_SOURCE_DIR) + "/README.md");
  std::istringstream lines(readme);
  std::string line;
  std::set<std::string> rows, env_rows;
  while (std::getline(lines, line)) {
    if (line.rfind("| `XN_OPT_", 0) == 0) rows.insert(line);
    if (line.rfind("| \u2014 | `XN_", 0) == 0) env_rows.insert(line);
  }
  EXPECT_EQ(rows.size(), xn::option_count());
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const std::string want = readme_row(xn::option_table()[i]);
    EXPECT_TRUE(rows.count(want)) << "README.md lacks the row\n" << want;
  }
  EXPECT_EQ(env_rows.size(), xn::environment_count());
  for (std::size_t i = 0; i < xn::environment_count(); ++i) {
    const xn::EnvSetting &s = xn::environment_table()[i];
    const std::string want = std::string("| \u2014 | `") + s.env + "` | `" +
                             s.default_text + "` | " + s.doc + " |";
    EXPECT_TRUE(env_rows.count(want)) << "README.md lacks the row\n" << want;
  }
}

// Each option: the default is what xnGetOption reports, the bounds are
// accepted and one past them rejected (value unchanged), on a copy of the
// defaults.
TEST(OptionTable, RangesAreEnforced) {
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const xn::OptionSpec &s = xn::option_table()[i];
    xn::Options o;
    std::int64_t v = 0;
    ASSERT_TRUE(xn::read_option(o, s.id, &v));
    EXPECT_EQ(v, s.default_value) << s.name;
    if (!s.accept || s.accept(s.min)) {
      EXPECT_TRUE(xn::apply_option(o, s.id, s.min)) << s.name;
    }
    if (s.min > INT64_MIN) {
      EXPECT_FALSE(xn::apply_option(o, s.id, s.min - 1)) << s.name;
    }
    if (s.max < INT64_MAX) {
      EXPECT_FALSE(xn::apply_option(o, s.id, s.max + 1)) << s.name;
    }
    ASSERT_TRUE(xn::apply_option(o, s.id, s.default_value));
    ASSERT_TRUE(xn::read_option(o, s.id, &v));
    EXPECT_EQ(v, s.default_value) << s.name;
  }
  xn::Options o;
  EXPECT_FALSE(xn::apply_option(o, int(xn::option_count()), 0));
}

// The public calls go through the table: xnSetOption on the process-wide
// defaults takes every entry's other accepted value, xnGetOption returns it,
// out-of-range values are INVALID_VALUE and change nothing; restored after.
TEST(OptionTable, PublicSetAndGetRoundTrip) {
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const xn::OptionSpec &s = xn::option_table()[i];
    const xnOption_t id = xnOption_t(s.id);
    std::int64_t saved = 0, v = 0;
    ASSERT_EQ(xnGetOption(nullptr, id, &saved), CUBLAS_STATUS_SUCCESS) << s.name;
    const std::int64_t other = another_valid_value(s);
    EXPECT_EQ(xnSetOption(nullptr, id, other), CUBLAS_STATUS_SUCCESS) << s.name;
    ASSERT_EQ(xnGetOption(nullptr, id, &v), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(v, other) << s.name;
    if (s.max < INT64_MAX) {
      EXPECT_EQ(xnSetOption(nullptr, id, s.max + 1), CUBLAS_STATUS_INVALID_VALUE)
          << s.name;
    }
    if (s.min > INT64_MIN) {
      EXPECT_EQ(xnSetOption(nullptr, id, s.min - 1), CUBLAS_STATUS_INVALID_VALUE)
          << s.name;
    }
    ASSERT_EQ(xnGetOption(nullptr, id, &v), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(v, other) << s.name << ": a rejected value changed the option";
    ASSERT_EQ(xnSetOption(nullptr, id, saved), CUBLAS_STATUS_SUCCESS) << s.name;
  }
  std::int64_t v = 0;
  EXPECT_EQ(xnGetOption(nullptr, xnOption_t(xn::option_count()), &v),
            CUBLAS_STATUS_INVALID_VALUE);
}

// The environment is read through the table: a valid value is taken, a value
// out of range or not an integer is ignored.
TEST(OptionTable, EnvironmentGoesThroughTheTable) {
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const xn::OptionSpec &s = xn::option_table()[i];
    const std::int64_t valid = another_valid_value(s);
    ASSERT_EQ(setenv(s.env, std::to_string(valid).c_str(), 1), 0);
    std::int64_t v = 0;
    ASSERT_TRUE(xn::read_option(xn::options_from_environment(), s.id, &v));
    EXPECT_EQ(v, valid) << s.env;
    ASSERT_EQ(setenv(s.env, "12x", 1), 0);
    ASSERT_TRUE(xn::read_option(xn::options_from_environment(), s.id, &v));
    EXPECT_EQ(v, s.default_value) << s.env;
    if (s.min > INT64_MIN) {
      ASSERT_EQ(setenv(s.env, std::to_string(s.min - 1).c_str(), 1), 0);
      ASSERT_TRUE(xn::read_option(xn::options_from_environment(), s.id, &v));
      EXPECT_EQ(v, s.default_value) << s.env;
    }
    unsetenv(s.env);
  }
}

// ---------------------------------------------------------------- the validator

// What the validator says on stderr while `body` runs, with XN_VERBOSE set
// to `verbose` (nullptr: unset).
template <class Body>
std::string stderr_of(Body &&body, const char *verbose = "1") {
  if (verbose)
    setenv("XN_VERBOSE", verbose, 1);
  else
    unsetenv("XN_VERBOSE");
  testing::internal::CaptureStderr();
  body();
  std::string said = testing::internal::GetCapturedStderr();
  unsetenv("XN_VERBOSE");
  return said;
}

TEST(EnvironmentTable, RowsAreWellFormed) {
  std::set<std::string> envs;
  for (std::size_t i = 0; i < xn::option_count(); ++i)
    envs.insert(xn::option_table()[i].env);
  for (std::size_t i = 0; i < xn::environment_count(); ++i) {
    const xn::EnvSetting &s = xn::environment_table()[i];
    EXPECT_EQ(std::size_t(s.id), i);
    EXPECT_EQ(&xn::environment_setting(s.id), &s);
    EXPECT_TRUE(envs.insert(s.env).second) << s.env << " is in both tables or twice";
    EXPECT_EQ(std::string(s.env).rfind("XN_", 0), 0u) << s.env;
    ASSERT_TRUE(s.default_text && *s.default_text) << s.env;
    std::string problem;
    double x = 0;
    switch (s.kind) {
      case xn::EnvKind::Choice:
        EXPECT_GE(xn::parse_env_choice(s.default_text, s.choices), 0) << s.env;
        break;
      case xn::EnvKind::Number:
        EXPECT_TRUE(xn::parse_env_number(s.default_text, s.min, s.max, &x, &problem))
            << s.env << " " << problem;
        break;
      case xn::EnvKind::Text:
        break;
    }
  }
}

TEST(EnvironmentValidator, IntegersWholeAndInRange) {
  std::int64_t v = -7;
  std::string problem;
  for (const char *bad : {"abc", "12x", "", " 12", "12 ", "0x10", "1e3", "4.5", "--1"}) {
    EXPECT_FALSE(xn::parse_env_integer(bad, 0, 100, &v, &problem)) << "'" << bad << "'";
    EXPECT_EQ(problem, "is not an integer") << "'" << bad << "'";
    EXPECT_EQ(v, -7) << "a rejected value was stored";
  }
  EXPECT_FALSE(xn::parse_env_integer("-1", 0, 30, &v, &problem));
  EXPECT_EQ(problem, "is out of range (0 to 30)");
  EXPECT_FALSE(xn::parse_env_integer("31", 0, 30, &v, &problem));
  EXPECT_FALSE(xn::parse_env_integer("0", 1, INT64_MAX, &v, &problem));
  EXPECT_EQ(problem, "is out of range (at least 1)");
  EXPECT_FALSE(
      xn::parse_env_integer("99999999999999999999", 1, INT64_MAX, &v, &problem));
  EXPECT_EQ(problem, "is out of range (at least 1)");
  EXPECT_EQ(v, -7);
  ASSERT_TRUE(xn::parse_env_integer("30", 0, 30, &v, &problem));
  EXPECT_EQ(v, 30);
  ASSERT_TRUE(xn::parse_env_integer("-1", -1, 1, &v, &problem));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(xn::parse_env_integer("+12", 0, 30, &v, &problem));
  EXPECT_EQ(v, 12);
}

TEST(EnvironmentValidator, NumbersAndWords) {
  double x = -7;
  std::string problem;
  for (const char *bad : {"abc", "12x", "", " 1", "1e", "nan", "NaN"}) {
    EXPECT_FALSE(xn::parse_env_number(bad, 0, HUGE_VAL, &x, &problem)) << bad;
    EXPECT_EQ(problem, "is not a number") << bad;
  }
  EXPECT_FALSE(xn::parse_env_number("-5", 0, HUGE_VAL, &x, &problem));
  EXPECT_EQ(problem, "is out of range (at least 0)");
  EXPECT_FALSE(xn::parse_env_number("2.5", 0, 2, &x, &problem));
  EXPECT_EQ(problem, "is out of range (0 to 2)");
  EXPECT_EQ(x, -7);
  ASSERT_TRUE(xn::parse_env_number("1e12", 0, HUGE_VAL, &x, &problem));
  EXPECT_EQ(x, 1e12);
  ASSERT_TRUE(xn::parse_env_number("inf", 0, HUGE_VAL, &x, &problem));
  EXPECT_EQ(x, HUGE_VAL);

  const char *words = "off|exdgemm|ngemm";
  EXPECT_EQ(xn::parse_env_choice("off", words), 0);
  EXPECT_EQ(xn::parse_env_choice("ngemm", words), 2);
  for (const char *bad : {"", "of", "offf", "OFF", "exdgemm|ngemm", "gemm", " off"})
    EXPECT_EQ(xn::parse_env_choice(bad, words), -1) << "'" << bad << "'";
  EXPECT_EQ(xn::env_choice_word(words, 1), "exdgemm");
  EXPECT_EQ(xn::env_choice_word(words, 2), "ngemm");
}

// An option of kOptionTable with a bad value: one line naming the variable,
// the value and the default used, however often the environment is read;
// another bad value is another line.
TEST(EnvironmentValidator, BadOptionValuesAreSaidOnce) {
  ASSERT_EQ(setenv("XN_LEAF_D", "4o96", 1), 0);
  std::string err = stderr_of([] {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(xn::options_from_environment().leaf_d, -1);
  });
  EXPECT_EQ(err, "xngemm: XN_LEAF_D=4o96 is not an integer: using -1\n");
  // In range, but no leaf size (-1 is the model, N >= 1 a leaf).
  ASSERT_EQ(setenv("XN_LEAF_D", "0", 1), 0);
  err = stderr_of([] { EXPECT_EQ(xn::options_from_environment().leaf_d, -1); });
  EXPECT_EQ(err, "xngemm: XN_LEAF_D=0 is not an accepted value: using -1\n");
  ASSERT_EQ(setenv("XN_LEAF_D", "-3", 1), 0);
  ASSERT_EQ(setenv("XN_MAX_LEVELS", "31", 1), 0);
  err = stderr_of([] {
    const xn::Options o = xn::options_from_environment();
    EXPECT_EQ(o.leaf_d, -1);
    EXPECT_EQ(o.max_levels, 6);
    xn::options_from_environment();
  });
  EXPECT_EQ(err,
            "xngemm: XN_LEAF_D=-3 is out of range (at least -1): using -1\n"
            "xngemm: XN_MAX_LEVELS=31 is out of range (0 to 30): using 6\n");
  // In range but refused by the row's own check (no such SYMV variant).
  ASSERT_EQ(setenv("XN_SYMV_VARIANT", "1", 1), 0);
  std::int64_t v = 0;
  err = stderr_of([&] {
    xn::read_option(xn::options_from_environment(), XN_OPT_SYMV_VARIANT, &v);
  });
  if (!xn::find_option(XN_OPT_SYMV_VARIANT)->accept(1)) {
    EXPECT_EQ(err, "xngemm: XN_SYMV_VARIANT=1 is not an accepted value: using 0\n");
    EXPECT_EQ(v, 0);
  }
  // A good value says nothing.
  ASSERT_EQ(setenv("XN_LEAF_D", "512", 1), 0);
  err = stderr_of([] { EXPECT_EQ(xn::options_from_environment().leaf_d, 512); });
  EXPECT_EQ(err, "");
  for (const char *e : {"XN_LEAF_D", "XN_MAX_LEVELS", "XN_SYMV_VARIANT"}) unsetenv(e);
}

// XN_DEVICE: its words in HostDevice's order; a bad one is auto, said once.
TEST(EnvironmentValidator, DeviceWords) {
  const char *saved = std::getenv("XN_DEVICE");
  const std::string saved_value = saved ? saved : "";
  ASSERT_EQ(setenv("XN_DEVICE", "cpu", 1), 0);
  EXPECT_EQ(xn::host_device_from_environment(), xn::HostDevice::Cpu);
  ASSERT_EQ(setenv("XN_DEVICE", "gpu", 1), 0);
  EXPECT_EQ(xn::host_device_from_environment(), xn::HostDevice::Gpu);
  ASSERT_EQ(setenv("XN_DEVICE", "auto", 1), 0);
  EXPECT_EQ(xn::host_device_from_environment(), xn::HostDevice::Auto);
  ASSERT_EQ(setenv("XN_DEVICE", "banana", 1), 0);
  const std::string err = stderr_of([] {
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(xn::host_device_from_environment(), xn::HostDevice::Auto);
  });
  EXPECT_EQ(err, "xngemm: XN_DEVICE=banana is not one of auto, cpu, gpu: using auto\n");
  unsetenv("XN_DEVICE");
  EXPECT_EQ(xn::host_device_from_environment(), xn::HostDevice::Auto);
  if (saved) setenv("XN_DEVICE", saved_value.c_str(), 1);
}

// The interposer's settings and XN_NCCL_LIBRARY, through the same readers.
TEST(EnvironmentValidator, InterposerAndTextSettings) {
  ASSERT_EQ(setenv("XN_INTERCEPT", "ngemm", 1), 0);
  EXPECT_EQ(xn::env_choice_word(xn::environment_setting(xn::EnvVar::Intercept).choices,
                                xn::env_choice(xn::EnvVar::Intercept)),
            "ngemm");
  ASSERT_EQ(setenv("XN_INTERCEPT", "Ngemm", 1), 0);
  ASSERT_EQ(setenv("XN_INTERCEPT_MIN_FLOPS", "1e6x", 1), 0);
  ASSERT_EQ(setenv("XN_INTERCEPT_LOG", "2", 1), 0);
  std::string err = stderr_of([] {
    EXPECT_EQ(xn::env_choice(xn::EnvVar::Intercept), 0);
    EXPECT_EQ(xn::env_number(xn::EnvVar::InterceptMinFlops), 0.0);
    EXPECT_EQ(xn::env_choice(xn::EnvVar::InterceptLog), 0);
    xn::env_choice(xn::EnvVar::Intercept);
  });
  EXPECT_EQ(err,
            "xngemm: XN_INTERCEPT=Ngemm is not one of off, exdgemm, ngemm, strassen, "
            "winograd: using off\n"
            "xngemm: XN_INTERCEPT_MIN_FLOPS=1e6x is not a number: using 0\n"
            "xngemm: XN_INTERCEPT_LOG=2 is not one of 0, 1: using 0\n");
  ASSERT_EQ(setenv("XN_INTERCEPT_MIN_FLOPS", "2.5e9", 1), 0);
  EXPECT_EQ(xn::env_number(xn::EnvVar::InterceptMinFlops), 2.5e9);
  ASSERT_EQ(setenv("XN_INTERCEPT_LOG", "1", 1), 0);
  EXPECT_EQ(xn::env_choice(xn::EnvVar::InterceptLog), 1);
  unsetenv("XN_NCCL_LIBRARY");
  EXPECT_FALSE(xn::env_is_set(xn::EnvVar::NcclLibrary));
  EXPECT_EQ(xn::env_text(xn::EnvVar::NcclLibrary), "libnccl.so.2");
  ASSERT_EQ(setenv("XN_NCCL_LIBRARY", "/opt/nccl/libnccl.so.2", 1), 0);
  EXPECT_TRUE(xn::env_is_set(xn::EnvVar::NcclLibrary));
  EXPECT_EQ(xn::env_text(xn::EnvVar::NcclLibrary), "/opt/nccl/libnccl.so.2");
  for (const char *e :
       {"XN_INTERCEPT", "XN_INTERCEPT_MIN_FLOPS", "XN_INTERCEPT_LOG", "XN_NCCL_LIBRARY"})
    unsetenv(e);
}

// A problem found where a value is used (XN_DEVICE=gpu without a GPU):
// once per variable and value, from any number of threads.
TEST(EnvironmentValidator, ReportsOncePerVariableAndValue) {
  const std::string err = stderr_of([] {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([] {
        for (int i = 0; i < 50; ++i)
          xn::report_environment_once("XN_TEST_ONCE", "x", "is a test", "nothing done");
      });
    for (auto &t : threads) t.join();
    EXPECT_TRUE(xn::report_environment_once("XN_TEST_ONCE", "y", "is a test", "again"));
    EXPECT_FALSE(xn::report_environment_once("XN_TEST_ONCE", "y", "is a test", "again"));
  });
  EXPECT_EQ(err,
            "xngemm: XN_TEST_ONCE=x is a test: nothing done\n"
            "xngemm: XN_TEST_ONCE=y is a test: again\n");
}

// Nothing goes to stderr unless XN_VERBOSE=1 asks for it; a value said
// nothing for is said once it is asked for; any other XN_VERBOSE is no.
TEST(EnvironmentValidator, NothingOnStderrUnlessAskedFor) {
  ASSERT_EQ(setenv("XN_LEAF_D", "-7x", 1), 0);
  for (const char *quiet : {static_cast<const char *>(nullptr), "0", "yes", "", "10"}) {
    const std::string err = stderr_of(
        [] {
          EXPECT_EQ(xn::options_from_environment().leaf_d, -1);
          EXPECT_FALSE(
              xn::report_environment_once("XN_TEST_QUIET", "q", "is a test", "nothing"));
          xn::diagnostic("a diagnostic %d", 1);
        },
        quiet);
    EXPECT_EQ(err, "") << "XN_VERBOSE=" << (quiet ? quiet : "(unset)");
  }
  const std::string err = stderr_of([] {
    EXPECT_EQ(xn::options_from_environment().leaf_d, -1);
    EXPECT_TRUE(xn::report_environment_once("XN_TEST_QUIET", "q", "is a test", "nothing"));
    xn::diagnostic("a diagnostic %d", 2);
  });
  EXPECT_EQ(err,
            "xngemm: XN_LEAF_D=-7x is not an integer: using -1\n"
            "xngemm: XN_TEST_QUIET=q is a test: nothing\n"
            "xngemm: a diagnostic 2\n");
  unsetenv("XN_LEAF_D");
}

}  // namespace
