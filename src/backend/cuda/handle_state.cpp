// handle_state.cpp - per-handle registry, workspace and device resources.
#include "backend/cuda/handle_state.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <unordered_map>

#include "backend/cuda/device_model_cuda.h"
#include "backend/cuda/device_pool.h"
#include "backend/cuda/native_dgemm.h"

namespace xn {

namespace {

std::mutex g_registry_mutex;
std::unordered_map<cublasHandle_t, std::unique_ptr<HandleState>> &registry() {
  static auto *r = new std::unordered_map<cublasHandle_t, std::unique_ptr<HandleState>>();
  return *r;
}

std::atomic<bool> g_fail_allocations{false};

// Frees an owned workspace. Inside a call, `stream` is the call's stream,
// already ordered after every earlier use, and the free is stream-ordered.
// Outside a call (stream == nullptr: xnRelease, xnSetWorkspace) the stream of
// the last call may no longer exist (the user may have destroyed it), so we
// wait for our own event recorded after that call, then free
// (pool_free_completed: not cudaFree, which leaves the pool's count of used
// bytes as it was).
void free_workspace(HandleState &st, cudaStream_t stream) {
  if (st.ws && st.ws_owned && st.ws_in_graph) {
    st.ws_kept_for_graphs.push_back({st.ws, st.ws_device});  // graphs replay into it
  } else if (st.ws && st.ws_owned) {
    cudaError_t e;
    if (stream) {
      e = cudaFreeAsync(st.ws, stream);
    } else {
      const RelaxedCaptureMode relaxed;
      if (st.has_last) cudaEventSynchronize(st.last_done);
      e = pool_free_completed(st.ws, st.ws_device);
    }
    if (e != cudaSuccess) cudaGetLastError();
  }
  st.ws = nullptr;
  st.ws_bytes = 0;
  st.ws_in_graph = false;
}

// Waits for all work on `device` (error paths and graphs only).
void wait_for_device(int device) {
  if (device < 0) return;
  const OnDevice on_device(device);
  if (!on_device.ok()) return;
  if (cudaDeviceSynchronize() != cudaSuccess) cudaGetLastError();
}

}  // namespace

namespace testing {
void set_fail_workspace_allocations(bool fail) { g_fail_allocations = fail; }
}  // namespace testing

HandleState *handle_state(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto &r = registry();
  auto it = r.find(handle);
  if (it != r.end()) return it->second.get();
  std::unique_ptr<HandleState> st(new (std::nothrow) HandleState());
  if (!st) return nullptr;
  st->opt = default_options();
  HandleState *raw = st.get();
  r.emplace(handle, std::move(st));
  return raw;
}

HandleState *find_handle_state(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  auto &r = registry();
  auto it = r.find(handle);
  return it == r.end() ? nullptr : it->second.get();
}

bool release_handle_state(cublasHandle_t handle) {
  std::unique_ptr<HandleState> st;
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    auto &r = registry();
    auto it = r.find(handle);
    if (it == r.end()) return false;
    st = std::move(it->second);
    r.erase(it);
  }
  std::lock_guard<std::mutex> lock(st->mu);
  const RelaxedCaptureMode relaxed;
  // The handle's last call may still be running and reading the workspace
  // and the constants: wait for it (our own event, not the device) first.
  if (st->has_last) cudaEventSynchronize(st->last_done);
  // A graph may still be replaying into the workspace or a block kept for
  // graphs, and no event of ours marks a replay: wait for their devices
  // (as cudaFree, which freed them before the pool, did; xngemm.h says so).
  if ((st->ws_owned && st->ws_in_graph) || !st->ws_kept_for_graphs.empty()) {
    wait_for_device(st->ws_device);
    for (const HandleState::PoolBlock &b : st->ws_kept_for_graphs)
      if (b.device != st->ws_device) wait_for_device(b.device);
  }
  st->ws_in_graph = false;
  free_workspace(*st, nullptr);
  for (const HandleState::PoolBlock &b : st->ws_kept_for_graphs)
    if (pool_free_completed(b.ptr, b.device) != cudaSuccess) cudaGetLastError();
  trim_device_pool_if_unused(st->ws_device);
  for (const HandleState::PoolBlock &b : st->ws_kept_for_graphs)
    if (b.device != st->ws_device) trim_device_pool_if_unused(b.device);
  if (st->consts && cudaFree(st->consts) != cudaSuccess) cudaGetLastError();
  if (st->scan_flags_dev && cudaFree(st->scan_flags_dev) != cudaSuccess) cudaGetLastError();
  if (st->scan_flags_host && cudaFreeHost(st->scan_flags_host) != cudaSuccess)
    cudaGetLastError();
  if (st->ex_host && cudaFreeHost(st->ex_host) != cudaSuccess) cudaGetLastError();
  if (st->last_done && cudaEventDestroy(st->last_done) != cudaSuccess) cudaGetLastError();
  delete st->native_dgemm;
  st->native_dgemm = nullptr;
  return true;
}

namespace {

// The device constants' layout (handle_state.h, HandleState::consts):
// {0.f, 1.f} at byte 0, {0.0, 1.0} at 16, exdgemm's wide-path count at 32,
// the int32 {0, 1} at 40, exdgemm's undone-entry epoch at 48.
struct DeviceConstants {
  float f[4] = {0.f, 1.f, 0.f, 0.f};
  double d[2] = {0.0, 1.0};
  unsigned long long wide = 0;
  int i[2] = {0, 1};
  unsigned long long undone_epoch = 0;
  char pad[8] = {};
};
static_assert(sizeof(DeviceConstants) == 64, "the constants occupy 64 bytes");

// Writes the constants through a private non-blocking stream and waits for
// that stream alone: no device-wide synchronisation, nothing on the
// caller's stream (which may be capturing).
bool write_constants(void *consts) {
  static const DeviceConstants host{};
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return false;
  const bool ok =
      cudaMemcpyAsync(consts, &host, sizeof host, cudaMemcpyHostToDevice, s) ==
          cudaSuccess &&
      cudaStreamSynchronize(s) == cudaSuccess;
  cudaStreamDestroy(s);
  return ok;
}

}  // namespace

Status ensure_device_resources(HandleState &st) {
  if (st.consts) return Status::Ok;
  const RelaxedCaptureMode relaxed;
  void *consts = nullptr;
  int *flag = nullptr, *flag_host = nullptr;
  cudaEvent_t ev = nullptr;
  bool ok = cudaMalloc(&consts, sizeof(DeviceConstants)) == cudaSuccess &&
            write_constants(consts) &&
            cudaMalloc(&flag, kScanBufferBytes) == cudaSuccess &&
            cudaHostAlloc(&flag_host, kScanBufferBytes, cudaHostAllocDefault) ==
                cudaSuccess &&
            cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess;
  if (!ok) {
    cudaGetLastError();
    if (consts) cudaFree(consts);
    if (flag) cudaFree(flag);
    if (flag_host) cudaFreeHost(flag_host);
    if (ev) cudaEventDestroy(ev);
    return Status::AllocFailed;
  }
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess)
    st.sm_count = sms;
  else
    cudaGetLastError();  // (sm_count stays 0: the engines then assume one wave)
  st.consts = consts;
  st.scan_flags_dev = flag;
  st.scan_flags_host = flag_host;
  st.last_done = ev;
  return Status::Ok;
}

const DepthModel *handle_depth_model(HandleState &st) {
  const bool calibrated = st.opt.device_calibration != 0;
  const std::uint64_t generation = depth_model_generation();
  if (!st.model || st.model_generation != generation || st.model_calibrated != calibrated) {
    st.model = device_depth_model(calibrated);
    st.model_generation = generation;
    st.model_calibrated = calibrated;
  }
  return st.model.get();
}

Status order_after_last_call(HandleState &st, cudaStream_t stream) {
  // Always, not only when the stream differs: a destroyed stream's handle
  // value can be reused by a new stream. On the same stream it is a no-op.
  if (st.has_last && cudaStreamWaitEvent(stream, st.last_done, 0) != cudaSuccess)
    return Status::ExecutionFailed;
  return Status::Ok;
}

Status mark_call_done(HandleState &st, cudaStream_t stream) {
  if (cudaEventRecord(st.last_done, stream) == cudaSuccess) {
    st.has_last = true;
    return Status::Ok;
  }
  // No mark of this call's end: the event still marks an earlier call's,
  // and a release waiting on it could free the workspace under this call.
  // So wait for the call here (an error path only; never in a capture).
  cudaGetLastError();
  if (cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
  return Status::ExecutionFailed;
}

void *acquire_workspace(HandleState &st, std::size_t bytes, cudaStream_t stream,
                        std::size_t keep) {
  if (bytes == 0) return st.ws;  // nothing needed; any pointer will do
  if (st.ws && st.ws_bytes >= bytes) {
    if (st.in_capture && st.ws_owned) st.ws_in_graph = true;
    return st.ws;
  }
  if (!st.ws_owned) return nullptr;  // the user's workspace is too small
  // A captured call never allocates: memory a graph allocated would belong
  // to the graph, and the old workspace's free would wait for a replay.
  if (st.in_capture) return nullptr;
  if (g_fail_allocations) return nullptr;
  // Grow in stream order, ordered after every earlier use on this stream
  // (and, through the call guard, on the previous stream), from the
  // library's pool (device_pool.h: not the device's current pool). The old
  // workspace is freed only once the new one exists: if the allocation fails
  // the caller goes on in the old one, and the next call does not repeat a
  // free/alloc cycle.
  void *p = nullptr;
  const RelaxedCaptureMode relaxed;  // (the stream itself is not capturing)
  int device = -1;
  if (pool_malloc_async(&p, bytes, stream, &device) != cudaSuccess) {
    cudaGetLastError();  // out-of-memory is not sticky; clear it
    return nullptr;
  }
  keep = std::min(keep, st.ws_bytes);
  if (keep > 0 &&
      cudaMemcpyAsync(p, st.ws, keep, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
    cudaGetLastError();
    if (cudaFreeAsync(p, stream) != cudaSuccess) cudaGetLastError();
    return nullptr;
  }
  free_workspace(st, stream);
  st.ws = p;
  st.ws_bytes = bytes;
  st.ws_device = device;
  return p;
}

std::size_t workspace_cap(const HandleState &st) {
  return st.ws_owned && !st.in_capture ? SIZE_MAX : st.ws_bytes;
}

void set_user_workspace(HandleState &st, void *ptr, std::size_t bytes) {
  free_workspace(st, nullptr);
  trim_device_pool_if_unused(st.ws_device);
  st.ws = ptr;
  st.ws_bytes = bytes;
  st.ws_owned = ptr == nullptr;
}

void *acquire_ex_host(HandleState &st, std::size_t bytes) {
  if (st.ex_host && st.ex_host_bytes >= bytes) return st.ex_host;
  // Only reached after the call's synchronisation point has not yet been
  // passed and no earlier call uses the staging (calls on a handle are
  // serialised and each one synchronises before returning).
  const RelaxedCaptureMode relaxed;
  if (st.ex_host) cudaFreeHost(st.ex_host);
  st.ex_host = nullptr;
  st.ex_host_bytes = 0;
  if (g_fail_allocations ||
      cudaHostAlloc(&st.ex_host, bytes, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();
    st.ex_host = nullptr;
    return nullptr;
  }
  st.ex_host_bytes = bytes;
  return st.ex_host;
}

}  // namespace xn
