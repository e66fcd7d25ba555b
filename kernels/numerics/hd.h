// hd.h - the __host__ __device__ marker shared by both backends.
#pragma once

#if defined(__CUDACC__)
#define XN_HD __host__ __device__ __forceinline__
#else
#define XN_HD inline
#endif

// Full unrolling of a loop with a compile-time trip count, so that arrays
// indexed by its counter stay in registers on the GPU; plain loops on the
// host (nvcc's host pass included).
#if defined(__CUDA_ARCH__)
#define XN_UNROLL _Pragma("unroll")
#else
#define XN_UNROLL
#endif

// Unrolling by 8 of a loop whose trip count is known only at run time, on
// the GPU (eight loads in flight before the first is used: the exponent
// scans wait on memory); plain on the host.
#if defined(__CUDA_ARCH__)
#define XN_UNROLL8 _Pragma("unroll 8")
#else
#define XN_UNROLL8
#endif
