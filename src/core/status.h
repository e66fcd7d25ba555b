// status.h - the core's result code; the API layer maps it to cublasStatus_t.
#pragma once

namespace xn {

enum class Status {
  Ok = 0,
  InvalidValue,     // bad argument (never reaches the core from the API)
  AllocFailed,      // workspace or staging memory could not be had
  ExecutionFailed,  // a kernel launch or a leaf GEMM failed
  Internal          // anything else (unexpected library error)
};

}  // namespace xn
