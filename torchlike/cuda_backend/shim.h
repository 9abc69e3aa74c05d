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

// erfinv/erfinvf are CUDA math functions, not C's: ops/elementwise_math.py's float64 method
// (Giles' polynomial start, two Halley steps on erf, or on erfc against the exact 1 - |x|).
static inline double erfinv(double x) {
  static const double C[3][6] = {
      {1.5013878345489502, 0.24667689204216003, -0.004110071249306202, -0.0012828752025961876,
       0.00018807967717293650, 1.6018159272789489e-06},
      {2.8329918384552, 1.0017497539520264, 0.009109415113925934, -0.008202037028968334,
       0.006961786746978760, -0.0028154113702476025},
      {4.849906444549561, 1.0103003978729248, -0.00014150850684382021,
       -0.00021468287741299719, 8.3566449757199734e-05, -2.0803599909413606e-05}};
  double a = std::fabs(x);
  if (!(a < 1.0)) return a == 1.0 ? std::copysign(INFINITY, x) : NAN;
  double g = -std::log((1.0 - a) * (1.0 + a));
  int k = g >= 16.0 ? 2 : g >= 5.0 ? 1 : 0;
  double v = k == 2 ? std::sqrt(g) - 5.0 : k == 1 ? std::sqrt(g) - 3.0 : g - 2.5;
  double p = 0.0;
  for (int i = 5; i >= 0; --i) p = p * v + C[k][i];
  double y = a * p;
  for (int i = 0; i < 2; ++i) {
    double f = a >= 0.5 ? (1.0 - a) - std::erfc(y) : std::erf(y) - a;
    double u = f * 0.88622692545275801 * std::exp(y * y);
    y -= u / (1.0 + y * u);
  }
  return std::copysign(y, x);
}
static inline float erfinvf(float x) { return (float)erfinv((double)x); }

static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline int atomicExch(int* p, int v) { int old = *p; *p = v; return old; }
