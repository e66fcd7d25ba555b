// status_conventions.h - the core's Status in each front end's convention,
// here and nowhere else (docs/design.md, "One error model").
#pragma once

#include <cublas_v2.h>

#include "core/types.h"
#include "xngemm.h"

namespace xn {

// The device routines return cuBLAS's status.
inline cublasStatus_t to_cublas(Status s) {
  switch (s) {
    case Status::Ok:
      return CUBLAS_STATUS_SUCCESS;
    case Status::InvalidValue:
      return CUBLAS_STATUS_INVALID_VALUE;
    case Status::AllocFailed:
      return CUBLAS_STATUS_ALLOC_FAILED;
    case Status::ExecutionFailed:
      return CUBLAS_STATUS_EXECUTION_FAILED;
    case Status::NotSupported:
      return CUBLAS_STATUS_NOT_SUPPORTED;
    default:
      return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

// The routines without a status return (the host API: xnGetLastHostStatus;
// the distributed routines: xnGetLastDistStatus) keep this outcome per
// thread, with an illegal argument as -position beside it (XERBLA,
// PXERBLA): 0 when the call completed, else whether any of its output was
// written.
inline int outcome_of(Status s, bool output_written) {
  if (s == Status::Ok) return 0;
  return output_written ? XN_STATUS_PARTIAL : XN_STATUS_UNCHANGED;
}

}  // namespace xn
