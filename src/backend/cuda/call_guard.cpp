// call_guard.cpp - see call_guard.h.
#include "backend/cuda/call_guard.h"

namespace xn {

CallGuard::CallGuard(cublasHandle_t handle) : handle_(handle) {
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  status_ = cublasGetStream(handle, &stream_);
  if (status_ == CUBLAS_STATUS_SUCCESS) status_ = cublasGetPointerMode(handle, &mode);
  if (status_ != CUBLAS_STATUS_SUCCESS) return;
  device_scalars_ = mode == CUBLAS_POINTER_MODE_DEVICE;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream_, &capture) != cudaSuccess) {
    cudaGetLastError();
    status_ = CUBLAS_STATUS_NOT_SUPPORTED;
    return;
  }
  if (capture == cudaStreamCaptureStatusInvalidated) {
    status_ = CUBLAS_STATUS_EXECUTION_FAILED;
    return;
  }
  capturing_ = capture == cudaStreamCaptureStatusActive;
  state_ = handle_state(handle);
  if (!state_) {
    status_ = CUBLAS_STATUS_ALLOC_FAILED;
    return;
  }
  lock_ = std::unique_lock<std::mutex>(state_->mu);
  state_->in_capture = capturing_;
}

CallGuard::~CallGuard() {
  // A path that entered and returned without finish() still leaves the
  // handle ordered for its next call.
  if (entered_) finish(Status::Ok);
  if (state_ && lock_.owns_lock()) state_->in_capture = false;
}

Status CallGuard::enter() {
  if (entered_) return Status::Ok;
  Status s = ensure_device_resources(*state_);
  // A captured call is ordered by the graph it joins, not by the handle's
  // event: waiting on an event recorded outside the capture, or recording
  // one inside it, has no meaning for a later replay.
  if (s == Status::Ok && !capturing_) s = order_after_last_call(*state_, stream_);
  entered_ = s == Status::Ok;
  return s;
}

Status CallGuard::finish(Status s) {
  if (!entered_) return s;
  entered_ = false;
  if (capturing_) return s;
  const Status done = mark_call_done(*state_, stream_);
  return s != Status::Ok ? s : done;
}

StateLock::StateLock(cublasHandle_t handle, bool create)
    : state_(create ? handle_state(handle) : find_handle_state(handle)) {
  if (state_) lock_ = std::unique_lock<std::mutex>(state_->mu);
}

cublasStatus_t options_of(cublasHandle_t handle, Options *out) {
  if (!handle) {
    *out = default_options();
    return CUBLAS_STATUS_SUCCESS;
  }
  const StateLock lock(handle, true);
  if (!lock.state()) return CUBLAS_STATUS_ALLOC_FAILED;
  *out = lock.state()->opt;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace xn
