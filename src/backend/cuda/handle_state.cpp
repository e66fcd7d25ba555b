// handle_state.cpp - per-handle registry, workspace and device resources.
#include "backend/cuda/handle_state.h"

#include <atomic>
#include <memory>
#include <new>
#include <unordered_map>

#include "launch.h"

namespace xn {

namespace {

std::mutex g_registry_mutex;
std::unordered_map<cublasHandle_t, std::unique_ptr<HandleState>> &registry() {
  static auto *r =
      new std::unordered_map<cublasHandle_t, std::unique_ptr<HandleState>>();
  return *r;
}

std::atomic<bool> g_fail_allocations{false};

void free_workspace(HandleState &st) {
  if (st.ws && st.ws_owned) {
    cudaStream_t s = st.has_last ? st.last_stream : nullptr;
    if (cudaFreeAsync(st.ws, s) != cudaSuccess) cudaGetLastError();
  }
  st.ws = nullptr;
  st.ws_bytes = 0;
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
  free_workspace(*st);
  if (st->consts && cudaFree(st->consts) != cudaSuccess) cudaGetLastError();
  if (st->neg_flag_dev && cudaFree(st->neg_flag_dev) != cudaSuccess) cudaGetLastError();
  if (st->neg_flag_host && cudaFreeHost(st->neg_flag_host) != cudaSuccess) cudaGetLastError();
  if (st->last_done && cudaEventDestroy(st->last_done) != cudaSuccess) cudaGetLastError();
  return true;
}

Status ensure_device_resources(HandleState &st, cudaStream_t stream) {
  if (st.consts) return Status::Ok;
  void *consts = nullptr;
  int *flag = nullptr, *flag_host = nullptr;
  cudaEvent_t ev = nullptr;
  // Plain first-use allocations; the constants are written by a kernel on the
  // caller's stream, so even the first call does not synchronise the device.
  bool ok = cudaMalloc(&consts, 32) == cudaSuccess &&
            launch_write_zero_one(stream, consts) == cudaSuccess &&
            cudaMalloc(&flag, sizeof(int)) == cudaSuccess &&
            cudaHostAlloc(&flag_host, sizeof(int), cudaHostAllocDefault) == cudaSuccess &&
            cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess;
  if (!ok) {
    cudaGetLastError();
    if (consts) cudaFree(consts);
    if (flag) cudaFree(flag);
    if (flag_host) cudaFreeHost(flag_host);
    if (ev) cudaEventDestroy(ev);
    return Status::AllocFailed;
  }
  st.consts = consts;
  st.neg_flag_dev = flag;
  st.neg_flag_host = flag_host;
  st.last_done = ev;
  return Status::Ok;
}

Status order_after_last_call(HandleState &st, cudaStream_t stream) {
  if (st.has_last && st.last_stream != stream &&
      cudaStreamWaitEvent(stream, st.last_done, 0) != cudaSuccess)
    return Status::ExecutionFailed;
  return Status::Ok;
}

Status mark_call_done(HandleState &st, cudaStream_t stream) {
  if (cudaEventRecord(st.last_done, stream) != cudaSuccess)
    return Status::ExecutionFailed;
  st.last_stream = stream;
  st.has_last = true;
  return Status::Ok;
}

void *acquire_workspace(HandleState &st, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return st.ws;  // nothing needed; any pointer will do
  if (st.ws && st.ws_bytes >= bytes) return st.ws;
  if (!st.ws_owned) return nullptr;  // the user's workspace is too small
  if (st.opt.workspace_limit >= 0 &&
      bytes > static_cast<std::size_t>(st.opt.workspace_limit))
    return nullptr;
  if (g_fail_allocations) return nullptr;
  // Grow: free the old one in stream order, then allocate in stream order.
  // Both are ordered after every earlier use on this stream (and, through
  // order_after_last_call, on the previous stream).
  free_workspace(st);
  void *p = nullptr;
  if (cudaMallocAsync(&p, bytes, stream) != cudaSuccess) {
    cudaGetLastError();  // out-of-memory is not sticky; clear it
    return nullptr;
  }
  st.ws = p;
  st.ws_bytes = bytes;
  return p;
}

}  // namespace xn
