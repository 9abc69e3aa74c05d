// torchlike CUDA prelude: the tl_* device functions that the registry's `cuda` templates call.
// Inlined at the top of every generated kernel (guarded, so several kernels may share one
// translation unit).  Compiles with NVRTC/nvcc, and with g++ through shim.h (-DTL_EMULATE).
//
// Contract with the code generator (the same as cpu_backend/scalar_math.py's):
// * operands hold the op's compute dtype; the kernel casts each op's result to its out dtype;
// * `err` is an `int*` kernel parameter, zeroed by the host: integer division by zero returns 0
//   and sets *err = 1 (atomicExch); the host then raises IntegerDivisionByZeroError;
// * an absent optional operand (clamp's min=None) is `tl_none_t()`: overloads prune it;
// * `{T}` in a template is the numpy name of the compute dtype: the typedefs below make it a
//   C type too, so `({T})1` is `(float32)1`.
// Warnings are errors in CI (nvcc -Werror all-warnings), so nothing here compares an unsigned
// value with zero: tl_is_neg is overloaded per type instead.
#ifndef TL_PRELUDE_CORE
#define TL_PRELUDE_CORE

#ifndef TL_EMULATE
// x / 0.0f is IEEE arithmetic (inf/NaN), what PyTorch computes: not worth warning #39-D about
// when a folded constant zero is the divisor.  Integer division never divides directly.
#pragma nv_diag_suppress 39
#endif

typedef bool bool_;
typedef unsigned char uint8;
typedef signed char int8;
typedef short int16;
typedef int int32;
typedef long long int64;
typedef float float32;
typedef double float64;

#define TL_DEV __device__ __forceinline__

struct tl_none_t {};

// Element vectors for the 16-byte fast path: one load/store of sizeof(T) * N bytes.
template <typename T, int N>
struct __align__(sizeof(T) * N) tl_vec { T v[N]; };

TL_DEV bool tl_isnan(float x) { return isnan(x); }
TL_DEV bool tl_isnan(double x) { return isnan(x); }
template <typename T> TL_DEV bool tl_isnan(T) { return false; }

TL_DEV bool tl_is_neg(bool) { return false; }
TL_DEV bool tl_is_neg(uint8) { return false; }
TL_DEV bool tl_is_neg(int8 x) { return x < 0; }
TL_DEV bool tl_is_neg(int16 x) { return x < 0; }
TL_DEV bool tl_is_neg(int32 x) { return x < 0; }
TL_DEV bool tl_is_neg(int64 x) { return x < 0; }
TL_DEV bool tl_is_neg(float x) { return x < 0; }
TL_DEV bool tl_is_neg(double x) { return x < 0; }

// ----- dtype conversions: float -> integer as torchlike/ops/casting.py defines it -----
// (T)x of a float that does not fit is undefined in C++ (a GPU's cvt saturates, x86's cvtt gives
// the "integer indefinite" INT_MIN), so the kernels spell PyTorch's x86 result out: trunc(x)
// when MIN <= x < -MIN of the type it goes through (both bounds exact in float and double; NaN
// fails), else MIN; int8/int16 wrap the int32 result, uint8 the int64 one.
#define TL_FLOAT_TO(T, F, lo, hi, least) \
  TL_DEV T tl_float_to_##T(F x) { return (x >= lo && x < hi) ? (T)x : (T)(least); }
TL_FLOAT_TO(int32, float, -2147483648.0f, 2147483648.0f, -2147483647 - 1)
TL_FLOAT_TO(int32, double, -2147483648.0, 2147483648.0, -2147483647 - 1)
TL_FLOAT_TO(int64, float, -9223372036854775808.0f, 9223372036854775808.0f,
            -9223372036854775807LL - 1)
TL_FLOAT_TO(int64, double, -9223372036854775808.0, 9223372036854775808.0,
            -9223372036854775807LL - 1)
#undef TL_FLOAT_TO
TL_DEV int16 tl_float_to_int16(float x) { return (int16)tl_float_to_int32(x); }
TL_DEV int16 tl_float_to_int16(double x) { return (int16)tl_float_to_int32(x); }
TL_DEV int8 tl_float_to_int8(float x) { return (int8)tl_float_to_int32(x); }
TL_DEV int8 tl_float_to_int8(double x) { return (int8)tl_float_to_int32(x); }
TL_DEV uint8 tl_float_to_uint8(float x) { return (uint8)tl_float_to_int64(x); }
TL_DEV uint8 tl_float_to_uint8(double x) { return (uint8)tl_float_to_int64(x); }

// ----- float math: one name, the float and double functions of the CUDA math library -----
#define TL_UNARY(name, f32, f64) \
  TL_DEV float tl_##name(float x) { return f32(x); } \
  TL_DEV double tl_##name(double x) { return f64(x); }
TL_UNARY(exp, expf, exp)
TL_UNARY(exp2, exp2f, exp2)
TL_UNARY(expm1, expm1f, expm1)
TL_UNARY(log, logf, log)
TL_UNARY(log1p, log1pf, log1p)
TL_UNARY(log2, log2f, log2)
TL_UNARY(log10, log10f, log10)
TL_UNARY(sqrt, sqrtf, sqrt)
TL_UNARY(sin, sinf, sin)
TL_UNARY(cos, cosf, cos)
TL_UNARY(tan, tanf, tan)
TL_UNARY(asin, asinf, asin)
TL_UNARY(acos, acosf, acos)
TL_UNARY(atan, atanf, atan)
TL_UNARY(sinh, sinhf, sinh)
TL_UNARY(cosh, coshf, cosh)
TL_UNARY(asinh, asinhf, asinh)
TL_UNARY(acosh, acoshf, acosh)
TL_UNARY(atanh, atanhf, atanh)
TL_UNARY(tanh, tanhf, tanh)
TL_UNARY(erf, erff, erf)
TL_UNARY(erfc, erfcf, erfc)
TL_UNARY(erfinv, erfinvf, erfinv)  // CUDA's; the emulator's shim.h defines both for g++
TL_UNARY(floor, floorf, floor)
TL_UNARY(ceil, ceilf, ceil)
TL_UNARY(trunc, truncf, trunc)
TL_UNARY(rint, rintf, rint)  // round half to even (the default rounding mode)
TL_UNARY(fabs, fabsf, fabs)
#undef TL_UNARY
TL_DEV float tl_fmod(float a, float b) { return fmodf(a, b); }
TL_DEV double tl_fmod(double a, double b) { return fmod(a, b); }
TL_DEV float tl_pow(float a, float b) { return powf(a, b); }
TL_DEV double tl_pow(double a, double b) { return pow(a, b); }
TL_DEV float tl_atan2(float a, float b) { return atan2f(a, b); }
TL_DEV double tl_atan2(double a, double b) { return atan2(a, b); }
TL_DEV float tl_copysign(float a, float b) { return copysignf(a, b); }
TL_DEV double tl_copysign(double a, double b) { return copysign(a, b); }
// 1 / sqrt(x), correctly rounded steps (rsqrtf is an approximation)
template <typename T> TL_DEV T tl_rsqrt(T x) { return T(1) / tl_sqrt(x); }

// ----- integer division: C truncation for fmod/trunc, Python floor for remainder/floor -----
// b == -1 is answered without dividing: INT_MIN / -1 traps on x86 (the emulator) and is
// undefined in C; PyTorch and numpy give the wrapped negation.
template <typename T> TL_DEV T tl_neg_wrap(T a) {
  return (T)(0ULL - (unsigned long long)(long long)a);
}
template <typename T> TL_DEV T tl_int_div_trunc(T a, T b, int* err) {
  if (b == 0) { atomicExch(err, 1); return T(0); }
  if (tl_is_neg(b) && b == T(-1)) return tl_neg_wrap(a);
  return (T)(a / b);
}
template <typename T> TL_DEV T tl_int_div_floor(T a, T b, int* err) {
  if (b == 0) { atomicExch(err, 1); return T(0); }
  if (tl_is_neg(b) && b == T(-1)) return tl_neg_wrap(a);
  T q = (T)(a / b);
  if ((T)(a % b) != 0 && tl_is_neg(a) != tl_is_neg(b)) q = (T)(q - 1);
  return q;
}
template <typename T> TL_DEV T tl_remainder_int(T a, T b, int* err) {
  if (b == 0) { atomicExch(err, 1); return T(0); }
  if (tl_is_neg(b) && b == T(-1)) return T(0);
  T r = (T)(a % b);
  if (r != 0 && tl_is_neg(r) != tl_is_neg(b)) r = (T)(r + b);
  return r;
}
template <typename T> TL_DEV T tl_fmod_int(T a, T b, int* err) {
  if (b == 0) { atomicExch(err, 1); return T(0); }
  if (tl_is_neg(b) && b == T(-1)) return T(0);
  return (T)(a % b);
}

// ----- float division family (PyTorch's CPU formulas, -0.0 and inf included) -----
template <typename T> TL_DEV T tl_remainder_float(T a, T b) {
  T m = tl_fmod(a, b);
  if (m != 0 && tl_is_neg(b) != tl_is_neg(m)) m += b;
  return m;
}
template <typename T> TL_DEV T tl_floor_divide_float(T a, T b) {
  if (b == 0) return a / b;
  T m = tl_fmod(a, b);
  T d = (a - m) / b;
  if (m != 0 && tl_is_neg(b) != tl_is_neg(m)) d -= T(1);
  if (d != 0) {
    T f = tl_floor(d);
    if (d - f > T(0.5)) f += T(1);
    return f;
  }
  return tl_copysign(T(0), a / b);
}
template <typename T> TL_DEV T tl_div_trunc_float(T a, T b) { return tl_trunc(a / b); }

// ----- rounding, sign, powers -----
template <typename T> TL_DEV T tl_round_decimals(T x, double decimals) {
  int d = (int)decimals;
  double p = 1.0;  // 10 ** |d|, exact in a double up to 1e22, as the interpreter's 10.0 ** d
  for (int k = 0; k < (d < 0 ? -d : d); ++k) p *= 10.0;
  if (d == 0) return tl_rint(x);
  if (d > 0) return tl_rint(x * (T)p) / (T)p;
  return tl_rint(x / (T)p) * (T)p;
}
template <typename T> TL_DEV T tl_sign(T x) {
  return (T)((int)(x > T(0)) - (int)tl_is_neg(x));  // sign(nan) is 0, as the interpreter's
}
template <typename T> TL_DEV T tl_abs(T x) { return tl_is_neg(x) ? (T)(-x) : x; }
TL_DEV float tl_abs(float x) { return fabsf(x); }
TL_DEV double tl_abs(double x) { return fabs(x); }
// Integer power in wrapping arithmetic; a negative exponent gives 0 except for bases 1, -1.
template <typename T> TL_DEV T tl_pow_int(T a, T b) {
  if (tl_is_neg(b)) {
    if (a == T(1)) return a;
    if (a == T(-1)) return (b % 2 != 0) ? a : T(1);
    return T(0);
  }
  unsigned long long result = 1, base = (unsigned long long)(long long)a;
  unsigned long long e = (unsigned long long)(long long)b;
  while (e) {
    if (e & 1ULL) result *= base;
    base *= base;
    e >>= 1;
  }
  return (T)result;
}

// ----- NaN-propagating min/max/clamp (ties return b, as numpy: maximum(-0.0, 0.0) is 0.0) -----
template <typename T> TL_DEV T tl_maximum(T a, T b) {
  if (tl_isnan(a)) return a;
  if (tl_isnan(b)) return b;
  return a > b ? a : b;
}
template <typename T> TL_DEV T tl_minimum(T a, T b) {
  if (tl_isnan(a)) return a;
  if (tl_isnan(b)) return b;
  return a < b ? a : b;
}
template <typename T> TL_DEV T tl_clamp(T x, T lo, T hi) { return tl_minimum(tl_maximum(x, lo), hi); }
template <typename T> TL_DEV T tl_clamp(T x, tl_none_t, T hi) { return tl_minimum(x, hi); }
template <typename T> TL_DEV T tl_clamp(T x, T lo, tl_none_t) { return tl_maximum(x, lo); }
template <typename T> TL_DEV T tl_clamp(T x, tl_none_t, tl_none_t) { return x; }

// ----- activations (the interpreter's formulas, in the compute dtype) -----
template <typename T> TL_DEV T tl_sigmoid(T x) { return T(1) / (T(1) + tl_exp(-x)); }
template <typename T> TL_DEV T tl_gelu(T x) {
  return T(0.5) * x * (T(1) + tl_erf(x * T(0.7071067811865476)));
}
template <typename T> TL_DEV T tl_gelu_tanh(T x) {
  T inner = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + tl_tanh(inner));
}
// gelu_backward: PyTorch's formulas (ATen GeluKernel), Phi(x) as erfc(-x / sqrt 2) / 2
template <typename T> TL_DEV T tl_gelu_backward(T g, T x) {
  T cdf = T(0.5) * tl_erfc(x * T(-0.7071067811865476));
  T pdf = tl_exp(T(-0.5) * x * x) * T(0.3989422804014327);
  return g * (cdf + x * pdf);
}
template <typename T> TL_DEV T tl_gelu_tanh_backward(T g, T x) {
  const T beta = T(0.7978845608028654), kappa = T(0.044715);
  T x_sq = x * x;
  T t = tl_tanh(beta * (x + kappa * x_sq * x));
  return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * (beta * (T(1) + T(3) * kappa * x_sq)));
}
// silu_backward: ATen's formula, sigmoid as 1 / (1 + exp(-x)) (NaN at +-inf, as ATen's)
template <typename T> TL_DEV T tl_silu_backward(T g, T x) {
  const T s = T(1) / (T(1) + tl_exp(-x));
  return g * s * (T(1) + x * (T(1) - s));
}
template <typename T> TL_DEV T tl_softplus(T x, T beta, T threshold) {
  T xb = x * beta;
  return xb > threshold ? x : tl_log1p(tl_exp(xb)) / beta;
}
template <typename T> TL_DEV T tl_mish(T x) { return x * tl_tanh(tl_log1p(tl_exp(x))); }
template <typename T> TL_DEV T tl_elu(T x, T alpha, T scale, T input_scale) {
  return x > T(0) ? x * scale : tl_expm1(x * input_scale) * (T)((double)alpha * (double)scale);
}
template <typename T> TL_DEV T tl_hardsigmoid(T x) {
  return tl_minimum(tl_maximum(x + T(3), T(0)), T(6)) / T(6);
}
template <typename T> TL_DEV T tl_lerp(T a, T b, T w) {
  return tl_abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}
template <typename T> TL_DEV T tl_frac(T x) { return x - tl_trunc(x); }

// ----- ops/activations.py, ops/elementwise_more.py -----
template <typename T> TL_DEV T tl_relu6(T x) {  // x itself on ties: relu6(-0.0) is -0.0
  return tl_is_neg(x) ? T(0) : (x > T(6) ? T(6) : x);
}
template <typename T> TL_DEV T tl_softshrink(T x, T lambd) {
  return x > lambd ? x - lambd : (x < -lambd ? x + lambd : x * T(0) + T(0));
}
template <typename T> TL_DEV T tl_log_sigmoid(T x) {
  return (x < T(0) ? x : T(0)) - tl_log1p(tl_exp(-tl_abs(x)));
}
TL_DEV float tl_lgamma(float x) { return lgammaf(x); }
TL_DEV double tl_lgamma(double x) { return lgamma(x); }
// PyTorch's shifts: a count outside [0, bits) gives 0 (left) or the sign fill (right); a left
// shift wraps in T (done unsigned: shifting a negative value left is undefined in C++).
template <typename T> TL_DEV T tl_lshift(T a, T b, int bits) {
  if (tl_is_neg(b) || (long long)b >= bits) return T(0);
  return (T)((unsigned long long)(long long)a << (int)b);
}
template <typename T> TL_DEV T tl_rshift(T a, T b, int bits) {
  if (tl_is_neg(b) || (long long)b >= bits) return (T)(tl_is_neg(a) ? -1 : 0);
  return (T)(a >> (int)b);
}

#endif  // TL_PRELUDE_CORE

// ----- float16 / bfloat16: loaded into float, computed in float, rounded once per op -----
#if defined(TL_NEEDS_HALF) && !defined(TL_PRELUDE_HALF)
#define TL_PRELUDE_HALF
#ifndef TL_EMULATE
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
TL_DEV float tl_load(__half h) { return __half2float(h); }
TL_DEV float tl_load(__nv_bfloat16 h) { return __bfloat162float(h); }
// A double rounds to float first, then to half: PyTorch's c10::Half(double) converts through
// float (torchlike/ops/casting.py: two roundings, e.g. 1 + 2^-11 + 2^-40 -> 1.0).
TL_DEV __half tl_to_half(float x) { return __float2half_rn(x); }
TL_DEV __half tl_to_half(double x) { return __float2half_rn((float)x); }
TL_DEV __nv_bfloat16 tl_to_bf16(float x) { return __float2bfloat16_rn(x); }
TL_DEV __nv_bfloat16 tl_to_bf16(double x) { return __float2bfloat16_rn((float)x); }
template <typename T> TL_DEV float tl_round_half(T x) { return __half2float(tl_to_half(x)); }
template <typename T> TL_DEV float tl_round_bf16(T x) { return __bfloat162float(tl_to_bf16(x)); }
// Trunc and floor division in float16/bfloat16 arithmetic, every step rounded to the half type,
// as PyTorch's half kernels divide (torchlike/ops/elementwise.py's _half_steps).
#define TL_HALF_DIVISION(SUF, R)                                                    \
  TL_DEV float tl_div_trunc_##SUF(float a, float b) { return tl_trunc(R(a / b)); } \
  TL_DEV float tl_floor_divide_##SUF(float a, float b) {                          \
    if (b == 0) return a / b;                                                      \
    float m = tl_fmod(a, b);                                                       \
    float d = R(R(a - m) / b);                                                     \
    if (m != 0 && tl_is_neg(b) != tl_is_neg(m)) d = R(d - 1.0f);                   \
    if (d != 0) {                                                                  \
      float f = tl_floor(d);                                                       \
      if (d - f > 0.5f) f += 1.0f;                                                 \
      return f;                                                                    \
    }                                                                              \
    return tl_copysign(0.0f, a / b);                                               \
  }
TL_HALF_DIVISION(half, tl_round_half)
TL_HALF_DIVISION(bf16, tl_round_bf16)
#endif  // TL_PRELUDE_HALF
