// host_state.h - a test's hold on the process-wide state the host API reads:
// every option of the table (xnGetOption/xnSetOption with a NULL handle) and
// the XN_DEVICE variable. The guard saves both on construction (optionally
// forcing XN_DEVICE) and restores them on destruction, so suites can set
// options freely without leaking them into the next test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/options.h"
#include "xngemm.h"

namespace xn_test {

class HostStateGuard {
 public:
  // device: the XN_DEVICE value for the guard's lifetime (nullptr: as is).
  explicit HostStateGuard(const char *device = nullptr) : saved_(xn::option_count()) {
    for (std::size_t o = 0; o < saved_.size(); ++o)
      EXPECT_EQ(xnGetOption(nullptr, xnOption_t(o), &saved_[o]), CUBLAS_STATUS_SUCCESS);
    const char *d = std::getenv("XN_DEVICE");
    had_device_ = d != nullptr;
    if (d) device_ = d;
    if (device) setenv("XN_DEVICE", device, 1);
  }
  ~HostStateGuard() {
    for (std::size_t o = 0; o < saved_.size(); ++o)
      EXPECT_EQ(xnSetOption(nullptr, xnOption_t(o), saved_[o]), CUBLAS_STATUS_SUCCESS);
    if (had_device_)
      setenv("XN_DEVICE", device_.c_str(), 1);
    else
      unsetenv("XN_DEVICE");
  }
  HostStateGuard(const HostStateGuard &) = delete;
  HostStateGuard &operator=(const HostStateGuard &) = delete;

 private:
  std::vector<std::int64_t> saved_;
  bool had_device_ = false;
  std::string device_;
};

}  // namespace xn_test
