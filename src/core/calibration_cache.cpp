// calibration_cache.cpp - calibration files: path, atomic write, validated
// read (calibration_cache.h).
#include "core/calibration_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "core/environment.h"

namespace xn {

std::string calibration_dir() {
  if (env_is_set(EnvVar::CacheDir)) return env_text(EnvVar::CacheDir);
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/xngemm";
  const char *home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/xngemm";
  return "";
}

std::string calibration_path(const DeviceTraits &traits) {
  const std::string dir = calibration_dir();
  if (dir.empty() || traits.uuid.empty()) return "";
  return dir + "/calibration-" + traits.uuid + ".txt";
}

namespace {

// mkdir -p, each missing component with mode 0755.
bool make_dirs(const std::string &dir, std::string *problem) {
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      *problem = "cannot make " + part + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

// One diagnostic per process for each (path, problem).
void say_once(const std::string &line) {
  if (!verbose()) return;
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(line).second) diagnostic("%s", line.c_str());
}

}  // namespace

bool write_file_atomically(const std::string &path, const std::string &text,
                           std::string *problem) {
  const std::size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0 && !make_dirs(path.substr(0, slash), problem))
    return false;
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(&tmp[0]);
  if (fd < 0) {
    *problem = "cannot create a file next to " + path + ": " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) done += std::size_t(w);
  }
  ok = ok && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  int err = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  if (ok) err = errno;  // the rename's
  *problem = "cannot write " + path + ": " + std::strerror(err);
  ::unlink(tmp.c_str());
  return false;
}

DepthModel load_calibrated_model(const DeviceTraits &traits, const char *library_version,
                                 const DepthModel &fallback) {
  const std::string path = calibration_path(traits);
  if (path.empty()) return fallback;
  // No calibration is the usual case and says nothing; one that exists but
  // cannot be read is said.
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT && errno != ENOTDIR)
      say_once("calibration " + path + " cannot be read (" + std::strerror(errno) +
               "); the built-in model is used");
    return fallback;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    say_once("calibration " + path + " cannot be read; the built-in model is used");
    return fallback;
  }
  std::ostringstream text;
  text << in.rdbuf();
  DepthModel m;
  std::string problem;
  if (!parse_calibration(text.str(), traits, library_version, &m, &problem)) {
    say_once("calibration " + path + " " + problem +
             "; ignored (xnbench calibrate makes a new one)");
    return fallback;
  }
  return m;
}

}  // namespace xn
