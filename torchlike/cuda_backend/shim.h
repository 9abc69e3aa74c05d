// torchlike CUDA-on-CPU shim: lets the *exact* source of a generated CUDA kernel compile with
// the host C++ compiler (g++ -DTL_EMULATE -include shim.h), so CI without a GPU can run its
// indexing, broadcasting and dtype code.  The launcher emulate.py generates per kernel loops
// over every (block, thread) and calls the kernel once for each: grid-stride loops, vector
// paths and tails run exactly as written.  Only what generated kernels use is provided.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>

#define __global__
#define __device__
#define __constant__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct tl_dim3 { unsigned int x, y, z; };
static thread_local tl_dim3 threadIdx, blockIdx, blockDim, gridDim;

// float16: the compiler's _Float16 (IEEE binary16, round to nearest even on conversion).
typedef _Float16 __half;
static inline float __half2float(__half h) { return (float)h; }
static inline __half __float2half_rn(float f) { return (__half)f; }
static inline __half __double2half(double d) { return (__half)d; }  // one rounding, as CUDA's

// bfloat16: 16-bit storage, converted like CUDA's __float2bfloat16_rn (round to nearest even).
struct __nv_bfloat16 { uint16_t bits; };
static inline float __bfloat162float(__nv_bfloat16 b) {
  uint32_t u = (uint32_t)b.bits << 16; float f; std::memcpy(&f, &u, 4); return f;
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u; std::memcpy(&u, &f, 4);
  __nv_bfloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) { b.bits = (uint16_t)((u >> 16) | 0x40); return b; }  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  b.bits = (uint16_t)(u >> 16);
  return b;
}
static inline __nv_bfloat16 __double2bfloat16(double d) {
  // One rounding from double: round to float with the sticky bit kept ("round to odd"), then
  // to bfloat16 to nearest even -- exact because float has more than 2 + 8 bits of margin.
  float f = (float)d;
  if (std::isfinite(d) && (double)f != d) {
    uint32_t u; std::memcpy(&u, &f, 4);
    if (!(u & 1u)) { if (std::fabs((double)f) > std::fabs(d)) u -= 1; else u += 1; }
    std::memcpy(&f, &u, 4);
  }
  return __float2bfloat16_rn(f);
}

using std::isnan; using std::isinf; using std::isfinite;

static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline int atomicExch(int* p, int v) { int old = *p; *p = v; return old; }
