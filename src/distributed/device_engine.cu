// device_engine.cu - the distributed products on operands in GPU memory
// (engine.h): every process packs the blocks of op(sub(A)) and op(sub(B))
// that others need (strip_plan.h), the blocks move between the GPUs (NCCL,
// or MPI: on GPU buffers where it is CUDA-aware, else through pinned host
// memory), each process unpacks its strips and forms its part of sub(C)
// with the library's device routine, all on one stream of its GPU
// (docs/design.md, "Distributed GEMM").
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_CUDA_AWARE_SUPPORT
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/kept_device.h"
#include "core/environment.h"
#include "distributed/engine.h"
#include "distributed/exchange_kernels.cuh"
#include "distributed/grid_identity.h"
#include "distributed/scalapack.h"
#include "distributed/strip_plan.h"

// NCCL is loaded at run time (libnccl.so.2, or the file XN_NCCL_LIBRARY
// names), so the library neither links nor needs it. These are the few
// declarations of its stable C ABI (nccl.h, NCCL 2.x) the exchange uses.
extern "C" {
typedef struct ncclComm *ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef int ncclResult_t;  // ncclSuccess = 0
}
constexpr int kNcclUint8 = 1;  // ncclDataType_t ncclUint8

namespace xn::dist {

int device_holding(const void *p) {
  if (!p) return -1;
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();  // no device, or not a pointer CUDA knows
    return -1;
  }
  return at.type == cudaMemoryTypeDevice ? at.device : -1;
}

int current_device() {
  int d = 0;
  if (cudaGetDevice(&d) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return d;
}

namespace {

// ---------------------------------------------------------------- kernels
using exchange::kPass;
using exchange::kTile;
using exchange::pack_kernel;
using exchange::scale_kernel;
using exchange::tiles;
using exchange::unpack_kernel;

// ---------------------------------------------------------------- NCCL
struct Nccl {
  ncclResult_t (*get_unique_id)(ncclUniqueId *) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*send)(const void *, std::size_t, int, int, ncclComm_t,
                       cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void *, std::size_t, int, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  const char *(*error_string)(ncclResult_t) = nullptr;
  bool loaded = false;
};

const Nccl &nccl() {
  static const Nccl api = [] {
    Nccl n;
    const std::string path = env_text(EnvVar::NcclLibrary);
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    // The default's absence is normal (MPI moves the blocks); a library
    // the user named that does not load is said.
    if (!h && env_is_set(EnvVar::NcclLibrary))
      report_environment_once("XN_NCCL_LIBRARY", path.c_str(),
                              std::string("cannot be loaded (") + dlerror() + ")",
                              "blocks move through MPI");
    if (!h) return n;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      return fn != nullptr;
    };
    n.loaded = sym(n.get_unique_id, "ncclGetUniqueId") &&
               sym(n.comm_init_rank, "ncclCommInitRank") && sym(n.send, "ncclSend") &&
               sym(n.recv, "ncclRecv") && sym(n.group_start, "ncclGroupStart") &&
               sym(n.group_end, "ncclGroupEnd") &&
               sym(n.comm_destroy, "ncclCommDestroy") &&
               sym(n.comm_abort, "ncclCommAbort") &&
               sym(n.error_string, "ncclGetErrorString");
    return n;
  }();
  return api;
}

bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// ---------------------------------------------------------------- state
bool cuda_ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return true;
  diagnostic("distributed GEMM: %s: %s", what, cudaGetErrorString(e));
  cudaGetLastError();
  return false;
}

// Device memory the engine's buffers always leave free for what the
// transports allocate on their own after the buffers are sized: NCCL's
// connections are made when a grid's communicator is (warm_up_nccl) and
// hold their memory from then on, but CUDA-aware MPI and NCCL's proxies may
// take a little more while moving data (docs/design.md, "Memory").
constexpr std::size_t kTransportHeadroom = std::size_t(256) << 20;

// One GPU's kept context (its stream, handle and `work` buffer, shared with
// the host routines' kind: backend/cuda/kept_device.h) and the exchange's
// own buffers, kept for the process's later calls.
struct DeviceState {
  KeptDevice kept;
  GrowingDeviceBuffer index;
  GrowingHostBuffer staging;
};

// One grid's processes as an MPI communicator (ranks in the grid's
// row-major order) and, where it runs, an NCCL communicator.
struct GridComm {
  std::vector<int> world;      // the processes, as ranks of MPI_COMM_WORLD, row-major
  std::int64_t transport = 0;  // XN_OPT_DIST_TRANSPORT when made
  bool retired = false;        // superseded (kept until MPI_Finalize frees it)
  int device = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  ncclComm_t nccl = nullptr;
  bool gpu_buffers_over_mpi = false;
};

std::mutex g_mutex;  // the states below, and one device engine at a time
// Never destroyed: CUDA and cuBLAS may be gone when static objects are
// (the process's exit), and the states serve until then.
std::vector<DeviceState *> g_states;
std::vector<std::unique_ptr<GridComm>> g_grids;

DeviceState *state_for(int device) {
  for (DeviceState *s : g_states)
    if (s->kept.device == device) return s;
  auto s = std::make_unique<DeviceState>();
  // (device is current.) Blocking with respect to the legacy default
  // stream: the call follows the caller's work there, as a host routine
  // would.
  if (!s->kept.ready(KeptDevice::StreamKind::Blocking)) {
    diagnostic("distributed GEMM: no cuBLAS handle on GPU %d", device);
    return nullptr;
  }
  g_states.push_back(s.release());
  return g_states.back();
}

// At MPI_Finalize (the delete callback of an attribute on MPI_COMM_SELF,
// which MPI runs first thing there): the NCCL and MPI communicators go
// while MPI and the GPUs are still up, not in exit handlers after them.
int release_grids(MPI_Comm, int, void *, void *) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto &gc : g_grids) {
    if (gc->nccl) {
      cudaSetDevice(gc->device);
      nccl().comm_destroy(gc->nccl);
    }
    if (gc->comm != MPI_COMM_NULL) MPI_Comm_free(&gc->comm);
  }
  g_grids.clear();
  return MPI_SUCCESS;
}

void release_at_finalize() {
  static const bool registered = [] {
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_grids, &key, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
    return true;
  }();
  (void)registered;
}

bool grid_all(int ctxt, bool ok) {
  int bad = ok ? 0 : 1;
  Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
  return bad == 0;
}

std::int64_t transport_option() {
  std::int64_t v = 0;
  return xnGetOption(nullptr, XN_OPT_DIST_TRANSPORT, &v) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

// testing::set_exchange_failure's mode for this process.
int g_fail_exchange = 0;

// Whether every process of the grid's communicator has `ok` (collective,
// on the host: MPI, never on a stream that a failed peer would block).
bool comm_all(MPI_Comm comm, bool ok) {
  int v = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm);
  return v == 1;
}

// Connects every pair of the grid's NCCL communicator now, with one byte
// each way, so that NCCL allocates its connection buffers while memory is
// free: made lazily, at the first exchange of a call, they failed where the
// call's own buffers had taken the memory ("unhandled cuda error" at
// n = 32768 on 80 GB cards). False if any process failed (collective).
bool warm_up_nccl(GridComm &gc, int procs, int me, cudaStream_t stream) {
  const Nccl &n = nccl();
  char *buf = nullptr;
  bool ok;
  {
    ok = cudaMalloc(&buf, std::size_t(2 * procs)) == cudaSuccess;
    if (ok) {
      n.group_start();
      for (int peer = 0; peer < procs; ++peer)
        if (peer != me) {
          n.send(buf + peer, 1, kNcclUint8, peer, gc.nccl, stream);
          n.recv(buf + procs + peer, 1, kNcclUint8, peer, gc.nccl, stream);
        }
      const ncclResult_t r = n.group_end();
      if (r != 0) diagnostic("distributed GEMM: NCCL: %s", n.error_string(r));
      ok = r == 0;
    }
  }
  ok = comm_all(gc.comm, ok);
  // (A peer whose NCCL kernel failed asynchronously would leave this wait
  // blocked: NCCL's asynchronous errors are not watched; docs/design.md.)
  if (ok) ok = comm_all(gc.comm, cudaStreamSynchronize(stream) == cudaSuccess);
  if (buf) cudaFree(buf);
  cudaGetLastError();
  return ok;
}

// Gives up the grid's NCCL communicator on every process (collective):
// ncclCommAbort also ends operations a failed peer left waiting, so no
// stream stays blocked. The grid then moves its blocks over MPI.
void abandon_nccl(GridComm &gc, cudaStream_t stream) {
  if (!gc.nccl) return;
  nccl().comm_abort(gc.nccl);
  gc.nccl = nullptr;
  cudaStreamSynchronize(stream);  // what the aborted operations left
  cudaGetLastError();
}

// The grid's communicators, made on first use (collective over the grid).
GridComm *grid_for(int ctxt, const Grid &g, int device, cudaStream_t stream) {
  std::vector<int> members;
  const MPI_Comm sys = grid_communicator(ctxt, &members);
  const std::vector<int> world = grid_world_ranks(ctxt);
  const std::int64_t option = transport_option();
  GridComm *kept = nullptr;
  if (!world.empty())
    for (auto &gc : g_grids)
      if (!gc->retired && gc->world == world && gc->device == device &&
          gc->transport == option)
        kept = gc.get();
  // Making communicators is collective: every process of the grid must
  // take the same branch, whatever its own history.
  if (grid_all(ctxt, kept != nullptr)) return kept;
  if (kept) kept->retired = true;

  release_at_finalize();
  auto gc = std::make_unique<GridComm>();
  gc->world = world;
  gc->transport = option;
  gc->device = device;
  MPI_Group all = MPI_GROUP_NULL, grid = MPI_GROUP_NULL;
  MPI_Comm_group(sys, &all);
  MPI_Group_incl(all, int(members.size()), members.data(), &grid);
  const int made = MPI_Comm_create_group(sys, grid, 0x786e, &gc->comm);
  MPI_Group_free(&grid);
  MPI_Group_free(&all);
  if (made != MPI_SUCCESS) return nullptr;
  const int procs = int(members.size()), me = g.myrow * g.npcol + g.mycol;

  // NCCL where asked for (or by default), loadable everywhere, and every
  // process has a GPU of its own (NCCL refuses two ranks on one GPU).
  struct Id {
    char host[64];
    char uuid[16];
  } mine{}, *ids = new Id[std::size_t(procs)];
  gethostname(mine.host, sizeof mine.host - 1);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
    std::memcpy(mine.uuid, &prop.uuid, sizeof mine.uuid);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, ids, sizeof mine, MPI_BYTE, gc->comm);
  bool distinct = true;
  for (int a = 0; a < procs; ++a)
    for (int b = a + 1; b < procs; ++b)
      if (std::memcmp(&ids[a], &ids[b], sizeof(Id)) == 0) distinct = false;
  delete[] ids;
  int can = option != 2 && distinct && nccl().loaded ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &can, 1, MPI_INT, MPI_MIN, gc->comm);
  if (can) {
    ncclUniqueId id{};
    if (me == 0 && nccl().get_unique_id(&id) != 0) std::memset(&id, 0, sizeof id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, gc->comm);
    int ok = nccl().comm_init_rank(&gc->nccl, procs, id, me) == 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, gc->comm);
    if (!ok) gc->nccl = nullptr;  // (a half-made communicator is left alone)
    // Its connections, now; where that fails, MPI moves the blocks.
    if (gc->nccl && !warm_up_nccl(*gc, procs, me, stream)) abandon_nccl(*gc, stream);
  }
  int aware = cuda_aware_mpi() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &aware, 1, MPI_INT, MPI_MIN, gc->comm);
  gc->gpu_buffers_over_mpi = aware == 1;
  g_grids.push_back(std::move(gc));
  return g_grids.back().get();
}

// ---------------------------------------------------------------- engine
template <class T>
class DeviceEngine final : public Engine<T> {
 public:
  DeviceEngine(std::unique_lock<std::mutex> lock, DeviceState &st, GridComm &gc,
               const Grid &g, int previous_device, DeviceGemm<T> gemm,
               DeviceWorkspace workspace, const char *name)
      : lock_(std::move(lock)),
        st_(st),
        gc_(gc),
        g_(g),
        previous_(previous_device),
        gemm_(gemm),
        workspace_(workspace),
        name_(name) {}
  ~DeviceEngine() override {
    release();
    cudaSetDevice(previous_);
  }

  // One buffer: the two strips, then a scratch region that first holds
  // the exchange's send and receive blocks and then, once they are
  // unpacked, is the local routine's workspace (xnSetWorkspace): the
  // exchange and the product follow each other on one stream, so they
  // share that memory, and the strips and the routine's workspace come
  // out of one budget (docs/design.md, "Memory").
  bool reserve(const Problem<T> &pr, std::int64_t ml, std::int64_t nl, std::int64_t kb,
               bool routine_workspace) override {
    ml_ = ml;
    nl_ = nl;
    kb_ = kb;
    // The most any panel's exchange needs (the last panel may be narrower
    // but hold more of this process's blocks than the first).
    std::int64_t send = 0, recv = 0, index = 0;
    for (std::int64_t k0 = 0; k0 < pr.k; k0 += kb) {
      const int w = int(std::min<std::int64_t>(kb, pr.k - k0));
      for (int which = 0; which < 2; ++which) {
        const StripPlan p = plan(pr, which, k0, w);
        send = std::max(send, p.send_elems);
        recv = std::max(recv, p.recv_elems);
        index = std::max(index, index_count(p));
      }
    }
    a_elems_ = ml * kb;
    b_elems_ = kb * nl;
    send_elems_ = send;
    constexpr std::size_t kAlign = 256;  // xnSetWorkspace's alignment
    strips_bytes_ =
        (std::size_t(a_elems_ + b_elems_) * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    const std::size_t routine = routine_workspace && ml > 0 && nl > 0
                                    ? workspace_(st_.kept.handle, int(ml), int(nl), int(kb))
                                    : 0;
    scratch_bytes_ = std::max(std::size_t(send + recv) * sizeof(T), routine);
    const KeptDevice &kd = st_.kept;
    if (!st_.kept.work.reserve(strips_bytes_ + scratch_bytes_, kd.stream, kd.device,
                               kTransportHeadroom) ||
        !st_.index.reserve(std::size_t(index) * sizeof(int), kd.stream, kd.device,
                           kTransportHeadroom) ||
        (!gc_.nccl && !gc_.gpu_buffers_over_mpi &&
         !st_.staging.reserve(std::size_t(send + recv) * sizeof(T)))) {
      xnSetWorkspace(st_.kept.handle, nullptr, 0);  // (the buffer may be gone)
      return false;
    }
    // No scratch at all: nothing to exchange and a routine that does not
    // recurse here; it then allocates what it may need itself.
    return xnSetWorkspace(st_.kept.handle, scratch_bytes_ ? send_buf() : nullptr,
                          scratch_bytes_) == CUBLAS_STATUS_SUCCESS;
  }
  void release() override {}  // the buffers stay for the next call

  // Both strips' exchanges run on every process whatever failed before
  // them here (each is collective: a process that left early would leave
  // the others waiting in it).
  bool gather(const Problem<T> &pr, std::int64_t k0, int w) override {
    const bool a = move_strip(pr, 0, k0, w, true);
    const bool b = move_strip(pr, 1, k0, w, a);
    return a && b;
  }

  bool product(const Problem<T> &pr, std::int64_t ml, std::int64_t nl, int w, T beta,
               T *cl, int ldc) override {
    auto run = [&] {
      return gemm_(st_.kept.handle, CUBLAS_OP_N, CUBLAS_OP_N, int(ml), int(nl), w, &pr.alpha,
                   strip_a(), lda(), strip_b(), ldb(), &beta, cl, ldc);
    };
    cublasStatus_t s = run();
    // The scratch was short for this call: xnExdgemm's query assumes
    // inputs of a narrow exponent range, and wider ones need more slices
    // even in its smallest block. Such a call leaves C untouched: again,
    // with a workspace the library allocates itself (stream-ordered), which
    // the next reserve() frees when it hands the scratch back.
    if (s == CUBLAS_STATUS_ALLOC_FAILED && scratch_bytes_ > 0 &&
        xnSetWorkspace(st_.kept.handle, nullptr, 0) == CUBLAS_STATUS_SUCCESS)
      s = run();
    if (s != CUBLAS_STATUS_SUCCESS)
      diagnostic("%s: the local product failed (cuBLAS status %d)", name_, int(s));
    // The device routines leave C untouched when they refuse a call (memory,
    // a capture, an argument); only a failure in flight may have written.
    failure_may_write_ = s == CUBLAS_STATUS_EXECUTION_FAILED ||
                         s == CUBLAS_STATUS_INTERNAL_ERROR;
    if (xnGetLastLevels(st_.kept.handle, &levels_) != CUBLAS_STATUS_SUCCESS) levels_ = -1;
    return s == CUBLAS_STATUS_SUCCESS;
  }
  bool failed_product_may_write() const override { return failure_may_write_; }

  int last_levels() const override { return levels_; }

  bool scale(T beta, T *cl, std::int64_t rows, std::int64_t cols, int ldc) override {
    if (rows <= 0 || cols <= 0) return true;
    const std::int64_t blocks = std::min<std::int64_t>((rows * cols + 255) / 256, 65536);
    scale_kernel<T><<<unsigned(blocks), 256, 0, st_.kept.stream>>>(cl, ldc, rows, cols, beta);
    return cuda_ok(cudaGetLastError(), "scale");
  }

  bool finish() override { return cuda_ok(cudaStreamSynchronize(st_.kept.stream), name_); }

 private:
  // The plan of this process for the A strip (which = 0) or the B strip
  // of the panel [k0, k0 + w).
  StripPlan plan(const Problem<T> &pr, int which, std::int64_t k0, int w) const {
    const Desc c = to_desc(pr.descc);
    const Desc x = to_desc(which == 0 ? pr.desca : pr.descb);
    const Axis xrow{x.imb, x.mb, x.rsrc, g_.nprow}, xcol{x.inb, x.nb, x.csrc, g_.npcol};
    PanelStrips ps{};
    ps.g = &g_;
    ps.crow = Axis{c.imb, c.mb, c.rsrc, g_.nprow};
    ps.ccol = Axis{c.inb, c.nb, c.csrc, g_.npcol};
    ps.w = w;
    if (which == 0) {  // rows of op(sub(A)) as sub(C)'s rows
      ps.c0 = pr.ic - 1;
      ps.count = pr.m;
      ps.x_part = pr.nota ? pr.ia - 1 : pr.ja - 1;
      ps.x_k = (pr.nota ? pr.ja - 1 : pr.ia - 1) + k0;
      return plan_strip(g_, xrow, xcol, !pr.nota, a_strip, &ps);
    }
    ps.c0 = pr.jc - 1;  // columns of op(sub(B)) as sub(C)'s columns
    ps.count = pr.n;
    ps.x_part = pr.notb ? pr.jb - 1 : pr.ib - 1;
    ps.x_k = (pr.notb ? pr.ib - 1 : pr.jb - 1) + k0;
    return plan_strip(g_, xrow, xcol, !pr.notb, b_strip, &ps);
  }

  static std::int64_t index_count(const StripPlan &p) {
    std::int64_t n = 0;
    for (const Pack &k : p.packs) n += std::int64_t(k.u.size() + k.v.size());
    for (const Unpack &u : p.unpacks)
      n += std::int64_t(u.row_pos.size() + u.col_pos.size());
    return n;
  }

  T *strip_a() const { return static_cast<T *>(st_.kept.work.data()); }
  T *strip_b() const { return strip_a() + a_elems_; }
  T *send_buf() const {
    return reinterpret_cast<T *>(static_cast<char *>(st_.kept.work.data()) + strips_bytes_);
  }
  T *recv_buf() const { return send_buf() + send_elems_; }
  int lda() const { return int(std::max<std::int64_t>(ml_, 1)); }
  int ldb() const { return int(std::max<std::int64_t>(kb_, 1)); }

  // Pack what others need of one operand, exchange, unpack into the strip.
  // `ok`: this process can take part (false: it only joins the exchange's
  // agreement, which then fails everywhere).
  bool move_strip(const Problem<T> &pr, int which, std::int64_t k0, int w, bool ok) {
    const StripPlan p = plan(pr, which, k0, w);
    const Desc x = to_desc(which == 0 ? pr.desca : pr.descb);
    const T *src = which == 0 ? pr.A : pr.B;
    const bool trans = which == 0 ? !pr.nota : !pr.notb;
    T *strip = which == 0 ? strip_a() : strip_b();
    const std::int64_t ld = which == 0 ? lda() : ldb();

    // Every index list in one upload.
    std::vector<int> idx;
    idx.reserve(std::size_t(index_count(p)));
    for (const Pack &k : p.packs) {
      idx.insert(idx.end(), k.u.begin(), k.u.end());
      idx.insert(idx.end(), k.v.begin(), k.v.end());
    }
    for (const Unpack &u : p.unpacks) {
      idx.insert(idx.end(), u.row_pos.begin(), u.row_pos.end());
      idx.insert(idx.end(), u.col_pos.begin(), u.col_pos.end());
    }
    int *didx = static_cast<int *>(st_.index.data());
    if (ok && !idx.empty())
      ok = cuda_ok(cudaMemcpyAsync(didx, idx.data(), idx.size() * sizeof(int),
                                   cudaMemcpyHostToDevice, st_.kept.stream),
                   "index upload");
    const int *at = didx;
    for (const Pack &k : p.packs) {
      const int *u = at, *v = at + k.u.size();
      at = v + k.v.size();
      if (ok)
        pack_kernel<T><<<tiles(k.rows, k.cols), dim3(kTile, kPass), 0, st_.kept.stream>>>(
            send_buf() + k.offset, src, x.lld, u, v, int(k.rows), int(k.cols), trans);
    }
    if (ok) ok = cuda_ok(cudaGetLastError(), "pack") && g_fail_exchange != 3;
    if (!exchange(p, ok)) return false;  // agreed by every process
    for (const Unpack &u : p.unpacks) {
      const int *rp = at, *cp = at + u.row_pos.size();
      at = cp + u.col_pos.size();
      const T *block = (u.from_send ? send_buf() : recv_buf()) + u.offset;
      unpack_kernel<T>
          <<<tiles(std::int64_t(u.row_pos.size()), std::int64_t(u.col_pos.size())),
             dim3(kTile, kPass), 0, st_.kept.stream>>>(
              strip, ld, rp, cp, block, int(u.row_pos.size()), int(u.col_pos.size()));
    }
    return cuda_ok(cudaGetLastError(), "unpack");
  }

  // The blocks of one plan from every sender to every receiver, over NCCL
  // where the grid has it, else MPI. A transport failure on any process
  // is agreed by all on the host before anything else is enqueued: the
  // grid then abandons NCCL (aborting what a peer left waiting) and moves
  // the blocks over MPI; if that fails too, every process returns false
  // and no product uses the strips (the driver leaves sub(C) as it is).
  // `ok`: this process is ready (its packs are enqueued).
  bool exchange(const StripPlan &p, bool ok) {
    if (gc_.nccl) {
      const bool mine = ok && g_fail_exchange != 1 && g_fail_exchange != 2 &&
                        exchange_nccl(p);
      if (comm_all(gc_.comm, mine)) return true;
      diagnostic("%s: NCCL failed on some process: over MPI instead", name_);
      abandon_nccl(gc_, st_.kept.stream);
      return exchange_mpi(p, !ok || g_fail_exchange == 2);
    }
    return exchange_mpi(p, !ok || g_fail_exchange == 1 || g_fail_exchange == 2);
  }

  bool exchange_nccl(const StripPlan &p) {
    const std::size_t size = sizeof(T);
    const Nccl &n = nccl();
    n.group_start();
    for (const Send &s : p.sends)
      n.send(send_buf() + s.offset, std::size_t(s.count) * size, kNcclUint8, s.peer,
             gc_.nccl, st_.kept.stream);
    for (const Unpack &u : p.unpacks)
      if (!u.from_send)
        n.recv(recv_buf() + u.offset, std::size_t(u.count()) * size, kNcclUint8, u.peer,
               gc_.nccl, st_.kept.stream);
    const ncclResult_t r = n.group_end();
    if (r != 0) diagnostic("%s: NCCL: %s", name_, n.error_string(r));
    return r == 0;
  }

  // MPI: the packs must be done; without CUDA-aware MPI, through host
  // memory (the packs down, what arrives up). Every process agrees that it
  // can take part before any message is posted (a missing peer would leave
  // the others waiting); `fail`: this process cannot (or the test hook).
  bool exchange_mpi(const StripPlan &p, bool fail) {
    const std::size_t size = sizeof(T);
    char *send = reinterpret_cast<char *>(send_buf());
    char *recv = reinterpret_cast<char *>(recv_buf());
    bool ready = !fail;
    if (ready && !gc_.gpu_buffers_over_mpi) {
      ready = st_.staging.reserve(std::size_t(p.send_elems + p.recv_elems) * size);
      char *host = static_cast<char *>(st_.staging.data());
      if (ready && p.send_elems > 0)
        ready = cuda_ok(cudaMemcpyAsync(host, send, std::size_t(p.send_elems) * size,
                                        cudaMemcpyDeviceToHost, st_.kept.stream),
                        "staging");
      send = host;
      recv = host + std::size_t(p.send_elems) * size;
    }
    if (ready) ready = cuda_ok(cudaStreamSynchronize(st_.kept.stream), "pack");
    if (!comm_all(gc_.comm, ready)) return false;
    std::vector<MPI_Request> reqs;
    constexpr std::size_t kChunk = std::size_t(1) << 30;  // bytes per message
    auto post = [&](char *buf, std::size_t bytes, int peer, bool is_send) {
      for (std::size_t off = 0; off < bytes; off += kChunk) {
        const int len = int(std::min(kChunk, bytes - off));
        reqs.emplace_back();
        if (is_send)
          MPI_Isend(buf + off, len, MPI_BYTE, peer, 0x786e, gc_.comm, &reqs.back());
        else
          MPI_Irecv(buf + off, len, MPI_BYTE, peer, 0x786e, gc_.comm, &reqs.back());
      }
    };
    for (const Unpack &u : p.unpacks)
      if (!u.from_send)
        post(recv + std::size_t(u.offset) * size, std::size_t(u.count()) * size, u.peer,
             false);
    for (const Send &s : p.sends)
      post(send + std::size_t(s.offset) * size, std::size_t(s.count) * size, s.peer,
           true);
    if (MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return false;
    if (!gc_.gpu_buffers_over_mpi && p.recv_elems > 0)
      return cuda_ok(cudaMemcpyAsync(recv_buf(), recv, std::size_t(p.recv_elems) * size,
                                     cudaMemcpyHostToDevice, st_.kept.stream),
                     "staging");
    return true;
  }

  std::unique_lock<std::mutex> lock_;
  DeviceState &st_;
  GridComm &gc_;
  Grid g_;
  int previous_;
  DeviceGemm<T> gemm_;
  DeviceWorkspace workspace_;
  const char *name_;
  std::int64_t ml_ = 0, nl_ = 0, kb_ = 0, a_elems_ = 0, b_elems_ = 0, send_elems_ = 0;
  std::size_t strips_bytes_ = 0, scratch_bytes_ = 0;
  int levels_ = -1;
  bool failure_may_write_ = true;  // the last failed product's (product())
};

}  // namespace

template <class T>
std::unique_ptr<Engine<T>> make_device_engine(int ctxt, const Grid &g, int device,
                                              DeviceGemm<T> gemm,
                                              DeviceWorkspace workspace,
                                              const char *name) {
  std::unique_lock<std::mutex> lock(g_mutex);
  const int previous = current_device();
  DeviceState *st =
      cuda_ok(cudaSetDevice(device), "cudaSetDevice") ? state_for(device) : nullptr;
  // A host routine: the process-wide options hold for it, as for the host
  // API.
  if (st) st->kept.follow_process_options();
  // The grid's communicators are made together: only if every process
  // has its GPU ready.
  GridComm *gc =
      grid_all(ctxt, st != nullptr) ? grid_for(ctxt, g, device, st->kept.stream) : nullptr;
  if (!st || !gc) {
    cudaSetDevice(previous);
    return nullptr;
  }
  return std::make_unique<DeviceEngine<T>>(std::move(lock), *st, *gc, g, previous, gemm,
                                           workspace, name);
}

namespace testing {
void set_exchange_failure(int mode) { g_fail_exchange = mode; }
}  // namespace testing

template std::unique_ptr<Engine<double>> make_device_engine<double>(
    int, const Grid &, int, DeviceGemm<double>, DeviceWorkspace, const char *);
template std::unique_ptr<Engine<float>> make_device_engine<float>(int, const Grid &, int,
                                                                  DeviceGemm<float>,
                                                                  DeviceWorkspace,
                                                                  const char *);

}  // namespace xn::dist
