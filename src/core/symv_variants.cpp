// symv_variants.cpp - the compiled SYMV variants and the tuned defaults.
#include "core/symv_variants.h"

namespace xn {

namespace {

#define XN_SYMV_ROW(id, nb, cw, st, minb, chunk, pieces, tensor, regs) \
  SymvVariant{id, nb, cw, st, minb, chunk, pieces, tensor, regs},
const SymvVariant kCompiled[] = {XN_SYMV_DEFAULT_VARIANTS(XN_SYMV_ROW)
#ifdef XN_BUILD_TUNING
                                     XN_SYMV_TUNING_VARIANTS(XN_SYMV_ROW)
#endif
};
#undef XN_SYMV_ROW

constexpr std::size_t kCompiledCount = sizeof kCompiled / sizeof kCompiled[0];

#define XN_SYMV_ROW(id, nb, cw, st, minb, chunk, pieces, tensor, regs) \
  SymvVariant{id, nb, cw, st, minb, chunk, pieces, tensor, regs},
const SymvVariant kListed[] = {XN_SYMV_DEFAULT_VARIANTS(XN_SYMV_ROW)
                                   XN_SYMV_TUNING_VARIANTS(XN_SYMV_ROW)};
#undef XN_SYMV_ROW

// Ids are unique across both lists and kSymvMaxVariantId is the largest.
#define XN_SYMV_ID(id, ...) id,
constexpr int kAllIds[] = {XN_SYMV_DEFAULT_VARIANTS(XN_SYMV_ID)
                               XN_SYMV_TUNING_VARIANTS(XN_SYMV_ID)};
#undef XN_SYMV_ID
constexpr bool ids_unique_and_bounded() {
  constexpr std::size_t n = sizeof kAllIds / sizeof kAllIds[0];
  for (std::size_t i = 0; i < n; ++i) {
    if (kAllIds[i] < 1 || kAllIds[i] > kSymvMaxVariantId) return false;
    for (std::size_t j = i + 1; j < n; ++j)
      if (kAllIds[i] == kAllIds[j]) return false;
  }
  return n == std::size_t(kSymvMaxVariantId);
}
static_assert(ids_unique_and_bounded(),
              "SYMV variant ids must be 1 .. kSymvMaxVariantId");

// Tuned defaults (docs/performance.md, "SYMV"): the register tile kernel in
// both precisions. It beat the ring kernel at every order measured on the
// H200, 4096 to 32768, or came within 1.2 % of it.
// - single: 33 (8 warps of 16 columns) at every order. Where nb = 128 does
//   not divide n, the 4-warp variants 34 and 36 lose 10-50 % below
//   n = 12000; where it divides, they lead 33 by at most 2.8 %.
// - double: 35 (nb 64, four blocks per SM) up to n = 8192, then 34.
constexpr int kDefaultVariantSmallD = 35;
constexpr int kDefaultVariantD = 34;
constexpr std::int64_t kSmallDMaxN = 8192;
constexpr int kDefaultVariantS = 33;

const SymvVariant *find_compiled(int id) {
  for (const SymvVariant &v : kCompiled)
    if (v.id == id) return &v;
  return nullptr;
}

}  // namespace

std::size_t symv_listed_count() { return sizeof kListed / sizeof kListed[0]; }
const SymvVariant &symv_listed_variant(std::size_t i) { return kListed[i]; }
std::size_t symv_compiled_count() { return kCompiledCount; }
const SymvVariant &symv_compiled_variant(std::size_t i) { return kCompiled[i]; }
bool symv_variant_compiled(int id) { return find_compiled(id) != nullptr; }

bool symv_variant_fits(const SymvVariant &v, bool is_double) {
  const std::int64_t elem = is_double ? 8 : 4;
  // The register kernel's row and column sums: static shared memory (48 KiB
  // at most).
  if (v.regs) return (v.nb * v.nb / v.cols_per_warp + v.nb) * elem <= 48 * 1024;
  // The tile ring must fit the H100/H200 opt-in shared memory per block.
  return symv::tile_smem_bytes(v.nb, v.cols_per_warp, v.stages, v.pieces, elem) <=
         std::int64_t(227) * 1024;
}

const SymvVariant &symv_default_variant(bool is_double, std::int64_t n, Fill) {
  if (is_double)
    return *find_compiled(n <= kSmallDMaxN ? kDefaultVariantSmallD : kDefaultVariantD);
  return *find_compiled(kDefaultVariantS);
}

const SymvVariant &symv_variant(int id, bool is_double, std::int64_t n, Fill uplo) {
  const SymvVariant *v = find_compiled(id);
  if (!v || !symv_variant_fits(*v, is_double))
    return symv_default_variant(is_double, n, uplo);
  return *v;
}

}  // namespace xn
