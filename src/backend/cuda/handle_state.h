// handle_state.h - what xNGEMM keeps per cublasHandle_t: options, the
// workspace, device constants for pointer mode DEVICE, counters.
//
// State is created on first use of a handle and freed by xnRelease. Calls on
// one handle are serialised by the state's mutex (they share the workspace);
// calls on different handles run concurrently.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/options.h"
#include "core/status.h"
#include "xngemm.h"

namespace xn {

class NativeDgemm;

struct HandleState {
  std::mutex mu;
  Options opt;

  // Workspace: owned (allocated here, stream-ordered) or supplied by the user.
  void *ws = nullptr;
  std::size_t ws_bytes = 0;
  bool ws_owned = true;

  // {0.f, 1.f} then {0.0, 1.0} in device memory: the 0 and 1 betas of the
  // schedule's leaf GEMMs under CUBLAS_POINTER_MODE_DEVICE.
  void *consts = nullptr;
  // The non-negative scan's flag: device word and its pinned host mirror.
  int *neg_flag_dev = nullptr;
  int *neg_flag_host = nullptr;
  std::uint64_t nonneg_fallbacks = 0;
  int last_levels = -1;  // levels the last call ran (xnGetLastLevels)

  // An event recorded after the last call on its stream: the next call's
  // stream waits on it (stream order, not a device-wide synchronisation)
  // before touching the same workspace, whatever stream it runs on.
  cudaEvent_t last_done = nullptr;
  bool has_last = false;

  // xnExdgemm's regions (kept between calls, grown on demand): phase-1
  // arrays, slices and products, and pinned host staging for the one
  // synchronisation (masks, alpha, beta, wide count).
  struct Buffer {
    void *p = nullptr;
    std::size_t bytes = 0;
  };
  Buffer ex_head, ex_body;
  void *ex_host = nullptr;
  std::size_t ex_host_bytes = 0;
  xnExdgemmInfo_t ex_info{};
  bool has_ex_info = false;
  unsigned long long *ex_wide_dev = nullptr;  // wide-path count of the last call
  // exdgemm's slice DGEMMs on native-FP64 cuBLASLt algorithms (made on first
  // use; owned, deleted by release_handle_state).
  NativeDgemm *native_dgemm = nullptr;

  // xnSsymv/xnDsymv's partials: owned (grown on demand) or supplied by the
  // user through xnSetSymvWorkspace.
  Buffer symv_ws;
  void *symv_user = nullptr;
  std::size_t symv_user_bytes = 0;

  const float *zero_one_f() const { return static_cast<const float *>(consts); }
  const double *zero_one_d() const {
    return reinterpret_cast<const double *>(static_cast<const char *>(consts) + 16);
  }
};

// The state of `handle`, created (from the process-wide defaults) if absent.
// Never returns nullptr for a non-null handle unless memory is exhausted.
HandleState *handle_state(cublasHandle_t handle);
// The state if it exists, else nullptr.
HandleState *find_handle_state(cublasHandle_t handle);
// Frees the state and what it owns; false if there was none.
bool release_handle_state(cublasHandle_t handle);

// Device resources of a state that every call needs (constants, flag,
// event), made on first use. Caller holds st.mu.
Status ensure_device_resources(HandleState &st, cudaStream_t stream);

// Orders `stream` after the handle's last call.
Status order_after_last_call(HandleState &st, cudaStream_t stream);
// Records the end of this call's use of the workspace on `stream`.
Status mark_call_done(HandleState &st, cudaStream_t stream);

// A workspace of at least `bytes`, or nullptr if none can be had within the
// limit (the caller then runs with fewer levels). Grows an owned workspace
// with stream-ordered allocation, never with a device-wide synchronisation.
void *acquire_workspace(HandleState &st, std::size_t bytes, cudaStream_t stream);

// A device buffer of at least `bytes` (stream-ordered growth, as
// acquire_workspace, but with no limit: the caller applies its own budget).
// nullptr if it cannot be allocated.
void *acquire_buffer(HandleState::Buffer &b, std::size_t bytes, cudaStream_t stream);
// Pinned host staging of at least `bytes` for exdgemm; nullptr on failure.
void *acquire_ex_host(HandleState &st, std::size_t bytes);

// Frees an owned workspace outside a call (waits for the handle's last call
// first; the stream it ran on may be gone). A supplied one is only dropped.
void release_workspace(HandleState &st);

namespace testing {
// Test hook: while set, every workspace allocation fails as if the device
// were out of memory.
void set_fail_workspace_allocations(bool fail);
}  // namespace testing

}  // namespace xn
