// call_guard.h - the per-call handling of a handle's state, written once for
// every device entry point (xnSngemm/xnDngemm, xnExdgemm, xnSsymv/xnDsymv).
//
//   CallGuard g(handle);                  // stream, pointer mode, state, lock
//   if (g.status() != CUBLAS_STATUS_SUCCESS) return g.status();
//   ... g.enter() before touching the handle's workspace or constants ...
//   return to_cublas(g.finish(s));
//
// Calls on one handle share its workspace, so they are serialised by the
// state's mutex (held for the guard's lifetime) and, on the device, by stream
// order: enter() makes the call's stream wait for the event recorded at the
// end of the handle's previous call (whatever stream that ran on), and
// finish() records it again. Neither synchronises the device. A call that
// never enters (a plain cuBLAS product below the crossover, a quick return)
// leaves the event alone and costs nothing beyond the lock.
// While the guard lives the thread counts as inside the library
// (core/call_depth.h): its cuBLAS leaves bypass the interposer.
//
// CUDA graphs. The guard reads once whether the call's stream is being
// captured (cudaStreamIsCapturing). A captured call enqueues only work that
// a graph can replay: it never allocates or frees device memory (it runs in
// the workspace the handle already has: from a warm-up call, or supplied
// with xnSetWorkspace), never synchronises, and leaves the handle's ordering
// event alone (the graph runs when the caller launches it; ordering it
// against direct calls on the same handle is the caller's, as for cuBLAS's
// own workspace). docs/design.md, "CUDA graphs".
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <mutex>

#include "backend/cuda/handle_state.h"
#include "core/call_depth.h"
#include "core/types.h"

namespace xn {

class CallGuard {
 public:
  explicit CallGuard(cublasHandle_t handle);
  ~CallGuard();
  CallGuard(const CallGuard &) = delete;
  CallGuard &operator=(const CallGuard &) = delete;

  // SUCCESS, or why the call cannot run: cuBLAS's own error reading the
  // handle's stream or pointer mode, ALLOC_FAILED when the state could not
  // be created, NOT_SUPPORTED when CUDA cannot say whether the stream is
  // being captured (the legacy stream during another thread's capture) and
  // EXECUTION_FAILED when its capture is already invalidated: nothing is
  // enqueued then. The accessors below need SUCCESS.
  cublasStatus_t status() const { return status_; }
  cublasHandle_t handle() const { return handle_; }
  HandleState &state() const { return *state_; }
  cudaStream_t stream() const { return stream_; }
  // alpha and beta live in device memory (CUBLAS_POINTER_MODE_DEVICE).
  bool device_scalars() const { return device_scalars_; }
  // The stream is being captured into a CUDA graph.
  bool capturing() const { return capturing_; }

  // The handle's device resources (constants, event) and the stream order
  // after its previous call; once per call, later calls return at once.
  Status enter();
  // Records the end of an entered call on its stream. Returns `s`, or the
  // recording's failure when `s` is Ok.
  Status finish(Status s);

 private:
  // The whole call in the relaxed capture mode: what it (or cuBLAS inside
  // it) allocates or waits for outside stream order never invalidates
  // another thread's global-mode capture. A captured call itself makes no
  // such call (see above).
  RelaxedCaptureMode relaxed_;
  CallDepthGuard inside_;
  cublasHandle_t handle_;
  cublasStatus_t status_ = CUBLAS_STATUS_SUCCESS;
  HandleState *state_ = nullptr;
  std::unique_lock<std::mutex> lock_;
  cudaStream_t stream_ = nullptr;
  bool device_scalars_ = false;
  bool capturing_ = false;
  bool entered_ = false;
};

// Lookup and lock of a handle's state outside a call (options, workspace
// settings, counters): ALLOC_FAILED when it cannot be created.
class StateLock {
 public:
  // `create`: make the state if the handle has none (else state() is null).
  StateLock(cublasHandle_t handle, bool create);
  HandleState *state() const { return state_; }

 private:
  HandleState *state_ = nullptr;
  std::unique_lock<std::mutex> lock_;
};

// The options a call on `handle` runs with (handle NULL: the process-wide
// defaults): SUCCESS, or ALLOC_FAILED when the state cannot be created.
cublasStatus_t options_of(cublasHandle_t handle, Options *out);

}  // namespace xn
