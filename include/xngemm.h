/*
 * xngemm.h - xNGEMM: faster and more accurate matrix products for NVIDIA GPUs.
 *
 * One C header for C and C++ callers. Two families of entry points:
 *
 *  1. Device API, cuBLAS-compatible. Each routine takes exactly the parameters
 *     of the cuBLAS routine it stands beside, honours the handle's stream and
 *     pointer mode, and returns the same cublasStatus_t for the same bad
 *     argument. Rename the call, link -lxngemm, done.
 *
 *        cublasDgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc)
 *     -> xnDngemm  (h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc)
 *
 *  2. Host API, the BLAS extension of Badin et al. (ICS'13, section 6): the
 *     Fortran 77 symbols sngemm_/dngemm_ with the SGEMM/DGEMM argument list,
 *     and cblas_sngemm/cblas_dngemm with the CBLAS argument list. They take host
 *     memory; with a GPU present they compute there (copy in, compute, copy
 *     out), otherwise on the CPU. Under XN_DEVICE=auto (the default) products
 *     smaller than 2*256^3 flops stay on the CPU, where the copies would cost
 *     more than they save; XN_DEVICE=cpu|gpu forces the choice.
 *     Bad arguments are reported through xerbla_ as reference BLAS does.
 *
 * THE NON-NEGATIVE CONTRACT (the "N" in xNGEMM). xnSngemm/xnDngemm and the
 * host ?ngemm routines are meant for op(A) >= 0 and op(B) >= 0 elementwise.
 * They run Winograd's variant of Strassen's algorithm over cuBLAS (or
 * OpenBLAS) leaf products with a schedule that writes C only by assignment or
 * addition (Badin et al., ICS'13, Table 1). On non-negative data this is faster than the
 * classical product for large sizes and more accurate than a GPU's "preload"
 * GEMM, because the recursion breaks the long accumulation chains. On data
 * with mixed signs the result is still a correct product, but its error is
 * that of a fast (Strassen-like) algorithm: normwise, not componentwise, and
 * it can be much larger than cuBLAS's. Enable XN_OPT_CHECK_NONNEG to have
 * every call scan A and B and fall back to the classical product when it
 * finds a negative entry.
 *
 * Scales. The accuracy claim holds for non-negative data of one scale
 * (blocks of comparable size). Winograd's pre-additions mix quadrants
 * (S2 = A21 + A22 - A11, ...), so where their scales differ an entry of C
 * can carry an error of order u k times the largest products of entries of
 * A and B rather than u k times its own size. Without XN_OPT_CHECK_NONNEG
 * the bound at L levels is normwise, first order in u:
 *   |C^ - C|_ij <= N_L(k) u |alpha| max|op(A)| max|op(B)|,
 * N_L(k) ~ (9/4) 4.5^(L-1) k^2 (its leading term).
 * With XN_OPT_CHECK_NONNEG the same scan also takes the maxima of op(A)'s
 * and op(B)'s blocks on a grid of 2^g x 2^g blocks (g = the planned depth,
 * at most 4) and lowers the depth (xnGetLastLevels) until every block of C
 * has an error bound at most twice that of data of one scale, relative to
 * the classical bound gamma_k |A||B| computed from its blocks' maxima
 * (entries far below their blocks' maxima are held to their blocks'
 * bound). NaN or Inf in the inputs: the depth is not lowered.
 *
 * NaN and Inf: a NaN or Inf in A or B always shows up as NaN or Inf in the
 * outputs the classical product would make non-finite (only +, -, * are used,
 * none of which turns a non-finite value into a finite one). Winograd's
 * cancellations (e.g. M1 + M6 with M6 containing (S1 - A11)*T2) can turn an
 * Inf that the classical product would return into NaN (Inf - Inf), and can
 * spread NaN to entries of other quadrants of C in the same relative
 * row/column that the classical product would leave finite.
 *
 * Overflow: the pre-additions (e.g. A21 + A22) can overflow for entries
 * above about DBL_MAX/4 (FLT_MAX/4) where the classical product would not.
 */
#ifndef XNGEMM_H
#define XNGEMM_H

#include <cublas_v2.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XNGEMM_VERSION_MAJOR 0
#define XNGEMM_VERSION_MINOR 1
#define XNGEMM_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Device API (cuBLAS-compatible)                                           */
/* ------------------------------------------------------------------------ */

/**
 * C = alpha * op(A) * op(B) + beta * C for non-negative op(A), op(B), single
 * precision. Parameters, pointer modes, stream and status codes exactly as
 * cublasSgemm: A, B, C in device memory, column-major; alpha and beta in host
 * or device memory according to the handle's pointer mode. beta = 0 never
 * reads C. Returns CUBLAS_STATUS_NOT_INITIALIZED for a NULL handle and
 * CUBLAS_STATUS_INVALID_VALUE for a bad argument, leaving C untouched.
 * The call is asynchronous on the handle's stream, like cuBLAS.
 */
cublasStatus_t xnSngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k, const float *alpha,
                        const float *A, int lda, const float *B, int ldb,
                        const float *beta, float *C, int ldc);

/** Double precision version of xnSngemm; stands beside cublasDgemm. */
cublasStatus_t xnDngemm(cublasHandle_t handle, cublasOperation_t transa,
                        cublasOperation_t transb, int m, int n, int k,
                        const double *alpha, const double *A, int lda, const double *B,
                        int ldb, const double *beta, double *C, int ldc);

/**
 * STRASSEN AND WINOGRAD GEMM FOR GENERAL INPUTS. C = alpha * op(A) * op(B) +
 * beta * C by Strassen's algorithm (xnSgemmStrassen, xnDgemmStrassen) or by
 * Winograd's variant of it (xnSgemmWinograd, xnDgemmWinograd), applied
 * recursively over cuBLAS leaf products (Li, Ranka, Sahni, ICPADS'11):
 * about 7/8 of the classical product's multiplications per level of
 * recursion, for any signs of A and B. Parameters, pointer modes, stream and
 * status codes exactly as cublasSgemm/cublasDgemm; beta = 0 never reads C;
 * C is untouched on a bad argument.
 *
 * ACCURACY. These are fast algorithms, not the classical one: the error is
 * bounded normwise, max|C - C^| <= f * u * max|A| * max|B| (+ O(u^2)), with
 * f = (n/n0)^log2(12) (n0^2 + 5 n0) - 5n for Strassen and
 * (n/n0)^log2(18) (n0^2 + 6 n0) - 6n for Winograd (n0 the leaf size;
 * Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section
 * 23.2.2), not componentwise: an entry much smaller than the others of its
 * row of A and column of B may lose all its digits. On uniform random data
 * the maximum error at the default depths was 1.1-8x cuBLAS's for Strassen
 * and 3-24x for Winograd on an H200, more on badly scaled data
 * (docs/accuracy.md). Use them where speed matters more than the last
 * digits; for non-negative data xnSngemm/xnDngemm are as fast and more
 * accurate than cuBLAS.
 *
 * Depth: a level of recursion is taken while the product's dimensions stay
 * above the leaf size (XN_OPT_STRASSEN_LEAF_* / XN_OPT_WINOGRAD_LEAF_*) and
 * (m n k)^(1/3) is at least the crossover (..._MIN_SIZE_*); below it the call
 * is exactly cuBLAS's GEMM, bit for bit. Odd and rectangular sizes are
 * peeled (the recursion runs on the largest part whose dimensions are
 * multiples of 2^levels, thin cuBLAS products finish the rest).
 *
 * Workspace (xnGetFastGemmWorkspaceSize): at most 2 n^2 / 3 elements for
 * square n. With beta = 0, two temporaries per level (quadrants of C serve
 * as scratch; where k exceeds m or n a level may run the three-temporary
 * table below, whichever needs less). With beta != 0, and always under
 * CUBLAS_POINTER_MODE_DEVICE (the value of beta is then not known on the
 * host), C's quadrants keep beta * C until their final sums, so the call
 * runs as two halves of C (left and right columns, or top and bottom rows
 * for tall shapes), one after the other, each with three temporaries at its
 * top level (the A-side sum and two half-width ones); that costs 4-7 % of
 * the time of a beta = 0 call (the sums of the side not split are formed
 * twice). (The bounds hold for n a multiple of 16 * 2^levels;
 * otherwise leading dimensions padded to 16 elements add a little.) The
 * packed quadrant of op(B) of XN_OPT_PACK_TRANS_B is only used where it keeps
 * a call within 2 n^2 / 3. A call that cannot have its workspace runs fewer
 * levels, down to plain cuBLAS: it never fails for lack of memory.
 *
 * NaN and Inf in A or B reach every entry the classical product would make
 * non-finite, and may spread to others (Inf - Inf in the pre-additions).
 * Overflow: a pre-addition sums 2 quadrants per level in Strassen and up to
 * 4 in Winograd (S4 = A12 - A21 - A22 + A11), so at L levels entries above
 * the largest finite value / 2^L (Strassen) or / 4^L (Winograd) may
 * overflow, and so may the products of such sums, where the classical
 * product would not.
 */
cublasStatus_t xnSgemmStrassen(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const float *alpha, const float *A, int lda,
                               const float *B, int ldb, const float *beta, float *C,
                               int ldc);
/** Double precision Strassen; stands beside cublasDgemm. */
cublasStatus_t xnDgemmStrassen(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const double *alpha, const double *A, int lda,
                               const double *B, int ldb, const double *beta, double *C,
                               int ldc);
/** Single precision Winograd variant; stands beside cublasSgemm. */
cublasStatus_t xnSgemmWinograd(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const float *alpha, const float *A, int lda,
                               const float *B, int ldb, const float *beta, float *C,
                               int ldc);
/** Double precision Winograd variant; stands beside cublasDgemm. */
cublasStatus_t xnDgemmWinograd(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int m, int n, int k,
                               const double *alpha, const double *A, int lda,
                               const double *B, int ldb, const double *beta, double *C,
                               int ldc);

/**
 * CORRECTLY ROUNDED DGEMM. C = alpha * op(A) * op(B) + beta * C where every
 * entry is the exact value of that expression rounded once to the nearest
 * double (ties to even), for any alpha and beta, including subnormal results
 * and overflow to +-Inf. Results are therefore bitwise reproducible across
 * runs, streams, block sizes, the CPU and the GPU. Parameters, pointer modes,
 * stream and status codes exactly as cublasDgemm.
 *
 * Method, chosen per call (XN_OPT_EXDGEMM_ENGINE; xnGetLastExdgemmInfo says
 * which ran). Modular engine (the usual one on the GPU): each row of op(A)
 * and column of op(B) is an integer vector times a power of two; their
 * integer product is computed exactly modulo up to 48 odd moduli below 256
 * (INT8 tensor-core GEMMs with int32 accumulation, over chunks of k of at
 * most 2^17 reduced modulo each modulus between chunks, so exact for any k;
 * skinny products run their chunks side by side), rebuilt by the Chinese
 * remainder theorem and rounded once.
 * Slice engine (the Ozaki scheme: Ozaki, Ogita, Oishi, Rump 2012; Mukunoki
 * et al., PMAA'18), for rows and columns whose entries span more binades
 * than 48 moduli cover, or a budget too small for the other:
 * op(A) is split by rows and op(B) by columns into slices of at most
 * floor((53 - log2 k) / 2) bits, so that every slice product is exact in
 * double precision; the slice products are formed with cuBLASLt DGEMMs on
 * algorithms checked to be native FP64 (never cuBLAS's FP64 emulation,
 * whatever the handle's math mode or CUBLAS_EMULATE_DOUBLE_PRECISION say;
 * the handle's settings are not changed), and each entry is summed with
 * NearSum (Rump, Ogita, Oishi 2008). Both engines give the same bits. Cost
 * on an H200: 1.3-1.5x a DGEMM's time for well-scaled 53-bit data at
 * n = 8192-16384 (modular), 2.4x with exponents spread as exp(randn); the
 * slice engine costs about s*t DGEMMs (s, t = 3-5 slices for such data).
 * C is processed in blocks so the workspace stays within
 * XN_OPT_EXDGEMM_WORKSPACE_LIMIT and the handle's workspace
 * (xnGetExdgemmWorkspaceSize, xnSetWorkspace).
 *
 * IEEE CONTRACT (every entry, both engines, CPU and GPU, bit for bit). Let
 * X = sum_p op(A)(i,p) op(B)(p,j) and c = C(i,j) on entry.
 *  - BLAS first: m = 0 or n = 0 touches nothing; k = 0 or alpha == 0
 *    (-0.0 included) reads neither A nor B and gives beta * c, one IEEE
 *    product (so correctly rounded), except that beta == 1 leaves C as it
 *    is (reference DGEMM's quick return: a signalling NaN stays
 *    signalling); beta == 0 never reads C (it may hold NaN) and gives +0
 *    when alpha or k is 0.
 *  - Otherwise X is exact, in the extended reals: NaN if a product is NaN
 *    (a NaN operand, or 0 * Inf) or infinite products of both signs occur;
 *    +-Inf if infinite products of one sign occur; else the exact real sum,
 *    never rounded, overflowed or underflowed. An exact zero X is -0 only
 *    when every product a_ip b_pj is a zero of negative sign (IEEE 754,
 *    6.3: a sum is -0 only when all its addends are), else +0.
 *  - P = alpha * X and Q = beta * c exactly, IEEE's rules for the special
 *    cases (Inf * 0 = NaN; Inf * X = +-Inf for any X != 0, however tiny:
 *    alpha = Inf with X = 2^-1200 gives +Inf).
 *  - C(i,j) = RN(P) when beta == 0, else RN(P + Q): NaN if P or Q is NaN or
 *    they are infinities of opposite signs; the infinity if one is infinite
 *    (a finite P or Q is an exact real and never overflows on the way); else
 *    the exact real value rounded once to the double grid: to nearest, ties
 *    to even, gradual underflow (subnormal results are rounded at 2^-1074,
 *    once), +-Inf when |value| >= 2^1024 - 2^970. An exact zero is -0 only if
 *    P and Q are both -0 (or P is -0 and beta == 0); a nonzero value that
 *    rounds to zero keeps its sign. NaN payloads are unspecified.
 *
 * The call synchronises the handle's stream once (to read the exponent
 * summaries and slice counts, which decide the engine and how many products
 * to launch), so it returns only when the host has launched all work; the
 * result is ready when the stream reaches it (XN_OPT_EXDGEMM_PHASE_TIMES
 * adds a wait at every phase boundary, for measurements).
 * It may allocate (stream-ordered, from the library's own memory pool)
 * when its workspace must grow; a failed allocation returns
 * CUBLAS_STATUS_ALLOC_FAILED with C untouched.
 */
cublasStatus_t xnExdgemm(cublasHandle_t handle, cublasOperation_t transa,
                         cublasOperation_t transb, int m, int n, int k,
                         const double *alpha, const double *A, int lda, const double *B,
                         int ldb, const double *beta, double *C, int ldc);

/**
 * Correctly rounded batched DGEMM with cublasDgemmStridedBatched's
 * parameters: for b = 0 .. batchCount - 1, C_b = alpha op(A_b) op(B_b) +
 * beta C_b with A_b = A + b strideA (likewise B, C; strides in elements,
 * any value, 0 included). Every product is xnExdgemm's (its IEEE contract,
 * its bits) on the handle's stream and pointer mode. Bad arguments are
 * xnExdgemm's, and batchCount < 0; they return CUBLAS_STATUS_INVALID_VALUE
 * (NOT_INITIALIZED for a NULL handle) with every C_b untouched. m = 0,
 * n = 0 or batchCount = 0 return at once; then a NULL C is
 * CUBLAS_STATUS_INVALID_VALUE, as cuBLAS 13.1 returns.
 *
 * Where each C_b is at most 8192 x 8192 and op(B_b) has more than 4
 * columns, the whole batch runs as one modular engine (one exponent scan,
 * one residue pass per operand, the INT8 products of all products and
 * moduli as one strided batch, one reconstruction), with one
 * synchronisation for the call and as many products at a time as the
 * workspace budget holds (XN_OPT_EXDGEMM_WORKSPACE_LIMIT; by default a
 * quarter of the free device memory); xnGetLastExdgemmInfo then reports
 * the batch (blocks = groups of products). Otherwise (other shapes, a
 * stream capture, alpha = 0, a range beyond the moduli, too little memory
 * for one product) the products run as one xnExdgemm each, one after
 * another, and the report is the last product's; if the first product
 * cannot run its status is returned with every C_b untouched, and a later
 * product that cannot run returns CUBLAS_STATUS_EXECUTION_FAILED with the
 * products before it written. Either way each entry is the same bits.
 * As for cuBLAS's batched routines, whose products run concurrently, the
 * C_b must not overlap one another or any A_b, B_b (strideC = 0 runs the
 * products one after another, the last one's C remaining).
 */
cublasStatus_t xnExdgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, int m, int n, int k,
                                       const double *alpha, const double *A, int lda,
                                       long long int strideA, const double *B, int ldb,
                                       long long int strideB, const double *beta, double *C,
                                       int ldc, long long int strideC, int batchCount);

/**
 * Correctly rounded batched DGEMM with cublasDgemmBatched's parameters: the
 * arrays of batchCount pointers to A_b, B_b and C_b are in device memory,
 * as cuBLAS's. Everything else as xnExdgemmStridedBatched; in addition a
 * NULL array is CUBLAS_STATUS_INVALID_VALUE. The batched engine reads the
 * arrays on the device; the product-by-product path reads them back to the
 * host first, so inside a stream capture the call returns
 * CUBLAS_STATUS_NOT_SUPPORTED before anything is enqueued.
 */
cublasStatus_t xnExdgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                cublasOperation_t transb, int m, int n, int k,
                                const double *alpha, const double *const Aarray[], int lda,
                                const double *const Barray[], int ldb, const double *beta,
                                double *const Carray[], int ldc, int batchCount);

/** What the last xnExdgemm (or host exdgemm on this thread) did. */
typedef struct {
  int max_slices_a;       /**< s: most slices of any row block of op(A) */
  int max_slices_b;       /**< t: most slices of any column block of op(B) */
  int block_rows;         /**< rows of C per block */
  int block_cols;         /**< columns of C per block */
  int64_t blocks;         /**< blocks of C processed */
  double slice_products;  /**< slice products, counted in products of the full
                               m x n x k shape: sum over blocks of
                               (nonzero A slices)(nonzero B slices)(block area)/(m n) */
  int64_t wide_entries;   /**< entries summed by the wide (long accumulator)
                               path instead of NearSum; -1 if not counted */
  size_t workspace_bytes; /**< bytes of workspace the call used */
  int engine;             /**< the engine of the products: 1 = FP64 slices,
                               2 = modular (XN_OPT_EXDGEMM_ENGINE); 0 = none ran
                               (quick return, or op(A) or op(B) without a
                               nonzero finite entry: no product to form) */
  int moduli;             /**< modular engine: moduli, i.e. integer products of
                               the full m x n x k shape (slice_products too) */
  double phase_ms[4];     /**< with XN_OPT_EXDGEMM_PHASE_TIMES = 1, the
                               milliseconds of each phase, summed over the
                               blocks of C: [0] exponent scans and the one
                               fetch to the host, [1] conversion (slices or
                               residues), [2] products (DGEMMs or INT8
                               GEMMs), [3] sums (reconstruction and
                               rounding); zero otherwise */
  int k_chunks;           /**< modular engine: the pieces of k its integer
                               products were cut into (1: k in one) */
  int k_slots;            /**< modular engine: of those, how many were
                               multiplied side by side (k split for
                               parallelism) before their sum */
  int fused_operands;     /**< modular engine: the operands whose residues
                               were made inside the integer products and
                               never stored (their L residues per entry
                               neither written nor read back): 0 none,
                               1 op(A)'s (op(B) of at most 4 columns, up
                               to 24 moduli), 2 both (blocks of C of at
                               most 64 x 64) */
} xnExdgemmInfo_t;

/** Report of the last xnExdgemm on the handle; handle NULL: the calling
 *  thread's last host exdgemm_/cblas_exdgemm. */
cublasStatus_t xnGetLastExdgemmInfo(cublasHandle_t handle, xnExdgemmInfo_t *info);

/**
 * Correctly rounded DGEMV: y = alpha * op(A) * x + beta * y with
 * cublasDgemv's parameters and semantics (op(A) = A or A^T, A m x n
 * column-major; x and y with BLAS increments, a negative one starting at
 * the far end; the handle's stream and pointer mode). m = 0 or n = 0
 * returns with y untouched; beta == 0 never reads y. Bad arguments, as
 * cublasDgemv's documentation lists them (trans not N, T or C; m < 0;
 * n < 0; lda < m; incx = 0; incy = 0), and a NULL y, return
 * CUBLAS_STATUS_INVALID_VALUE with y untouched. (cuBLAS 13.1's cublasDgemv
 * itself rejects only lda < m, accepting lda = 0 with m = 0, and a NULL y,
 * and returns SUCCESS for the others, computing something for an unknown
 * trans or incx = 0.)
 * Every y_i is entry (i, 1) of xnExdgemm's product under its IEEE contract
 * (above): the exact value rounded once, bitwise the same on the CPU
 * (exdgemv_). A is read once: each y_i is accumulated with an error bound
 * and rounded when the bound decides the rounding (Inf, NaN and exact
 * zeros included); the rare rest (near a tie, heavy cancellation, extreme
 * exponents) is computed exactly from the operands, one thread per such
 * output (slow for long ill-conditioned rows). Partial sums take 32 bytes
 * per output and chunk of x in the handle's workspace (0.4-3 % of A's bytes for square n = 8191 to
 * 16384; relatively more for very thin A); a failed allocation returns
 * CUBLAS_STATUS_ALLOC_FAILED with y untouched, and inside a stream capture
 * without enough workspace CUBLAS_STATUS_NOT_SUPPORTED. With a device
 * alpha of 0, A and x are still read (their values do not matter). No
 * stream synchronisation.
 */
cublasStatus_t xnExdgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                         const double *alpha, const double *A, int lda, const double *x,
                         int incx, const double *beta, double *y, int incy);

/**
 * Correctly rounded DDOT: *result = sum_i x_i y_i rounded once, with
 * cublasDdot's parameters and semantics: result in host memory (the call
 * returns when it is there) or device memory (written in stream order) by
 * the handle's pointer mode; n <= 0 gives 0; increments as BLAS's (negative:
 * from the far end; 0: the first element n times). The value is xnExdgemm's
 * 1 x 1 x n product with alpha = 1, beta = 0 under its IEEE contract,
 * computed as xnExdgemv's values: bitwise the same on the CPU (exddot_). A
 * NULL result is CUBLAS_STATUS_MAPPING_ERROR in either pointer mode (cuBLAS
 * 13.1's status with a host result; with a device one it returns
 * SUCCESS); a host-memory result inside a stream capture
 * is CUBLAS_STATUS_NOT_SUPPORTED (the call would have to wait), before
 * anything is enqueued.
 */
cublasStatus_t xnExddot(cublasHandle_t handle, int n, const double *x, int incx,
                        const double *y, int incy, double *result);

/* ------------------------------------------------------------------------ */
/* SYMV: Nath et al., SC'11, algorithm 2, deterministic                     */
/* ------------------------------------------------------------------------ */

/**
 * y = alpha * A * x + beta * y for a symmetric n x n A of which only the
 * triangle `uplo` is read (the other triangle and the rows between n and lda
 * are never touched). Parameters, pointer modes, stream and status codes
 * exactly as cublasSsymv: CUBLAS_STATUS_NOT_INITIALIZED for a NULL handle,
 * CUBLAS_STATUS_INVALID_VALUE for uplo not UPPER/LOWER, n < 0,
 * lda < n (as cuBLAS, lda = 0 is accepted when n = 0), incx == 0 or
 * incy == 0 (y untouched). Negative increments
 * have BLAS semantics. beta == 0 never reads y; alpha == 0 only scales y.
 *
 * Method (Nath, Tomov, Dong, Dongarra, SC'11, algorithm 2): each stored
 * tile (64 x 64 or 128 x 128) is read once and used twice (A_pq x_q and
 * A_pq^T x_p); the partial sums go to a workspace and a second kernel adds
 * them in a fixed order, so the result is bitwise identical from run to run
 * (no atomics).
 * The workspace (xnGetSymvWorkspaceSize) is about 2/nb of the stored
 * triangle, nb = 64 or 128 by precision and size (1/32 or 1/64); it is the
 * handle's one workspace (see "Workspace" below). If it cannot be had the
 * call returns CUBLAS_STATUS_ALLOC_FAILED with y untouched.
 */
cublasStatus_t xnSsymv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                       const float *alpha, const float *A, int lda, const float *x,
                       int incx, const float *beta, float *y, int incy);
/** Double precision xnSsymv (parameters of cublasDsymv). */
cublasStatus_t xnDsymv(cublasHandle_t handle, cublasFillMode_t uplo, int n,
                       const double *alpha, const double *A, int lda, const double *x,
                       int incx, const double *beta, double *y, int incy);

/**
 * Bytes of workspace xnSsymv (precision 's') or xnDsymv ('d') needs for an
 * n x n matrix with the handle's options (handle may be NULL: process-wide
 * defaults). INVALID_VALUE for a bad precision, uplo or n < 0.
 */
cublasStatus_t xnGetSymvWorkspaceSize(cublasHandle_t handle, char precision,
                                      cublasFillMode_t uplo, int n, size_t *bytes);

/**
 * xnSetWorkspace for SYMV callers, kept from earlier versions: the same
 * handle-wide workspace, with 16-byte alignment accepted (xnSetWorkspace asks
 * for 256). A SYMV call that needs more than `bytes` returns
 * CUBLAS_STATUS_ALLOC_FAILED with y untouched.
 */
cublasStatus_t xnSetSymvWorkspace(cublasHandle_t handle, void *ptr, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Library state attached to a cuBLAS handle                                */
/* ------------------------------------------------------------------------ */

/**
 * Tuning and behaviour options. Each handle starts from the process-wide
 * defaults, which start from the built-in values overridden by environment
 * variables (named beside each option). Options never change what is
 * computed beyond rounding, only how.
 */
typedef enum {
  /** Leaf size of xnSngemm (xn?gemmStrassen and xn?gemmWinograd have their
   *  own, below). -1 (default): the depth is the one the device's model
   *  predicts fastest (xnCalibrate, xnGetLastGemmInfo); on the CPU, which
   *  has no model, leaves of 2048 (4096 for double). N >= 1: one more
   *  level of recursion is taken while, after it, the two largest
   *  dimensions of the sub-product are at least N and the smallest at least
   *  N/2 (XN_LEAF_S). Very small leaves (tens) lose the accuracy advantage:
   *  keep it in the thousands. */
  XN_OPT_LEAF_SIZE_S = 0,
  /** Leaf size for double precision (XN_LEAF_D). */
  XN_OPT_LEAF_SIZE_D = 1,
  /** Upper bound on the recursion depth of every recursive GEMM
   *  (xn?ngemm, xn?gemmStrassen, xn?gemmWinograd); 0 = always the classical
   *  leaf product (XN_MAX_LEVELS). */
  XN_OPT_MAX_LEVELS = 2,
  /** 1 = scan A and B before each call and compute with the classical
   *  product if a negative entry is found, and with fewer levels where the
   *  scales of A's or B's blocks differ (the header's "Scales")
   *  (XN_CHECK_NONNEG). On the GPU the scan costs one read of A and B and
   *  one stream synchronisation (1 % of a d 16384 call on an H100). */
  XN_OPT_CHECK_NONNEG = 3,
  /** Largest workspace, in bytes, the library may allocate by itself for
   *  the recursion of xnSngemm/xnDngemm, xn?gemmStrassen and
   *  xn?gemmWinograd; -1 = no limit (XN_WORKSPACE_LIMIT).
   *  A call that would need more runs with fewer levels. (xnExdgemm has its
   *  own budget, XN_OPT_EXDGEMM_WORKSPACE_LIMIT; SYMV needs what it needs.) */
  XN_OPT_WORKSPACE_LIMIT = 4,
  /** xnSngemm/xnDngemm only: the longest stretch of k a leaf GEMM may sum
   *  in one chain when the call recurses: a leaf with a longer k runs as ceil(k / this) GEMMs over
   *  consecutive chunks of k, accumulated in C. A GPU GEMM sums along k in
   *  one running sum per entry; chunking breaks that chain (Badin et al., ICS'13, eq.
   *  3.4) for one extra pass over the leaf's C per chunk. 0 = never split.
   *  Single precision (XN_KCHAIN_S). */
  XN_OPT_LEAF_KCHAIN_S = 5,
  /** The same for double precision (XN_KCHAIN_D). */
  XN_OPT_LEAF_KCHAIN_D = 6,
  /** No recursion at all for products with m*n*k below this value cubed
   *  (cuBLAS is called as is): a crossover of the user's own, on top of the
   *  model or the leaf size. -1 (default) = none with the device's model;
   *  with a leaf size set, or on the CPU (no model), 14336 single and 0
   *  double (the leaf-size rule's own). Single precision (XN_MIN_SIZE_S). */
  XN_OPT_MIN_SIZE_S = 7,
  /** The same for double precision (XN_MIN_SIZE_D). */
  XN_OPT_MIN_SIZE_D = 8,
  /** xnExdgemm: largest workspace in bytes a call may use (slices of A and B
   *  and the slice products of one block of C). 0 = automatic: all of a
   *  workspace supplied with xnSetWorkspace, otherwise a quarter of the
   *  device memory that is free at the call, counting what the handle's
   *  workspace and the library's memory pool hold
   *  (XN_EXDGEMM_WORKSPACE_LIMIT).
   *  A smaller budget means smaller blocks of C, never a different result.
   *  Unless XN_OPT_EXDGEMM_BLOCK forces a block, a budget below what the
   *  smallest block needs makes a call that needs a block return
   *  CUBLAS_STATUS_ALLOC_FAILED (inside a stream capture
   *  CUBLAS_STATUS_NOT_SUPPORTED; the host routines XN_STATUS_UNCHANGED,
   *  xnGetLastHostStatus) with C untouched. */
  XN_OPT_EXDGEMM_WORKSPACE_LIMIT = 9,
  /** xnExdgemm: force the block size of C (rows and columns); 0 = chosen from
   *  the budget (XN_EXDGEMM_BLOCK). For tests and tuning. */
  XN_OPT_EXDGEMM_BLOCK = 10,
  /** The recursive GEMMs (xn?ngemm, xn?gemmStrassen, xn?gemmWinograd) with
   *  transb != N: store the recursion's B-side temporaries (sums and
   *  differences of quadrants of op(B)) non-transposed, formed by a
   *  transposing addition, so that the products that read them run as NN or
   *  TN GEMMs; and, when the whole workspace stays within half of A, B and
   *  C together (xn?ngemm) or within 2/9 of it (Strassen, Winograd: their
   *  2 n^2 / 3 for square n), copy each quadrant of op(B) that a top-level
   *  product reads (2 or 3 of the 7) transposed into one buffer of k*n/4
   *  elements first, so that every leaf GEMM runs with transb = N (without
   *  that buffer, (3/7)^levels (Winograd) or (2/7)^levels (Strassen) of
   *  them keep transb = T; it is given up before a recursion level when
   *  workspace is short). -1 = automatic (double precision with the A side
   *  stored non-transposed: transa = N, or XN_OPT_PACK_TRANS_A = 1;
   *  cuBLAS's NT leaf kernels are slower), 0 = never, 1 = whenever
   *  transb != N (XN_PACK_TRANS_B). */
  XN_OPT_PACK_TRANS_B = 11,
  /** xnSsymv/xnDsymv: kernel variant; 0 = the tuned default for the
   *  precision, n and uplo (XN_SYMV_VARIANT). The defaults' own ids (33, 34,
   *  35) are always accepted; the other ids up to 39 are the tuning sweep's
   *  and are accepted only by a library built with XN_BUILD_TUNING=ON (else,
   *  like any larger value, INVALID_VALUE). For tuning; every variant
   *  computes a deterministic result, but different variants sum in
   *  different orders. A variant that does not fit a precision's shared
   *  memory runs as 0. See docs/design.md, "SYMV". */
  XN_OPT_SYMV_VARIANT = 12,
  /** xnSgemmStrassen: leaf size, as XN_OPT_LEAF_SIZE_S
   *  (XN_STRASSEN_LEAF_S). */
  XN_OPT_STRASSEN_LEAF_S = 13,
  /** xnDgemmStrassen: leaf size (XN_STRASSEN_LEAF_D). */
  XN_OPT_STRASSEN_LEAF_D = 14,
  /** xnSgemmStrassen: no recursion for m*n*k below this value cubed, as
   *  XN_OPT_MIN_SIZE_S (XN_STRASSEN_MIN_SIZE_S). */
  XN_OPT_STRASSEN_MIN_SIZE_S = 15,
  /** xnDgemmStrassen: crossover (XN_STRASSEN_MIN_SIZE_D). */
  XN_OPT_STRASSEN_MIN_SIZE_D = 16,
  /** xnSgemmWinograd: leaf size (XN_WINOGRAD_LEAF_S). */
  XN_OPT_WINOGRAD_LEAF_S = 17,
  /** xnDgemmWinograd: leaf size (XN_WINOGRAD_LEAF_D). */
  XN_OPT_WINOGRAD_LEAF_D = 18,
  /** xnSgemmWinograd: crossover (XN_WINOGRAD_MIN_SIZE_S). */
  XN_OPT_WINOGRAD_MIN_SIZE_S = 19,
  /** xnDgemmWinograd: crossover (XN_WINOGRAD_MIN_SIZE_D). */
  XN_OPT_WINOGRAD_MIN_SIZE_D = 20,
  /** xn?ngemm, xn?gemmStrassen, xn?gemmWinograd with transa != N: store the
   *  sums of op(A)'s quadrants non-transposed, so that the leaf GEMMs that
   *  read them run with transa = N (the others, (2/7)^levels (Strassen) or
   *  (3/7)^levels (Winograd, ?ngemm) of the leaves, keep transa = T). The
   *  same values, and the same workspace up to the padding of leading
   *  dimensions; with transb != N too, XN_OPT_PACK_TRANS_B's
   *  automatic choice then also stores the B side non-transposed. -1 =
   *  automatic (double precision with transb = N: cuBLAS's TN leaf kernels
   *  are slower than NN, its TT ones are not), 0 = never, 1 = whenever
   *  transa != N (XN_PACK_TRANS_A). */
  XN_OPT_PACK_TRANS_A = 21,
  /** xnExdgemm: the engine that forms the exact products
   *  (XN_EXDGEMM_ENGINE). 0 = automatic: per call, the cheaper of the two for
   *  the bits the inputs need; 1 = FP64 slices (Ozaki scheme, products on
   *  the FP64 units); 2 = modular: the integer product modulo small primes,
   *  one integer GEMM each, reconstructed exactly (inputs whose range needs
   *  more moduli than it has still take the slices). Every engine returns
   *  the same, correctly rounded, bits. */
  XN_OPT_EXDGEMM_ENGINE = 22,
  /** xnExdgemm: 1 = measure where the time goes: the call waits for its
   *  stream at every phase boundary and reports the milliseconds of each
   *  phase in xnExdgemmInfo_t's phase_ms (XN_EXDGEMM_PHASE_TIMES). The
   *  waits cost a few microseconds each; for benchmarks, not production.
   *  0 (default) = no waits, phase_ms zero. */
  XN_OPT_EXDGEMM_PHASE_TIMES = 23,
  /** PDNGEMM, PSNGEMM, PEXDGEMM (include/xngemm_dist.h): bytes each process
   *  may use for the rows of op(A) and columns of op(B) it gathers
   *  (XN_DIST_WORKSPACE_LIMIT; 0 = as much as it can allocate). Within it
   *  PDNGEMM and PSNGEMM take K in panels, PEXDGEMM (which needs all of K)
   *  takes sub(C) in bands. */
  XN_OPT_DIST_WORKSPACE_LIMIT = 24,
  /** PDNGEMM, PSNGEMM, PEXDGEMM on operands in GPU memory: how blocks move
   *  between the processes' GPUs (XN_DIST_TRANSPORT). 0 (default) = NCCL
   *  where every process of the grid has a GPU of its own and libnccl.so.2
   *  loads, MPI otherwise; 1 = NCCL where it can run, else MPI; 2 = MPI:
   *  GPU buffers directly where the MPI library is CUDA-aware, otherwise
   *  through pinned host memory. */
  XN_OPT_DIST_TRANSPORT = 25,
  /** xnExdgemm, modular engine: force the length of k of each integer
   *  product (XN_EXDGEMM_K_CHUNK), rounded up to a multiple of 16 and at
   *  most what the products hold exactly (2^17 on the GPU). 0 (default) =
   *  chosen per call: k is cut where the products' exact range ends, and
   *  also where the blocks of C alone cannot fill the device (skinny
   *  shapes). For tests and tuning; every value gives the same bits. */
  XN_OPT_EXDGEMM_K_CHUNK = 26,
  /** The recursive GEMMs' depth model (XN_DEVICE_CALIBRATION): 1 (default) =
   *  this device's calibration (xnCalibrate) where the cache holds a valid
   *  one, else the library's built-in model for the device; 0 = the
   *  built-in model. */
  XN_OPT_DEVICE_CALIBRATION = 27
} xnOption_t;

/**
 * Set an option for one handle, or for the process-wide defaults (and the
 * host API) when handle is NULL. Returns CUBLAS_STATUS_INVALID_VALUE for an
 * unknown option or an out-of-range value (leaf size < 1, levels < 0).
 */
cublasStatus_t xnSetOption(cublasHandle_t handle, xnOption_t option, int64_t value);
/** Read an option's current value (handle NULL: the process-wide default). */
cublasStatus_t xnGetOption(cublasHandle_t handle, xnOption_t option, int64_t *value);

/* Workspace. Each handle has one device workspace that every routine uses
 * (calls on one handle are serialised, so they can share it). By default the
 * library owns it: allocated on the call's stream when a call first needs
 * more, kept for later calls, from a stream-ordered memory pool of the
 * library's own (not the device's current pool, whatever the program set),
 * which keeps memory a workspace gave up for the next one and gives it
 * back to the device when no handle holds a workspace in it (checked at
 * xnRelease and xnSetWorkspace); what the xnSngemm/xnDngemm recursion may
 * have allocated is capped by XN_OPT_WORKSPACE_LIMIT. Or the caller
 * supplies it (xnSetWorkspace). Each routine family has a query for the
 * bytes one call needs (get the size, supply it or let the library
 * allocate, run). When a call cannot have what it needs: xnSngemm/xnDngemm
 * run fewer recursion levels (down to plain cuBLAS), xnExdgemm works in
 * smaller blocks of C, and only when even those do not fit does a call return
 * CUBLAS_STATUS_ALLOC_FAILED, with its output untouched (as xnSsymv/xnDsymv
 * do when their workspace cannot be had). */

/**
 * Bytes of workspace xnSngemm (precision 's') or xnDngemm ('d') uses with
 * these arguments at the recursion depth the handle's options choose, before
 * any workspace limit or supplied workspace makes it run fewer levels: the
 * size to supply for the full depth. 0 when the call would not recurse.
 * Returns INVALID_VALUE for bad arguments.
 */
cublasStatus_t xnGetWorkspaceSize(cublasHandle_t handle, char precision,
                                  cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, size_t *bytes);

/** The general-input recursive GEMMs, for xnGetFastGemmWorkspaceSize. */
typedef enum { XN_FAST_GEMM_STRASSEN = 0, XN_FAST_GEMM_WINOGRAD = 1 } xnFastGemm_t;

/**
 * Bytes of workspace xn?gemmStrassen (algorithm XN_FAST_GEMM_STRASSEN) or
 * xn?gemmWinograd (XN_FAST_GEMM_WINOGRAD), precision 's' or 'd', uses with
 * these arguments at the depth the handle's options choose (handle NULL:
 * the process-wide ones), before any limit or supplied workspace makes it
 * run fewer levels. beta_is_zero: nonzero for a call with a host beta of 0,
 * 0 for any other beta or device-pointer scalars (the call then runs as two
 * halves of C; see xnSgemmStrassen). 0 when the call would not recurse.
 * Returns INVALID_VALUE for bad arguments.
 */
cublasStatus_t xnGetFastGemmWorkspaceSize(cublasHandle_t handle, xnFastGemm_t algorithm,
                                          char precision, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          int beta_is_zero, size_t *bytes);

/**
 * Bytes of workspace xnExdgemm uses with these arguments and the handle's
 * options (handle NULL: the process-wide ones) when every row of op(A) and
 * column of op(B) holds full 53-bit values within a factor 2^11 of each
 * other: C in one block, or in the largest blocks that
 * XN_OPT_EXDGEMM_WORKSPACE_LIMIT allows (or XN_OPT_EXDGEMM_BLOCK forces).
 * Inputs of a wider range need more slices and run in smaller blocks within
 * the same workspace; the result never depends on it. 0 when m, n or k is 0.
 * Returns the cublasDgemm status for bad arguments.
 */
cublasStatus_t xnGetExdgemmWorkspaceSize(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         size_t *bytes);

/**
 * Give the handle a workspace the caller owns (device memory, at least
 * 256-byte aligned), used by every routine instead of one the library
 * allocates, and never freed by it. ptr = NULL, bytes = 0 returns to a
 * library-managed workspace. The caller must keep the memory alive until
 * xnRelease or another xnSetWorkspace/xnSetSymvWorkspace, and must not use
 * it while a call on the handle may be running.
 */
cublasStatus_t xnSetWorkspace(cublasHandle_t handle, void *ptr, size_t bytes);

/** Bytes of workspace currently held for the handle (owned, or supplied
 *  through xnSetWorkspace or xnSetSymvWorkspace). */
cublasStatus_t xnGetWorkspaceHeld(cublasHandle_t handle, size_t *bytes);

/**
 * How many calls on this handle found a negative entry under
 * XN_OPT_CHECK_NONNEG and computed with the classical product instead.
 */
cublasStatus_t xnGetNonNegFallbackCount(cublasHandle_t handle, uint64_t *count);

/**
 * Recursion levels the last recursive GEMM (xnSngemm/xnDngemm,
 * xn?gemmStrassen, xn?gemmWinograd) on this handle ran: 0 for
 * the classical (cuBLAS) product, -1 before any call. Useful to see the effect
 * of the leaf size, the workspace limit and the non-negative check. With
 * handle NULL: the levels of the calling thread's last host call of
 * sngemm_/dngemm_, sstgemm_/dstgemm_, swigemm_/dwigemm_ or their cblas_
 * forms, on the GPU or the CPU (-1 before any).
 */
cublasStatus_t xnGetLastLevels(cublasHandle_t handle, int *levels);

/** Where the parameters of a recursive GEMM's depth came from. */
typedef enum {
  /** The options: a leaf size (XN_OPT_LEAF_SIZE_* and the routines' own)
   *  was set, or the backend has no model (the CPU). */
  XN_PARAMETERS_FROM_OPTIONS = 0,
  /** The library's built-in model for this kind of device. */
  XN_PARAMETERS_BUILT_IN = 1,
  /** No built-in model matches the device: the nearest one, scaled by the
   *  device's multiprocessors and clock (a first guess: run xnCalibrate). */
  XN_PARAMETERS_SCALED = 2,
  /** This device's calibration (xnCalibrate), from the cache. */
  XN_PARAMETERS_CALIBRATED = 3
} xnParameterSource_t;

/** What the last recursive GEMM on a handle did and why (xnGetLastGemmInfo). */
typedef struct {
  int levels;          /**< recursion levels run (as xnGetLastLevels); -1 before any */
  int planned_levels;  /**< the depth chosen before the non-negative check's
                            scales or a workspace limit lowered it */
  xnParameterSource_t source; /**< where planned_levels came from */
  double predicted_speedup;   /**< with a model: its predicted time of the
                                   classical product over its time at
                                   planned_levels (1 at depth 0); else 0 */
  char model[128];     /**< the model's origin ("NVIDIA Hopper, 132 SMs
                            (measured on an H100 SXM)", "calibrated on this
                            device (...)"), or "" */
} xnGemmInfo_t;

/**
 * The last recursive GEMM (xnSngemm/xnDngemm, xn?gemmStrassen,
 * xn?gemmWinograd) on this handle: depth run and planned, and where the
 * depth came from. Handle NULL: the calling thread's last host call of
 * those routines (sngemm_, cblas_dstgemm, ...). Before any call: levels
 * -1, the rest zero.
 */
cublasStatus_t xnGetLastGemmInfo(cublasHandle_t handle, xnGemmInfo_t *info);

/**
 * Measure the device of `handle` for the recursive GEMMs' depth model:
 * cuBLAS SGEMM and DGEMM rates at sizes 1024..8192 (step 128), as the
 * recursion's leaves run them, and the device's copy bandwidth. Runs on the
 * handle's stream, takes about 30 s and 1.5 GiB of device memory for the
 * call, and waits for its results. The result is used at once by every
 * handle of the process on this device (while XN_OPT_DEVICE_CALIBRATION is 1)
 * and written to the cache (XN_CACHE_DIR, default
 * $XDG_CACHE_HOME/xngemm or $HOME/.cache/xngemm), one file per device,
 * keyed by the device's UUID, the driver, cuBLAS and xNGEMM versions;
 * later processes read it at their first call on the device. A file that
 * is stale or damaged is ignored (said on stderr under XN_VERBOSE=1). Not needed on
 * the cards the library has a built-in model for (H100 SXM, H200); for
 * other cards it replaces a first guess (XN_PARAMETERS_SCALED). Never call
 * it inside a stream capture. Returns CUBLAS_STATUS_ALLOC_FAILED when the
 * memory cannot be had, CUBLAS_STATUS_EXECUTION_FAILED when a measurement
 * fails (nothing is installed then), CUBLAS_STATUS_NOT_INITIALIZED for a
 * NULL handle. A cache file that cannot be written is said on stderr under
 * XN_VERBOSE=1; the calibration is still used in this process.
 */
cublasStatus_t xnCalibrate(cublasHandle_t handle);

/**
 * Release the state xNGEMM attached to the handle (workspace, counters),
 * after the handle's last call has completed (it waits for that call, not
 * for the device). CUDA graphs captured with the handle are not to be
 * launched again: the workspace they use is freed (where a graph used it,
 * xnRelease waits for the device first, so a replay still running is not
 * cut short). When no other handle holds a workspace, the library's memory pool
 * gives its memory back to the device. Call before cublasDestroy(handle).
 * Safe on a handle never used with xNGEMM.
 */
cublasStatus_t xnRelease(cublasHandle_t handle);

/* ------------------------------------------------------------------------ */
/* Host API: BLAS extension (Badin et al., ICS'13, section 6)               */
/* ------------------------------------------------------------------------ */

/** Fortran 77 SNGEMM: argument list of SGEMM; reports errors via xerbla_. */
void sngemm_(const char *transa, const char *transb, const int *m, const int *n,
             const int *k, const float *alpha, const float *a, const int *lda,
             const float *b, const int *ldb, const float *beta, float *c, const int *ldc);
/** Fortran 77 DNGEMM: argument list of DGEMM; reports errors via xerbla_. */
void dngemm_(const char *transa, const char *transb, const int *m, const int *n,
             const int *k, const double *alpha, const double *a, const int *lda,
             const double *b, const int *ldb, const double *beta, double *c,
             const int *ldc);

#ifndef XN_CBLAS_ENUMS_DEFINED
#define XN_CBLAS_ENUMS_DEFINED
/* Values identical to cblas.h's CBLAS_LAYOUT / CBLAS_TRANSPOSE, so either
 * header's enumerators may be passed. */
typedef enum { XnRowMajor = 101, XnColMajor = 102 } xnLayout_t;
typedef enum { XnNoTrans = 111, XnTrans = 112, XnConjTrans = 113 } xnTranspose_t;
#endif

/**
 * CBLAS-style SNGEMM, both layouts. Enumerator values are those of cblas.h
 * (CblasRowMajor = 101, CblasColMajor = 102, CblasNoTrans = 111, ...), passed
 * as int so this header does not depend on a particular cblas.h. Errors are
 * reported through xerbla_ with routine name "cblas_sngemm" and the CBLAS
 * parameter position (layout = 1).
 */
void cblas_sngemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta, float *C,
                  int ldc);
/** CBLAS-style DNGEMM; see cblas_sngemm. */
void cblas_dngemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                  const double *A, int lda, const double *B, int ldb, double beta,
                  double *C, int ldc);

/** Fortran 77 SSTGEMM / DSTGEMM: xnSgemmStrassen / xnDgemmStrassen from host
 *  memory, argument list of SGEMM / DGEMM (GPU when present, CPU
 *  otherwise, as sngemm_); errors via xerbla_ with the name "SSTGEMM" /
 *  "DSTGEMM". The names follow the BLAS extension above: precision, then
 *  the algorithm (ST = Strassen, WI = Winograd), then GEMM; they collide with
 *  no BLAS, LAPACK or vendor routine (IBM ESSL's Strassen is SGEMMS/DGEMMS,
 *  with another argument list). */
void sstgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *lda,
              const float *b, const int *ldb, const float *beta, float *c,
              const int *ldc);
void dstgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc);
/** Fortran 77 SWIGEMM / DWIGEMM: xnSgemmWinograd / xnDgemmWinograd from host
 *  memory (see sstgemm_). */
void swigemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const float *alpha, const float *a, const int *lda,
              const float *b, const int *ldb, const float *beta, float *c,
              const int *ldc);
void dwigemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc);
/** CBLAS-style SSTGEMM, DSTGEMM, SWIGEMM, DWIGEMM, both layouts; see
 *  cblas_sngemm for the conventions. */
void cblas_sstgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc);
void cblas_dstgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc);
void cblas_swigemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc);
void cblas_dwigemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc);

/** Fortran 77 EXDGEMM: argument list of DGEMM, correctly rounded result (see
 *  xnExdgemm); reports errors via xerbla_ with the name "EXDGEMM". */
void exdgemm_(const char *transa, const char *transb, const int *m, const int *n,
              const int *k, const double *alpha, const double *a, const int *lda,
              const double *b, const int *ldb, const double *beta, double *c,
              const int *ldc);
/** CBLAS-style EXDGEMM, both layouts; see cblas_sngemm for the conventions. */
void cblas_exdgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                   const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc);

/** Fortran 77 EXDGEMV: argument list of DGEMV, correctly rounded result (see
 *  xnExdgemv; on the CPU, with the numerics of the GPU kernels: the bits of
 *  xnExdgemv); errors via xerbla_ with the name "EXDGEMV" and DGEMV's
 *  positions. */
void exdgemv_(const char *trans, const int *m, const int *n, const double *alpha,
              const double *a, const int *lda, const double *x, const int *incx,
              const double *beta, double *y, const int *incy);
/** CBLAS-style EXDGEMV, both layouts; see cblas_sngemm for the conventions
 *  (positions: layout 1, trans 2, m 3, n 4, lda 7, incx 9, incy 12). */
void cblas_exdgemv(int layout, int trans, int m, int n, double alpha, const double *A,
                   int lda, const double *x, int incx, double beta, double *y, int incy);
/** Fortran 77 EXDDOT: a function with DDOT's arguments returning the
 *  correctly rounded dot product (see xnExddot); n <= 0 gives 0. */
double exddot_(const int *n, const double *x, const int *incx, const double *y,
               const int *incy);
/** CBLAS-style EXDDOT (see exddot_). */
double cblas_exddot(int n, const double *x, int incx, const double *y, int incy);

/** Outcomes of the routines without a status return (the host routines:
 *  xnGetLastHostStatus; the distributed ones: xnGetLastDistStatus,
 *  include/xngemm_dist.h) beyond 0 (done) and -i (argument i was illegal:
 *  the INFO given to XERBLA or PXERBLA; the output unchanged). */
#ifndef XN_STATUS_UNCHANGED /* (xngemm_dist.h has them too) */
#define XN_STATUS_UNCHANGED 1 /**< the call did not run: the output is unchanged */
#define XN_STATUS_PARTIAL 2   /**< it failed after part of the output was written */
#endif

/**
 * The outcome of the calling thread's last host routine call (sngemm_ to
 * exddot_ and their cblas_ forms above): 0 when its output is the result;
 * -i when argument i was illegal (reported through xerbla_, with the same
 * i; the output unchanged); XN_STATUS_UNCHANGED when it could not run (the
 * CPU's exdgemm with XN_EXDGEMM_WORKSPACE_LIMIT below one block), the output
 * unchanged. A GPU that fails takes the CPU instead; only if the copy of a
 * finished product back from the GPU fails, with beta != 0 (C cannot be
 * read again), is it XN_STATUS_PARTIAL: part of C may be written. Nothing is
 * said on stderr unless XN_VERBOSE=1.
 */
int xnGetLastHostStatus(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XNGEMM_H */
