// elementwise_kernels.cu - the fused elementwise step (combine), scale and
// sign-scan kernels of the CUDA backend (Badin et al., ICS'13, section 5:
// "custom CUDA kernels for assignment, addition and subtraction"; Li, Ranka,
// Sahni, ICPADS'11, Figures 16 and 23: steps fused so that each operand is
// read once), and the transposing add/sub that forms a non-transposed T from a
// transposed op(B). The arithmetic is kernels/numerics/elementwise.h.
//
// Geometry: blockIdx.y walks columns, threads walk rows; each thread owns V
// consecutive rows of a column. When every pointer is 16-byte aligned and
// every leading dimension a multiple of V, the V elements move as one 16-byte
// access (V = 16 / sizeof(T)); otherwise as V scalar accesses, still
// coalesced across the warp. All accesses are unit-stride in memory because
// temporaries keep their source's storage orientation, except for T stored
// non-transposed from a transposed op(B), which goes through shared-memory
// tiles (transpose_add_sub_kernel).
#include <algorithm>
#include <cstdint>

#include "kernels/launch.h"
#include "numerics/elementwise.h"

namespace xn {

namespace {

using idx = std::int64_t;

constexpr int kThreads = 256;
constexpr unsigned kMaxGridY = 65535;
constexpr int kColUnroll = 4;  // columns per thread per iteration

template <class T>
struct VecWidth {
  static constexpr int value = 16 / sizeof(T);
};

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <class T>
__device__ __forceinline__ T read_scalar(ScalarArg<T> s) {
  return s.dev ? *s.dev : s.value;
}

template <class T, int V>
__device__ __forceinline__ Pack<T, V> load(const T *p, idx rows_left, bool vector_ok) {
  Pack<T, V> r;
  if (vector_ok && rows_left >= V) {
    r = *reinterpret_cast<const Pack<T, V> *>(p);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = e < rows_left ? p[e] : T(0);
  }
  return r;
}

template <class T, int V>
__device__ __forceinline__ void store(T *p, const Pack<T, V> &r, idx rows_left,
                                      bool vector_ok) {
  if (vector_ok && rows_left >= V) {
    *reinterpret_cast<Pack<T, V> *>(p) = r;
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e < rows_left) p[e] = r.v[e];
  }
}

// One fused step of a schedule: `NS` sources, `ND` targets, `U` columns per
// thread per iteration. Each thread loads the packs of its U columns from
// every source (and the old targets that beta multiplies) before it stores
// any, so U * NS independent 16-byte loads are in flight per thread. This is
// also what makes in-place steps (T1 = T1 - A11, C21 = C11 - C21) safe:
// every element is read before the same thread writes it, and no other
// thread touches it. The coefficients are copied into registers once (an
// array of the argument indexed through a pointer would be copied to local
// memory by every thread).
template <class T, int V, int NS, int ND, int U>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(CombineArgs<T> a, bool vector_ok) {
  const idx i = (idx(blockIdx.x) * kThreads + threadIdx.x) * V;
  if (i >= a.rows) return;
  const idx left = a.rows - i;
  signed char coef[ND][NS];
  bool beta_old[ND], read_old[ND];
  bool any_beta = false;
#pragma unroll
  for (int d = 0; d < ND; ++d) {
#pragma unroll
    for (int s = 0; s < NS; ++s) coef[d][s] = a.coef[d][s];
    beta_old[d] = a.beta_old[d];
    any_beta |= beta_old[d];
  }
  const T beta = any_beta ? read_scalar(a.beta) : T(0);
#pragma unroll
  for (int d = 0; d < ND; ++d) read_old[d] = beta_old[d] && beta != T(0);  // BLAS
  for (idx j0 = idx(blockIdx.y) * U; j0 < a.cols; j0 += idx(gridDim.y) * U) {
    Pack<T, V> v[U][NS], old[U][ND];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (j0 + u < a.cols) {
#pragma unroll
        for (int s = 0; s < NS; ++s)
          v[u][s] = load<T, V>(a.src[s] + i + (j0 + u) * a.lds[s], left, vector_ok);
#pragma unroll
        for (int d = 0; d < ND; ++d)
          if (read_old[d])
            old[u][d] = load<T, V>(a.dst[d] + i + (j0 + u) * a.ldd[d], left, vector_ok);
      }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (j0 + u >= a.cols) break;
#pragma unroll
      for (int d = 0; d < ND; ++d) {
        Pack<T, V> r;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          T vals[NS];
#pragma unroll
          for (int s = 0; s < NS; ++s) vals[s] = v[u][s].v[e];
          T x = ew_combine(vals, coef[d], NS);
          if (beta_old[d]) x = ew_fold(x, beta, read_old[d] ? old[u][d].v[e] : T(0));
          r.v[e] = x;
        }
        store<T, V>(a.dst[d] + i + (j0 + u) * a.ldd[d], r, left, vector_ok);
      }
    }
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    scale_kernel(idx rows, idx cols, T *c, idx ldc, ScalarArg<T> beta_arg,
                 bool vector_ok) {
  const idx i = (idx(blockIdx.x) * kThreads + threadIdx.x) * V;
  if (i >= rows) return;
  const idx left = rows - i;
  const T beta = read_scalar(beta_arg);
  // beta = 1 (a device scalar the host cannot see): BLAS's quick return
  // leaves C untouched (a signalling NaN stays signalling; 1 c would quiet it).
  if (beta == T(1)) return;
  for (idx j = blockIdx.y; j < cols; j += gridDim.y) {
    Pack<T, V> r;
    if (beta != T(0)) r = load<T, V>(c + i + j * ldc, left, vector_ok);
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = beta == T(0) ? T(0) : ew_scale(beta, r.v[e]);
    store<T, V>(c + i + j * ldc, r, left, vector_ok);
  }
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    entry_flags_kernel(idx rows, idx cols, const T *x, idx ldx, int *flags,
                       bool vector_ok) {
  const idx i = (idx(blockIdx.x) * kThreads + threadIdx.x) * V;
  if (i >= rows) return;
  const idx left = rows - i;
  int found = 0;
  for (idx j = blockIdx.y; j < cols; j += gridDim.y) {
    const Pack<T, V> a = load<T, V>(x + i + j * ldx, left, vector_ok);
#pragma unroll
    for (int e = 0; e < V; ++e) found |= ew_entry_flags(a.v[e]);
  }
  // Writers are rare (only threads that found something) and may set
  // different bits.
  if (found) atomicOr(flags, found);
}

// entry_flags_kernel plus the largest entry of each block of a grid of
// 2^g x 2^g blocks of x (g <= kScanMaxGridLevels, launch.h; src/core/scale_depth.h,
// scale_grid_block: blocks rows >> g by cols >> g, the last ones taking the
// remainder), in the same single read. Each CUDA block covers kThreads * V
// rows and a run of `col_chunk` consecutive columns, so a thread keeps one
// running maximum per entry of its pack while the columns stay in one block
// of the grid, then a warp reduction and one shared-memory atomic per warp
// merge it, and the CUDA block's touched cells go to global memory with one
// atomic each. Maxima are kept as the bits of the double value: for
// non-negative doubles integer order is value order, and negative entries,
// -0 and NaN never exceed the 0 the cells start at (a negative entry or NaN
// is in the flags, and then the maxima are not used).
constexpr int kScanMaxCells = 1 << (2 * kScanMaxGridLevels);

__device__ __forceinline__ long long max_bits(double v) {
  return v > 0 ? __double_as_longlong(v) : 0;
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    entry_flags_max_kernel(idx rows, idx cols, const T *x, idx ldx, int *flags,
                           long long *cells, int g, idx col_chunk, bool vector_ok) {
  __shared__ long long block_cells[kScanMaxCells];
  const int side = 1 << g;
  for (int t = threadIdx.x; t < side * side; t += kThreads) block_cells[t] = 0;
  __syncthreads();
  const idx i = (idx(blockIdx.x) * kThreads + threadIdx.x) * V;
  const bool active = i < rows;  // inactive threads still join the reductions
  const idx left = active ? rows - i : 0;
  const idx row_width = rows >> g > 0 ? rows >> g : 1;
  const idx col_width = cols >> g > 0 ? cols >> g : 1;
  int row_block[V];
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const idx r = i + e < rows ? i + e : rows - 1;
    row_block[e] = int(r / row_width < side - 1 ? r / row_width : side - 1);
  }
  // Lanes whose pack lies in one block, all in the same one: a warp
  // reduction; otherwise (packs across a block boundary) one atomic each.
  // (Every lane takes part in each shuffle: none may be skipped.)
  const unsigned full = 0xffffffffu;
  const int lane0_block = __shfl_sync(full, row_block[0], 0);
  const bool uniform =
      __all_sync(full, row_block[0] == row_block[V - 1] && row_block[0] == lane0_block);
  int found = 0;
  const idx c_end = ::min(cols, (idx(blockIdx.y) + 1) * col_chunk);
  for (idx j = idx(blockIdx.y) * col_chunk; j < c_end;) {
    const int cb = int(j / col_width < side - 1 ? j / col_width : side - 1);
    const idx seg_end = cb == side - 1 ? c_end : ::min(c_end, (cb + 1) * col_width);
    T mx[V];
#pragma unroll
    for (int e = 0; e < V; ++e) mx[e] = T(0);
    if (active) {
      for (; j + kColUnroll <= seg_end; j += kColUnroll) {
        Pack<T, V> a[kColUnroll];
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u)
          a[u] = load<T, V>(x + i + (j + u) * ldx, left, vector_ok);
#pragma unroll
        for (int u = 0; u < kColUnroll; ++u)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            found |= ew_entry_flags(a[u].v[e]);
            if (a[u].v[e] > mx[e]) mx[e] = a[u].v[e];
          }
      }
      for (; j < seg_end; ++j) {
        const Pack<T, V> a = load<T, V>(x + i + j * ldx, left, vector_ok);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          found |= ew_entry_flags(a.v[e]);
          if (a.v[e] > mx[e]) mx[e] = a.v[e];
        }
      }
    }
    j = seg_end;  // every thread of the block leaves the segment together
    if (uniform) {
      long long m = 0;
#pragma unroll
      for (int e = 0; e < V; ++e) m = ::max(m, max_bits(double(mx[e])));
      for (int off = 16; off > 0; off /= 2) m = ::max(m, __shfl_xor_sync(full, m, off));
      if ((threadIdx.x & 31) == 0 && m > 0)
        atomicMax(&block_cells[row_block[0] + side * cb], m);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const long long m = max_bits(double(mx[e]));
        if (m > 0) atomicMax(&block_cells[row_block[e] + side * cb], m);
      }
    }
  }
  __syncthreads();
  for (int t = threadIdx.x; t < side * side; t += kThreads)
    if (block_cells[t] > 0) atomicMax(&cells[t], block_cells[t]);
  if (found) atomicOr(flags, found);
}

// D = op(X) +/- op(Y) over kTile x kTile tiles of D, for operands of either
// orientation (at least one transposed). Per tile:
//  1. the transposed operands are read along their stored columns (each warp
//     one column segment of kTile entries, as 2-element vectors when aligned:
//     512 contiguous bytes in double) and, when both are transposed,
//     combined in registers;
//  2. a non-transposed operand is read into registers at the entries of D
//     this thread writes in step 4;
//  3. the values of step 1 go to a shared tile padded by one column, so that
//     reading it back across its rows hits distinct banks;
//  4. after the barrier each thread forms and writes its entries of D along
//     D's columns (each warp kTile consecutive entries).
// Every global load of a tile is issued, straight-line, before the first
// store: the compiler does not move a load through a generic pointer above a
// store that may alias it (D may alias the non-transposed operand), and with
// one latency per load the first version of this kernel moved 2.4-3.0 TB/s
// instead of 4.0-4.2 (H200 probe, docs/results/2026-11-21/run8). Each entry
// of D is written by the thread that read the non-transposed operands there,
// so D may alias one of them. blockIdx.x walks the tiles down D's rows,
// blockIdx.y strides over its column tiles (a few per block, which measured
// 2-4 % faster than one). With y == nullptr (y_trans false) it is a
// transposing copy, D = op(X).
constexpr int kTile = 64;
constexpr int kTileThreads = 256;
constexpr int kTileWarps = kTileThreads / 32;
constexpr int kTileColIters = kTile / kTileWarps;  // stored columns per thread (step 1)
constexpr int kTileRowIters = kTile / 32;          // rows of D per thread and column
static_assert(kTile == 2 * 32, "step 1 gives each lane 2 entries of a stored column");

template <class T>
__device__ __forceinline__ T combine(T a, T b, bool subtract) {
  return subtract ? ew_sub(a, b) : ew_add(a, b);
}

template <class T>
__global__ void __launch_bounds__(kTileThreads)
    transpose_add_sub_kernel(idx rows, idx cols, T *d, idx ldd, const T *x, idx ldx,
                             bool x_trans, const T *y, idx ldy, bool y_trans,
                             bool subtract, bool vector_ok) {
  // tile[i - i0][j - j0]: op(X)(i, j), op(Y)(i, j), or their sum/difference
  // when both are transposed.
  __shared__ T tile[kTile][kTile + 1];
  const bool copy = y == nullptr;
  const bool both = x_trans && y_trans;
  const idx i0 = idx(blockIdx.x) * kTile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (idx j0 = idx(blockIdx.y) * kTile; j0 < cols; j0 += idx(gridDim.y) * kTile) {
    const bool full = i0 + kTile <= rows && j0 + kTile <= cols;
    // 1. Stored column i0 + c (c = warp + kTileWarps r), stored rows
    // j0 + 2 lane and j0 + 2 lane + 1: op(.)(i0 + c, j0 + 2 lane + e).
    T v[kTileColIters][2];
    if (full && vector_ok) {
      // Straight-line loads first, then the arithmetic: a branch or a use
      // between them would make each wait for the one before. Both
      // transposed operands are vector-aligned (vector_ok).
      using V2 = Pack<T, 2>;  // one 2-element vector access
      const T *src = x_trans ? x : y;
      const idx ld = x_trans ? ldx : ldy;
      V2 a[kTileColIters], b[kTileColIters];
#pragma unroll
      for (int r = 0; r < kTileColIters; ++r)
        a[r] = *reinterpret_cast<const V2 *>(src + j0 + 2 * lane +
                                             (i0 + warp + kTileWarps * r) * ld);
      if (both) {
#pragma unroll
        for (int r = 0; r < kTileColIters; ++r)
          b[r] = *reinterpret_cast<const V2 *>(y + j0 + 2 * lane +
                                               (i0 + warp + kTileWarps * r) * ldy);
#pragma unroll
        for (int r = 0; r < kTileColIters; ++r) {
          v[r][0] = combine(a[r].v[0], b[r].v[0], subtract);
          v[r][1] = combine(a[r].v[1], b[r].v[1], subtract);
        }
      } else {
#pragma unroll
        for (int r = 0; r < kTileColIters; ++r) {
          v[r][0] = a[r].v[0];
          v[r][1] = a[r].v[1];
        }
      }
    } else {
#pragma unroll
      for (int r = 0; r < kTileColIters; ++r) {
        const idx i = i0 + warp + kTileWarps * r, j = j0 + 2 * lane;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          v[r][e] = T(0);
          if (i < rows && j + e < cols) {
            const T a = x_trans ? x[j + e + i * ldx] : y[j + e + i * ldy];
            v[r][e] = both ? combine(a, y[j + e + i * ldy], subtract) : a;
          }
        }
      }
    }
    // 2. The non-transposed operand at D(i0 + lane + 32 h, j0 + jj), jj =
    // warp + kTileWarps r: the entries this thread writes in step 4.
    T normal[kTileColIters][kTileRowIters];
    if (!both && !copy) {
      const T *src = x_trans ? y : x;
      const idx ld = x_trans ? ldy : ldx;
      if (full) {
#pragma unroll
        for (int r = 0; r < kTileColIters; ++r)
#pragma unroll
          for (int h = 0; h < kTileRowIters; ++h)
            normal[r][h] = src[i0 + lane + 32 * h + (j0 + warp + kTileWarps * r) * ld];
      } else {
#pragma unroll
        for (int r = 0; r < kTileColIters; ++r)
#pragma unroll
          for (int h = 0; h < kTileRowIters; ++h) {
            const idx i = i0 + lane + 32 * h, j = j0 + warp + kTileWarps * r;
            normal[r][h] = i < rows && j < cols ? src[i + j * ld] : T(0);
          }
      }
    }
    // 3. Only now the shared tile (see above).
#pragma unroll
    for (int r = 0; r < kTileColIters; ++r) {
      const int c = warp + kTileWarps * r;
      tile[c][2 * lane] = v[r][0];
      tile[c][2 * lane + 1] = v[r][1];
    }
    __syncthreads();
    // 4. D, along its columns.
#pragma unroll
    for (int r = 0; r < kTileColIters; ++r)
#pragma unroll
      for (int h = 0; h < kTileRowIters; ++h) {
        const int ii = lane + 32 * h, jj = warp + kTileWarps * r;
        const idx i = i0 + ii, j = j0 + jj;
        if (full || (i < rows && j < cols)) {
          const T t = tile[ii][jj];
          d[i + j * ldd] = both || copy ? t
                           : x_trans    ? combine(t, normal[r][h], subtract)
                                        : combine(normal[r][h], t, subtract);
        }
      }
    __syncthreads();  // the tile is refilled by the next iteration
  }
}

// Whether V-wide vector accesses (16 bytes by default) are legal for every
// (pointer, ld) pair; null pointers are skipped.
template <class T, int V = VecWidth<T>::value>
bool vector_ok(std::initializer_list<std::pair<const T *, idx>> operands) {
  for (const auto &o : operands)
    if (o.first && (reinterpret_cast<std::uintptr_t>(o.first) % (V * sizeof(T)) != 0 ||
                    o.second % V != 0))
      return false;
  return true;
}

template <class T>
dim3 grid_for(idx rows, idx cols) {
  constexpr int V = VecWidth<T>::value;
  const idx per_block = idx(kThreads) * V;
  const idx gx = (rows + per_block - 1) / per_block;
  const idx gy = std::min<idx>((cols + kColUnroll - 1) / kColUnroll, kMaxGridY);
  return dim3(unsigned(gx), unsigned(gy), 1);
}

}  // namespace

// Columns per thread and iteration for a step of NS sources: 4 for one or
// two sources (as the add/sub and fold kernels had), 2 from three sources
// on. Measured on the H200 for 4096 x 4096 double quadrants (leading
// dimensions 4096 and 16384): 4 sources / 3 targets 3.5-3.7 TB/s with 2
// columns against 3.0 with 3 and 2.3 with 4; 5 sources / 2 targets 4.1-4.2
// against 3.3 and 2.6; 3 sources / 2 targets 3.9-4.1 against 3.8-4.0.
template <int NS>
constexpr int combine_unroll() {
  return NS >= 3 ? 2 : 4;
}

template <class T, int NS, int ND>
cudaError_t launch_combine_n(cudaStream_t stream, const CombineArgs<T> &a, bool vec) {
  constexpr int V = VecWidth<T>::value;
  constexpr int U = combine_unroll<NS>();
  const idx per_block = idx(kThreads) * V;
  const idx gx = (a.rows + per_block - 1) / per_block;
  const idx gy = std::min<idx>((a.cols + U - 1) / U, kMaxGridY);
  combine_kernel<T, V, NS, ND, U>
      <<<dim3(unsigned(gx), unsigned(gy), 1), kThreads, 0, stream>>>(a, vec);
  return cudaGetLastError();
}

template <class T, int ND>
cudaError_t launch_combine_d(cudaStream_t stream, const CombineArgs<T> &a, bool vec) {
  switch (a.nsrc) {
    case 1:
      return launch_combine_n<T, 1, ND>(stream, a, vec);
    case 2:
      return launch_combine_n<T, 2, ND>(stream, a, vec);
    case 3:
      return launch_combine_n<T, 3, ND>(stream, a, vec);
    case 4:
      return launch_combine_n<T, 4, ND>(stream, a, vec);
    case 5:
      return launch_combine_n<T, 5, ND>(stream, a, vec);
    case 6:
      return launch_combine_n<T, 6, ND>(stream, a, vec);
    default:
      return cudaErrorInvalidValue;
  }
}

template <class T>
cudaError_t launch_combine(cudaStream_t stream, const CombineArgs<T> &a) {
  static_assert(kCombineMaxSrc == 6 && kCombineMaxDst == 4, "dispatch below");
  if (a.rows <= 0 || a.cols <= 0) return cudaSuccess;
  bool vec = true;
  for (int s = 0; s < a.nsrc; ++s) vec &= vector_ok<T>({{a.src[s], a.lds[s]}});
  for (int d = 0; d < a.ndst; ++d) vec &= vector_ok<T>({{a.dst[d], a.ldd[d]}});
  switch (a.ndst) {
    case 1:
      return launch_combine_d<T, 1>(stream, a, vec);
    case 2:
      return launch_combine_d<T, 2>(stream, a, vec);
    case 3:
      return launch_combine_d<T, 3>(stream, a, vec);
    case 4:
      return launch_combine_d<T, 4>(stream, a, vec);
    default:
      return cudaErrorInvalidValue;
  }
}

template <class T>
cudaError_t launch_scale(cudaStream_t stream, idx rows, idx cols, T *c, idx ldc,
                         ScalarArg<T> beta) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  constexpr int V = VecWidth<T>::value;
  const bool vec = vector_ok<T>({{c, ldc}});
  scale_kernel<T, V>
      <<<grid_for<T>(rows, cols), kThreads, 0, stream>>>(rows, cols, c, ldc, beta, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_entry_flags(cudaStream_t stream, idx rows, idx cols, const T *x,
                               idx ldx, int *flags) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  constexpr int V = VecWidth<T>::value;
  const bool vec = vector_ok<T>({{x, ldx}});
  entry_flags_kernel<T, V>
      <<<grid_for<T>(rows, cols), kThreads, 0, stream>>>(rows, cols, x, ldx, flags, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_entry_flags_max(cudaStream_t stream, idx rows, idx cols, const T *x,
                                   idx ldx, int *flags, long long *cells,
                                   int grid_levels) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (grid_levels < 0 || grid_levels > kScanMaxGridLevels) return cudaErrorInvalidValue;
  constexpr int V = VecWidth<T>::value;
  const bool vec = vector_ok<T>({{x, ldx}});
  const idx per_block = idx(kThreads) * V;
  const idx gx = (rows + per_block - 1) / per_block;
  // About 4096 CUDA blocks over the columns (as many as the flag-only scan
  // runs for a square operand of 16384), each a run of consecutive columns
  // at least kColUnroll long.
  const idx want = std::max<idx>(1, 4096 / gx);
  idx chunk = std::max<idx>(kColUnroll, (cols + want - 1) / want);
  chunk = std::max<idx>(chunk, (cols + kMaxGridY - 1) / kMaxGridY);
  const idx gy = (cols + chunk - 1) / chunk;
  entry_flags_max_kernel<T, V>
      <<<dim3(unsigned(gx), unsigned(gy), 1), kThreads, 0, stream>>>(
          rows, cols, x, ldx, flags, cells, grid_levels, chunk, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_transpose_add_sub(cudaStream_t stream, idx rows, idx cols, T *d,
                                     idx ldd, const T *x, idx ldx, bool x_trans,
                                     const T *y, idx ldy, bool y_trans, bool subtract) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (!x_trans && !y_trans) return cudaErrorInvalidValue;  // add_sub's job
  // 2-element vectors for the transposed operands' stored columns.
  const bool vec =
      vector_ok<T, 2>({{x_trans ? x : nullptr, ldx}, {y_trans ? y : nullptr, ldy}});
  const idx gx = (rows + kTile - 1) / kTile;
  const idx col_tiles = (cols + kTile - 1) / kTile;
  // About 4096 blocks, each looping over a few column tiles: for a 8192 x
  // 8192 quadrant (128 x 128 tiles), 4 tiles per block measured 2-4 %
  // faster than 1 or 16 (H200 probe, docs/results/2026-11-21/run8).
  const idx gy = std::min<idx>(std::min<idx>(col_tiles, std::max<idx>(idx(1), 4096 / gx)),
                               kMaxGridY);
  transpose_add_sub_kernel<T>
      <<<dim3(unsigned(gx), unsigned(gy), 1), kTileThreads, 0, stream>>>(
          rows, cols, d, ldd, x, ldx, x_trans, y, ldy, y_trans, subtract, vec);
  return cudaGetLastError();
}

#define XN_INSTANTIATE(T)                                                                \
  template cudaError_t launch_combine<T>(cudaStream_t, const CombineArgs<T> &);          \
  template cudaError_t launch_scale<T>(cudaStream_t, idx, idx, T *, idx, ScalarArg<T>);  \
  template cudaError_t launch_entry_flags<T>(cudaStream_t, idx, idx, const T *, idx,     \
                                             int *);                                     \
  template cudaError_t launch_entry_flags_max<T>(cudaStream_t, idx, idx, const T *, idx, \
                                                 int *, long long *, int);               \
  template cudaError_t launch_transpose_add_sub<T>(cudaStream_t, idx, idx, T *, idx,     \
                                                   const T *, idx, bool, const T *, idx, \
                                                   bool, bool);
XN_INSTANTIATE(float)
XN_INSTANTIATE(double)
#undef XN_INSTANTIATE

}  // namespace xn
