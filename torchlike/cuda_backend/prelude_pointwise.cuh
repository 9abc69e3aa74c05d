// torchlike CUDA prelude, part 2: the tl_* device functions of ops/elementwise_pointwise.py's
// `cuda` templates, appended to prelude.cuh (whose contract, typedefs and helpers they use).
// Each follows the op's ATen formula; the tables of digamma and the Bessel functions are
// ops/special_math.py's (Cephes), which tests/test_pointwise_ops.py compares with these.
#ifndef TL_PRELUDE_POINTWISE
#define TL_PRELUDE_POINTWISE

TL_DEV float tl_inf(float) { return __int_as_float(0x7f800000); }
TL_DEV double tl_inf(double) { return __longlong_as_double(0x7ff0000000000000LL); }
TL_DEV float tl_nan(float) { return __int_as_float(0x7fc00000); }
TL_DEV double tl_nan(double) { return __longlong_as_double(0x7ff8000000000000LL); }

// ----- signs, angles, classification -----
TL_DEV bool tl_signbit(float x) { return signbit(x); }
TL_DEV bool tl_signbit(double x) { return signbit(x); }
template <typename T> TL_DEV bool tl_isposinf(T x) { return isinf(x) && x > T(0); }
template <typename T> TL_DEV bool tl_isneginf(T x) { return isinf(x) && x < T(0); }
template <typename T> TL_DEV T tl_angle(T x) {
  return tl_isnan(x) ? x : (x < T(0) ? T(3.141592653589793) : T(0));
}

// ----- gcd / lcm: C's remainder; abs and products wrap in the type, as ATen's -----
template <typename T> TL_DEV T tl_abs_wrap(T x) { return tl_is_neg(x) ? tl_neg_wrap(x) : x; }
template <typename T> TL_DEV T tl_gcd(T a, T b) {
  a = tl_abs_wrap(a);
  b = tl_abs_wrap(b);
  while (a != 0) {
    const T c = a;
    a = (T)(b % a);
    b = c;
  }
  return b;
}
template <typename T> TL_DEV T tl_lcm(T a, T b) {
  const T g = tl_gcd(a, b);
  if (g == 0) return T(0);
  typedef decltype(a / g * b) W;  // int for the narrow types (abs there), else T itself
  // gcd can be -1 (gcd(int8 -128, 127)): MIN / -1 wraps (our rule; x86's idiv would trap)
  const W q = tl_is_neg(g) && g == T(-1) ? (W)(0ULL - (unsigned long long)(long long)a) : (W)(a / g);
  const W t = (W)((unsigned long long)(long long)q * (unsigned long long)(long long)b);
  return (T)tl_abs_wrap(t);
}

// ----- two-argument float functions -----
TL_DEV float tl_hypot(float a, float b) { return hypotf(a, b); }
TL_DEV double tl_hypot(double a, double b) { return hypot(a, b); }
template <typename T> TL_DEV T tl_logaddexp(T a, T b) {
  if (isinf(a) && a == b) return a;
  const T m = a < b ? b : a;
  return m + tl_log1p(tl_exp(-tl_abs(a - b)));
}
template <typename T> TL_DEV T tl_logaddexp2(T a, T b) {
  if (isinf(a) && a == b) return a;
  const T m = a < b ? b : a;
  return m + tl_log1p(tl_exp2(-tl_abs(a - b))) * T(1.4426950408889634);
}
template <typename T> TL_DEV T tl_xlogy(T x, T y) {
  if (tl_isnan(y)) return y;
  return x == T(0) ? T(0) : x * tl_log(y);
}
template <typename T> TL_DEV T tl_xlog1py(T x, T y) {
  if (tl_isnan(y)) return y;
  return x == T(0) ? T(0) : x * tl_log1p(y);
}

// ----- nextafter (in a half type: its values held in float), ldexp -----
TL_DEV float tl_nextafter(float a, float b) { return nextafterf(a, b); }
TL_DEV double tl_nextafter(double a, double b) { return nextafter(a, b); }
// `mantissa_bits` stored bits, smallest subnormal 2^min_exp, largest finite value `top`
TL_DEV float tl_next_half(float a, float b, int mantissa_bits, int min_exp, float top) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  if (isinf(a)) return copysignf(top, a);
  if (a == 0.0f) return copysignf(ldexpf(1.0f, min_exp), b);
  int e;
  const float m = frexpf(a, &e);  // a = m 2^e, 0.5 <= |m| < 1
  int k = e - 1 - mantissa_bits;
  if (k < min_exp) k = min_exp;
  const bool up = b > a;
  if (up != (a > 0.0f) && fabsf(m) == 0.5f && k > min_exp) k -= 1;  // below a power of two
  const float step = ldexpf(1.0f, k);
  return up ? a + step : a - step;
}
TL_DEV float tl_nextafter_f16(float a, float b) { return tl_next_half(a, b, 10, -24, 65504.0f); }
TL_DEV float tl_nextafter_bf16(float a, float b) {
  return tl_next_half(a, b, 7, -133, 3.38953139e38f);
}
// an integer exponent held in a float, clamped where every float result saturates
template <typename T> TL_DEV int tl_ldexp_exponent(T e) {
  return (int)(e < T(-2000) ? T(-2000) : (e > T(2000) ? T(2000) : e));
}
TL_DEV float tl_ldexp(float x, float e) { return ldexpf(x, tl_ldexp_exponent(e)); }
TL_DEV double tl_ldexp(double x, double e) { return ldexp(x, tl_ldexp_exponent(e)); }

// ----- nan_to_num, logit, sinc, entr -----
template <typename T> TL_DEV T tl_nan_to_num(T x, T nan, T posinf, T neginf) {
  return tl_isnan(x) ? nan : (isinf(x) ? (x > T(0) ? posinf : neginf) : x);
}
template <typename T> TL_DEV T tl_logit_clamped(T x, T lo, T hi) {
  const T c = x < lo ? lo : (x > hi ? hi : x);
  return tl_log(c / (T(1) - c));
}
// logit_backward (ops/elementwise_backward.py): ATen's scalar loop, g * inf at x = 0 (-0.0 too)
template <typename T> TL_DEV T tl_logit_backward(T g, T x, T lo, T hi, bool nan_outside) {
  if (x < lo || x > hi) return nan_outside ? tl_nan(x) : T(0);
  return (x == T(0) || x == T(1)) ? g * tl_inf(x) : g / (x * (T(1) - x));
}
template <typename T> TL_DEV T tl_sinc(T x) {
  if (x == T(0)) return T(1);
  const T p = x * T(3.141592653589793);  // rounded in T, as ATen's product
  return tl_sin(p) / p;
}
template <typename T> TL_DEV T tl_entr(T x) {
  if (tl_isnan(x)) return x;
  if (x > T(0)) return -x * tl_log(x);
  return x == T(0) ? T(0) : -tl_inf(x);
}

// ----- digamma, i0, i0e, i1, i1e (ATen's Math.h, Cephes) -----
__constant__ double TL_I0E_A[30] = {
  -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
  1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
  -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
  9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
  -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
  1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
  -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
  1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
  -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
  1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1};
__constant__ double TL_I0E_B[25] = {
  -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
  3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
  1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
  -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
  7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
  -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
  3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
  2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
  8.04490411014108831608E-1};
__constant__ double TL_I1E_A[29] = {
  2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
  -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
  3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
  -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
  9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
  -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
  4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
  -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
  2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
  -1.76416518357834055153E-1, 2.52587186443633654823E-1};
__constant__ double TL_I1E_B[25] = {
  7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
  -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
  -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
  4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
  -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
  3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
  -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
  -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
  7.78576235018280120474E-1};
__constant__ double TL_DIGAMMA_A[7] = {
  8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
  -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
  8.33333333333333333333E-2};

// Cephes chbevl: the Chebyshev series `table` (highest order first) at x, in T
#define TL_CHBEVL(name, table, n)                                   \
  template <typename T> TL_DEV T name(T x) {                        \
    T b0 = (T)table[0], b1 = T(0), b2 = T(0);                       \
    _Pragma("unroll") for (int i = 1; i < n; ++i) {                 \
      b2 = b1;                                                      \
      b1 = b0;                                                      \
      b0 = x * b1 - b2 + (T)table[i];                               \
    }                                                               \
    return T(0.5) * (b0 - b2);                                      \
  }
TL_CHBEVL(tl_chbevl_i0e_a, TL_I0E_A, 30)
TL_CHBEVL(tl_chbevl_i0e_b, TL_I0E_B, 25)
TL_CHBEVL(tl_chbevl_i1e_a, TL_I1E_A, 29)
TL_CHBEVL(tl_chbevl_i1e_b, TL_I1E_B, 25)
#undef TL_CHBEVL

// ATen's calc_i0 / calc_i0e / calc_i1 / calc_i1e on x = |input|, e = exp(x) or 1 (scaled)
template <typename T> TL_DEV T tl_bessel0(T x, T e) {
  return x <= T(8) ? e * tl_chbevl_i0e_a(x / T(2) - T(2))
                   : e * tl_chbevl_i0e_b(T(32) / x - T(2)) / tl_sqrt(x);
}
template <typename T> TL_DEV T tl_bessel1(T x, T e) {
  return x <= T(8) ? e * x * tl_chbevl_i1e_a(x / T(2) - T(2))
                   : e * tl_chbevl_i1e_b(T(32) / x - T(2)) / tl_sqrt(x);
}
template <typename T> TL_DEV T tl_i0(T x) { return tl_bessel0(tl_abs(x), tl_exp(tl_abs(x))); }
template <typename T> TL_DEV T tl_i0e(T x) { return tl_bessel0(tl_abs(x), T(1)); }
template <typename T> TL_DEV T tl_i1(T x) {
  const T out = tl_bessel1(tl_abs(x), tl_exp(tl_abs(x)));
  return x < T(0) ? -out : out;
}
template <typename T> TL_DEV T tl_i1e(T x) {
  const T out = tl_bessel1(tl_abs(x), T(1));
  return x < T(0) ? -out : out;
}

// cot(pi r) for |r| < 1: CUDA's sinpi / cospi need no argument reduction (tan's keeps a
// local-memory array); the emulator's host library has no sinpi
#ifdef TL_EMULATE
TL_DEV double tl_cot_pi(double r) { return 1.0 / tan(3.141592653589793 * r); }
#else
TL_DEV double tl_cot_pi(double r) { return cospi(r) / sinpi(r); }
#endif

// ATen's calc_digamma: +-0 -> -+inf, negative integers (and -inf) -> nan, reflection for
// other negatives (its term in double, as ATen's float version), x pushed to >= 10, then the
// asymptotic series
template <typename T> TL_DEV T tl_digamma(T x) {
  if (x == T(0)) return tl_copysign(tl_inf(x), -x);
  T correction = T(0);
  if (x < T(0)) {
    if (x == tl_trunc(x)) return tl_nan(x);
    correction = (T)(-3.141592653589793 * tl_cot_pi((double)(x - tl_trunc(x))));
    x = T(1) - x;
  }
  T result = T(0);
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return result + T(2.25175258906672110764) + correction;
  T y = T(0);
  if (x < T(1.0e17)) {
    const T z = T(1) / (x * x);
    T poly = T(0);
#pragma unroll
    for (int i = 0; i < 7; ++i) poly = poly * z + (T)TL_DIGAMMA_A[i];
    y = z * poly;
  }
  return result + tl_log(x) - T(0.5) / x - y + correction;
}

#endif  // TL_PRELUDE_POINTWISE
