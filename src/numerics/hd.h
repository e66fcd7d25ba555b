// hd.h - the __host__ __device__ marker shared by both backends.
#pragma once

#if defined(__CUDACC__)
#define XN_HD __host__ __device__ __forceinline__
#else
#define XN_HD inline
#endif
