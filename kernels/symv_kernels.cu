// symv_kernels.cu - Nath et al., SC'11, algorithm 2 for the H200: a tile kernel that
// reads each stored tile once and uses it twice, and a reduction kernel that
// sums the partials of each y block in a fixed order (no atomics, so the
// result is bitwise reproducible). The decomposition is in symv_layout.h.
//
// Three kernels per call, all on the caller's stream:
//  1. pack x into the workspace, contiguous and zero-padded to nt * nb;
//  2. a tile kernel: the register tile kernel (one tile per thread block,
//     the default, below) or the ring kernel, whose thread block (p, y)
//     runs chunk ring_block_chunk(p, y) of block row p (diagonal chunks
//     first, symv_layout.h);
//  3. the reduction: y_b = alpha * sum(slots of b) + beta * y_b.
//
// Tile kernel, thread layout: a tile streams through the ring in P pieces of
// nb / P columns; warp w holds columns w*TV .. w*TV+TV-1 of each piece and
// lane l rows l*TU .. l*TU+TU-1 of them (TU = nb / 32). Row sums (own
// partials) stay in registers over the whole chunk; column sums (cross
// partials) are reduced over the 32 lanes by a butterfly that halves the
// vector at each step (reduce-scatter), so no block-wide barrier is needed
// per tile.
//
// Memory: a SYMV is bound by the bytes of A. To keep enough of them in flight
// the off-diagonal tiles stream through a STAGES-deep ring in shared memory,
// filled by the Hopper bulk-copy engine (cp.async.bulk, one instruction per
// tile column per warp, or one cp.async.bulk.tensor per warp for its whole
// box when the variant asks for tensor copies; completion counted by an
// mbarrier per warp and stage). A tile whose columns are not 16-byte aligned (odd lda in
// double precision, for instance) or that crosses the matrix edge is copied element by
// element instead (cp.async); both land in the same layout, so the arithmetic is the same
// code. Each warp copies and consumes only its own columns: stages are recycled after a
// __syncwarp, never a __syncthreads.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/per_device.h"
#include "kernels/symv_launch.h"

namespace xn {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

template <class T>
__device__ __forceinline__ T read_scalar(ScalarArg<T> s) {
  return s.dev ? *s.dev : s.value;
}

template <int X>
struct Log2 {
  static constexpr int value = 1 + Log2<X / 2>::value;
};
template <>
struct Log2<1> {
  static constexpr int value = 0;
};

// The ring kernel (bulk and tensor copies through a shared-memory ring) is
// compiled for the tuning sweep only (XN_BUILD_TUNING): every default runs
// the register tile kernel.
#ifdef XN_BUILD_TUNING
// ---------------------------------------------------------------- PTX helpers
__device__ __forceinline__ std::uint32_t smem_addr(const void *p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}
// Makes the mbarrier initialisation and earlier generic-proxy accesses to
// shared memory visible to the bulk-copy (async) proxy.
__device__ __forceinline__ void fence_async_proxy() {
  asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                   : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect(std::uint64_t *bar, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t *bar, unsigned parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "wait_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra wait_%=;\n\t}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}
// Bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned)
// from global to shared memory, completing on `bar`.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes,
                                          std::uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
      "[%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// An L2 policy that evicts first what it marks: A is read once per call and
// would otherwise push x and the workspace slots (which the reduction reads
// right after) out of L2.
__device__ __forceinline__ std::uint64_t l2_evict_first() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
// bulk_copy with an L2 policy for the source.
__device__ __forceinline__ void bulk_copy_hint(void *dst, const void *src, unsigned bytes,
                                               std::uint64_t *bar, std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
      "[%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

#endif  // XN_BUILD_TUNING

// Reduce-scatter of v[0..TV-1] over the 32 lanes of a warp: on return v[0]
// of lane l holds the warp-wide sum of element l >> (5 - log2 TV).
template <class T, int TV>
__device__ __forceinline__ void warp_reduce_scatter(T (&v)[TV], int lane) {
  int cnt = TV;
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) {
    if (cnt > 1) {
      const int half = cnt / 2;
      const bool upper = (lane & m) != 0;
#pragma unroll
      for (int i = 0; i < TV / 2; ++i) {
        if (i < half) {
          const T send = upper ? v[i] : v[i + half];
          const T keep = upper ? v[i + half] : v[i];
          v[i] = keep + __shfl_xor_sync(kFullMask, send, m);
        }
      }
      cnt = half;
    } else {
      v[0] += __shfl_xor_sync(kFullMask, v[0], m);
    }
  }
}

// The own partial of y_p into `slot` (NB elements): the W warps' row sums,
// rowsum[w * NB + u] in shared memory (written and synchronised by the
// caller), added in warp order. Both tile kernels end with it.
// `extra` (shared memory, NB elements, or null) is added last: a split
// diagonal tile has its strict triangle's column sums there.
template <class T, int NB, int W>
__device__ __forceinline__ void store_own_partial(const T *rowsum, T *slot,
                                                  const T *extra = nullptr) {
  for (int u = threadIdx.x; u < NB; u += 32 * W) {
    T s = rowsum[u];
#pragma unroll
    for (int i = 1; i < W; ++i) s += rowsum[i * NB + u];
    if (extra) s += extra[u];
    slot[u] = s;
  }
}

#ifdef XN_BUILD_TUNING
// Tensor copy of a 2-D box at (c0 = row, c1 = column) of the matrix
// described by `map` into shared memory, completing on `bar`, with an L2
// policy for the source.
__device__ __forceinline__ void tensor_copy_2d(void *dst, const CUtensorMap *map, int c0,
                                               int c1, std::uint64_t *bar,
                                               std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)),
      "l"(policy)
      : "memory");
}

#endif  // XN_BUILD_TUNING

// ---------------------------------------------------------------- pack x
template <class T>
__global__ void symv_pack_x_kernel(std::int64_t n, std::int64_t padded, const T *xb,
                                   std::int64_t incx, T *xc) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < padded) xc[i] = i < n ? xb[i * incx] : T(0);
}

// ---------------------------------------------------------------- tile kernel
template <class T>
struct SymvTileArgs {
  symv::Layout L;
  const T *A;
  std::int64_t lda;
  bool aligned;  // A and lda allow 16-byte aligned tile columns
  const T *xs;   // x, contiguous and 16-byte aligned (the caller's or packed)
  T *slots;      // the partials' slots
  ScalarArg<T> alpha;
  bool use_tmap;  // full aligned tiles by tensor copies (box NB rows x TV columns)
};

#ifdef XN_BUILD_TUNING
// Nath et al., SC'11, §4.2 mirroring, for a diagonal tile at the matrix edge or with
// unaligned columns (one inside the matrix is split instead,
// symv_split_diagonal_tile): the stored triangle is loaded into shared
// memory and read back as the full symmetric tile, which adds only to the
// own partial (acc). `diag` holds NB x (NB + 1) elements (padded against
// bank conflicts); the caller synchronises around it. Warp w takes the same
// columns as in the off-diagonal tiles (symv::column_warp). The elements
// are loaded by asynchronous copies, all in flight at once: plain loads
// into registers went out a few at a time (5-15 us at n = 8192, a
// per-block globaltimer trace on the H200, docs/performance.md).
template <class T, int NB, int TV, int P>
__device__ __forceinline__ void symv_diagonal_tile(const SymvTileArgs<T> &a, T *diag,
                                                   std::int64_t row0, std::int64_t rext,
                                                   int lane, int w, T (&acc)[NB / 32]) {
  constexpr int TU = NB / 32, PC = NB / P;
  const bool lower = a.L.lower;
#pragma unroll
  for (int j = 0; j < P * TV; ++j) {
    const int v = (j / TV) * PC + w * TV + j % TV;
#pragma unroll
    for (int k = 0; k < TU; ++k) {
      const int u = lane * TU + k;
      if (symv::stored_in_diagonal_tile(lower, u, v)) {
        if (u < rext && v < rext) {
          __pipeline_memcpy_async(&diag[u * (NB + 1) + v],
                                  &a.A[(row0 + u) + (row0 + v) * a.lda], sizeof(T));
        } else {
          diag[u * (NB + 1) + v] = T(0);
        }
      }
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
#pragma unroll
  for (int j = 0; j < P * TV; ++j) {
    const int v = (j / TV) * PC + w * TV + j % TV;
    const T xv = a.xs[row0 + symv::redirect(v, rext)];
    const T xq = v < rext ? xv : T(0);
#pragma unroll
    for (int k = 0; k < TU; ++k) {
      const int u = lane * TU + k;
      const T e = symv::stored_in_diagonal_tile(lower, u, v) ? diag[u * (NB + 1) + v]
                                                             : diag[v * (NB + 1) + u];
      acc[k] += e * xq;
    }
  }
}

#endif  // XN_BUILD_TUNING

// TU elements as TU / W streaming loads of the W-element vector type Vec.
template <class Vec, class T, int TU>
__device__ __forceinline__ void load_rows_as(const T *src, T (&e)[TU]) {
  constexpr int W = int(sizeof(Vec) / sizeof(T));
  static_assert(TU % W == 0, "whole vectors only");
#pragma unroll
  for (int v = 0; v < TU / W; ++v) {
    const Vec f = __ldcs(reinterpret_cast<const Vec *>(src) + v);
    const T *part = reinterpret_cast<const T *>(&f);
#pragma unroll
    for (int i = 0; i < W; ++i) e[W * v + i] = part[i];
  }
}
// TU consecutive elements from src (16-byte aligned when TU sizeof(T) is a
// multiple of 16), as wide as that allows; streaming loads, since A is read
// once per call.
template <class T, int TU>
__device__ __forceinline__ void load_rows(const T *src, T (&e)[TU]) {
  if constexpr (sizeof(T) == 4 && TU % 4 == 0) {
    load_rows_as<float4>(src, e);
  } else if constexpr (sizeof(T) == 4 && TU % 2 == 0) {
    load_rows_as<float2>(src, e);
  } else if constexpr (sizeof(T) == 8 && TU % 2 == 0) {
    load_rows_as<double2>(src, e);
  } else {
#pragma unroll
    for (int k = 0; k < TU; ++k) e[k] = __ldcs(src + k);
  }
}

// The lane's TU rows u0 .. u0 + TU - 1 of column v of a diagonal tile (src
// points at row u0): element (u, v) is stored when u >= v (lower) or u <= v
// (upper); loaded as one vector when all are stored, element by element
// (predicated) when some are, not at all when none is (zeros).
template <class T, int TU>
__device__ __forceinline__ void load_diagonal_rows(const T *src, bool lower, int u0,
                                                   int v, T (&e)[TU]) {
  const bool all = lower ? u0 >= v : u0 + TU - 1 <= v;
  if (all) {
    load_rows<T, TU>(src, e);
  } else {
#pragma unroll
    for (int k = 0; k < TU; ++k)
      e[k] = symv::stored_in_diagonal_tile(lower, u0 + k, v) ? __ldcs(src + k) : T(0);
  }
}

// The diagonal tile of block row p inside the matrix with 16-byte aligned
// columns, without the mirror (as the register kernel's kRegsDiagonal): its
// stored triangle S only, read straight into registers - a lane's TU rows of
// a column as one vector where all are stored, element by element
// (predicated) where some are, not at all where none is - one piece of
// TV columns per warp at a time. Row sums S x_p (diagonal included) add to
// the own partial (acc); the column sums of S's strict triangle, the
// transposed half, go to colsum[v] (shared memory, NB elements), which the
// own partial adds last. The mirrored version (symv_diagonal_tile) copied
// the triangle element by element into shared memory with 8-way bank
// conflicts on the way in and out, and cost the single-precision ring
// kernel 4-7 us of 140 at n = 16384 (H200, 2026-11-21 run 9).
template <class T, int NB, int TV, int P>
__device__ __forceinline__ void symv_split_diagonal_tile(const SymvTileArgs<T> &a,
                                                         T *colsum, std::int64_t row0,
                                                         int lane, int w,
                                                         const T (&xp)[NB / 32],
                                                         T (&acc)[NB / 32]) {
  constexpr int TU = NB / 32, PC = NB / P, H = Log2<TV>::value;
  const bool lower = a.L.lower;
  const int u0 = lane * TU;
  const T *tile = a.A + row0 * a.lda + row0 + u0;
#pragma unroll
  for (int h = 0; h < P; ++h) {
    T e[TV][TU];
#pragma unroll
    for (int j = 0; j < TV; ++j) {
      const int v = h * PC + w * TV + j;
      load_diagonal_rows<T, TU>(tile + v * a.lda, lower, u0, v, e[j]);
    }
    T part[TV];
#pragma unroll
    for (int j = 0; j < TV; ++j) {
      const int v = h * PC + w * TV + j;
      const T xq = a.xs[row0 + v];
      T s = T(0);
#pragma unroll
      for (int k = 0; k < TU; ++k) {
        // Unstored elements (zero) are skipped, not multiplied: 0 * Inf
        // would turn an Inf in x into a NaN (as symv_regs_tile).
        const bool stored = symv::stored_in_diagonal_tile(lower, u0 + k, v);
        acc[k] = stored ? acc[k] + e[j][k] * xq : acc[k];
        s = stored && u0 + k != v ? s + e[j][k] * xp[k] : s;
      }
      part[j] = s;
    }
    warp_reduce_scatter<T, TV>(part, lane);
    if ((lane & ((1 << (5 - H)) - 1)) == 0)
      colsum[h * PC + w * TV + (lane >> (5 - H))] = part[0];
  }
}

#ifdef XN_BUILD_TUNING
// Shared memory of the tile kernel (symv::tile_smem_bytes): the ring of
// STAGES pieces (column-major, NB rows x NB / P columns), the ring of their
// x blocks, and one mbarrier per stage and warp. The diagonal tile and the
// final row sums reuse the piece ring while no copy is in flight.
template <class T, int NB, int TV, int STAGES, int MINB, int P>
__global__ void __launch_bounds__(32 * symv::tile_warps(NB, TV, P), MINB)
    symv_tile_kernel(SymvTileArgs<T> a, const __grid_constant__ CUtensorMap tmap) {
  constexpr int PC = NB / P;                                  // columns per piece
  constexpr int W = int(symv::tile_warps(NB, TV, P));         // warps
  constexpr int TU = NB / 32;                                 // rows per lane
  constexpr int RING = int(symv::ring_elems(NB, STAGES, P));  // elements
  constexpr int H = Log2<TV>::value;
  constexpr unsigned kColBytes = NB * sizeof(T), kXBytes = TV * sizeof(T);
  static_assert(NB % 32 == 0 && PC % TV == 0 && W >= 1 && TV <= 32 && STAGES >= 2,
                "bad SYMV variant");
  static_assert(kColBytes % 16 == 0 && kXBytes % 16 == 0 && (RING * sizeof(T)) % 16 == 0,
                "bulk copies need 16 bytes");
  extern __shared__ __align__(128) unsigned char symv_smem[];
  T *ring = reinterpret_cast<T *>(symv_smem);  // [STAGES][PC cols][NB rows]
  T *xring = ring + RING;                      // [STAGES][PC]
  std::uint64_t *bars =
      reinterpret_cast<std::uint64_t *>(xring + STAGES * PC);  // [STAGES][W]

  const symv::Layout &L = a.L;
  const std::int64_t p = blockIdx.x, c = symv::ring_block_chunk(L, p, blockIdx.y);
  const std::int64_t len = symv::row_len(L, p);
  const std::int64_t t0 = symv::chunk_begin(L, p, c);
  // Let the reduction kernel (launched as a programmatic dependent) be
  // scheduled as soon as the last tile block has started: its launch then
  // overlaps this grid's tail; it still waits for this grid to complete.
  asm volatile("griddepcontrol.launch_dependents;");
  if (t0 >= len) return;  // the grid is nt x ring_grid_rows: rows have fewer chunks
  // A device alpha of zero: no tile is read; the reduction only scales y.
  if (a.alpha.dev && *a.alpha.dev == T(0)) return;
  const std::int64_t t1 = symv::chunk_end(L, p, c);
  // The diagonal tile is the last of a lower row and the first of an upper
  // one; the chunk's off-diagonal tiles are [o0, o1).
  const bool has_diag = L.lower ? t1 == len : t0 == 0;
  const std::int64_t o0 = (!L.lower && has_diag) ? t0 + 1 : t0;
  const std::int64_t o1 = (L.lower && has_diag) ? t1 - 1 : t1;

  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  const std::int64_t row0 = p * NB;
  const std::int64_t rext = symv::block_extent(L, p);

  T xp[TU], acc[TU];
#pragma unroll
  for (int k = 0; k < TU; ++k) {
    const int u = lane * TU + k;
    const T xv = a.xs[row0 + symv::redirect(u, rext)];
    xp[k] = u < rext ? xv : T(0);
    acc[k] = T(0);
  }

  if (lane == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) mbar_init(&bars[s * W + w], 1);
  }
  fence_async_proxy();
  __syncwarp();

  const std::uint64_t a_policy = l2_evict_first();
  // Enqueue piece i (tile o0 + i / P, columns h PC .. h PC + PC - 1 of it,
  // h = i % P): this warp's columns, and their x block, into stage st. Full,
  // aligned tiles go by one tensor copy or by a bulk copy per column; others
  // element by element (Nath et al., SC'11, §6.3 pointer redirecting past the edge; the
  // consumer zeroes those elements).
  auto issue = [&](std::int64_t i, int st) {
    const std::int64_t col0 = symv::tile_col(L, p, o0 + i / P) * NB;
    const std::int64_t cext = L.n - col0 < NB ? L.n - col0 : NB;
    const int hc = int(i % P) * PC + w * TV;  // this warp's first column in the tile
    const bool bulk = a.aligned && rext == NB && cext == NB;
    std::uint64_t *bar = &bars[st * W + w];
    if (lane == 0) mbar_arrive_expect(bar, bulk ? kXBytes + TV * kColBytes : 0u);
    __syncwarp();
    if (bulk) {
      if (lane == 0) {
        bulk_copy(&xring[st * PC + w * TV], a.xs + col0 + hc, kXBytes, bar);
        if (a.use_tmap)
          tensor_copy_2d(&ring[(st * PC + w * TV) * NB], &tmap, int(row0), int(col0 + hc),
                         bar, a_policy);
      }
      if (!a.use_tmap && lane < TV)
        bulk_copy_hint(&ring[(st * PC + w * TV + lane) * NB],
                       a.A + (col0 + hc + lane) * a.lda + row0, kColBytes, bar, a_policy);
    } else {
#pragma unroll
      for (int j = 0; j < TV; ++j) {
        const T *col = a.A + (col0 + symv::redirect(hc + j, cext)) * a.lda + row0;
#pragma unroll
        for (int k = 0; k < TU; ++k)
          __pipeline_memcpy_async(&ring[(st * PC + w * TV + j) * NB + lane * TU + k],
                                  col + symv::redirect(lane * TU + k, rext), sizeof(T));
      }
      if (lane < TV)
        __pipeline_memcpy_async(&xring[st * PC + w * TV + lane],
                                a.xs + col0 + symv::redirect(hc + lane, cext), sizeof(T));
    }
  };

  const std::int64_t count = o1 > o0 ? (o1 - o0) * P : 0;  // pieces
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < count) issue(s, s);
    __pipeline_commit();
  }
  for (std::int64_t i = 0; i < count; ++i) {
    if (i + STAGES - 1 < count) {
      __syncwarp();         // every lane is done reading the stage to refill
      fence_async_proxy();  // ... before the copy engine overwrites it
      issue(i + STAGES - 1, int((i + STAGES - 1) % STAGES));
    }
    __pipeline_commit();
    __pipeline_wait_prior(STAGES - 1);  // this lane's element copies of piece i
    const int st = int(i % STAGES);
    mbar_wait(&bars[st * W + w], unsigned((i / STAGES) & 1));
    __syncwarp();  // other lanes' element copies are visible

    const std::int64_t q = symv::tile_col(L, p, o0 + i / P);
    const int h0 = int(i % P) * PC;  // the piece's first column in the tile
    const std::int64_t cext = symv::block_extent(L, q);
    const bool edge = rext < NB || cext < NB;
    T part[TV];
#pragma unroll
    for (int j = 0; j < TV; ++j) {
      const int vs = w * TV + j, v = h0 + vs;  // column in the stage, in the tile
      const T xq = (!edge || v < cext) ? xring[st * PC + vs] : T(0);
      const T *colp = &ring[(st * PC + vs) * NB + lane * TU];
      T e[TU];
      if constexpr (TU == 2 && sizeof(T) == 8) {
        const double2 d = *reinterpret_cast<const double2 *>(colp);
        e[0] = d.x;
        e[1] = d.y;
      } else if constexpr (TU == 2 && sizeof(T) == 4) {
        const float2 f = *reinterpret_cast<const float2 *>(colp);
        e[0] = f.x;
        e[1] = f.y;
      } else if constexpr (TU == 4 && sizeof(T) == 4) {
        const float4 f = *reinterpret_cast<const float4 *>(colp);
        e[0] = f.x;
        e[1] = f.y;
        e[2] = f.z;
        e[3] = f.w;
      } else {
#pragma unroll
        for (int k = 0; k < TU; ++k) e[k] = colp[k];
      }
      if (edge) {
        // Redirected elements (past the edge) are replaced by zero, so that
        // an Inf or NaN they were redirected to cannot leak in.
#pragma unroll
        for (int k = 0; k < TU; ++k)
          e[k] = (v < cext && lane * TU + k < rext) ? e[k] : T(0);
      }
      T s = T(0);
#pragma unroll
      for (int k = 0; k < TU; ++k) {
        acc[k] += e[k] * xq;
        s += e[k] * xp[k];
      }
      part[j] = s;
    }
    warp_reduce_scatter<T, TV>(part, lane);
    if ((lane & ((1 << (5 - H)) - 1)) == 0) {
      const int v = h0 + w * TV + (lane >> (5 - H));
      a.slots[symv::cross_slot(L, p, q) * NB + v] = part[0];
    }
  }
  __pipeline_wait_prior(0);
  __syncthreads();  // the ring is free

  // The diagonal tile last, for both triangles: its loads would otherwise
  // delay the start of the copy pipeline. Inside the matrix with aligned
  // columns it is split into row and column sums (colsum, after the row
  // sums in the ring); otherwise mirrored in the ring.
  T *colsum = nullptr;
  if (has_diag) {
    if (a.aligned && rext == NB) {
      colsum = ring + W * NB;
      symv_split_diagonal_tile<T, NB, TV, P>(a, colsum, row0, lane, w, xp, acc);
    } else {
      symv_diagonal_tile<T, NB, TV, P>(a, ring, row0, rext, lane, w, acc);
      __syncthreads();  // the mirror buffer is read before the row sums overwrite it
    }
  }

  // The chunk's own partial of y_p: the warps' row sums added in warp order.
  T *rowsum = ring;  // [W][NB]
#pragma unroll
  for (int k = 0; k < TU; ++k) rowsum[w * NB + lane * TU + k] = acc[k];
  __syncthreads();
  store_own_partial<T, NB, W>(rowsum, a.slots + symv::own_slot(L, p, c) * NB, colsum);
}

#endif  // XN_BUILD_TUNING

// ------------------------------------------------------- register tile kernel
// One stored tile per thread block (chunk = 1, a 1-D grid in column order:
// symv::tile_of_block), loaded straight into registers: every load of the
// tile is issued before the first is used, so the block has its whole tile
// (NB^2 elements) in flight at once, and several small blocks per SM keep
// DRAM busy; a finished block is replaced by the next tile of the column.
// That is the access pattern of a plain streaming read (the read floor in
// bench/bench_symv.cu), which the ring kernel's chunks cannot match at
// small n: a ring block streams at most ~35-40 GB/s, so its last wave is
// long (docs/performance.md, SYMV run 3). It is the default kernel in both
// precisions at every order (symv_default_variant): 0.88-0.94 of the read
// floor at n >= 12288 on the H200.
//
// Warp w holds the CW = NB / W consecutive tile columns w CW .. w CW + CW - 1.
// In a tile inside the matrix with 16-byte aligned columns, lane l holds the
// TU = NB / 32 consecutive rows l TU .., read by wide loads; inside the
// matrix off the diagonal with unaligned columns (odd lda, for instance),
// pairs of rows by two-element loads (symv_regs_tile_pairs); in any other
// tile (cut by the matrix edge, or an unaligned diagonal tile) lane l holds
// the rows l, l + 32, .., read one element per lane, so that each warp load
// still reads consecutive elements of a column.
// Row sums (the tile's own partial of y_p) are added over the warps in
// shared memory in warp order, column sums (its cross partial of y_q) over
// the lanes by the reduce-scatter. A diagonal tile loads its stored
// triangle only and adds its row sums and its strict triangle's column sums
// to the own partial (Nath et al., SC'11, §4.2 without the mirror: the transposed half
// is the column sums). Loads past the matrix edge are not made, and what
// lies there is zero, so that nothing outside the matrix is read and no Inf
// or NaN there can leak in (guards on the loads, not Nath et al., SC'11, §6.3's
// redirects: a guard is a predicate and makes no thread branch either).

// How the register kernel reads a tile: inside the matrix with aligned
// columns by wide loads, off the diagonal (kRegsFull) or its stored
// triangle on it (kRegsDiagonal); inside the matrix off the diagonal with
// unaligned columns by two-element loads (symv_regs_tile_pairs); any other
// tile by guarded single-element loads, off the diagonal (kRegsClipped) or
// on it (kRegsClippedDiagonal).
enum RegsTileMode { kRegsFull, kRegsDiagonal, kRegsClipped, kRegsClippedDiagonal };

// The work of one tile (p, q) in the register kernel, up to the row sums:
// loads, the column sums, and this warp's row sums into rowsum[w]. The
// column sums of an off-diagonal tile are its cross partial (a slot); those
// of a diagonal tile go to colsum[] in shared memory and are added to the
// own partial: the tile's stored triangle S (diagonal included) gives
// S x_p by rows and its strict part's transpose by columns, which is the
// symmetric tile's product without reading the unstored half and without
// mirroring it.
template <class T, int NB, int W, RegsTileMode MODE>
__device__ __forceinline__ void symv_regs_tile(const SymvTileArgs<T> &a, std::int64_t p,
                                               std::int64_t q, T (*rowsum)[NB],
                                               T *colsum) {
  constexpr int CW = NB / W, TU = NB / 32;
  constexpr int H = Log2<CW>::value;
  constexpr bool diagonal = MODE == kRegsDiagonal || MODE == kRegsClippedDiagonal;
  constexpr bool clipped = MODE == kRegsClipped || MODE == kRegsClippedDiagonal;
  // Columns loaded at a time: all of them for an inner off-diagonal tile
  // (the whole tile in flight); half, when a warp has more than 8, for a
  // diagonal tile and a clipped double one, whose predicates, guards and
  // addresses spill more with all at once (ptxas).
  constexpr int G = (diagonal || (clipped && sizeof(T) == 8)) && CW > 8 ? CW / 2 : CW;
  const symv::Layout &L = a.L;
  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  const int u0 = lane * TU, v0 = w * CW;
  // The tile row of this lane's k-th element (see above).
  auto row = [&](int k) { return clipped ? lane + 32 * k : u0 + k; };
  const std::int64_t row0 = p * NB, col0 = q * NB;
  const bool lower = L.lower;
  const std::int64_t rext = clipped ? symv::block_extent(L, p) : NB;
  const std::int64_t cext = clipped ? symv::block_extent(L, q) : NB;

  T xq[CW], xp[TU];
  T rs[TU], part[CW];
#pragma unroll
  for (int k = 0; k < TU; ++k) rs[k] = T(0);
#pragma unroll
  for (int g = 0; g < CW; g += G) {
    T e[G][TU];
    if constexpr (clipped) {
      const T *src = a.A + (col0 + v0 + g) * a.lda + row0 + lane;
#pragma unroll
      for (int j = 0; j < G; ++j)
#pragma unroll
        for (int k = 0; k < TU; ++k) {
          const int v = v0 + g + j;
          const bool inside =
              v < cext && row(k) < rext &&
              (!diagonal || symv::stored_in_diagonal_tile(lower, row(k), v));
          e[j][k] = inside ? __ldcs(src + j * a.lda + 32 * k) : T(0);
        }
    } else {
      const T *src = a.A + (col0 + v0 + g) * a.lda + row0 + u0;
#pragma unroll
      for (int j = 0; j < G; ++j) {
        if constexpr (diagonal)
          load_diagonal_rows<T, TU>(src + j * a.lda, lower, u0, v0 + g + j, e[j]);
        else
          load_rows<T, TU>(src + j * a.lda, e[j]);
      }
    }
    if (g == 0) {  // x after the first loads of A: they go out first
      if constexpr (clipped) {
#pragma unroll
        for (int j = 0; j < CW; ++j) xq[j] = v0 + j < cext ? a.xs[col0 + v0 + j] : T(0);
#pragma unroll
        for (int k = 0; k < TU; ++k) xp[k] = row(k) < rext ? a.xs[row0 + row(k)] : T(0);
      } else {  // the tile lies inside the matrix
#pragma unroll
        for (int j = 0; j < CW; ++j) xq[j] = a.xs[col0 + v0 + j];
#pragma unroll
        for (int k = 0; k < TU; ++k) xp[k] = a.xs[row0 + u0 + k];
      }
    }
    // Row sums over the columns in order (the same sums whatever G is). A
    // diagonal tile skips its unstored elements, which hold zero: 0 * Inf
    // would turn an Inf in x into a NaN where reference BLAS, which never
    // multiplies an unstored element, gives the Inf.
#pragma unroll
    for (int k = 0; k < TU; ++k)
#pragma unroll
      for (int j = 0; j < G; ++j) {
        const bool used =
            !diagonal || symv::stored_in_diagonal_tile(lower, row(k), v0 + g + j);
        rs[k] = used ? rs[k] + e[j][k] * xq[g + j] : rs[k];
      }
    if (g + G == CW) {  // stored at once: rs is then dead (fewer live registers)
#pragma unroll
      for (int k = 0; k < TU; ++k) rowsum[w][row(k)] = rs[k];
    }
#pragma unroll
    for (int j = 0; j < G; ++j) {
      T c = T(0);
#pragma unroll
      for (int k = 0; k < TU; ++k) {
        // A diagonal tile's column sums take its strict triangle only.
        const int v = v0 + g + j;
        const bool used =
            !diagonal || (row(k) != v && symv::stored_in_diagonal_tile(lower, row(k), v));
        c = used ? c + e[j][k] * xp[k] : c;
      }
      part[g + j] = c;
    }
  }
  warp_reduce_scatter<T, CW>(part, lane);
  if ((lane & ((1 << (5 - H)) - 1)) == 0) {
    const int v = v0 + (lane >> (5 - H));
    if constexpr (diagonal)
      colsum[v] = part[0];
    else
      a.slots[symv::tile_cross_slot(L, p, q) * NB + v] = part[0];
  }
}

// An inner off-diagonal tile whose columns are not 16-byte aligned (odd lda,
// or A itself), read by loads of two elements: in single precision a warp
// load then moves 256 bytes instead of the 128 of a clipped tile's
// single-element loads, in double 512 instead of 256. Single-element loads
// cap near 3.2 TB/s in single and 3.6-3.8 in double on the H200, whatever
// the alignment (docs/performance.md, SYMV). A column starting on a
// two-element boundary ("even") is read as the row pairs 2l + 64k + {0, 1}
// by lane l; an odd one from its second row on, pairs 1 + 2l + 64k + {0, 1},
// with row 0 read by lane 0 alone and row NB (below the tile, inside the
// matrix: read, never used) dropped. Row sums are kept per parity and added
// as even, then odd, in shared memory; column sums take the x of each
// parity's rows. Every element of the tile is read once. The parity of
// column j is P0 ^ (ALT && j odd), known when the code is compiled, so every
// column's loads and sums are straight-line code.
// The vector type of N elements of T (a pair for the unaligned tiles, 16
// bytes for the reduction).
template <class T, int N>
struct VecOf;
template <>
struct VecOf<float, 2> {
  using type = float2;
};
template <>
struct VecOf<float, 4> {
  using type = float4;
};
template <>
struct VecOf<double, 2> {
  using type = double2;
};

template <class T, int NB, int W, int P0, bool ALT>
__device__ __forceinline__ void symv_regs_tile_pairs(const SymvTileArgs<T> &a,
                                                     std::int64_t p, std::int64_t q,
                                                     T (*rowsum)[NB]) {
  constexpr int CW = NB / W, TU = NB / 32, K = TU / 2;  // K pairs per lane
  constexpr int H = Log2<CW>::value;
  // Columns loaded at a time: at most 64 registers of elements in flight.
  // (128 registers measured 3-5 % slower in double: fewer blocks resident.)
  constexpr int G =
      CW * TU * int(sizeof(T)) / 4 <= 64 ? CW : 64 * 4 / (TU * int(sizeof(T)));
  static_assert(TU % 2 == 0 && CW % G == 0, "a lane holds whole pairs");
  const symv::Layout &L = a.L;
  const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
  const int v0 = w * CW;
  const std::int64_t row0 = p * NB, col0 = q * NB;
  auto odd = [](int j) { return (P0 ^ (ALT ? j & 1 : 0)) != 0; };
  // The lane's rows of parity o: o + 2 lane + 64 k + h (h = 0, 1).
  auto row_of = [&](int o, int k, int h) { return o + 2 * lane + 64 * k + h; };
  const T *col = a.A + (col0 + v0) * a.lda + row0;
  T xe[TU], xo[TU];
  T rs_even[TU], rs_odd[TU], rs_first = T(0), part[CW];
#pragma unroll
  for (int k = 0; k < TU; ++k) rs_even[k] = rs_odd[k] = T(0);
  T x_first = T(0);
  // An odd column's last pair runs one row past the tile (lane 31's last
  // element): never added, not even as a zero product (0 * Inf).
  const bool past = lane == 31;
#pragma unroll
  for (int g = 0; g < CW; g += G) {
    T e[G][TU], first[G];
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const T *base = col + (g + j) * a.lda + (odd(g + j) ? 1 : 0) + 2 * lane;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const auto v =
            __ldcs(reinterpret_cast<const typename VecOf<T, 2>::type *>(base + 64 * k));
        e[j][2 * k] = v.x;
        e[j][2 * k + 1] = v.y;
      }
      if (odd(g + j)) first[j] = lane == 0 ? __ldcs(col + (g + j) * a.lda) : T(0);
    }
    if (g == 0) {  // x after the first loads of A: they go out first
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          xe[2 * k + h] = a.xs[row0 + row_of(0, k, h)];
          const int r = row_of(1, k, h);
          xo[2 * k + h] = r < NB ? a.xs[row0 + r] : T(0);
        }
      x_first = a.xs[row0];
    }
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const T xq = a.xs[col0 + v0 + g + j];
      T c = T(0);
#pragma unroll
      for (int k = 0; k < TU; ++k) {
        if (odd(g + j)) {
          const bool used = !(past && k == TU - 1);
          rs_odd[k] = used ? rs_odd[k] + e[j][k] * xq : rs_odd[k];
          c = used ? c + e[j][k] * xo[k] : c;
        } else {
          rs_even[k] += e[j][k] * xq;
          c += e[j][k] * xe[k];
        }
      }
      if (odd(g + j) && lane == 0) {
        rs_first += first[j] * xq;
        c += first[j] * x_first;
      }
      part[g + j] = c;
    }
  }
  // Row sums: the even set, then the odd set and row 0 added.
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int h = 0; h < 2; ++h) rowsum[w][row_of(0, k, h)] = rs_even[2 * k + h];
  __syncwarp();
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row_of(1, k, h);
      if (r < NB) rowsum[w][r] += rs_odd[2 * k + h];
    }
  __syncwarp();
  if (lane == 0 && (P0 || ALT)) rowsum[w][0] += rs_first;
  warp_reduce_scatter<T, CW>(part, lane);
  if ((lane & ((1 << (5 - H)) - 1)) == 0)
    a.slots[symv::tile_cross_slot(L, p, q) * NB + v0 + (lane >> (5 - H))] = part[0];
}

// The pair tile, out of line (see below), for the parity of the warp's first
// column and whether lda alternates it.
template <class T, int NB, int W>
__device__ __noinline__ void symv_regs_tile_pairs_out_of_line(const SymvTileArgs<T> a,
                                                              std::int64_t p,
                                                              std::int64_t q,
                                                              T (*rowsum)[NB]) {
  const T *col = a.A + (q * NB + (threadIdx.x >> 5) * (NB / W)) * a.lda + p * NB;
  const bool p0 = (reinterpret_cast<std::uintptr_t>(col) / sizeof(T)) & 1,
             alt = a.lda & 1;
  if (!p0 && !alt)
    symv_regs_tile_pairs<T, NB, W, 0, false>(a, p, q, rowsum);
  else if (!p0)
    symv_regs_tile_pairs<T, NB, W, 0, true>(a, p, q, rowsum);
  else if (!alt)
    symv_regs_tile_pairs<T, NB, W, 1, false>(a, p, q, rowsum);
  else
    symv_regs_tile_pairs<T, NB, W, 1, true>(a, p, q, rowsum);
}

// Every tile but an inner off-diagonal one out of line: their guards, their
// predicates and the clipped tiles' per-element addresses would otherwise
// raise the register count of the whole kernel, which is at its limit
// (ptxas: the double 128-row variants spilled 4-6x more with the diagonal
// tile inline). There is one diagonal tile per block row and a block row
// and a column of clipped tiles, so the calls cost nothing measurable. The
// arguments go by value: a reference to the kernel's parameter made every
// block copy all of it to local memory on entry (112 bytes, PTX st.local),
// also when the call was not taken.
template <class T, int NB, int W, RegsTileMode MODE>
__device__ __noinline__ void symv_regs_tile_out_of_line(const SymvTileArgs<T> a,
                                                        std::int64_t p, std::int64_t q,
                                                        T (*rowsum)[NB], T *colsum) {
  symv_regs_tile<T, NB, W, MODE>(a, p, q, rowsum, colsum);
}

template <class T, int NB, int W, int MINB>
__global__ void __launch_bounds__(32 * W, MINB) symv_tile_regs_kernel(SymvTileArgs<T> a) {
  constexpr int CW = NB / W;
  static_assert(
      NB % 32 == 0 && NB % W == 0 && CW >= 1 && CW <= 32 && (CW & (CW - 1)) == 0,
      "bad register SYMV variant");
  __shared__ T rowsum[W][NB];
  __shared__ T colsum[NB];  // a diagonal tile's column sums
  const symv::Layout &L = a.L;
  const symv::TileIndex tile = symv::tile_of_block(L, std::int64_t(blockIdx.x));
  asm volatile("griddepcontrol.launch_dependents;");  // as symv_tile_kernel
  // A device alpha of zero: no tile is read; the reduction only scales y.
  if (a.alpha.dev && *a.alpha.dev == T(0)) return;
  const std::int64_t p = tile.p, q = tile.q;
  const bool inner = symv::block_extent(L, p) == NB && symv::block_extent(L, q) == NB;
  const bool wide = a.aligned && inner;
  if (p != q && wide)
    symv_regs_tile<T, NB, W, kRegsFull>(a, p, q, rowsum, colsum);
  else if (p != q && inner)
    symv_regs_tile_pairs_out_of_line<T, NB, W>(a, p, q, rowsum);
  else if (p != q)
    symv_regs_tile_out_of_line<T, NB, W, kRegsClipped>(a, p, q, rowsum, colsum);
  else if (wide)
    symv_regs_tile_out_of_line<T, NB, W, kRegsDiagonal>(a, p, q, rowsum, colsum);
  else
    symv_regs_tile_out_of_line<T, NB, W, kRegsClippedDiagonal>(a, p, q, rowsum, colsum);
  __syncthreads();
  // The tile's own partial of y_p.
  store_own_partial<T, NB, W>(&rowsum[0][0], a.slots + symv::tile_own_slot(L, p, q) * NB,
                              p == q ? colsum : nullptr);
}

// ---------------------------------------------------------------- reduction
template <class T>
struct SymvReduceArgs {
  symv::Layout L;
  const T *slots;
  ScalarArg<T> alpha, beta;
  bool alpha_is_zero;  // known on the host: the slots were not written
  T *yb;               // y at logical element 0: element i is yb[i * incy]
  std::int64_t incy;
};

// y_b = alpha * (sum of block b's slots) + beta * y_b. Thread (t, r) holds
// the V = 16 / sizeof(T) elements t V .. t V + V - 1 of the y block; the RY
// groups r take interleaved logical slots, each thread with U running sums
// (U loads of 16 bytes in flight: symv_layout.h reduce_*); the sums are
// added in a fixed order, so the result depends only on the variant, never
// on timing.
template <class T, int NB>
__global__ void __launch_bounds__(1024) symv_reduce_kernel(SymvReduceArgs<T> a) {
  constexpr int V = int(symv::reduce_vec(sizeof(T)));
  constexpr int U = int(symv::reduce_unroll(sizeof(T)));
  constexpr int RY = int(symv::reduce_groups(NB, sizeof(T)));
  static_assert(NB % V == 0 && (NB / V) * RY <= 1024, "bad reduction shape");
  using Vec = typename VecOf<T, 16 / int(sizeof(T))>::type;
  __shared__ T partial[RY][NB];
  // Launched as a programmatic dependent of the tile kernel: wait until that
  // grid has completed and its slots are visible (no-op otherwise).
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const symv::Layout &L = a.L;
  const std::int64_t b = blockIdx.x;
  const int t = threadIdx.x, r = threadIdx.y;
  const T alpha = read_scalar(a.alpha);
  const bool use_sum = !a.alpha_is_zero && alpha != T(0);
  if (use_sum) {
    const T *base = a.slots + symv::slot_base(L, b) * NB + t * V;
    const std::int64_t cnt = symv::slot_count(L, b);
    auto load = [&](std::int64_t i) {
      return *reinterpret_cast<const Vec *>(base + i * NB);
    };
    T s[U][V];
#pragma unroll
    for (int k = 0; k < U; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e) s[k][e] = T(0);
    std::int64_t i = r;
    for (; i + (U - 1) * RY < cnt; i += U * RY) {
      Vec v[U];
#pragma unroll
      for (int k = 0; k < U; ++k) v[k] = load(i + k * RY);
#pragma unroll
      for (int k = 0; k < U; ++k) {
        const T *e = reinterpret_cast<const T *>(&v[k]);
#pragma unroll
        for (int j = 0; j < V; ++j) s[k][j] += e[j];
      }
    }
    for (; i < cnt; i += RY) {
      const Vec v = load(i);
      const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
      for (int j = 0; j < V; ++j) s[0][j] += e[j];
    }
    // Pairwise, in a fixed tree: ((s0 + s1) + (s2 + s3)) + ...
#pragma unroll
    for (int w = 1; w < U; w *= 2)
#pragma unroll
      for (int k = 0; k + w < U; k += 2 * w)
#pragma unroll
        for (int j = 0; j < V; ++j) s[k][j] += s[k + w][j];
#pragma unroll
    for (int j = 0; j < V; ++j) partial[r][t * V + j] = s[0][j];
  }
  __syncthreads();
  const int u = r * (NB / V) + t;  // one thread per element of the y block
  if (u >= NB) return;
  const std::int64_t row = b * NB + u;
  if (row >= L.n) return;
  T sum = T(0);
  if (use_sum) {
    sum = partial[0][u];
#pragma unroll
    for (int g = 1; g < RY; ++g) sum += partial[g][u];
  }
  const T beta = read_scalar(a.beta);
  T *yp = a.yb + row * a.incy;
  const T scaled = use_sum ? alpha * sum : T(0);
  if (beta == T(0)) {
    *yp = scaled;  // BLAS: beta = 0 never reads y
  } else {
    *yp = scaled + beta * *yp;
  }
}

// The reduction's block shape.
template <class T, int NB>
dim3 reduce_block() {
  return dim3(unsigned(NB / symv::reduce_vec(sizeof(T))),
              unsigned(symv::reduce_groups(NB, sizeof(T))));
}

// The kernels of one call around a tile kernel: y = beta y alone when alpha
// is a host zero; else x packed when the tile kernels cannot read it in
// place, `launch_tiles` (given the tile kernels' arguments), and the
// reduction as its programmatic dependent.
template <class T, int NB, class LaunchTiles>
cudaError_t launch_call(cudaStream_t stream, const symv::Layout &L, ScalarArg<T> alpha,
                        const T *A, std::int64_t lda, const T *xb, std::int64_t incx,
                        ScalarArg<T> beta, T *yb, std::int64_t incy, T *ws,
                        bool alpha_is_zero, LaunchTiles &&launch_tiles) {
  T *slots = ws + symv::slots_offset(L);
  if (alpha_is_zero) {  // y = beta y: A, x and the workspace are not touched
    SymvReduceArgs<T> ra{L, slots, alpha, beta, true, yb, incy};
    symv_reduce_kernel<T, NB><<<unsigned(L.nt), reduce_block<T, NB>(), 0, stream>>>(ra);
    return cudaGetLastError();
  }
  // x as the tile kernels want it: the caller's when contiguous and 16-byte
  // aligned, else packed into the workspace first.
  const T *xs = xb;
  if (incx != 1 || reinterpret_cast<std::uintptr_t>(xb) % 16 != 0) {
    const std::int64_t padded = symv::packed_x_elems(L);
    symv_pack_x_kernel<T>
        <<<unsigned((padded + 255) / 256), 256, 0, stream>>>(L.n, padded, xb, incx, ws);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    xs = ws;
  }
  const bool aligned = reinterpret_cast<std::uintptr_t>(A) % 16 == 0 &&
                       (lda * std::int64_t(sizeof(T))) % 16 == 0;
  const SymvTileArgs<T> ta{L, A, lda, aligned, xs, slots, alpha, false};
  const cudaError_t e = launch_tiles(ta);
  if (e != cudaSuccess) return e;
  SymvReduceArgs<T> ra{L, slots, alpha, beta, false, yb, incy};
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(L.nt));
  cfg.blockDim = reduce_block<T, NB>();
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, symv_reduce_kernel<T, NB>, ra);
}

#ifdef XN_BUILD_TUNING
// The ring tile kernel (symv_tile_kernel) of a variant.
template <class T, int NB, int TV, int STAGES, int MINB, int P>
cudaError_t launch_ring_tiles(cudaStream_t stream, SymvTileArgs<T> ta, bool tensor) {
  const symv::Layout &L = ta.L;
  const T *A = ta.A;
  const std::int64_t lda = ta.lda;
  const bool aligned = ta.aligned;
  constexpr std::size_t smem =
      std::size_t(symv::tile_smem_bytes(NB, TV, STAGES, P, sizeof(T)));
  // Above 48 KiB of dynamic shared memory a kernel must opt in, once per
  // device (the attribute belongs to the device's context).
  static OncePerDevice opted_in;
  cudaError_t e = opted_in.ensure([] {
    return cudaFuncSetAttribute(symv_tile_kernel<T, NB, TV, STAGES, MINB, P>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  });
  if (e != cudaSuccess) return e;
  // Tensor copies (one per warp and stage for the whole NB x TV box) where
  // the variant asks for them and the driver can describe the matrix;
  // otherwise one bulk copy per tile column.
  CUtensorMap tmap{};
  bool use_tmap = false;
  if (aligned && tensor) {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
      void *fn = nullptr;
      cudaDriverEntryPointQueryResult q{};
      if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                           cudaEnableDefault, &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess)
        fn = nullptr;
      return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }();
    if (encode) {
      const cuuint64_t dims[2] = {cuuint64_t(L.n), cuuint64_t(L.n)};
      const cuuint64_t strides[1] = {cuuint64_t(lda) * sizeof(T)};
      const cuuint32_t box[2] = {cuuint32_t(NB), cuuint32_t(TV)};
      const cuuint32_t elem_strides[2] = {1, 1};
      use_tmap = encode(&tmap,
                        sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
                                       : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                        2, const_cast<T *>(A), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
    }
  }
  ta.use_tmap = use_tmap;
  const dim3 grid(unsigned(L.nt), unsigned(symv::ring_grid_rows(L)));
  symv_tile_kernel<T, NB, TV, STAGES, MINB, P>
      <<<grid, unsigned(32 * symv::tile_warps(NB, TV, P)), smem, stream>>>(ta, tmap);
  return cudaGetLastError();
}

#endif  // XN_BUILD_TUNING

// The register tile kernel (symv_tile_regs_kernel): one block per stored tile.
template <class T, int NB, int W, int MINB>
cudaError_t launch_regs_tiles(cudaStream_t stream, const SymvTileArgs<T> &ta) {
  const std::int64_t tiles = symv::total_tiles(ta.L);
  if (tiles > std::int64_t(0x7fffffff)) return cudaErrorInvalidConfiguration;
  symv_tile_regs_kernel<T, NB, W, MINB><<<unsigned(tiles), 32 * W, 0, stream>>>(ta);
  return cudaGetLastError();
}

// One variant of the list (numerics/symv_variant_list.h): the register tile kernel
// or the ring kernel with its template parameters.
template <class T, int NB, int TV, int STAGES, int MINB, int P, int REGS>
cudaError_t launch_variant(cudaStream_t stream, const SymvVariant &v,
                           const symv::Layout &L, ScalarArg<T> alpha, const T *A,
                           std::int64_t lda, const T *xb, std::int64_t incx,
                           ScalarArg<T> beta, T *yb, std::int64_t incy, T *ws,
                           bool alpha_is_zero) {
  return launch_call<T, NB>(
      stream, L, alpha, A, lda, xb, incx, beta, yb, incy, ws, alpha_is_zero,
      [&](const SymvTileArgs<T> &ta) {
#ifdef XN_BUILD_TUNING
        if constexpr (REGS == 0)
          return launch_ring_tiles<T, NB, TV, STAGES, MINB, P>(stream, ta, v.tensor != 0);
        else
#else
        static_assert(REGS != 0, "ring variants need XN_BUILD_TUNING");
        (void)v;
#endif
          return launch_regs_tiles<T, NB, NB / TV, MINB>(stream, ta);
      });
}

}  // namespace

template <class T>
cudaError_t launch_symv(cudaStream_t stream, const SymvVariant &v, bool lower,
                        std::int64_t n, ScalarArg<T> alpha, const T *A, std::int64_t lda,
                        const T *x, std::int64_t incx, ScalarArg<T> beta, T *y,
                        std::int64_t incy, T *ws, bool alpha_is_zero) {
  if (n <= 0) return cudaSuccess;
  const symv::Layout L = symv_variant_layout(v, n, lower);
  const T *xb = x + (incx > 0 ? 0 : -(n - 1) * incx);
  T *yb = y + (incy > 0 ? 0 : -(n - 1) * incy);
  // The dispatch is generated from the same lists as the table, so every
  // compiled variant has its kernel.
#define XN_SYMV_DISPATCH(id, nb, cw, st, minb, chunk, pieces, tensor, regs) \
  case id:                                                                  \
    return launch_variant<T, nb, cw, st, minb, pieces, regs>(               \
        stream, v, L, alpha, A, lda, xb, incx, beta, yb, incy, ws, alpha_is_zero);
  switch (v.id) {
    XN_SYMV_DEFAULT_VARIANTS(XN_SYMV_DISPATCH)
#ifdef XN_BUILD_TUNING
    XN_SYMV_TUNING_VARIANTS(XN_SYMV_DISPATCH)
#endif
    default:
      break;
  }
#undef XN_SYMV_DISPATCH
  return cudaErrorInvalidValue;
}

template cudaError_t launch_symv<float>(cudaStream_t, const SymvVariant &, bool,
                                        std::int64_t, ScalarArg<float>, const float *,
                                        std::int64_t, const float *, std::int64_t,
                                        ScalarArg<float>, float *, std::int64_t, float *,
                                        bool);
template cudaError_t launch_symv<double>(cudaStream_t, const SymvVariant &, bool,
                                         std::int64_t, ScalarArg<double>, const double *,
                                         std::int64_t, const double *, std::int64_t,
                                         ScalarArg<double>, double *, std::int64_t,
                                         double *, bool);

}  // namespace xn
