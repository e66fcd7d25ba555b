// symv_variants.h - the SYMV variants this build has and the tuned defaults
// (Nath et al., SC'11, §6.1), over the variant list of
// numerics/symv_variant_list.h: the lookups the CUDA-free parts of the
// library (options, workspace query, tests) use.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.h"
#include "numerics/symv_variant_list.h"

namespace xn {

// Every variant of both lists, whatever the build (their layouts are data:
// the host tests check them all).
std::size_t symv_listed_count();
const SymvVariant &symv_listed_variant(std::size_t i);
// The variants compiled into this build, in table order.
std::size_t symv_compiled_count();
const SymvVariant &symv_compiled_variant(std::size_t i);
// Whether variant `id` is compiled into this build.
bool symv_variant_compiled(int id);
// Whether variant v's shared memory fits one block in that precision.
bool symv_variant_fits(const SymvVariant &v, bool is_double);
// The tuned default for a precision, order n and triangle.
const SymvVariant &symv_default_variant(bool is_double, std::int64_t n, Fill uplo);
// Variant `id`, or the tuned default for (precision, n, uplo) when id is 0,
// not compiled or does not fit that precision.
const SymvVariant &symv_variant(int id, bool is_double, std::int64_t n, Fill uplo);

// The decomposition a variant uses for an n x n matrix.
inline symv::Layout symv_layout(const SymvVariant &v, std::int64_t n, Fill uplo) {
  return symv_variant_layout(v, n, uplo == Fill::Lower);
}
// Elements of workspace a call of variant v on an n x n matrix needs.
inline std::size_t symv_workspace_elems(const SymvVariant &v, std::int64_t n, Fill uplo) {
  return n > 0 ? std::size_t(symv::workspace_elems(symv_layout(v, n, uplo))) : 0;
}

}  // namespace xn
