// torchlike CUDA prelude for row reductions (row_codegen.py): combining partial results across
// the threads of a row.  Every function is an all-reduce: each thread of the warp (or block)
// gets the same bits, because each step combines two values commutatively (a + b == b + a)
// and the cross-warp step folds the warps' values in one fixed order in every thread.
#ifndef TL_PRELUDE_ROWS
#define TL_PRELUDE_ROWS

enum { TL_SUM = 0, TL_MAX = 1, TL_MIN = 2 };

// max/min propagate NaN (PyTorch's amax/amin, and the softmax family's row max)
template <int OP, typename T> TL_DEV T tl_combine(T a, T b) {
  if constexpr (OP == TL_SUM) {
    return a + b;
  } else if constexpr (OP == TL_MAX) {
    return (a > b || a != a) ? a : b;
  } else {
    return (a < b || a != a) ? a : b;
  }
}

// W aligned lanes of a warp (32: all of them): an xor butterfly (log2 W shuffles).  The xor
// offsets stay below W, so each group of W lanes reduces its own row; every lane of the warp
// takes part in every shuffle (the full mask).
template <int OP, int W = 32, typename T> TL_DEV T tl_warp_allreduce(T v) {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "a power of two up to 32 lanes");
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v = tl_combine<OP>(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// A block of blockDim.x threads (a multiple of 32, at most 1024): each warp's value goes to
// `sh[warp]`, one barrier, then every thread folds sh[0..warps) in order.  The caller gives
// each call its own `sh` and keeps it untouched until a later barrier (the next pass's, or a
// second buffer in a kernel with one reduction).
template <int OP, typename T> TL_DEV T tl_block_allreduce(T v, T* sh) {
  v = tl_warp_allreduce<OP>(v);
  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = sh[0];
  const unsigned int warps = blockDim.x >> 5;
  for (unsigned int w = 1; w < warps; ++w) r = tl_combine<OP>(r, sh[w]);
  return r;
}
#endif  // TL_PRELUDE_ROWS
