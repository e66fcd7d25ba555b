// cpu_exdgemm.cpp - the CPU backend of exdgemm (see cpu_exdgemm.h).
#include "backend/cpu/cpu_exdgemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "core/exdgemm.h"
#include "numerics/exdgemm_entry.h"
#include "numerics/modular_crt.h"

namespace xn {

namespace {

using exact::VectorInfo;

class CpuExBackend {
 public:
  // The modular engine with its products done by OpenBLAS on residues held
  // as doubles: every dot product is an integer below k 127^2 < 2^53, so
  // exact in any order. One such product costs about one slice product.
  static constexpr bool kHasModular = true;
  // The CPU stores both operands' residues (its products read them many
  // times).
  static constexpr int kFusedMaxCols = 0, kFusedMaxModuli = 0, kTileMaxRows = 0;
  static constexpr index_t kModularBlockCap = 0;  // blocks from the budget alone
  std::size_t residue_bytes() const { return sizeof(double); }
  std::size_t product_bytes() const { return sizeof(double); }
  // Any chunk of k below 2^38 keeps every partial sum (|r| <= 127 carried,
  // plus chunk 127^2) below 2^53: k never needs cutting in practice. One
  // BLAS call at a time: no slots for parallelism.
  index_t modular_max_chunk() const { return index_t(1) << 38; }
  int modular_slots(index_t, index_t, int) const { return 1; }
  double modular_product_cost() const { return 1.0; }

  CpuExBackend(double alpha, double beta) : alpha_(alpha), beta_(beta) {}

  void *head_space(std::size_t bytes) { return grow(head_, bytes); }
  void *body_space(std::size_t bytes) { return grow(body_, bytes); }
  void *head_address() { return head_.data(); }  // separate regions: never moves
  std::size_t workspace_cap() const { return SIZE_MAX; }
  bool capturing() const { return false; }  // no CUDA graph on the CPU
  int capture_span_hint() const { return 0; }
  double host_alpha() const { return alpha_; }
  double host_beta() const { return beta_; }
  Status wait() const { return Status::Ok; }  // synchronous: every phase is done

  Status scan_operands(MatView<const double> A, VectorInfo *info_a, MatView<const double> Bt,
                       VectorInfo *info_b) {
    scan_rows(A, info_a);
    scan_rows(Bt, info_b);
    return Status::Ok;
  }

  Status mark_rows(MatView<const double> X, const VectorInfo *info, int w,
                   std::uint64_t *masks) {
    const index_t groups = (X.rows + kGroupRows - 1) / kGroupRows;
    for (index_t g = 0; g < groups * exact::kMaskWords; ++g) masks[g] = 0;
    for (index_t j = 0; j < X.cols; ++j)
      for (index_t i = 0; i < X.rows; ++i)
        exact::mark_nonzero_digits(exact::decode(*X.at(i, j)), info[i].top + 1, w,
                                   masks + (i / kGroupRows) * exact::kMaskWords);
    return Status::Ok;
  }

  Status fetch_summaries(const VectorInfo *ia, std::vector<VectorInfo> &hia,
                         const VectorInfo *ib, std::vector<VectorInfo> &hib,
                         double *alpha, double *beta) {
    std::copy(ia, ia + hia.size(), hia.begin());
    std::copy(ib, ib + hib.size(), hib.begin());
    *alpha = alpha_;
    *beta = beta_;
    return Status::Ok;
  }
  Status fetch_masks(const std::uint64_t *ma, std::vector<std::uint64_t> &ha,
                     const std::uint64_t *mb, std::vector<std::uint64_t> &hb) {
    std::copy(ma, ma + ha.size(), ha.begin());
    std::copy(mb, mb + hb.size(), hb.begin());
    return Status::Ok;
  }

  Status scale_by_beta(MatView<double> C) { return scale(C, beta_); }
  std::size_t automatic_budget() const { return std::size_t(1) << 30; }

  // C = beta C (exact::beta_times_c, the GPU's rule); beta = 1 writes
  // nothing (reference DGEMM's quick return).
  Status scale(MatView<double> C, double beta) {
    if (beta == 1.0) return Status::Ok;
    for (index_t j = 0; j < C.cols; ++j)
      for (index_t i = 0; i < C.rows; ++i) {
        double *c = C.at(i, j);
        *c = exact::beta_times_c(beta, beta != 0.0 ? *c : 0.0);
      }
    return Status::Ok;
  }

  Status split_rows(MatView<const double> X, const VectorInfo *info, int w, index_t r0,
                    index_t nr, const SliceList &list, MatView<double> out) {
    for (index_t j = 0; j < X.cols; ++j)
      for (index_t i = 0; i < nr; ++i) {
        const exact::Decoded d = exact::decode(*X.at(r0 + i, j));
        const int e = info[r0 + i].top + 1;
        for (int a = 0; a < list.n; ++a)
          *out.at(a * nr + i, j) = exact::slice_digit(d, e, list.idx[a], w);
      }
    return Status::Ok;
  }

  Status gemm_exact(MatView<const double> A, MatView<const double> B, MatView<double> C) {
    cblas_dgemm(CblasColMajor, A.trans ? CblasTrans : CblasNoTrans,
                B.trans ? CblasTrans : CblasNoTrans, blasint(C.rows), blasint(C.cols),
                blasint(A.cols), 1.0, A.p, blasint(A.ld), B.p, blasint(B.ld), 0.0, C.p,
                blasint(C.ld));
    return Status::Ok;
  }

  // Chunk-major residues (ex_detail::ModularSplit): chunk c, modulus l,
  // row i at ((c L + l) nr + i) chunk.
  Status modular_residues(MatView<const double> X, const VectorInfo *info, index_t r0,
                          index_t nr, int L, int /*span: one code for every row*/,
                          const ex_detail::ModularSplit &sp, void *out) {
    double *o = static_cast<double *>(out);
    for (index_t i = 0; i < nr; ++i) {
      const int low = info[r0 + i].low;
      for (index_t pp = 0; pp < index_t(sp.chunks) * sp.chunk; ++pp) {
        const index_t c = pp / sp.chunk, q = pp - c * sp.chunk;
        const exact::ResidueSource src = exact::residue_source(
            pp < X.cols ? exact::decode(*X.at(r0 + i, pp)) : exact::Decoded{}, low);
        for (int l = 0; l < L; ++l)
          o[((c * L + l) * nr + i) * sp.chunk + q] = exact::modular_residue_of(
              src, l, exact::kModularTables, exact::kModularTables);
      }
    }
    return Status::Ok;
  }

  Status modular_products(const void *ra, const void *rb, int count, index_t bm,
                          index_t bn, index_t rb_rows, index_t chunk, void *P,
                          index_t pstride, bool accumulate) {
    const double *a = static_cast<const double *>(ra);
    const double *b = static_cast<const double *>(rb);
    double *p = static_cast<double *>(P);
    for (int x = 0; x < count; ++x)
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, blasint(bm), blasint(bn),
                  blasint(chunk), 1.0, a + index_t(x) * bm * chunk, blasint(chunk),
                  b + index_t(x) * rb_rows * chunk, blasint(chunk), accumulate ? 1.0 : 0.0,
                  p + index_t(x) * pstride, blasint(bm));
    return Status::Ok;
  }

  Status modular_fold_slots(void *P, int L, int slots, index_t pstride, index_t entries) {
    double *p = static_cast<double *>(P);
    for (int l = 0; l < L; ++l)
      for (index_t e = 0; e < entries; ++e)
        p[index_t(l) * pstride + e] = exact::fold_slots(
            p + index_t(l) * pstride + e, slots, index_t(L) * pstride, l, exact::kModularTables);
    return Status::Ok;
  }

  Status modular_reduce(void *P, int L, int slots, index_t pstride, index_t entries) {
    double *p = static_cast<double *>(P);
    for (int s = 0; s < slots; ++s)
      for (int l = 0; l < L; ++l) {
        double *q = p + (index_t(s) * L + l) * pstride;
        for (index_t e = 0; e < entries; ++e)
          q[e] = exact::symmetric_residue(std::int64_t(q[e]), l, exact::kModularTables);
      }
    return Status::Ok;
  }

  Status modular_sum_block(MatView<const double> A, MatView<const double> B,
                           MatView<double> C, const VectorInfo *ia, const VectorInfo *ib,
                           index_t i0, index_t bm, index_t j0, index_t bn, int L,
                           index_t pstride, int cap_bits, int log2_k, void *P,
                           double alpha, double beta, std::int64_t *wide_count) {
    const int cap = 2 * exact::kMaxLimbs + 2;
    if (scratch_.size() < std::size_t(cap)) scratch_.resize(std::size_t(cap));
    const double *prods = static_cast<const double *>(P);
    const exact::CrtBasis &basis = exact::crt_basis(L);
    std::int64_t wide_n = 0;
    // The GPU's variant (the same arithmetic, compiled for the same LMax).
    exact::with_moduli_variant(L, [&](auto moduli) {
      constexpr int LMax = decltype(moduli)::value;
      for (index_t j = 0; j < bn; ++j)
        for (index_t i = 0; i < bm; ++i) {
          const index_t gi = i0 + i, gj = j0 + j;
          if (exact::modular_over_range(ia[gi], ib[gj], log2_k, cap_bits)) {
            const exact::DirectTerms X{exact::entry_operands(A, B, ia[gi], ib[gj], gi, gj)};
            wide_n += store_entry(A, B, C, ia[gi], ib[gj], gi, gj, X, alpha, beta, cap);
            continue;
          }
          // The GPU's order: the fraction form, then the exact limbs.
          double *c = C.at(gi, gj);
          const double cv = beta != 0.0 ? *c : 0.0;
          double r = 0.0;
          if (exact::finite_exact_case(ia[gi], ib[gj], alpha, beta, cv) &&
              exact::entry_round_by_fraction<LMax>(prods + i + j * bm, pstride, ia[gi], ib[gj],
                                                   basis, exact::kModularTables, alpha, beta, cv,
                                                   &r)) {
            *c = r;
            continue;
          }
          const auto X = exact::entry_modular_terms<LMax>(
              prods + i + j * bm, pstride, ia[gi], ib[gj], basis, exact::kModularTables);
          wide_n += store_entry(A, B, C, ia[gi], ib[gj], gi, gj, X, alpha, beta, cap);
        }
    });
    *wide_count += wide_n;
    return Status::Ok;
  }

  Status sum_block(MatView<const double> A, MatView<const double> B, MatView<double> C,
                   const VectorInfo *ia, const VectorInfo *ib, int w, index_t i0,
                   index_t bm, index_t j0, index_t bn, const SliceList &la,
                   const SliceList &lb, MatView<const double> P, double alpha,
                   double beta, std::int64_t *wide_count) {
    const int cap = exact::entry_terms_needed(la.n, lb.n);
    if (scratch_.size() < std::size_t(cap)) scratch_.resize(std::size_t(cap));
    std::int64_t wide_n = 0;
    for (index_t j = 0; j < bn; ++j)
      for (index_t i = 0; i < bm; ++i) {
        const index_t gi = i0 + i, gj = j0 + j;
        // No slice on one side (no nonzero finite entry): no products at all.
        const double *pij = la.n && lb.n ? P.p + i + j * P.ld : nullptr;
        const exact::SliceTerms X{exact::EntryProducts{pij, bm, bn * P.ld, la.n, lb.n,
                                                       la.idx, lb.idx},
                                  ia[gi].top + 1, ib[gj].top + 1, w};
        wide_n += store_entry(A, B, C, ia[gi], ib[gj], gi, gj, X, alpha, beta, cap);
      }
    *wide_count += wide_n;
    return Status::Ok;
  }

 private:
  // C(gi, gj) = RN(alpha X + beta c) for X given by an engine's terms;
  // whether the wide path was taken.
  template <class Terms>
  bool store_entry(MatView<const double> A, MatView<const double> B, MatView<double> C,
                   const VectorInfo &ia, const VectorInfo &ib, index_t gi, index_t gj,
                   const Terms &X, double alpha, double beta, int cap) {
    bool wide = false;
    double *c = C.at(gi, gj);
    *c = exact::exact_entry(X, exact::entry_operands(A, B, ia, ib, gi, gj), alpha,
                            beta, c, scratch_.data(), cap, &wide);
    return wide;
  }
  static void scan_rows(MatView<const double> X, VectorInfo *info) {
    for (index_t i = 0; i < X.rows; ++i) exact::vector_info_init(info[i]);
    for (index_t j = 0; j < X.cols; ++j)
      for (index_t i = 0; i < X.rows; ++i)
        exact::vector_info_add(info[i], exact::decode(*X.at(i, j)));
  }

  static void *grow(std::vector<double> &v, std::size_t bytes) {
    try {
      // At least one element: a request of 0 bytes still gets a valid pointer.
      if (v.size() * 8 < bytes || v.empty()) v.resize(std::max<std::size_t>((bytes + 7) / 8, 1));
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
    return v.data();
  }
  double alpha_, beta_;
  std::vector<double> head_, body_, scratch_;
};

}  // namespace

Status cpu_exdgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double *A, std::int64_t lda,
                   const double *B, std::int64_t ldb, double beta, double *C,
                   std::int64_t ldc, std::size_t budget, std::int64_t force_block,
                   ExdgemmReport *info, ExEngine engine) {
  Options opt;
  opt.exdgemm_workspace_limit = std::int64_t(budget);
  opt.exdgemm_block = force_block;
  opt.exdgemm_engine = std::int64_t(engine);
  return cpu_exdgemm(trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, opt,
                     info);
}

Status cpu_exdgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double *A, std::int64_t lda,
                   const double *B, std::int64_t ldb, double beta, double *C,
                   std::int64_t ldc, const Options &opt, ExdgemmReport *info) {
  ExdgemmReport local;
  CpuExBackend be(alpha, beta);
  return exdgemm_driver(be, MatView<const double>{A, m, k, lda, trans_a},
                        MatView<const double>{B, k, n, ldb, trans_b},
                        MatView<double>{C, m, n, ldc, false}, alpha == 0.0, opt,
                        info ? info : &local);
}

}  // namespace xn
