// PAO_HD marks functions that compile for host and device: layout accessors, number
// formats and the shared math that CPU emulation and CUDA kernels must compute alike.
#pragma once

#if defined(__CUDACC__)
#define PAO_HD __host__ __device__ __forceinline__
#else
#define PAO_HD inline
#endif
