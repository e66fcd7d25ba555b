// exdgemm_kernels.cu - the GPU phases of exdgemm (src/core/exdgemm.h). The
// arithmetic is the shared __host__ __device__ code; this file only maps it
// onto threads so that global memory is read and written coalesced.
#include <climits>
#include <limits>
#include <type_traits>

#include "kernels/exdgemm_launch.h"
#include "kernels/int8_mma.h"
#include "numerics/exdgemm_entry.h"
#include "numerics/ozaki_split.h"

namespace xn {

using exact::kGroupRows;

namespace {

using exact::Decoded;
using exact::VectorInfo;

constexpr int kThreads = 256;
constexpr std::int64_t kColChunk = 256;  // stored columns per thread (scans)

__device__ __forceinline__ double load(const ExView &X, std::int64_t i, std::int64_t j) {
  return X.trans ? X.p[j + i * X.ld] : X.p[i + j * X.ld];
}

// Product z's operand in a batched call (ExBatchStep).
template <class T>
__device__ __forceinline__ T *product_pointer(T *p0, const ExBatchStep &step, std::int64_t z) {
  return step.pointers ? static_cast<T *>(const_cast<void *>(step.pointers[z]))
                       : p0 + z * step.stride;
}

// A block's summary of one row, merged into the row's with integer atomics
// (max/min/or are order-independent: the result is deterministic). Each
// atomic is issued only where the row's summary, read from L2 first, does
// not already hold the block's value: the summary only grows (max, min,
// or), so a value it holds stays held, and a stale read costs at most an
// atomic that changes nothing. The rows of a long operand receive one
// update per block otherwise (1024 a row for 64 x 131072, all on the same
// few words).
__device__ __forceinline__ void publish_info(const VectorInfo &v, VectorInfo &dst) {
  if (v.top != exact::kNoTop) {
    if (v.top > __ldcg(&dst.top)) atomicMax(&dst.top, v.top);
    if (v.low < __ldcg(&dst.low)) atomicMin(&dst.low, v.low);
  }
  if (v.nonfinite && !__ldcg(&dst.nonfinite)) atomicOr(&dst.nonfinite, 1u);
  if (v.signs & ~__ldcg(&dst.signs)) atomicOr(&dst.signs, v.signs);
}

// One operand's exponent scan within scan_operands_kernel: its view, its
// summaries, and its grid (blocks[0] x blocks[1], flattened).
struct ScanJob {
  ExView X;
  VectorInfo *info;
  std::int64_t chunk;
  int groups;        // fast rows only: chunks of the same rows a block takes
  unsigned grid_x;   // blocks across the rows
  unsigned blocks;   // grid_x times the blocks along the columns
};

// Rows of X run along the stored fast dimension (X.trans == false): blocks
// of kThreads / groups rows (a warp's 32 rows read coalesced) by `groups`
// chunks of columns, a thread per row and chunk; the chunks' summaries
// combined in shared memory, then one set of integer atomics per row and
// block (max/min/or are order-independent: the result is deterministic).
// Few rows take several groups: with a thread's atomics per row and chunk,
// a 64 x 131072 operand sent 4096 sets to each row's summary (98-158 us on
// an H100 for 67 MB; 60 us in blocks of 64 rows by 4 chunks, 45-50 in
// blocks of 32 rows by 8 on an earlier build). Many rows
// take one group (256 rows a block: 390 us for 4097 x 30001, against 468 in
// blocks of 32 rows by 8 chunks).
__device__ __forceinline__ void scan_fast_block(const ScanJob &job, unsigned bx, unsigned by,
                                VectorInfo *part) {
  const ExView &X = job.X;
  const int rows = kThreads / job.groups;
  const int r = threadIdx.x % rows, g = threadIdx.x / rows;
  const std::int64_t i = bx * std::int64_t(rows) + r;
  const std::int64_t j0 = (by * std::int64_t(job.groups) + g) * job.chunk;
  const std::int64_t j1 = min(X.cols, j0 + job.chunk);
  VectorInfo v;
  exact::vector_info_init(v);
  if (i < X.rows) v = exact::vector_summary(X.p + i + j0 * X.ld, j1 - j0, X.ld);
  if (job.groups > 1) {
    part[threadIdx.x] = v;
    __syncthreads();
    if (g != 0) return;
    for (int h = 1; h < job.groups; ++h) exact::vector_info_merge(v, part[h * rows + r]);
  }
  if (i < X.rows) publish_info(v, job.info[i]);
}

// Rows of X are stored contiguously (X.trans == true): one warp per row and
// chunk of `chunk` columns (long rows of skinny operands are read by many
// warps at once), combined with integer atomics as above.
__device__ __forceinline__ void scan_contig_block(const ScanJob &job, unsigned bx, unsigned by) {
  const ExView &X = job.X;
  const std::int64_t i = bx * std::int64_t(kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (i >= X.rows) return;
  const std::int64_t j0 = by * job.chunk + lane, j1 = min(X.cols, (by + 1) * job.chunk);
  VectorInfo v =
      exact::vector_summary(X.p + i * X.ld + j0, j0 < j1 ? (j1 - j0 + 31) / 32 : 0, 32);
  for (int o = 16; o > 0; o >>= 1) {
    v.top = max(v.top, __shfl_xor_sync(0xffffffffu, v.top, o));
    v.low = min(v.low, __shfl_xor_sync(0xffffffffu, v.low, o));
    v.nonfinite |= __shfl_xor_sync(0xffffffffu, v.nonfinite, o);
    v.signs |= __shfl_xor_sync(0xffffffffu, v.signs, o);
  }
  if (lane == 0) publish_info(v, job.info[i]);
}

// Both operands' scans in one launch, op(A)'s blocks first: for small
// products of long k the two scans are each too short to fill the memory
// system, and one after the other they cost two drains (64 x 64 x 131072 on
// an H100: 45 + 32 us apart).
// Full occupancy (8 blocks a multiprocessor, as the two kernels it replaced
// had): the scans wait on memory, not on arithmetic.
// Batched: product z = blockIdx.y of `batch`, its operands by the batch's
// steps (a: the first job's, b: the second's).
template <bool Batched>
__global__ void __launch_bounds__(kThreads, 8)
    scan_operands_kernel(ScanJob first, ScanJob second, ExBatch batch) {
  __shared__ VectorInfo part[kThreads];
  // Each job's parameters read where they are (no reference chosen at run
  // time: that copies both to the stack; the batched form copies only the
  // job its block runs, with the product's pointers).
  auto run = [&](const ScanJob &job, unsigned b) {
    const unsigned bx = b % job.grid_x, by = b / job.grid_x;
    if (job.X.trans)
      scan_contig_block(job, bx, by);
    else
      scan_fast_block(job, bx, by, part);
  };
  if constexpr (Batched) {
    const std::int64_t z = batch.first + blockIdx.y;
    auto product = [&](const ScanJob &job, const ExBatchStep &step) {
      ScanJob p = job;
      p.X.p = product_pointer(job.X.p, step, z);
      p.info = job.info + z * job.X.rows;
      return p;
    };
    if (blockIdx.x < first.blocks)
      run(product(first, batch.a), blockIdx.x);
    else
      run(product(second, batch.b), blockIdx.x - first.blocks);
  } else {
    if (blockIdx.x < first.blocks)
      run(first, blockIdx.x);
    else
      run(second, blockIdx.x - first.blocks);
  }
}

// spans[0] / spans[1]: the widest span of the first na / the next nb
// summaries (max: order-independent atomics).
__global__ void __launch_bounds__(kThreads)
    batch_spans_kernel(const VectorInfo *a, std::int64_t na, const VectorInfo *b,
                       std::int64_t nb, int *spans) {
  int span[2] = {0, 0};
  for (std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x; i < na + nb;
       i += std::int64_t(gridDim.x) * kThreads) {
    const VectorInfo v = i < na ? a[i] : b[i - na];
    const int w = v.top != exact::kNoTop ? v.top - v.low + 1 : 0;
    span[i >= na] = max(span[i >= na], w);
  }
  for (int o = 16; o > 0; o >>= 1) {
    span[0] = max(span[0], __shfl_xor_sync(0xffffffffu, span[0], o));
    span[1] = max(span[1], __shfl_xor_sync(0xffffffffu, span[1], o));
  }
  if ((threadIdx.x & 31) == 0) {
    if (span[0]) atomicMax(spans, span[0]);
    if (span[1]) atomicMax(spans + 1, span[1]);
  }
}

__global__ void init_info_pair_kernel(VectorInfo *a, std::int64_t na, VectorInfo *b,
                                      std::int64_t nb) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < na)
    exact::vector_info_init(a[i]);
  else if (i < na + nb)
    exact::vector_info_init(b[i - na]);
}

__global__ void zero_kernel(std::uint64_t *p, std::int64_t n) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = 0;
}

__device__ __forceinline__ void warp_or_masks(std::uint64_t *m) {
  for (int w = 0; w < exact::kMaskWords; ++w)
    for (int o = 16; o > 0; o >>= 1) m[w] |= __shfl_xor_sync(0xffffffffu, m[w], o);
}

__device__ __forceinline__ void publish_mask(const std::uint64_t *m, std::uint64_t *dst) {
  for (int w = 0; w < exact::kMaskWords; ++w)
    if (m[w])
      atomicOr(reinterpret_cast<unsigned long long *>(dst + w), (unsigned long long)m[w]);
}

// kGroupRows = 64 is a multiple of the warp: a warp's rows share a group.
__global__ void __launch_bounds__(kThreads)
    mark_rows_fast_kernel(ExView X, const VectorInfo *info, int w, std::uint64_t *masks,
                          std::int64_t chunk) {
  const std::int64_t i = blockIdx.x * std::int64_t(kThreads) + threadIdx.x;
  std::uint64_t m[exact::kMaskWords] = {};
  if (i < X.rows) {
    const int e = info[i].top + 1;
    const std::int64_t j0 = blockIdx.y * chunk;
    const std::int64_t j1 = min(X.cols, j0 + chunk);
    for (std::int64_t j = j0; j < j1; ++j)
      exact::mark_nonzero_digits(exact::decode(X.p[i + j * X.ld]), e, w, m);
  }
  warp_or_masks(m);
  const std::int64_t first = i - (threadIdx.x & 31);
  if ((threadIdx.x & 31) == 0 && first < X.rows)
    publish_mask(m, masks + (first / kGroupRows) * exact::kMaskWords);
}

__global__ void __launch_bounds__(kThreads)
    mark_rows_contig_kernel(ExView X, const VectorInfo *info, int w,
                            std::uint64_t *masks) {
  const std::int64_t i = blockIdx.x * std::int64_t(kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (i >= X.rows) return;
  const int e = info[i].top + 1;
  std::uint64_t m[exact::kMaskWords] = {};
  const double *row = X.p + i * X.ld;
  for (std::int64_t j = lane; j < X.cols; j += 32)
    exact::mark_nonzero_digits(exact::decode(row[j]), e, w, m);
  warp_or_masks(m);
  if (lane == 0) publish_mask(m, masks + (i / kGroupRows) * exact::kMaskWords);
}

// Thread per stored element of the block: the fast stored index on x, the
// slow one looped over y (gridDim.y is limited to 65535).
__global__ void __launch_bounds__(kThreads)
    split_rows_kernel(ExView X, const VectorInfo *info, int w, std::int64_t r0,
                      std::int64_t nr, SliceList list, double *out, std::int64_t ld_out) {
  const std::int64_t f = blockIdx.x * std::int64_t(kThreads) + threadIdx.x;
  const std::int64_t fast = X.trans ? X.cols : nr, slow = X.trans ? nr : X.cols;
  if (f >= fast) return;
  for (std::int64_t sl = blockIdx.y; sl < slow; sl += gridDim.y) {
    // Non-transposed: f = row i of the block, sl = column j; transposed: swapped.
    const std::int64_t i = X.trans ? sl : f, j = X.trans ? f : sl;
    const Decoded d = exact::decode(load(X, r0 + i, j));
    const int e = info[r0 + i].top + 1;
    for (int a = 0; a < list.n; ++a) {
      const double v = exact::slice_digit(d, e, list.idx[a], w);
      const std::int64_t oi = a * nr + i;
      if (!X.trans)
        out[oi + j * ld_out] = v;
      else
        out[j + oi * ld_out] = v;
    }
  }
}

constexpr int kSumThreads = 128;
constexpr int kScratch = 4 * 128 + 2;  // NearSum terms for up to 16 x 16 slices

// C(gi, gj) = RN(alpha X + beta c) for X given by an engine's terms; counts
// the wide path.
template <class Terms>
__device__ void store_entry(const ExBlockArgs &a, std::int64_t gi, std::int64_t gj,
                            const VectorInfo &ia, const VectorInfo &ib, const Terms &X,
                            double *scratch, int cap) {
  bool wide = false;
  double *c = a.C + gi + gj * a.ldc;
  const double alpha = a.alpha_dev ? *a.alpha_dev : a.alpha;
  const double beta = a.beta_dev ? *a.beta_dev : a.beta;
  const double r = exact::exact_entry(X, exact::entry_operands(a.A, a.B, ia, ib, gi, gj),
                                      alpha, beta, c, scratch, cap, &wide);
  *c = r;
  if (wide) atomicAdd(a.wide_count, 1ull);
}

__global__ void __launch_bounds__(kSumThreads)
    sum_block_kernel(ExSumArgs a, SliceList la, SliceList lb) {
  const ExBlockArgs &b = a.blk;
  const std::int64_t i = blockIdx.x * std::int64_t(kSumThreads) + threadIdx.x;
  if (i >= b.bm) return;
  double scratch[kScratch];
  for (std::int64_t j = blockIdx.y; j < b.bn; j += gridDim.y) {
    const std::int64_t gi = b.i0 + i, gj = b.j0 + j;
    const VectorInfo ia = b.info_a[gi], ib = b.info_b[gj];
    const exact::SliceTerms X{
        exact::EntryProducts{la.n && lb.n ? a.P + i + j * a.ldp : nullptr, b.bm,
                             b.bn * a.ldp, la.n, lb.n, la.idx, lb.idx},
        ia.top + 1, ib.top + 1, a.w};
    store_entry(b, gi, gj, ia, ib, X, scratch, kScratch);
  }
}

// The moduli and their constants, made at compile time by the same
// constexpr function as the host's copy: in constant memory for whatever
// every thread of a warp reads at the same modulus (the constants of the
// residues, the reconstruction, the fold and the reduction), and in global
// memory, cached in L1, for the residues' powers of two (threads read them
// at their own exponents; constant memory would serialise them).
__constant__ exact::ModularTables c_modular = exact::make_modular_tables();
__device__ const exact::ModularTables g_modular = exact::make_modular_tables();

// Thread per kResidueRun consecutive padded positions p of a row (chunk c,
// offsets q..q+3: chunks are multiples of 16, so a run never straddles
// two), rows over the block's y threads and blockIdx.y (looped where they
// are more than the grid takes): the run's four residues of each modulus
// go out as one 32-bit store (byte t at position q + t). The reads run
// along p too, so for rows along X's stored fast dimension (op(A) = N) they
// are strided: those rows are staged through shared memory
// (modular_residues_staged_kernel below).
constexpr int kResidueRun = 4;

// Byte t of the word is r[t]'s low byte (its int8 two's complement): three
// byte permutes.
__device__ __forceinline__ std::uint32_t pack_bytes(const int (&r)[kResidueRun]) {
  static_assert(kResidueRun == 4, "four residues a word");
  const std::uint32_t lo = __byte_perm(std::uint32_t(r[0]), std::uint32_t(r[1]), 0x0040),
                      hi = __byte_perm(std::uint32_t(r[2]), std::uint32_t(r[3]), 0x0040);
  return __byte_perm(lo, hi, 0x5410);
}

// One row of X (op(A), or op(B)^T) as a pointer and the step between
// consecutive positions, made once per row: the kernels' loads then cost a
// multiply-add each, not the 64-bit index arithmetic of both layouts (the
// fused tiles spent about 15 instructions an entry on it).
struct RowReader {
  const double *p;
  std::int64_t step;
};
__device__ __forceinline__ RowReader row_reader(const ExView &X, std::int64_t row) {
  return X.trans ? RowReader{X.p + row * X.ld, 1} : RowReader{X.p + row, X.ld};
}

// A run's kResidueRun entries from position p, all loaded before any is
// decoded (with a bounds test around each load, each sat behind its
// entry's branches and waited out its own DRAM latency); in a run that
// crosses `cols`, positions past it read the last one (run_sources counts
// them as zero).
__device__ __forceinline__ void load_run(const RowReader &r, const double *at, std::int64_t p,
                                         std::int64_t cols, double (&x)[kResidueRun]) {
  if (p + kResidueRun <= cols) {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) x[t] = at[t * r.step];
  } else {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) x[t] = r.p[min(p + t, cols - 1) * r.step];
  }
}
// The same where `at` (position p's address) is not kept by the caller.
__device__ __forceinline__ void load_run(const RowReader &r, std::int64_t p, std::int64_t cols,
                                         double (&x)[kResidueRun]) {
  load_run(r, r.p + p * r.step, p, cols, x);
}

// A run's residue sources (positions from `cols` on count as zero) in a
// row whose lowest bit is `low` (scale = exact::row_scale(low)), whether
// none is shifted, and then, with LowWords, the sources' low words (for
// exact::modular_residue_word: once a run, for every modulus). The entries
// are decoded only where the shortcut (exact::unshifted_value: one
// multiply and a compare) fails for one of them: at phi = 0 it never does.
//
// LowWords (one FMA and one integer multiply-add a residue, not four FP64
// operations) serves the fused products, which are bound by their issue
// slots, and the residue kernel up to 16 moduli (61 -> 64 registers, the
// same occupancy). Beyond, the residue kernel keeps the FP64 form: the low
// words took it from 64 to 80 registers at 24 moduli, from 4 blocks a
// multiprocessor to 3 (the batched 512 x 256^3 at phi = 1 spent 2.7-2.9 ms
// in it on an H200, against 2.3 before).
struct RunSources {
  exact::ResidueSource src[kResidueRun];
  std::uint32_t low_word[kResidueRun];  // where unshifted, with LowWords
  bool unshifted;
};
template <bool LowWords>
__device__ __forceinline__ void run_sources(const double (&x)[kResidueRun], std::int64_t p,
                                            std::int64_t cols, int low, double scale,
                                            RunSources &run) {
  bool fast = true;
  if (p + kResidueRun <= cols) {  // (nearly every run: no test per entry)
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) {
      double v;
      fast &= exact::unshifted_value(x[t], scale, &v);
      run.src[t] = exact::ResidueSource{v, 0};
    }
  } else {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) {
      double v;
      fast &= exact::unshifted_value(p + t < cols ? x[t] : 0.0, scale, &v);
      run.src[t] = exact::ResidueSource{v, 0};
    }
  }
  if (!fast) {
    int any = 0;
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) {
      run.src[t] = exact::residue_source(p + t < cols ? exact::decode(x[t]) : Decoded{}, low);
      any |= run.src[t].shift;
    }
    fast = any == 0;
  }
  run.unshifted = fast;
  if (LowWords && fast) {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t) run.low_word[t] = exact::low_word_of_integer(run.src[t].v);
  }
}

// The residues modulo m_l of a run, packed (byte t for entry t): where no
// entry is shifted, straight-line code (with LowWords one FMA and one
// integer multiply-add a residue: exact::modular_residue_word).
template <bool LowWords>
__device__ __forceinline__ std::uint32_t run_residues(const RunSources &run, int l) {
  int r[kResidueRun];
  if (run.unshifted) {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t)
      r[t] = LowWords ? int(exact::modular_residue_word(run.src[t].v, run.low_word[t], l,
                                                         c_modular))
                      : exact::modular_residue_unshifted(run.src[t].v, l, c_modular);
  } else {
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t)
      r[t] = exact::modular_residue_of(run.src[t], l, c_modular, g_modular);
  }
  return pack_bytes(r);
}

// The residues of a run in a row cut into P pieces (exact::row_pieces),
// modulo each of the first L moduli, packed, to o[l stride]: P FMAs and P
// integer multiply-adds a residue (exact::modular_residue_pieces), where
// residue_source's shifted entries cost a table read and nine FP64
// operations.
template <int LMax, int P>
__device__ __forceinline__ void piece_residues(const double (&x)[kResidueRun],
                                               std::int64_t p, std::int64_t cols,
                                               double scale, int L, std::uint32_t *o,
                                               std::int64_t stride) {
  exact::PieceSource<P> s[kResidueRun];
  XN_UNROLL
  for (int t = 0; t < kResidueRun; ++t)
    s[t] = exact::piece_source<P>((p + t < cols ? x[t] : 0.0) * scale);
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) {  // (unrolled: the constants are immediate operands)
    if (l >= L) break;
    int r[kResidueRun];
    XN_UNROLL
    for (int t = 0; t < kResidueRun; ++t)
      r[t] = int(exact::modular_residue_pieces(s[t], l, c_modular));
    o[l * stride] = pack_bytes(r);
  }
}

// Where the residues go: chunk c of product z (blockIdx.z) of the launch
// starts at out + c chunk_step + z product_step; product z's operand is
// product `first` + z of the call (step), its summaries at info +
// (first + z) info_step.
struct ResidueOut {
  std::int8_t *out;
  std::int64_t chunk_step, product_step;
  ExBatchStep step;
  std::int64_t first, info_step;
};

// One run's residues (kResidueRun entries x at position p of a row with
// summary `row`) modulo the first L moduli, packed, to o[l stride].
template <int LMax, int Pieces>
__device__ __forceinline__ void run_residues_to(const double (&x)[kResidueRun], std::int64_t p,
                                                std::int64_t cols, const VectorInfo &row, int L,
                                                std::uint32_t *o, std::int64_t stride) {
  const double scale = exact::row_scale(row.low);
  if constexpr (Pieces > 0) {
    const int need = exact::row_pieces(row);  // (the same for a warp: it shares the row)
    if (need > 0 && need <= Pieces) {
      piece_residues<LMax, Pieces>(x, p, cols, scale, L, o, stride);
      return;
    }
  }
  RunSources sources;
  run_sources<(LMax <= 16)>(x, p, cols, row.low, scale, sources);
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) {  // (unrolled: the constants are immediate operands)
    if (l >= L) break;
    o[l * stride] = run_residues<(LMax <= 16)>(sources, l);
  }
}

// Pieces: rows that need at most that many pieces (exact::row_pieces) take
// them; every other row, and every row where Pieces = 0, the unshifted
// shortcut or residue_source. Each count is its own kernel: with the
// counts 2 to 4 behind a branch in one, its registers rose from 64 to 120
// at 16 and 24 moduli (the largest count's pieces, live across the moduli).
// Two pieces are held to 64 registers (4 blocks a multiprocessor; ptxas
// spills 4-20 bytes), as the kernel without pieces at 16 and 24 moduli;
// four take what they need (114-122, no spill).
template <int LMax, int Pieces>
__global__ void __launch_bounds__(kThreads, Pieces == 2 ? 4 : 0)
    modular_residues_kernel(ExView X, const VectorInfo *info, std::int64_t r0,
                            std::int64_t nr, int L, std::int64_t chunk,
                            std::int64_t padded, ResidueOut to) {
  const std::int64_t p = kResidueRun * (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x);
  if (p >= padded) return;
  const std::int64_t z = blockIdx.z;
  X.p = product_pointer(X.p, to.step, to.first + z);
  info += (to.first + z) * to.info_step;
  std::int8_t *const out = to.out + z * to.product_step;
  // (A 64-bit division costs as much as several residues: none for one chunk.)
  const std::int64_t c = chunk == padded ? 0 : p / chunk, q = p - c * chunk;
  const std::int64_t stride = nr * chunk / kResidueRun;  // words from one modulus to the next
  for (std::int64_t i = blockIdx.y * std::int64_t(blockDim.y) + threadIdx.y; i < nr;
       i += std::int64_t(gridDim.y) * blockDim.y) {
    double x[kResidueRun];
    load_run(row_reader(X, r0 + i), p, X.cols, x);
    auto *o = reinterpret_cast<std::uint32_t *>(out + c * to.chunk_step + i * chunk + q);
    run_residues_to<LMax, Pieces>(x, p, X.cols, info[r0 + i], L, o, stride);
  }
}

// Rows strided in memory (op(A) = N, op(B) = T): a thread per run of a row
// reads each entry from its own 32-byte sector, and a warp's 32 runs of one
// row take 128 sectors for 1 KB (ncu, batched 64 x 1024^3 on an H200: L2
// at 88 % of its throughput, DRAM at 47 %, 0.67 ms against 0.49 for the
// other operand's contiguous rows). So a block stages a tile of
// kStageRows rows by kStagePositions positions in shared memory, each
// warp reading 32 rows at one position (256 contiguous bytes), and then
// makes the residues as the kernel above, a warp per row: the same
// arithmetic, the same coalesced stores.
constexpr int kStageRows = 32;
constexpr int kStagePositions = 32 * kResidueRun;            // a warp's runs
constexpr int kStagePitch = kStagePositions + 2;             // doubles a row: 16-byte rows
static_assert(kThreads % 32 == 0 && kStageRows % (kThreads / 32) == 0 &&
                  kStagePositions % (kThreads / 32) == 0,
              "the staged tile's rows and positions split evenly over the warps");

template <int LMax, int Pieces>
__global__ void __launch_bounds__(kThreads, Pieces == 2 ? 4 : 0)
    modular_residues_staged_kernel(ExView X, const VectorInfo *info, std::int64_t r0,
                                   std::int64_t nr, int L, std::int64_t chunk,
                                   std::int64_t padded, ResidueOut to) {
  __shared__ __align__(16) double tile[kStageRows * kStagePitch];
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t z = blockIdx.z;
  X.p = product_pointer(X.p, to.step, to.first + z);
  info += (to.first + z) * to.info_step;
  std::int8_t *const out = to.out + z * to.product_step;
  const std::int64_t stride = nr * chunk / kResidueRun;
  const std::int64_t i0 = blockIdx.x * std::int64_t(kStageRows);
  for (std::int64_t p0 = blockIdx.y * std::int64_t(kStagePositions); p0 < padded;
       p0 += std::int64_t(gridDim.y) * kStagePositions) {
    const std::int64_t p = p0 + kResidueRun * lane;  // this thread's run
    const std::int64_t c = chunk == padded ? 0 : p / chunk, q = p - c * chunk;
    // Stage: warp w reads positions w, w + kWarps, ... of 32 rows (lane =
    // row). Rows past nr are not read; positions past cols read as 0 (the
    // residue code counts them as zero anyway).
    const std::int64_t row = i0 + lane;
    if (row < nr) {
      const double *src = X.p + (r0 + row);
      XN_UNROLL
      for (int u = 0; u < kStagePositions / kWarps; ++u) {  // (all loads in flight)
        const int t = warp + u * kWarps;
        const std::int64_t pos = p0 + t;
        tile[lane * kStagePitch + t] = pos < X.cols ? src[pos * X.ld] : 0.0;
      }
    }
    __syncthreads();
    for (int r = warp; r < kStageRows; r += kWarps) {
      const std::int64_t i = i0 + r;
      if (i < nr && p < padded) {
        const double *run = &tile[r * kStagePitch + kResidueRun * lane];
        const double2 a = *reinterpret_cast<const double2 *>(run),
                      b = *reinterpret_cast<const double2 *>(run + 2);
        const double x[kResidueRun] = {a.x, a.y, b.x, b.y};
        auto *o = reinterpret_cast<std::uint32_t *>(out + c * to.chunk_step + i * chunk + q);
        run_residues_to<LMax, Pieces>(x, p, X.cols, info[r0 + i], L, o, stride);
      }
    }
    __syncthreads();  // the tile is read before the next is staged
  }
}

// Skinny n (launch_ex_modular_fused_products): thread per row of the block
// (a warp's 32 rows read coalesced where op(A) = N) over a piece of k
// (blockIdx.y: piece s of chunk c), kResidueRun positions a step: their
// residues modulo m_l packed in one word (as the residue kernel stores
// them), times op(B)'s word at the same positions by __dp4a. op(B)'s words
// of a tile of kFusedTile positions are staged in shared memory first (the
// same for every thread: broadcast reads, no branch between a load and its
// use; the first version read them from global memory inside the loop,
// behind a branch per column, and took 4.2 ms for 4097 x 3 x 30001 on an
// H100 against 2.7 staged). NB, op(B)'s columns, is a template parameter
// so nothing is predicated. A thread's sums stay below
// range 127^2 <= 2^17 127^2 < 2^31; reduced modulo m_l, they are added
// into P.
constexpr int kFusedThreads = 128;
constexpr int kFusedTile = 256;  // positions of op(B) staged at a time
constexpr int kFusedTileWords = kFusedTile / kResidueRun;

template <int LMax, int NB>
__global__ void __launch_bounds__(kFusedThreads)
    modular_fused_products_kernel(ExView X, const VectorInfo *info, std::int64_t r0,
                                  std::int64_t nr, const std::uint32_t *rb,
                                  std::int64_t rb_rows, int L, std::int64_t chunk,
                                  std::int64_t range, std::int64_t pieces, std::int32_t *P,
                                  std::int64_t pstride) {
  __shared__ std::uint32_t tile[LMax * NB * kFusedTileWords];
  const std::int64_t i = blockIdx.x * std::int64_t(kFusedThreads) + threadIdx.x;
  const bool row = i < nr;  // every thread stages the tiles
  const std::int64_t c = blockIdx.y / pieces, q0 = (blockIdx.y - c * pieces) * range;
  const std::int64_t q1 = min(chunk, q0 + range);
  const std::int64_t words = chunk / kResidueRun;  // one row of op(B)'s residues
  const std::uint32_t *b = rb + c * L * rb_rows * words;  // chunk c, modulus 0, row 0
  const int low = row ? info[r0 + i].low : 0;
  const double scale = exact::row_scale(low);
  const RowReader reader = row_reader(X, row ? r0 + i : r0);
  int acc[LMax][NB];
  XN_UNROLL
  for (int l = 0; l < LMax; ++l)
    XN_UNROLL
    for (int j = 0; j < NB; ++j) acc[l][j] = 0;
  for (std::int64_t t0 = q0; t0 < q1; t0 += kFusedTile) {
    const int tw = int(min(std::int64_t(kFusedTile), q1 - t0)) / kResidueRun;
    __syncthreads();  // the previous tile is consumed
    for (int x = threadIdx.x; x < L * NB * tw; x += kFusedThreads) {
      const int lj = x / tw, w = x - lj * tw;  // (modulus, column) lj, word w
      const int l = lj / NB, j = lj - l * NB;
      tile[lj * kFusedTileWords + w] = b[(l * rb_rows + j) * words + t0 / kResidueRun + w];
    }
    __syncthreads();
    if (!row) continue;
    // One step ahead: the next run's loads are in flight while this one's
    // residues are made.
    double next[kResidueRun];
    load_run(reader, c * chunk + t0, X.cols, next);
    for (int w = 0; w < tw; ++w) {
      const std::int64_t p = c * chunk + t0 + std::int64_t(w) * kResidueRun;
      double x[kResidueRun];
      XN_UNROLL
      for (int t = 0; t < kResidueRun; ++t) x[t] = next[t];
      if (w + 1 < tw) load_run(reader, p + kResidueRun, X.cols, next);
      RunSources sources;
      run_sources<true>(x, p, X.cols, low, scale, sources);
      XN_UNROLL
      for (int l = 0; l < LMax; ++l) {
        if (l >= L) break;
        const int a = int(run_residues<true>(sources, l));
        XN_UNROLL
        for (int j = 0; j < NB; ++j)
          acc[l][j] = __dp4a(a, int(tile[(l * NB + j) * kFusedTileWords + w]), acc[l][j]);
      }
    }
  }
  if (!row) return;
  XN_UNROLL
  for (int l = 0; l < LMax; ++l) {
    if (l >= L) break;
    XN_UNROLL
    for (int j = 0; j < NB; ++j)
      atomicAdd(P + l * pstride + i + j * nr, exact::symmetric_residue(acc[l][j], l, c_modular));
  }
}

// Small m and n (launch_ex_modular_tile_products; docs/design.md, "Small m
// and n"): neither operand's residues are stored. A block owns a tile of
// kExTileRows x kExTileRows of P, kExTileModuli moduli of it and slot s
// (blockIdx.y); per step of kTileK positions its threads load both
// operands' runs (each thread one run of each, read one step ahead),
// write their residues for the block's moduli to shared memory, and each
// warp multiplies one modulus's residues for a quarter of the tile's rows
// on the INT8 tensor cores (mma.sync m16n8k32: 8 fragments, 32 int32 sums
// a thread; with two runs and 64 sums a thread, 256 threads, it needed 200
// registers, or spilled at 128). Splitting the moduli over blocks, not the tile, makes each
// residue once: the doubles are read by every moduli group (from L2 when
// the groups of one piece of k run together), the FP64 work of the residues
// is not repeated. A stored residue costs L bytes written and read again
// per entry of each operand; the 64 x 64 x 131072 product spent 2/3 of its
// time on them and on the INT8 products reading them back (docs/performance.md).
constexpr int kTileThreads = 512;
constexpr int kTileK = 32;  // positions a step: the k of one mma
// Bytes between two rows of a residue plane: 12 words, so that the
// fragment reads (8 rows x 4 words a warp) and the N-layout stores (8 rows x
// 4 runs) fall in 32 different banks.
constexpr int kTileRowBytes = kTileK + 16;
constexpr int kTileRunsPerRow = kTileK / kResidueRun;
constexpr int kTilePlaneBytes = kExTileRows * kTileRowBytes;
static_assert(kExTileRows * kTileRunsPerRow == kTileThreads &&
                  kTileThreads / 32 == 4 * kExTileModuli && kExTileRows == 64,
              "the kernel's mapping: a run of each operand a thread, four warps (16 rows "
              "each) a modulus");

// The row and run (of kTileRunsPerRow a row) of a tile's u-th run: where
// X's rows run along its stored fast dimension (!trans), a warp takes 8
// rows by 4 runs (each load instruction: 4 pieces of 64 contiguous bytes);
// where they are stored contiguously, 4 rows by 8 runs (256 bytes a row).
__device__ __forceinline__ void tile_run_of(bool trans, int u, int &row, int &run) {
  if (trans) {
    row = u / kTileRunsPerRow;
    run = u % kTileRunsPerRow;
  } else {
    row = u % 8 + 8 * ((u / 32) % 8);
    run = (u / 8) % 4 + 4 * (u / 256);
  }
}

// d += A_frag B_frag for a 16 x 8 piece of the tile over kTileK positions:
// `a` at row 0 of the 16 rows of op(A)'s plane, `b` at row 0 of the 8 rows
// of op(B)^T's; g = lane / 4, t = lane % 4 (the PTX ISA's fragment layout
// of mma.m16n8k32 .s8: rows g and g + 8, 4 bytes at k = 4t and 16 + 4t).
// Before sm_80 (no INT8 mma.sync) the same sums by __dp4a.
__device__ __forceinline__ void tile_mma(int (&d)[4], const unsigned char *a,
                                         const unsigned char *b, int g, int t) {
  const auto word = [](const unsigned char *plane, int row, int k) {
    return *reinterpret_cast<const std::uint32_t *>(plane + row * kTileRowBytes + k);
  };
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const std::uint32_t a0 = word(a, g, 4 * t), a1 = word(a, g + 8, 4 * t),
                      a2 = word(a, g, 16 + 4 * t), a3 = word(a, g + 8, 16 + 4 * t);
  const std::uint32_t b0 = word(b, g, 4 * t), b1 = word(b, g, 16 + 4 * t);
  mma_m16n8k32_s8(d, a0, a1, a2, a3, b0, b1);
#else
  XN_UNROLL
  for (int c = 0; c < 4; ++c) {
    const int row = g + 8 * (c >> 1), col = 2 * t + (c & 1);
    XN_UNROLL
    for (int k = 0; k < kTileK; k += 4)
      d[c] = __dp4a(int(word(a, row, k)), int(word(b, col, k)), d[c]);
  }
#endif
}

__global__ void __launch_bounds__(kTileThreads, 1)
    modular_tile_products_kernel(ExView X, const VectorInfo *info_x, std::int64_t i0,
                                 std::int64_t bm, ExView Y, const VectorInfo *info_y,
                                 std::int64_t j0, std::int64_t bn, int L, std::int64_t chunk,
                                 int chunks, std::int32_t *P, std::int64_t pstride) {
  // Two sets of planes, used by turns: a step writes one while the last
  // step's readers may still read the other, so one barrier a step suffices
  // (the writers of a set wait at the barrier of the step between for its
  // readers).
  __shared__ __align__(16) unsigned char planes[2][2][kExTileModuli][kTilePlaneBytes];
  const int groups = (L + kExTileModuli - 1) / kExTileModuli;
  const int tiles_i = int((bm + kExTileRows - 1) / kExTileRows);
  const int group = int(blockIdx.x) % groups, tile = int(blockIdx.x) / groups;
  const std::int64_t ti = tile % tiles_i * std::int64_t(kExTileRows),
                     tj = tile / tiles_i * std::int64_t(kExTileRows);
  const int l0 = group * kExTileModuli;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  // This thread's run of op(A)'s rows (X, r = 0) and of op(B)^T's (Y, r = 1).
  int row[2], run[2], low[2];
  double scale[2];
  bool inside[2];
  RowReader reader[2];
  XN_UNROLL
  for (int r = 0; r < 2; ++r) {
    tile_run_of(r == 0 ? X.trans : Y.trans, int(threadIdx.x), row[r], run[r]);
    const std::int64_t first = r == 0 ? i0 : j0, offset = r == 0 ? ti : tj;
    inside[r] = offset + row[r] < (r == 0 ? bm : bn);
    const std::int64_t grow = inside[r] ? first + offset + row[r] : first;
    reader[r] = row_reader(r == 0 ? X : Y, grow);
    low[r] = (r == 0 ? info_x : info_y)[grow].low;
    scale[r] = exact::row_scale(low[r]);
  }

  // The warp's modulus (l0 + ml) and 16 of the tile's rows.
  const int ml = warp % kExTileModuli, quarter = warp / kExTileModuli;
  const bool multiplies = l0 + ml < L;
  const int g = lane / 4, t = lane % 4;
  int acc[8][4];
  XN_UNROLL
  for (int b = 0; b < 8; ++b)
    XN_UNROLL
    for (int e = 0; e < 4; ++e) acc[b][e] = 0;

  // Rows outside the block (a partial tile): zero residues, written once;
  // their threads neither load nor compute (a warp's runs share 4 or 8 rows,
  // so whole warps idle rather than diverge).
  XN_UNROLL
  for (int r = 0; r < 2; ++r) {
    if (inside[r]) continue;
    XN_UNROLL
    for (int set = 0; set < 2; ++set)
      XN_UNROLL
      for (int s = 0; s < kExTileModuli; ++s)
        *reinterpret_cast<std::uint32_t *>(
            &planes[set][r][s][row[r] * kTileRowBytes + kResidueRun * run[r]]) = 0;
  }
  int set = 0;  // the planes this step writes

  const std::int64_t k = X.cols;
  for (int c = int(blockIdx.y); c < chunks; c += int(gridDim.y)) {
    const std::int64_t q0 = std::int64_t(c) * chunk, q1 = min(k, q0 + chunk);
    // The next load's address runs along the row (a 64-bit add a step, not
    // an index product).
    double x[2][kResidueRun];
    const double *at[2];
    XN_UNROLL
    for (int r = 0; r < 2; ++r) {
      const std::int64_t p = q0 + kResidueRun * run[r];
      at[r] = reader[r].p + p * reader[r].step;
      if (inside[r]) load_run(reader[r], at[r], p, k, x[r]);
    }
    for (std::int64_t p0 = q0; p0 < q1; p0 += kTileK) {
      XN_UNROLL
      for (int r = 0; r < 2; ++r) {
        if (!inside[r]) continue;
        const std::int64_t p = p0 + kResidueRun * run[r];
        // Positions past this chunk count as zero.
        RunSources sources;
        run_sources<true>(x[r], p, q1, low[r], scale[r], sources);
        if (p0 + kTileK < q1) {
          at[r] += kTileK * reader[r].step;
          load_run(reader[r], at[r], p + kTileK, k, x[r]);
        }
        unsigned char *o = &planes[set][r][0][row[r] * kTileRowBytes + kResidueRun * run[r]];
        XN_UNROLL
        for (int s = 0; s < kExTileModuli; ++s)
          if (l0 + s < L)
            *reinterpret_cast<std::uint32_t *>(o + s * kTilePlaneBytes) =
                run_residues<true>(sources, l0 + s);
      }
      __syncthreads();
      if (multiplies) {
        const unsigned char *pa = planes[set][0][ml] + 16 * quarter * kTileRowBytes;
        XN_UNROLL
        for (int b = 0; b < 8; ++b)
          tile_mma(acc[b], pa, planes[set][1][ml] + 8 * b * kTileRowBytes, g, t);
      }
      set ^= 1;
    }
    // At most 2^17 positions a chunk: |sum| <= 2^17 127^2 < 2^31. Reduced
    // before the next chunk of the same slot.
    if (multiplies && c + int(gridDim.y) < chunks) {
      XN_UNROLL
      for (int b = 0; b < 8; ++b)
        XN_UNROLL
        for (int e = 0; e < 4; ++e)
          acc[b][e] = exact::symmetric_residue(acc[b][e], l0 + ml, c_modular);
    }
  }
  if (!multiplies) return;
  // The slots fold here: each adds its symmetric residue (|r| <= 127) into
  // the zeroed first slot; at most 65535 slots keep the sum within int32,
  // and integer addition in any order gives the same bits.
  std::int32_t *out = P + std::int64_t(l0 + ml) * pstride;
  const bool one_slot = gridDim.y == 1;
  XN_UNROLL
  for (int b = 0; b < 8; ++b)
    XN_UNROLL
    for (int e = 0; e < 4; ++e) {
      const std::int64_t i = ti + 16 * quarter + g + 8 * (e >> 1);
      const std::int64_t j = tj + 8 * b + 2 * t + (e & 1);
      if (i < bm && j < bn) {
        const int r = exact::symmetric_residue(acc[b][e], l0 + ml, c_modular);
        if (one_slot)
          out[i + j * bm] = r;
        else
          atomicAdd(&out[i + j * bm], r);
      }
    }
}

// Thread per entry, blockIdx.y the modulus: reads its own column of slots,
// writes the first.
__global__ void __launch_bounds__(kThreads)
    modular_fold_slots_kernel(std::int32_t *P, int L, int slots, std::int64_t pstride,
                              std::int64_t entries) {
  const std::int64_t e = blockIdx.x * std::int64_t(kThreads) + threadIdx.x;
  if (e >= entries) return;
  const int l = blockIdx.y;
  std::int32_t *p = P + l * pstride + e;
  *p = exact::fold_slots(p, slots, L * pstride, l, c_modular);
}

__global__ void __launch_bounds__(kThreads)
    modular_reduce_kernel(std::int32_t *P, int L, std::int64_t pstride,
                          std::int64_t entries) {
  const std::int64_t e = blockIdx.x * std::int64_t(kThreads) + threadIdx.x;
  if (e >= entries) return;
  const int b = blockIdx.y, l = b % L;
  std::int32_t *p = P + b * pstride + e;
  *p = exact::symmetric_residue(*p, l, c_modular);
}

constexpr int kModularScratch = 2 * exact::kMaxLimbs + 2;

// The reconstruction runs in two kernels over a block. The first rounds
// every entry that the fraction form (round_by_fraction) certifies (nearly
// all: finite data, results in the normal range, no tie), kFractionEntries
// entries a thread, and marks each done by overwriting its first product
// with kEntryDone, a value no product takes (|p| <= 2^17 127^2 + 127 <
// 2^31 - 2^24; folded residues, |r| <= 127 slots at most 127 x 65535).
// The second takes the entries left (zeros, ties, results outside the
// normal range, Inf and NaN, the fraction form's other declines, a
// captured plan's entries beyond its moduli) through the exact limbs
// (modular_terms, round_fast) and
// the general rounding, exact_entry, with its scratch, NearSum and wide
// accumulator: in one kernel they cost the first its registers (72-128 per
// thread, spills, 43 % occupancy: 6.0 ms of 8192^2 entries on an H200; the
// exact limbs alone beside the fraction form, 94 registers at 24 moduli).
// (INT32_MIN for int32 sums, -128 for int8 digits, which stay within +-127.)
template <class P>
constexpr P kEntryDone = std::numeric_limits<P>::min();

// Product z (blockIdx.z) of a batched launch: its operands, C and
// summaries (ExBatch), and its products.
__device__ __forceinline__ ExBlockArgs product_block(const ExBlockArgs &a, const ExBatch &batch,
                                                     std::int64_t z) {
  ExBlockArgs b = a;
  const std::int64_t g = batch.first + z;
  b.A.p = product_pointer(a.A.p, batch.a, g);
  b.B.p = product_pointer(a.B.p, batch.b, g);
  b.C = product_pointer(a.C, batch.c, g);
  b.info_a = a.info_a + g * a.bm;
  b.info_b = a.info_b + g * a.bn;
  return b;
}

// The first pass takes kFractionEntries entries a thread, rows i + e
// kSumThreads of one column j = j_first + blockIdx.y (int8 digits: rows 32
// apart, below), with no loop over
// entries: the moduli's constants are read once for them (a load
// instruction of their own at each use: a third of a modulus's
// instructions with one entry), and none stays live across a loop (over
// four columns one after another, the first version's, ptxas hoisted them
// into uniform registers for the whole loop and then moved them back and
// forth, 12 of a modulus's 26 instructions: SASS, H200). The entries'
// products, C and markers lie a constant apart, so one address serves
// them all (immediate offsets; entries a column apart each took five
// integer instructions an address).
// Every block that leaves an entry to the second pass says so (a.undone,
// one store per such block); with none left, the second pass ends at once
// instead of reading every entry's marker (0.35-0.45 ms of 2^26 entries on
// an H100: a quarter of the batched reconstruction at 1024^3).
// Entries a thread and the blocks of kSumThreads that each multiprocessor
// must hold (the registers' cap), per moduli variant: two entries while
// their products fit beside the sums, at 64 registers (uncapped, 94-104:
// 24-30 % occupancy, and the batched 64 x 1024^3 took 1.99 ms against
// 1.81 capped, 512 x 256^3 1.21 against 1.09; H200, two starts; and
// capped lower, at 48 for ten blocks, 512 x 256^3 went 0.68-0.69 -> 0.70-0.71
// ms and 64 x 1024^3 1.49 -> 2.01 with spills, H200, 2026-11-29); one from
// 32 moduli on (int32 sums). Int8 digits hold no products, only their
// words for one k step at a time, and take two entries a thread at every
// L, rows a warp's 32 apart: each
// warp's 64 rows share their tensor-core sums (digit_fraction_sums).
template <int LMax, class Product>
inline constexpr int kFractionEntries =
    std::is_same_v<Product, std::int8_t> ? 2 : LMax <= 24 ? 2 : 1;
template <int LMax>
inline constexpr int kFractionMinBlocks = LMax <= 32 ? 8 : 6;
// Rows of the first pass's blocks.
template <int LMax, class Product>
inline constexpr int kFractionRows = kSumThreads * kFractionEntries<LMax, Product>;

// The fraction form's sums of int8 digits on the tensor cores (exact::
// fraction_weight_byte): for 32 rows r0..r0 + 31 of a column, the digits
// (rows by moduli) times the weights (moduli by 20 byte columns: piece j,
// byte b) by mma m16n8k32 s8.u8, 6 a k step of 32 moduli, against 4 FMAs
// a modulus and entry in fraction_sums (the reconstruction's largest
// cost: 18 of 528 instructions an entry a modulus, ncu). Lane (g, t)
// (g = lane / 4, t = lane % 4) reads the four bytes of rows r0 + 4g ..
// r0 + 4g + 3 at each of its eight moduli (one word each, coalesced in
// 32-byte runs), and a 4 x 4 byte transpose makes them its A fragments:
// rows g and g + 8 of m16 block h are rows r0 + 4g + 2h and r0 + 4g + 2h
// + 1. Column 2t + s of n8 tile q is piece t, byte 2q + s (byte 5 weighs
// nothing), so the lane's sums make piece t of its four rows; shared
// memory turns them to the four pieces of row r0 + lane.
constexpr int kFractionKSteps = (exact::kMaxModuli + 31) / 32;
constexpr int kFractionTiles = 3;  // n8 tiles: 4 pieces x 2 bytes a tile
struct alignas(8) FractionFragments {  // (a lane reads its b0, b1 as one uint2)
  std::uint32_t w[kFractionKSteps][kFractionTiles][32][2];  // [step][tile][lane][b0, b1]
};
constexpr FractionFragments make_fraction_fragments() {
  FractionFragments f{};
  for (int ks = 0; ks < kFractionKSteps; ++ks)
    for (int q = 0; q < kFractionTiles; ++q)
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < 2; ++r) {
          const int g = lane / 4, t = lane % 4, piece = g / 2, byte = 2 * q + g % 2;
          std::uint32_t word = 0;
          for (int u = 0; u < 4; ++u)
            word |= exact::fraction_weight_byte(exact::kModularTables, piece, byte,
                                                32 * ks + 16 * r + 4 * t + u)
                    << (8 * u);
          f.w[ks][q][lane][r] = word;
        }
  return f;
}
__device__ const FractionFragments g_fraction_fragments = make_fraction_fragments();

// A warp's exchange of its lanes' pieces: [piece][row], rows padded to 34
// doubles so that each lane's two 16-byte stores of a piece (its four
// rows) take the fewest shared-memory wavefronts.
using FractionExchange = double[4][34];  // (declared __align__(16): double2 stores)

// Whether a product's digits lie in words of four rows, as
// digit_fraction_sums reads them: P, pstride (plane to plane) and ld
// (column to column: column j at P + j ld, whose bytes up to ld are
// readable) multiples of 4. The engine's always do (ex_digit_column_stride,
// planes aligned to 64 bytes); the launchers refuse any other.
XN_HD bool whole_digit_words(const std::int8_t *P, std::int64_t pstride, std::int64_t ld) {
  return ((reinterpret_cast<std::uintptr_t>(P) | std::uintptr_t(pstride) | std::uintptr_t(ld)) &
          3) == 0;
}

// Warp-collective (every lane, the same arguments): sums = the fraction
// form's four sums of the lane's row, whose L digits lie at column + lane
// + l pstride (column: the warp's first row of modulus 0), in words of
// four rows (whole_digit_words): the column must be readable up to rows'
// next multiple of 4 (those rows' bytes reach only their own sums).
template <int LMax>
__device__ __forceinline__ void digit_fraction_sums(const std::int8_t *column,
                                                    std::int64_t pstride, int L,
                                                    std::int64_t rows,
                                                    FractionExchange &exchange,
                                                    double (&sums)[4]) {
  constexpr int KSteps = (LMax + 31) / 32;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const std::int8_t *const mine = column + 4 * g + 4 * t * pstride;  // modulus 4t, row 4g
  int d[2][kFractionTiles][4] = {};
  XN_UNROLL
  for (int ks = 0; ks < KSteps; ++ks) {
    // w[half][u]: rows 4g..4g + 3 of modulus 32 ks + 16 half + 4t + u.
    std::uint32_t w[2][4] = {};
    const bool row_in = 4 * g < rows;
    XN_UNROLL
    for (int half = 0; half < 2; ++half)
      XN_UNROLL
      for (int u = 0; u < 4; ++u) {
        const int step = 32 * ks + 16 * half + u, l = step + 4 * t;
        if (step < LMax && row_in && l < L)
          w[half][u] = *reinterpret_cast<const std::uint32_t *>(mine + step * pstride);
      }
    // The 4 x 4 byte transpose: a[half][slot] = moduli 4t..4t + 3 (of the
    // half) of row 4g + slot.
    std::uint32_t a[2][4];
    XN_UNROLL
    for (int half = 0; half < 2; ++half) {
      const std::uint32_t x0 = __byte_perm(w[half][0], w[half][1], 0x5140),
                          x1 = __byte_perm(w[half][0], w[half][1], 0x7362),
                          y0 = __byte_perm(w[half][2], w[half][3], 0x5140),
                          y1 = __byte_perm(w[half][2], w[half][3], 0x7362);
      a[half][0] = __byte_perm(x0, y0, 0x5410);
      a[half][1] = __byte_perm(x0, y0, 0x7632);
      a[half][2] = __byte_perm(x1, y1, 0x5410);
      a[half][3] = __byte_perm(x1, y1, 0x7632);
    }
    XN_UNROLL
    for (int q = 0; q < kFractionTiles; ++q) {
      const uint2 b = *reinterpret_cast<const uint2 *>(g_fraction_fragments.w[ks][q][lane]);
      XN_UNROLL
      for (int h = 0; h < 2; ++h)
        mma_m16n8k32_s8u8(d[h][q], a[0][2 * h], a[0][2 * h + 1], a[1][2 * h], a[1][2 * h + 1],
                          b.x, b.y);
    }
  }
  // d[h][q][2 rh + s]: row 4g + 2h + rh, piece t, byte 2q + s.
  double piece[4];
  XN_UNROLL
  for (int h = 0; h < 2; ++h)
    XN_UNROLL
    for (int rh = 0; rh < 2; ++rh)
      piece[2 * h + rh] = exact::fraction_piece_of_byte_sums(
          d[h][0][2 * rh], d[h][0][2 * rh + 1], d[h][1][2 * rh], d[h][1][2 * rh + 1],
          d[h][2][2 * rh]);
  __syncwarp();  // the exchange's last reads are done
  *reinterpret_cast<double2 *>(&exchange[t][4 * g]) = make_double2(piece[0], piece[1]);
  *reinterpret_cast<double2 *>(&exchange[t][4 * g + 2]) = make_double2(piece[2], piece[3]);
  __syncwarp();
  XN_UNROLL
  for (int j = 0; j < 4; ++j) sums[j] = exchange[j][lane];
}

// Column stride of a block's products: bm for int32 sums, the digits'
// padded columns for int8 digits (ex_digit_column_stride).
template <class Product>
__device__ __forceinline__ std::int64_t product_column_stride(std::int64_t bm) {
  return std::is_same_v<Product, std::int8_t> ? ex_digit_column_stride(bm) : bm;
}

template <int LMax, class Product>
__device__ __forceinline__ void round_fraction_entries(const ExBlockArgs &b, Product *P,
                                                       const ExModularSumArgs &a,
                                                       std::int64_t j_first, std::int64_t j_end) {
  constexpr int E = kFractionEntries<LMax, Product>;
  // Int8 digits: a warp's 32 E rows, its entries 32 apart; else a block's
  // rows kSumThreads apart.
  constexpr bool kTensorSums = std::is_same_v<Product, std::int8_t>;
  constexpr int kApart = kTensorSums ? 32 : kSumThreads;
  const std::int64_t block_row = blockIdx.x * std::int64_t(kFractionRows<LMax, Product>);
  // (first_row: the warp's, whose every lane the tensor-core sums take.)
  const std::int64_t first_row =
      kTensorSums ? block_row + 32 * E * (threadIdx.x / 32) : block_row + threadIdx.x;
  const std::int64_t i = kTensorSums ? first_row + threadIdx.x % 32 : first_row;
  const std::int64_t j = j_first + blockIdx.y;
  bool undone = false;
  if (first_row < b.bm && j < j_end) {
    const double alpha = b.alpha_dev ? *b.alpha_dev : b.alpha;
    const double beta = b.beta_dev ? *b.beta_dev : b.beta;
    const std::int64_t gj = b.j0 + j;
    const VectorInfo ib = b.info_b[gj];
    double *const c0 = b.C + (b.i0 + i) + gj * b.ldc;
    const std::int64_t ldp = product_column_stride<Product>(b.bm);
    Product *const p0 = P + i + j * ldp;
    bool valid[E], fast[E];
    int base[E];
    double cv[E];
    double *c[E];
    Product *p[E];
    XN_UNROLL
    for (int e = 0; e < E; ++e) {
      valid[e] = i + e * kApart < b.bm;
      c[e] = c0 + e * kApart;
      p[e] = p0 + e * kApart;
      // (A row past the end reads no products and stores nothing.)
      const VectorInfo ia = b.info_a[b.i0 + (valid[e] ? i + e * kApart : first_row)];
      cv[e] = beta != 0.0 && valid[e] ? *c[e] : 0.0;
      base[e] = ia.low + ib.low;
      fast[e] = valid[e] && ia.top != exact::kNoTop && ib.top != exact::kNoTop &&
                !exact::modular_over_range(ia, ib, a.log2_k, a.cap_bits) &&
                exact::finite_exact_case(ia, ib, alpha, beta, cv[e]);
    }
    double sums[E][4];
    if constexpr (kTensorSums) {
      __shared__ __align__(16) FractionExchange exchange[kSumThreads / 32];
      XN_UNROLL
      for (int e = 0; e < E; ++e)
        digit_fraction_sums<LMax>(P + first_row + e * kApart + j * ldp, a.pstride, a.crt.L,
                                  b.bm - first_row - e * kApart, exchange[threadIdx.x / 32],
                                  sums[e]);
    } else {
      int moduli[E];  // (none for a row past the end)
      XN_UNROLL
      for (int e = 0; e < E; ++e) moduli[e] = valid[e] ? a.crt.L : 0;
      exact::fraction_sums<LMax>(p, a.pstride, moduli, a.crt, c_modular, sums);
    }
    XN_UNROLL
    for (int e = 0; e < E; ++e) {
      if (!valid[e]) continue;
      double r = 0.0;
      if (fast[e] &&
          exact::round_fraction_sums(sums[e], base[e], a.crt, alpha, beta, cv[e], &r)) {
        *c[e] = r;
        *p[e] = kEntryDone<Product>;
      } else {
        undone = true;
      }
    }
  }
  if (a.undone && __syncthreads_or(undone) && threadIdx.x == 0) *a.undone = a.epoch;
}

template <int LMax, class Product>
__device__ __forceinline__ void round_general_entries(const ExBlockArgs &b, const Product *P,
                                                      const ExModularSumArgs &a) {
  if (a.undone && *a.undone != a.epoch) return;  // the first pass left nothing
  const std::int64_t i = blockIdx.x * std::int64_t(kSumThreads) + threadIdx.x;
  if (i >= b.bm) return;
  double scratch[kModularScratch];
  for (std::int64_t j = blockIdx.y; j < b.bn; j += gridDim.y) {
    const Product *p = P + i + j * product_column_stride<Product>(b.bm);
    if (*p == kEntryDone<Product>) continue;
    const std::int64_t gi = b.i0 + i, gj = b.j0 + j;
    const VectorInfo ia = b.info_a[gi], ib = b.info_b[gj];
    if (exact::modular_over_range(ia, ib, a.log2_k, a.cap_bits)) {
      const exact::DirectTerms X{exact::entry_operands(b.A, b.B, ia, ib, gi, gj)};
      store_entry(b, gi, gj, ia, ib, X, scratch, kModularScratch);
      continue;
    }
    const auto X = exact::entry_modular_terms<LMax>(p, a.pstride, ia, ib, a.crt, c_modular);
    store_entry(b, gi, gj, ia, ib, X, scratch, kModularScratch);
  }
}

template <int LMax>
__global__ void __launch_bounds__(kSumThreads, kFractionMinBlocks<LMax>)
    modular_round_fraction_kernel(const __grid_constant__ ExModularSumArgs a,
                                  std::int64_t j_first, std::int64_t j_end) {
  round_fraction_entries<LMax>(a.blk, static_cast<std::int32_t *>(a.P), a, j_first, j_end);
}

template <int LMax>
__global__ void __launch_bounds__(kSumThreads)
    modular_round_general_kernel(const __grid_constant__ ExModularSumArgs a) {
  round_general_entries<LMax>(a.blk, static_cast<const std::int32_t *>(a.P), a);
}

// A batched launch: product z = blockIdx.z of `batch`, its L products
// (int32 sums, or int8 digits) at P + z p_step.
template <int LMax, class Product>
__global__ void __launch_bounds__(kSumThreads, kFractionMinBlocks<LMax>)
    modular_round_fraction_batch_kernel(const __grid_constant__ ExModularSumArgs a,
                                        const __grid_constant__ ExBatch batch,
                                        std::int64_t p_step) {
  round_fraction_entries<LMax>(product_block(a.blk, batch, blockIdx.z),
                               static_cast<Product *>(a.P) + blockIdx.z * p_step, a, 0,
                               a.blk.bn);
}

template <int LMax, class Product>
__global__ void __launch_bounds__(kSumThreads)
    modular_round_general_batch_kernel(const __grid_constant__ ExModularSumArgs a,
                                       const __grid_constant__ ExBatch batch,
                                       std::int64_t p_step) {
  round_general_entries<LMax>(product_block(a.blk, batch, blockIdx.z),
                              static_cast<const Product *>(a.P) + blockIdx.z * p_step, a);
}

// Tests only (testing::launch_digit_fraction_sums): each warp's 32 rows'
// sums by digit_fraction_sums, for a column of `rows` rows.
template <int LMax>
__global__ void __launch_bounds__(kSumThreads)
    digit_fraction_sums_kernel(const std::int8_t *P, std::int64_t pstride, int L,
                               std::int64_t rows, double *sums) {
  __shared__ __align__(16) FractionExchange exchange[kSumThreads / 32];
  const std::int64_t first_row = blockIdx.x * std::int64_t(kSumThreads) + 32 * (threadIdx.x / 32);
  if (first_row >= rows) return;  // (the whole warp)
  double out[4];
  digit_fraction_sums<LMax>(P + first_row, pstride, L, rows - first_row,
                            exchange[threadIdx.x / 32], out);
  const std::int64_t r = first_row + threadIdx.x % 32;
  if (r < rows)
    for (int j = 0; j < 4; ++j) sums[4 * r + j] = out[j];
}

unsigned blocks_for(std::int64_t n, int per) { return unsigned((n + per - 1) / per); }

// Columns per thread in the scans: kColChunk, more if gridDim.y would
// exceed its limit.
std::int64_t col_chunk(std::int64_t cols) {
  return std::max<std::int64_t>(kColChunk, (cols + 65534) / 65535);
}

// The exponent scans aim at about 2^18 threads for operands of few rows
// (long k): fewer leave the memory system idle while each reads a long run
// one load after another.
constexpr std::int64_t kScanThreads = std::int64_t(1) << 18;

// Columns per thread in the exponent scan of rows along the fast
// dimension: kColChunk, fewer for operands of few rows (64 x 131072 in
// 4096 chunks of 32, not 512 chunks of 256 on 64 threads each), more where
// a block row would take over 65535 pieces (the flattened grid then stays
// far below gridDim.x's limit).
std::int64_t scan_chunk(std::int64_t rows, std::int64_t cols, std::int64_t products) {
  constexpr std::int64_t kMinChunk = 16;
  const std::int64_t fill = std::max(kMinChunk, products * rows * cols / kScanThreads);
  return std::max(std::min(kColChunk, fill), (cols + 65534) / 65535);
}

// Columns per warp in the scan of contiguous rows: kContigChunk for wide
// operands (few atomics), down to kMinContigChunk for operands of few rows
// (the columns of a 131072 x 64 op(B) in 1024-column pieces by 8192 warps,
// not 8192-column pieces by 1024), more where a block row would take over
// 65535 pieces.
std::int64_t contig_chunk(std::int64_t rows, std::int64_t cols, std::int64_t products) {
  constexpr std::int64_t kContigChunk = 8192, kMinContigChunk = 512;
  const std::int64_t fill =
      std::max(kMinContigChunk, products * rows * cols / (kScanThreads / 32));
  return std::max(std::min(kContigChunk, fill), (cols + 65534) / 65535);
}

}  // namespace

namespace {

// The grid of one operand's scan (rows along the stored fast dimension, or
// stored contiguously).
ScanJob scan_job(ExView X, VectorInfo *info, std::int64_t products = 1) {
  ScanJob job{X, info, 0, 1, 0, 0};
  if (X.rows <= 0 || X.cols <= 0) return job;  // no blocks
  std::int64_t grid_y;
  if (!X.trans) {
    job.chunk = scan_chunk(X.rows, X.cols, products);
    // Rows a block: the rows rounded up to a warp, at most kThreads; the
    // rest of the block takes further chunks of the same rows.
    const int rows = int(std::min<std::int64_t>(kThreads, (X.rows + 31) / 32 * 32));
    int groups = kThreads / rows;
    while (kThreads % (groups * 32) != 0 || (kThreads / groups) < rows) --groups;
    job.groups = groups;
    job.grid_x = blocks_for(X.rows, kThreads / groups);
    grid_y = (X.cols + job.chunk * groups - 1) / (job.chunk * groups);
  } else {
    job.chunk = contig_chunk(X.rows, X.cols, products);
    job.grid_x = blocks_for(X.rows, kThreads / 32);
    grid_y = (X.cols + job.chunk - 1) / job.chunk;
  }
  // At least 4096 entries a block: no operand that fits in memory comes
  // near gridDim.x's limit (2^31 - 1), both operands' blocks together.
  job.blocks = unsigned(job.grid_x * grid_y);
  return job;
}

}  // namespace

cudaError_t launch_ex_scan_operands(cudaStream_t s, ExView A, VectorInfo *info_a, ExView Bt,
                                    VectorInfo *info_b) {
  const std::int64_t na = std::max<std::int64_t>(A.rows, 0),
                     nb = std::max<std::int64_t>(Bt.rows, 0);
  if (na + nb == 0) return cudaSuccess;
  init_info_pair_kernel<<<blocks_for(na + nb, kThreads), kThreads, 0, s>>>(info_a, na, info_b,
                                                                          nb);
  const ScanJob first = scan_job(A, info_a), second = scan_job(Bt, info_b);
  const std::uint64_t blocks = std::uint64_t(first.blocks) + second.blocks;
  if (blocks > 0)
    scan_operands_kernel<false><<<unsigned(blocks), kThreads, 0, s>>>(first, second, ExBatch{});
  return cudaGetLastError();
}

cudaError_t launch_ex_scan_batch(cudaStream_t s, ExView A, VectorInfo *info_a, ExView Bt,
                                 VectorInfo *info_b, const ExBatch &batch) {
  if (batch.count <= 0) return cudaSuccess;
  if (batch.count > 65535) return cudaErrorInvalidValue;
  const std::int64_t na = std::max<std::int64_t>(A.rows, 0) * batch.count,
                     nb = std::max<std::int64_t>(Bt.rows, 0) * batch.count;
  if (na + nb == 0) return cudaSuccess;
  init_info_pair_kernel<<<blocks_for(na + nb, kThreads), kThreads, 0, s>>>(
      info_a + batch.first * A.rows, na, info_b + batch.first * Bt.rows, nb);
  // (The threads aimed at are the whole launch's: chunks as long as one
  // product's scan of count times the entries would take.)
  const ScanJob first = scan_job(A, info_a, batch.count),
                second = scan_job(Bt, info_b, batch.count);
  const std::uint64_t blocks = std::uint64_t(first.blocks) + second.blocks;
  if (blocks > 0)
    scan_operands_kernel<true>
        <<<dim3(unsigned(blocks), unsigned(batch.count)), kThreads, 0, s>>>(first, second,
                                                                            batch);
  return cudaGetLastError();
}

cudaError_t launch_ex_batch_spans(cudaStream_t s, const VectorInfo *info_a, std::int64_t na,
                                  const VectorInfo *info_b, std::int64_t nb, int *spans) {
  const cudaError_t e = cudaMemsetAsync(spans, 0, 2 * sizeof(int), s);
  if (e != cudaSuccess || na + nb <= 0) return e;
  const unsigned grid = unsigned(std::min<std::int64_t>(blocks_for(na + nb, kThreads), 1024));
  batch_spans_kernel<<<grid, kThreads, 0, s>>>(info_a, na, info_b, nb, spans);
  return cudaGetLastError();
}

cudaError_t launch_ex_mark_rows(cudaStream_t s, ExView X, const VectorInfo *info, int w,
                                std::uint64_t *masks) {
  if (X.rows <= 0) return cudaSuccess;
  const std::int64_t words = (X.rows + kGroupRows - 1) / kGroupRows * exact::kMaskWords;
  zero_kernel<<<blocks_for(words, kThreads), kThreads, 0, s>>>(masks, words);
  if (X.cols > 0) {
    if (!X.trans) {
      const std::int64_t chunk = col_chunk(X.cols);
      const dim3 grid(blocks_for(X.rows, kThreads),
                      unsigned((X.cols + chunk - 1) / chunk));
      mark_rows_fast_kernel<<<grid, kThreads, 0, s>>>(X, info, w, masks, chunk);
    } else {
      mark_rows_contig_kernel<<<blocks_for(X.rows, kThreads / 32), kThreads, 0, s>>>(
          X, info, w, masks);
    }
  }
  return cudaGetLastError();
}

cudaError_t launch_ex_split_rows(cudaStream_t s, ExView X, const VectorInfo *info, int w,
                                 std::int64_t r0, std::int64_t nr, const SliceList &list,
                                 double *out, std::int64_t ld_out) {
  if (nr <= 0 || X.cols <= 0 || list.n == 0) return cudaSuccess;
  const std::int64_t fast = X.trans ? X.cols : nr, slow = X.trans ? nr : X.cols;
  const dim3 grid(blocks_for(fast, kThreads),
                  unsigned(std::min<std::int64_t>(slow, 65535)));
  split_rows_kernel<<<grid, kThreads, 0, s>>>(X, info, w, r0, nr, list, out, ld_out);
  return cudaGetLastError();
}

cudaError_t launch_ex_sum_block(cudaStream_t s, const ExSumArgs &a, const SliceList &la,
                                const SliceList &lb) {
  if (a.blk.bm <= 0 || a.blk.bn <= 0) return cudaSuccess;
  const dim3 grid(blocks_for(a.blk.bm, kSumThreads),
                  unsigned(std::min<std::int64_t>(a.blk.bn, 65535)));
  sum_block_kernel<<<grid, kSumThreads, 0, s>>>(a, la, lb);
  return cudaGetLastError();
}

namespace {

cudaError_t launch_residues(cudaStream_t s, ExView X, const VectorInfo *info,
                            std::int64_t r0, std::int64_t nr, int L, int span,
                            std::int64_t chunk, int chunks, std::int64_t count,
                            const ResidueOut &to) {
  if (chunk % kResidueRun != 0) return cudaErrorInvalidValue;  // ModularSplit pads to 16
  if (count > 65535) return cudaErrorInvalidValue;
  const std::int64_t padded = chunk * chunks, runs = padded / kResidueRun;
  // A block of kThreads threads: runs of one row across x, and, for short
  // rows (k of a few hundred), several rows across y, so no thread idles.
  const unsigned tx = unsigned(std::min<std::int64_t>(kThreads, (runs + 31) / 32 * 32));
  const dim3 block(tx, kThreads / tx);
  const dim3 grid(blocks_for(runs, int(tx)),
                  unsigned(std::min<std::int64_t>((nr + block.y - 1) / block.y, 65535)),
                  unsigned(count));
  // Strided rows (not X.trans) are staged through shared memory where a
  // tile's positions are mostly inside k (padded k >= kStagePositions).
  const bool staged = !X.trans && X.ld > 1 && padded >= kStagePositions;
  // (Row tiles across x: the blocks that run together read whole columns,
  // not 256 bytes of each of many.)
  const dim3 staged_grid(
      blocks_for(nr, kStageRows),
      unsigned(std::min<std::int64_t>((padded + kStagePositions - 1) / kStagePositions, 65535)),
      unsigned(count));
  exact::with_moduli_variant(L, [&](auto moduli) {
    constexpr int LMax = decltype(moduli)::value;
    // Two pieces take rows to 90 bits (phi = 1: up to 83), four to 177;
    // beyond them four, the wider rows residue_source.
    const auto launch = [&](auto pieces) {
      constexpr int P = decltype(pieces)::value;
      if (staged)
        modular_residues_staged_kernel<LMax, P>
            <<<staged_grid, kThreads, 0, s>>>(X, info, r0, nr, L, chunk, padded, to);
      else
        modular_residues_kernel<LMax, P>
            <<<grid, block, 0, s>>>(X, info, r0, nr, L, chunk, padded, to);
    };
    const int pieces = exact::pieces_for_span(span);
    if (pieces == 1)
      launch(std::integral_constant<int, 0>{});
    else if (pieces == 2)
      launch(std::integral_constant<int, 2>{});
    else
      launch(std::integral_constant<int, exact::kMaxPieces>{});
  });
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_ex_modular_residues(cudaStream_t s, ExView X, const VectorInfo *info,
                                       std::int64_t r0, std::int64_t nr, int L, int span,
                                       std::int64_t chunk, int chunks, std::int8_t *out) {
  if (nr <= 0 || L <= 0) return cudaSuccess;
  const ResidueOut to{out, L * nr * chunk, 0, ExBatchStep{nullptr, 0}, 0, 0};
  return launch_residues(s, X, info, r0, nr, L, span, chunk, chunks, 1, to);
}

cudaError_t launch_ex_modular_residues_batch(cudaStream_t s, ExView X, ExBatchStep step,
                                             std::int64_t first, std::int64_t count,
                                             const VectorInfo *info, int L, int span,
                                             std::int64_t chunk, int chunks,
                                             std::int8_t *out) {
  if (X.rows <= 0 || L <= 0 || count <= 0) return cudaSuccess;
  const std::int64_t product = L * X.rows * chunk;
  const ResidueOut to{out, count * product, product, step, first, X.rows};
  return launch_residues(s, X, info, 0, X.rows, L, span, chunk, chunks, count, to);
}

cudaError_t launch_ex_modular_fused_products(cudaStream_t s, ExView X, const VectorInfo *info,
                                             std::int64_t r0, std::int64_t nr,
                                             const std::int8_t *rb, std::int64_t rb_rows,
                                             std::int64_t nb, int L, std::int64_t chunk,
                                             int chunks, std::int32_t *P,
                                             std::int64_t pstride, int sm_count) {
  if (nr <= 0 || L <= 0) return cudaSuccess;
  if (nb < 1 || nb > kExFusedMaxCols || L > kExFusedMaxModuli || chunk % 16 != 0 ||
      chunks < 1 || chunks > 65535)
    return cudaErrorInvalidValue;
  const cudaError_t e =
      cudaMemsetAsync(P, 0, std::size_t(L) * std::size_t(pstride) * sizeof(std::int32_t), s);
  if (e != cudaSuccess) return e;
  // Pieces of each chunk so that about 16 blocks per multiprocessor run,
  // none shorter than kMinRange positions (a thread's atomics and setup
  // amortised).
  constexpr std::int64_t kMinRange = 256;
  const std::int64_t row_blocks = (nr + kFusedThreads - 1) / kFusedThreads;
  const std::int64_t want_blocks = std::int64_t(std::max(sm_count, 1)) * 16;
  std::int64_t pieces = std::max<std::int64_t>(
      1, (want_blocks + row_blocks * chunks - 1) / (row_blocks * chunks));
  pieces = std::min<std::int64_t>(pieces, 65535 / chunks);
  std::int64_t range = (chunk + pieces - 1) / pieces;
  range = std::min(chunk, std::max(kMinRange, (range + 15) / 16 * 16));
  pieces = (chunk + range - 1) / range;
  const dim3 grid(unsigned(row_blocks), unsigned(chunks * pieces));
  // Every L <= kExFusedMaxModuli then takes a variant that has a fused
  // kernel (none is skipped below).
  static_assert(exact::is_moduli_variant(kExFusedMaxModuli),
                "the fused products' moduli limit must be a compiled moduli count");
  const auto *rbw = reinterpret_cast<const std::uint32_t *>(rb);
  exact::with_moduli_variant(L, [&](auto moduli) {
    constexpr int LMax = decltype(moduli)::value;
    if constexpr (LMax <= kExFusedMaxModuli) {
      static_assert(kExFusedMaxCols == 4, "one kernel per column count below");
      const auto launch = [&](auto cols) {
        modular_fused_products_kernel<LMax, decltype(cols)::value>
            <<<grid, kFusedThreads, 0, s>>>(X, info, r0, nr, rbw, rb_rows, L, chunk, range,
                                            pieces, P, pstride);
      };
      switch (nb) {
        case 1: launch(std::integral_constant<int, 1>{}); break;
        case 2: launch(std::integral_constant<int, 2>{}); break;
        case 3: launch(std::integral_constant<int, 3>{}); break;
        default: launch(std::integral_constant<int, 4>{}); break;
      }
    }
  });
  return cudaGetLastError();
}

cudaError_t launch_ex_modular_tile_products(cudaStream_t s, ExView X,
                                            const VectorInfo *info_x, std::int64_t i0,
                                            std::int64_t bm, ExView Y, const VectorInfo *info_y,
                                            std::int64_t j0, std::int64_t bn, int L,
                                            std::int64_t chunk, int chunks, int slots,
                                            std::int32_t *P, std::int64_t pstride) {
  if (bm <= 0 || bn <= 0 || L <= 0) return cudaSuccess;
  if (L > exact::kMaxModuli || chunk <= 0 || chunk > exact::kInt32ChunkK || chunks < 1 ||
      slots < 1 || slots > chunks || slots > 65535 ||
      std::int64_t(chunks - 1) * chunk >= X.cols || X.cols != Y.cols)
    return cudaErrorInvalidValue;
  const std::int64_t tiles =
      ((bm + kExTileRows - 1) / kExTileRows) * ((bn + kExTileRows - 1) / kExTileRows);
  const std::int64_t groups = (L + kExTileModuli - 1) / kExTileModuli;
  if (tiles * groups > INT_MAX) return cudaErrorInvalidValue;
  if (slots > 1) {  // the slots' sums accumulate into P
    const cudaError_t e = cudaMemsetAsync(P, 0, sizeof(std::int32_t) * L * pstride, s);
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(unsigned(tiles * groups), unsigned(slots));
  modular_tile_products_kernel<<<grid, kTileThreads, 0, s>>>(X, info_x, i0, bm, Y, info_y, j0,
                                                             bn, L, chunk, chunks, P, pstride);
  return cudaGetLastError();
}

cudaError_t launch_ex_modular_fold_slots(cudaStream_t s, std::int32_t *P, int L, int slots,
                                         std::int64_t pstride, std::int64_t entries) {
  if (entries <= 0 || L <= 0 || slots <= 1) return cudaSuccess;
  const dim3 grid(blocks_for(entries, kThreads), unsigned(L));
  modular_fold_slots_kernel<<<grid, kThreads, 0, s>>>(P, L, slots, pstride, entries);
  return cudaGetLastError();
}

cudaError_t launch_ex_modular_reduce(cudaStream_t s, std::int32_t *P, int L, int slots,
                                     std::int64_t pstride, std::int64_t entries) {
  if (entries <= 0 || L <= 0 || slots <= 0) return cudaSuccess;
  const dim3 grid(blocks_for(entries, kThreads), unsigned(slots * L));
  modular_reduce_kernel<<<grid, kThreads, 0, s>>>(P, L, pstride, entries);
  return cudaGetLastError();
}

// Columns of the second pass's grid: a thread takes kSumEntries entries of
// its row where the launch has 2^22 entries or more (its setup then counts
// once for them), one each below (small blocks keep their threads). The
// first pass has its own grid (kFractionRows).
constexpr std::int64_t kMaxGridY = 65535;
unsigned sum_grid_y(std::int64_t bm, std::int64_t bn, std::int64_t products) {
  constexpr std::int64_t kSumEntries = 4, kManyEntries = std::int64_t(1) << 22;
  const std::int64_t per = bm * bn * products >= kManyEntries ? kSumEntries : 1;
  return unsigned(std::min<std::int64_t>((bn + per - 1) / per, 65535));
}

cudaError_t launch_ex_modular_sum_block(cudaStream_t s, const ExModularSumArgs &a) {
  if (a.blk.bm <= 0 || a.blk.bn <= 0) return cudaSuccess;
  if (a.digits) return cudaErrorInvalidValue;
  const dim3 grid(blocks_for(a.blk.bm, kSumThreads), sum_grid_y(a.blk.bm, a.blk.bn, 1));
  exact::with_moduli_variant(a.crt.L, [&](auto moduli) {
    constexpr int LMax = decltype(moduli)::value;
    // A column per row of the grid, in launches of at most 65535 columns.
    for (std::int64_t j = 0; j < a.blk.bn; j += kMaxGridY) {
      const std::int64_t cols = std::min(kMaxGridY, a.blk.bn - j);
      const dim3 fast_grid(blocks_for(a.blk.bm, kFractionRows<LMax, std::int32_t>),
                           unsigned(cols));
      modular_round_fraction_kernel<LMax><<<fast_grid, kSumThreads, 0, s>>>(a, j, j + cols);
    }
    modular_round_general_kernel<LMax><<<grid, kSumThreads, 0, s>>>(a);
  });
  return cudaGetLastError();
}

cudaError_t launch_ex_modular_sum_batch(cudaStream_t s, const ExModularSumArgs &a,
                                        const ExBatch &batch) {
  if (a.blk.bm <= 0 || a.blk.bn <= 0 || batch.count <= 0) return cudaSuccess;
  if (batch.count > 65535 || a.blk.i0 != 0 || a.blk.j0 != 0) return cudaErrorInvalidValue;
  if (a.blk.bn > kMaxGridY) return cudaErrorInvalidValue;  // (bn <= kModularBlockCap)
  // (Digits in words of four rows: the columns' stride is a multiple of 16.)
  if (a.digits && !whole_digit_words(static_cast<const std::int8_t *>(a.P), a.pstride, 16))
    return cudaErrorInvalidValue;
  const dim3 grid(blocks_for(a.blk.bm, kSumThreads),
                  sum_grid_y(a.blk.bm, a.blk.bn, batch.count), unsigned(batch.count));
  const std::int64_t p_step = a.crt.L * a.pstride;
  exact::with_moduli_variant(a.crt.L, [&](auto moduli) {
    constexpr int LMax = decltype(moduli)::value;
    const auto launch = [&](auto product) {
      using Product = decltype(product);
      const dim3 fast_grid(blocks_for(a.blk.bm, kFractionRows<LMax, Product>),
                           unsigned(a.blk.bn), grid.z);
      modular_round_fraction_batch_kernel<LMax, Product><<<fast_grid, kSumThreads, 0, s>>>(
          a, batch, p_step);
      modular_round_general_batch_kernel<LMax, Product><<<grid, kSumThreads, 0, s>>>(a, batch,
                                                                                     p_step);
    };
    if (a.digits)
      launch(std::int8_t{});
    else
      launch(std::int32_t{});
  });
  return cudaGetLastError();
}

namespace testing {
cudaError_t launch_digit_fraction_sums(cudaStream_t s, const std::int8_t *P,
                                       std::int64_t pstride, int L, std::int64_t rows,
                                       double *sums) {
  if (rows <= 0) return cudaSuccess;
  if (L < 1 || L > exact::kMaxModuli || pstride < rows ||
      !whole_digit_words(P, pstride, pstride))
    return cudaErrorInvalidValue;
  exact::with_moduli_variant(L, [&](auto moduli) {
    constexpr int LMax = decltype(moduli)::value;
    digit_fraction_sums_kernel<LMax>
        <<<blocks_for(rows, kSumThreads), kSumThreads, 0, s>>>(P, pstride, L, rows, sums);
  });
  return cudaGetLastError();
}
}  // namespace testing

}  // namespace xn
