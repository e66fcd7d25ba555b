// cpu_exdgemm.h - the CPU backend of exdgemm: host loops over the shared
// numerics (numerics/ozaki_split.h, numerics/exdgemm_entry.h) and OpenBLAS
// for the slice products (exact: every partial sum is an integer below 2^53, so
// OpenBLAS's order and FMAs cannot change it).
#pragma once

#include <cstdint>

#include "core/exdgemm.h"
#include "core/options.h"
#include "core/types.h"

namespace xn {

// C = RN(alpha op(A) op(B) + beta C), column-major, for valid arguments
// (m, n >= 0; any k; beta == 0 never reads C; alpha == 0 or k == 0 never
// reads A or B), with the exdgemm options of `opt` (budget 0 = 1 GiB).
// `info` may be null. The same driver as the GPU's (core/exdgemm.h,
// exdgemm_driver).
Status cpu_exdgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double *A, std::int64_t lda,
                   const double *B, std::int64_t ldb, double beta, double *C,
                   std::int64_t ldc, const Options &opt, ExdgemmReport *info);

// The same with the table's defaults but `budget` (workspace bytes),
// `force_block` (XN_OPT_EXDGEMM_BLOCK) and `engine` (XN_OPT_EXDGEMM_ENGINE).
Status cpu_exdgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double *A, std::int64_t lda,
                   const double *B, std::int64_t ldb, double beta, double *C,
                   std::int64_t ldc, std::size_t budget, std::int64_t force_block,
                   ExdgemmReport *info, ExEngine engine = ExEngine::Auto);

}  // namespace xn
