// device_model_cuda.h - the depth model of the CUDA devices: their traits
// from the runtime, the model each uses (built-in, or a cached calibration)
// and the calibration itself (core/device_model.h; docs/design.md,
// "Parameters from the device").
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/device_model.h"
#include "core/types.h"

namespace xn {

// The model recursive GEMMs on the current device use: its calibration
// (read once per process from the cache, calibration_cache.h) when
// `use_calibration` and one is valid, else the built-in model. Built on the
// first call for each device (the runtime's attributes and one file read),
// then a lookup. Never nullptr; a model that is not usable() when the device
// cannot be queried (the driver then uses the options' leaf-size rule).
std::shared_ptr<const DepthModel> device_depth_model(bool use_calibration);

// Increases each time a calibration is installed: holders of a model (the
// handles, HandleState) take it again when it changed.
std::uint64_t depth_model_generation();

// The traits of `device` (name, UUID, clocks, bus, driver and cuBLAS
// versions).
Status query_device_traits(int device, DeviceTraits *traits);

// The library's version as calibration files record it ("0.1.0").
const char *library_version_text();

// Measures the current device on `handle`'s stream: cuBLAS's SGEMM and
// DGEMM rates at the leaf grid (1024..8192, step 128) as trains of
// back-to-back calls, and the bandwidth of a device-to-device copy. Writes
// the calibration file (atomically; *path gets its name, *write_problem why
// it could not be written, else "") and makes it the device's calibrated
// model for this process. Allocates about 1.5 GiB of device memory for the
// call, and takes about 30 s on an H100.
Status calibrate_current_device(cublasHandle_t handle, DepthModel *model, std::string *path,
                                std::string *write_problem);

}  // namespace xn
