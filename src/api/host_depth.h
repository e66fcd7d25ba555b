// host_depth.h - how many host entry points (sngemm_, exdgemm_, cblas_...)
// the calling thread is inside. The interposer (src/intercept/) reads it:
// a BLAS call made while it is > 0 is the library's own (a CPU leaf) and
// must reach the real BLAS, whether the host entry point was called through
// the interposer or directly by a program that links xNGEMM.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif
/* Exported by libxngemm; not part of the documented API. */
int xn_internal_host_call_depth(void);
#ifdef __cplusplus
}
#endif
