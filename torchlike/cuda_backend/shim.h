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

// ----- blocks that cooperate: __shared__, __syncthreads, __shfl_*_sync (row reductions) -----
// A kernel that uses them is launched through tl_emu_launch: the threads of one block are
// fibers (ucontext) on this OS thread, each run until it reaches a barrier or a shuffle, in a
// fixed order (the launcher's `order`: 0 forward, 1 reverse, 2 alternating per round; 3 and 4
// skewed, forward or reverse: one warp runs through its shuffles as far as it can before the
// next warp starts -- the largest lead one warp can take over another on a GPU).  The
// scheduler releases a warp's shuffle once every lane its mask names has arrived (and computes
// every lane's result before any lane runs on), and a __syncthreads once every live thread of
// the block waits at one.  Anything else is an error the launcher returns: a barrier some
// thread never reaches (it exited, or waits at a shuffle), a shuffle whose lanes never all
// arrive.  Because a thread runs on until it blocks, a missing __syncthreads makes one thread
// read shared memory before (forward order) or after (reverse, skewed orders) another writes
// it: the tests run row kernels in several orders.  __shared__ variables are function statics: one copy,
// shared by the block's fibers (blocks run one after another).
#include <ucontext.h>
#include <vector>

#define __shared__ static thread_local

enum { TL_EMU_RUN = 0, TL_EMU_BARRIER = 1, TL_EMU_SHFL = 2, TL_EMU_DONE = 3 };
struct tl_emu_fiber {
  ucontext_t ctx;
  int state;
  unsigned mask;
  int src;                      // the lane read by the pending shuffle (-1: its own value)
  unsigned char slot[8], got[8];  // the value offered, the value received
};
struct tl_emu_sched {
  std::vector<tl_emu_fiber> f;
  unsigned n = 0, cur = 0;
  ucontext_t main;
  void** args = nullptr;
};
static thread_local tl_emu_sched* tl_emu = nullptr;

static inline void tl_emu_wait(int state) {
  tl_emu_sched* s = tl_emu;
  s->f[s->cur].state = state;
  swapcontext(&s->f[s->cur].ctx, &s->main);
}
static inline void __syncthreads() { tl_emu_wait(TL_EMU_BARRIER); }

enum { TL_SHFL_IDX, TL_SHFL_XOR, TL_SHFL_DOWN, TL_SHFL_UP };
template <typename T> static inline T tl_emu_shfl(unsigned mask, T v, int kind, int arg, int width) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  tl_emu_sched* s = tl_emu;
  tl_emu_fiber& me = s->f[s->cur];
  const int lane = (int)(s->cur & 31u);
  if (width != 32) { me.src = -2; tl_emu_wait(TL_EMU_SHFL); }  // not emulated: an error
  int src = kind == TL_SHFL_IDX ? arg : kind == TL_SHFL_XOR ? lane ^ arg
          : kind == TL_SHFL_DOWN ? lane + arg : lane - arg;
  me.src = (src < 0 || src > 31) ? -1 : src;  // out of the warp: the lane keeps its value
  me.mask = mask;
  std::memcpy(me.slot, &v, sizeof(T));
  tl_emu_wait(TL_EMU_SHFL);
  T out;
  std::memcpy(&out, s->f[s->cur].got, sizeof(T));
  return out;
}
template <typename T> static inline T __shfl_sync(unsigned m, T v, int l, int w = 32) { return tl_emu_shfl(m, v, TL_SHFL_IDX, l, w); }
template <typename T> static inline T __shfl_xor_sync(unsigned m, T v, int l, int w = 32) { return tl_emu_shfl(m, v, TL_SHFL_XOR, l, w); }
template <typename T> static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) { return tl_emu_shfl(m, v, TL_SHFL_DOWN, (int)d, w); }
template <typename T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) { return tl_emu_shfl(m, v, TL_SHFL_UP, (int)d, w); }

// Release the warps whose pending shuffles can complete; true if any did.  A lane's mask must
// name itself and its source, every lane it names must be waiting at a shuffle with that mask.
static inline int tl_emu_shuffles(tl_emu_sched* s, bool* released) {
  *released = false;
  for (unsigned w = 0; w < s->n; w += 32) {
    unsigned lanes = s->n - w < 32 ? s->n - w : 32;
    bool any = false;
    for (unsigned l = 0; l < lanes; ++l) any |= s->f[w + l].state == TL_EMU_SHFL;
    if (!any) continue;
    bool ready = true;
    for (unsigned l = 0; l < lanes && ready; ++l) {
      tl_emu_fiber& f = s->f[w + l];
      if (f.state != TL_EMU_SHFL) continue;
      if (f.src == -2 || !((f.mask >> l) & 1u)) return 2;  // width != 32, or not in its mask
      for (unsigned k = 0; k < 32; ++k)
        if ((f.mask >> k) & 1u) {
          if (k >= lanes) return 2;  // the mask names a lane the block does not have
          if (s->f[w + k].state != TL_EMU_SHFL) ready = false;
          else if (s->f[w + k].mask != f.mask) return 2;
        }
      if (f.src >= 0 && !((f.mask >> f.src) & 1u)) return 2;  // reads a lane outside the mask
    }
    if (!ready) continue;
    for (unsigned l = 0; l < lanes; ++l) {
      tl_emu_fiber& f = s->f[w + l];
      if (f.state != TL_EMU_SHFL) continue;
      std::memcpy(f.got, f.src < 0 ? f.slot : s->f[w + f.src].slot, 8);
    }
    for (unsigned l = 0; l < lanes; ++l)
      if (s->f[w + l].state == TL_EMU_SHFL) s->f[w + l].state = TL_EMU_RUN;
    *released = true;
  }
  return 0;
}

static thread_local void (*tl_emu_body)() = nullptr;
static void tl_emu_trampoline() {
  tl_emu_body();
  tl_emu->f[tl_emu->cur].state = TL_EMU_DONE;  // then uc_link: back to the scheduler
}

// Run `body` (the kernel called with its arguments) as grid x block threads.  0: done;
// 1: a __syncthreads not reached by every live thread of a block; 2: a shuffle that cannot
// complete or is not emulated (width != 32).
static inline int tl_emu_launch(void** args, unsigned grid, unsigned block, int order,
                                void (*body)()) {
  const size_t stack = 256 * 1024;
  tl_emu_sched s;
  s.n = block;
  s.args = args;
  s.f.resize(block);
  std::vector<char> stacks((size_t)block * stack);
  tl_emu_sched* saved = tl_emu;
  tl_emu = &s;
  tl_emu_body = body;
  gridDim = {grid, 1, 1}; blockDim = {block, 1, 1};
  int status = 0;
  for (unsigned b = 0; b < grid && status == 0; ++b) {
    blockIdx = {b, 0, 0};
    for (unsigned t = 0; t < block; ++t) {
      tl_emu_fiber& f = s.f[t];
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = stacks.data() + (size_t)t * stack;
      f.ctx.uc_stack.ss_size = stack;
      f.ctx.uc_link = &s.main;
      makecontext(&f.ctx, tl_emu_trampoline, 0);
      f.state = TL_EMU_RUN;
    }
    for (unsigned round = 0;; ++round) {
      const bool reverse = order == 1 || order == 4 || (order == 2 && (round & 1u));
      bool released = false;
      if (order >= 3) {  // skewed: each warp runs as far as it can before the next starts
        const unsigned warps = (block + 31) / 32;
        for (unsigned k = 0; k < warps && status == 0; ++k) {
          const unsigned w = reverse ? warps - 1 - k : k;
          do {
            for (unsigned t = 32 * w; t < block && t < 32 * w + 32; ++t) {
              if (s.f[t].state != TL_EMU_RUN) continue;
              s.cur = t;
              threadIdx = {t, 0, 0};
              swapcontext(&s.main, &s.f[t].ctx);
            }
          } while ((status = tl_emu_shuffles(&s, &released)) == 0 && released);
        }
        released = false;
      } else {
        for (unsigned k = 0; k < block; ++k) {
          unsigned t = reverse ? block - 1 - k : k;
          if (s.f[t].state != TL_EMU_RUN) continue;
          s.cur = t;
          threadIdx = {t, 0, 0};
          swapcontext(&s.main, &s.f[t].ctx);
        }
        status = tl_emu_shuffles(&s, &released);
      }
      if (status != 0) break;
      if (released) continue;
      unsigned at_barrier = 0, done = 0;
      for (unsigned t = 0; t < block; ++t) {
        at_barrier += s.f[t].state == TL_EMU_BARRIER;
        done += s.f[t].state == TL_EMU_DONE;
      }
      if (done == block) break;
      if (at_barrier + done != block || done) { status = at_barrier ? 1 : 2; break; }
      for (unsigned t = 0; t < block; ++t) s.f[t].state = TL_EMU_RUN;
    }
  }
  tl_emu = saved;
  return status;
}
