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
#include <memory>
#include <mutex>
#include <vector>

#include "core/device_model.h"
#include "core/exdgemm.h"
#include "core/gemm_driver.h"
#include "core/options.h"
#include "core/types.h"

namespace xn {

class NativeDgemm;

// The scan buffer's layout (HandleState::scan_flags_dev): the flags word,
// then up to 2 x 4^4 maxima (core/scale_depth.h, kMaxScaleGridLevels).
constexpr std::size_t kScanMaximaOffset = 16;
constexpr std::size_t kScanBufferBytes = kScanMaximaOffset + 2 * 256 * sizeof(double);

struct HandleState {
  std::mutex mu;
  Options opt;
  // The call holding `mu` is being captured into a CUDA graph (set by its
  // CallGuard): it must neither allocate nor free device memory.
  bool in_capture = false;

  // The handle's one workspace, shared by every routine (calls on a handle
  // are serialised): owned (allocated here, grown in stream order) or
  // supplied by the user (xnSetWorkspace).
  void *ws = nullptr;
  std::size_t ws_bytes = 0;
  bool ws_owned = true;
  int ws_device = -1;  // whose library pool (device_pool.h) the owned one came from
  // A captured call used the owned workspace: graphs hold its address, so
  // when a later call grows it (or xnSetWorkspace replaces it) the old one
  // is kept here, not freed, until the handle is released.
  bool ws_in_graph = false;
  struct PoolBlock {
    void *ptr;
    int device;  // whose library pool it came from
  };
  std::vector<PoolBlock> ws_kept_for_graphs;

  // {0.f, 1.f} then {0.0, 1.0} (and the int32 {0, 1} at byte 40) in device
  // memory: the 0 and 1 betas of the
  // schedule's leaf GEMMs under CUBLAS_POINTER_MODE_DEVICE; at byte 32,
  // xnExdgemm's count of entries summed by the wide accumulator, which the
  // handle's workspace cannot hold (later calls of other routines reuse it).
  void *consts = nullptr;
  // The operand scan's EntryFlags (numerics/elementwise.h) at byte 0 and,
  // from byte kScanMaximaOffset, the block maxima of op(A) then op(B)
  // (kernels/launch.h, launch_entry_flags_max), kScanBufferBytes in device
  // memory and the same in pinned host memory, its mirror.
  int *scan_flags_dev = nullptr;
  int *scan_flags_host = nullptr;
  std::uint64_t nonneg_fallbacks = 0;
  // The last recursive GEMM's report (its levels: xnGetLastLevels) and the
  // depth model it used (xnGetLastGemmInfo); `model` is taken again when the
  // options' choice of model or the installed calibrations change
  // (handle_depth_model).
  GemmReport last_report{};
  bool has_last_report = false;
  std::shared_ptr<const DepthModel> last_model;  // the model last_report used
  std::shared_ptr<const DepthModel> model;
  std::uint64_t model_generation = 0;
  bool model_calibrated = false;
  int sm_count = 0;      // the device's multiprocessors (0: unknown)

  // An event recorded after the last call on its stream: the next call's
  // stream waits on it (stream order, not a device-wide synchronisation)
  // before touching the same workspace, whatever stream it runs on.
  cudaEvent_t last_done = nullptr;
  bool has_last = false;

  // xnExdgemm's pinned host staging for its synchronisations (exponent
  // summaries and alpha, beta; the slice engine's masks), kept between
  // calls and grown on demand; its report.
  void *ex_host = nullptr;
  std::size_t ex_host_bytes = 0;
  ExdgemmReport ex_info{};
  bool has_ex_info = false;
  int ex_last_direct_span_bits = 0;  // ExdgemmReport::span_bits of the last direct call
  unsigned long long *ex_wide_dev = nullptr;  // wide-path count of the last call
  // exdgemm's slice DGEMMs on native-FP64 cuBLASLt algorithms (made on first
  // use; owned, deleted by release_handle_state).
  NativeDgemm *native_dgemm = nullptr;

  const float *zero_one_f() const { return static_cast<const float *>(consts); }
  const double *zero_one_d() const {
    return reinterpret_cast<const double *>(static_cast<const char *>(consts) + 16);
  }
  // int32 {0, 1} at byte 40: the modular engine's INT8 products.
  const int *zero_one_i32() const {
    return reinterpret_cast<const int *>(static_cast<const char *>(consts) + 40);
  }
  unsigned long long *wide_count() const {
    return reinterpret_cast<unsigned long long *>(static_cast<char *>(consts) + 32);
  }
  // exdgemm's reconstruction: the epoch of the last launch whose first pass
  // left an entry to the second (ExModularSumArgs::undone), at byte 48.
  unsigned long long *ex_undone_flag() const {
    return reinterpret_cast<unsigned long long *>(static_cast<char *>(consts) + 48);
  }
  std::uint64_t ex_sum_epoch = 0;  // the last epoch handed out
};

// The state of `handle`, created (from the process-wide defaults) if absent.
// Never returns nullptr for a non-null handle unless memory is exhausted.
HandleState *handle_state(cublasHandle_t handle);
// The state if it exists, else nullptr.
HandleState *find_handle_state(cublasHandle_t handle);
// Frees the state and what it owns; false if there was none.
bool release_handle_state(cublasHandle_t handle);

// Device resources of a state that every call needs (constants, flag,
// event), made on first use, also inside a stream capture: they are
// allocated in the thread's relaxed capture mode and written through a
// private stream, so no capture sees them. Caller holds st.mu.
Status ensure_device_resources(HandleState &st);

// The calling thread in cudaStreamCaptureModeRelaxed while it lives: the
// library's own allocations, frees and waits on its private resources are
// then tolerated while any thread captures in the global mode, and never
// invalidate that capture (they are not stream work a graph would replay).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() {
    if (cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess) {
      cudaGetLastError();
      swapped_ = false;
    }
  }
  ~RelaxedCaptureMode() {
    if (swapped_ && cudaThreadExchangeStreamCaptureMode(&mode_) != cudaSuccess)
      cudaGetLastError();
  }
  RelaxedCaptureMode(const RelaxedCaptureMode &) = delete;
  RelaxedCaptureMode &operator=(const RelaxedCaptureMode &) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool swapped_ = true;
};

// The depth model of the handle's device under its options
// (XN_OPT_DEVICE_CALIBRATION): a cached pointer, refreshed only when the
// option or the installed calibrations changed. Caller holds st.mu.
const DepthModel *handle_depth_model(HandleState &st);

// Orders `stream` after the handle's last call.
Status order_after_last_call(HandleState &st, cudaStream_t stream);
// Records the end of this call's use of the workspace on `stream`.
Status mark_call_done(HandleState &st, cudaStream_t stream);

// The handle's workspace, at least `bytes`, or nullptr if that cannot be had
// (the user's is smaller, the allocation failed, or the call is being
// captured and the workspace it has is smaller: a capture never allocates): the
// caller then runs with fewer levels, smaller blocks, or returns
// ALLOC_FAILED before touching its output. Grows an owned workspace with
// stream-ordered allocation, never with a device-wide synchronisation; the
// first `keep` bytes (a region the call already filled) are copied along.
void *acquire_workspace(HandleState &st, std::size_t bytes, cudaStream_t stream,
                        std::size_t keep = 0);
// The most bytes acquire_workspace can give the handle: the user's
// workspace, or the one a captured call finds, else SIZE_MAX.
std::size_t workspace_cap(const HandleState &st);
// Supplies the user's workspace (ptr, bytes), or returns to an owned one
// (nullptr, 0). An owned workspace is freed first, outside any call: after
// the handle's last call (its event; the stream it ran on may be gone). A
// supplied one is only dropped. Caller holds st.mu.
void set_user_workspace(HandleState &st, void *ptr, std::size_t bytes);

// Pinned host staging of at least `bytes` for exdgemm; nullptr on failure.
void *acquire_ex_host(HandleState &st, std::size_t bytes);

namespace testing {
// Test hook: while set, every workspace allocation fails as if the device
// were out of memory.
void set_fail_workspace_allocations(bool fail);
}  // namespace testing

}  // namespace xn
