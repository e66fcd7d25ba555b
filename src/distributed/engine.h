// engine.h - what the distributed driver (pgemm.cpp) asks of the place the
// local work happens: host memory (PBLAS moves the strips, the library's
// host routine multiplies) or GPU memory (device_engine.cu: the strips are
// packed, exchanged over NCCL or MPI and unpacked on the GPU, the library's
// device routine multiplies). One driver, two engines (docs/design.md,
// "Distributed GEMM").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "distributed/block_cyclic.h"
#include "xngemm.h"

namespace xn::dist {

// The global arguments of one product, as the Fortran interface has them
// (1-based indices).
template <class T>
struct Problem {
  bool nota, notb;
  int m, n, k;
  T alpha, beta;
  const T *A;
  int ia, ja;
  const int *desca;
  const T *B;
  int ib, jb;
  const int *descb;
  T *C;
  int ic, jc;
  const int *descc;
};

// The local work of one band of sub(C). Every call except product() and
// scale() is collective over the grid; each returns false on this process
// where it failed (the driver then agrees with the grid before going on).
template <class T>
class Engine {
 public:
  virtual ~Engine() = default;
  // Room for strips of ml x kb (rows of op(sub(A))) and kb x nl (columns
  // of op(sub(B))) for every panel of K of width kb, and for moving them;
  // with `routine_workspace`, also for all the workspace the local routine
  // asks for at that shape (otherwise it makes do with what is left).
  virtual bool reserve(const Problem<T> &pr, std::int64_t ml, std::int64_t nl,
                       std::int64_t kb, bool routine_workspace) = 0;
  virtual void release() = 0;
  // This process's strips of the panel [k0, k0 + w) of K.
  virtual bool gather(const Problem<T> &pr, std::int64_t k0, int w) = 0;
  // cl := alpha strip_a strip_b + beta cl (ml x nl, leading dimension ldc).
  virtual bool product(const Problem<T> &pr, std::int64_t ml, std::int64_t nl, int w,
                       T beta, T *cl, int ldc) = 0;
  // Whether the last product(), which failed, may have written part of cl.
  virtual bool failed_product_may_write() const { return true; }
  // cl := beta cl (beta = 0 never reads cl).
  virtual bool scale(T beta, T *cl, std::int64_t rows, std::int64_t cols, int ldc) = 0;
  // The product's work is finished on this process (device: its stream).
  virtual bool finish() { return true; }
  // Recursion levels of the last product() (xnGetLastLevels; -1 unknown).
  virtual int last_levels() const = 0;
};

// The library's device routine for the local products (cuBLAS's argument
// list): xnDngemm, xnSngemm, xnExdgemm.
template <class T>
using DeviceGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                      cublasOperation_t, int, int, int, const T *,
                                      const T *, int, const T *, int, const T *, T *,
                                      int);

// Bytes of device workspace that routine asks for at m x n x k (NN), with
// the handle's options (xnGetWorkspaceSize, xnGetExdgemmWorkspaceSize).
using DeviceWorkspace = std::size_t (*)(cublasHandle_t, int, int, int);

// The GPU holding `p` (device memory), or -1 (host or managed memory, or
// no CUDA device).
int device_holding(const void *p);
// The calling thread's current GPU (0 if CUDA cannot say).
int current_device();

namespace testing {
// Test hook (tests/test_dist_pgemm.cpp): the device engine's exchanges on
// this process fail as a transport failure would, before anything is
// enqueued: mode 1 the first transport tried (NCCL, or MPI where it is the
// transport), mode 2 the MPI fallback too; mode 3 this process's packing
// fails before its exchange (it still joins the agreement); 0 clears it.
void set_exchange_failure(int mode);
}  // namespace testing

// The engine for operands in the memory of GPU `device`, on grid context
// `ctxt` (null if its stream or handle cannot be made: the caller reports).
template <class T>
std::unique_ptr<Engine<T>> make_device_engine(int ctxt, const Grid &g, int device,
                                              DeviceGemm<T> gemm,
                                              DeviceWorkspace workspace,
                                              const char *name);

}  // namespace xn::dist
