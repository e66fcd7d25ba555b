// test_api_options.cpp - the option table (src/core/options.cpp) is the one
// description of the options: include/xngemm.h's enumerators and the
// README's options table must agree with it, and every entry must round-trip
// through xnSetOption/xnGetOption and the environment (label api).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

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

// The README's options table is the table, row for row.
TEST(OptionTable, ReadmeAgrees) {
  const std::string readme = read_file(std::string(XN_SOURCE_DIR) + "/README.md");
  std::istringstream lines(readme);
  std::string line;
  std::set<std::string> rows;
  while (std::getline(lines, line))
    if (line.rfind("| `XN_OPT_", 0) == 0) rows.insert(line);
  EXPECT_EQ(rows.size(), xn::option_count());
  for (std::size_t i = 0; i < xn::option_count(); ++i) {
    const std::string want = readme_row(xn::option_table()[i]);
    EXPECT_TRUE(rows.count(want)) << "README.md lacks the row\n" << want;
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

}  // namespace
