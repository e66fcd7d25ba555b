// calibration_cache.h - the per-device calibration files (docs/design.md,
// "Calibration cache"): where they live, how they are written so that a
// concurrent reader never sees half a file, and how a stale or damaged one
// is set aside with a message.
#pragma once

#include <string>

#include "core/device_model.h"

namespace xn {

// The folder of the calibration files: XN_CACHE_DIR, else
// $XDG_CACHE_HOME/xngemm, else $HOME/.cache/xngemm ("" when none is known).
std::string calibration_dir();
// The file of one device: <dir>/calibration-<uuid>.txt ("" without a folder
// or a UUID).
std::string calibration_path(const DeviceTraits &traits);

// Writes `text` to `path` through a temporary file in the same folder and a
// rename (atomic on POSIX file systems: readers see the old file or the new
// one). Makes the folder if needed. False with *problem on failure.
bool write_file_atomically(const std::string &path, const std::string &text,
                           std::string *problem);

// The model for a device: its calibration file where one exists and is
// valid for these traits and library version, else `fallback`. A file that
// exists but cannot be read, is damaged or stale is ignored; under
// XN_VERBOSE=1 with one line on stderr per process and file ("xngemm:
// calibration <path> was made with driver ..., ignored ..."). Never throws.
DepthModel load_calibrated_model(const DeviceTraits &traits, const char *library_version,
                                 const DepthModel &fallback);

}  // namespace xn
