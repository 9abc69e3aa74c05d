"""Named templates for the skeleton of a generated CUDA kernel (CuPy's style).

The generator (``codegen.py``) fills them; every placeholder is a string.  ``{uidx}`` is the
unsigned index type (``unsigned int`` or ``unsigned long long``, see ``layout.Plan.index_bits``).

``MODULE`` -- the translation unit: macros, the prelude (``prelude.cuh``, inlined so the source
is self-contained), then one or two entry points::

    #define TL_NEEDS_HALF 1        // only when a float16/bfloat16 array is read or written
    #ifndef TL_PRELUDE_CORE ... (prelude.cuh) ...
    // torchlike fused kernel: aten::mul, aten::tanh
    extern "C" __global__ void __launch_bounds__(256) tl_fused_3f2a(
        const float32* __restrict__ in0, const float32* __restrict__ in1,
        float32* __restrict__ out0, unsigned int n) { ... }

``GRID_STRIDE`` -- the scalar entry point: a grid-stride loop over the flat index ``i``::

    const unsigned int tl_step = (unsigned int)blockDim.x * gridDim.x;
    for (unsigned int i = (unsigned int)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += tl_step) {
      const float32 a0 = in0[i];
      const float32 a1 = in1[i];
      const float32 v0 = (float32)(a0 * a1);
      const float32 v1 = (float32)(tl_tanh(v0));
      out0[i] = v1;
    }

``VECTOR`` -- the ``<name>_vec`` entry point of a contiguous kernel: each thread moves
``sizeof(T) * V`` bytes per array with one aligned load/store (16 bytes for the widest dtype:
``tl_vec<float32, 4>`` compiles to ``ld.global.v4.f32``), then a scalar loop does the tail::

    const unsigned int tl_nvec = n / 4;
    for (unsigned int j = ...; j < tl_nvec; j += tl_step) {
      const tl_vec<float32, 4> L0 = reinterpret_cast<const tl_vec<float32, 4>*>(in0)[j];
      tl_vec<float32, 4> R0;
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float32 a0 = L0.v[u];
        ...
        R0.v[u] = v1;
      }
      reinterpret_cast<tl_vec<float32, 4>*>(out0)[j] = R0;
    }
    for (unsigned int i = tl_nvec * 4 + ...; i < n; i += tl_step) { ...scalar body... }

The strided path's body starts by unravelling ``i`` over the live dims (innermost first)::

    unsigned int r = i;
    const unsigned int i1 = r % size1; r /= size1;
    const unsigned int i0 = r;
    const float32 a0 = in0[(int)i0 * st0_0 + (int)i1 * st0_1];
"""

MODULE = """\
// torchlike CUDA kernel {name} (generator v{version}); fused: {ops}
{defines}{prelude}
{entries}"""

ENTRY = """\
extern "C" __global__ void __launch_bounds__({block}) {name}({params}) {{
{unpack}{body}}}
"""

GRID_STRIDE = """\
  const {uidx} tl_step = ({uidx})blockDim.x * gridDim.x;
  for ({uidx} i = {start}({uidx})blockIdx.x * blockDim.x + threadIdx.x; i < n; i += tl_step) {{
{body}  }}
"""

VECTOR = """\
  const {uidx} tl_step = ({uidx})blockDim.x * gridDim.x;
  const {uidx} tl_nvec = n / {vec};
  for ({uidx} j = ({uidx})blockIdx.x * blockDim.x + threadIdx.x; j < tl_nvec; j += tl_step) {{
{loads}#pragma unroll
    for (int u = 0; u < {vec}; ++u) {{
{body}    }}
{stores}  }}
"""

TAIL_START = "tl_nvec * {vec} + "
