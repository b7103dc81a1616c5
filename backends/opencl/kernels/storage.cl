// The element types of a built-in kernel's buffers in global memory, the type its arithmetic,
// local memory and accumulators use, and the conversions between them (included by gemm.cl,
// conv2d.cl, depthwise_conv2d.cl and split_k.cl). Defines: OPTUNE_F16 for f16, OPTUNE_BF16 for
// bf16, OPTUNE_I8 for int8, else float32.
// - f16 goes through vload_half/vstore_half_rte, core OpenCL that needs no cl_khr_fp16 (no half
//   arithmetic); bf16 is its bits in a ushort, widened by a shift and rounded to nearest even when
//   stored. Both compute in float32.
// - i8: s8 inputs (activations and weights), each widened to int as it is loaded, int32
//   arithmetic and an int32 output: exact, as the reference is.
// elem_t: an input element; out_t: an output element; ACC_T: the arithmetic type (float or int),
// a macro so that CAT(ACC_T, n) names its vectors; acc_t the same as a type.
// ELEM_LOAD(p, i) and ELEM_LOADV(n, p, i) read one input element at p + i (n of them: 2, 4, 8) as
// ACC_T; OUT_STORE(p, i, v) and OUT_STOREV(n, p, i, v) write one output (n of them) from ACC_T.
// MAD(a, b, c) is a * b + c in ACC_T.
#define STORAGE_CAT_(a, b) a##b
#define STORAGE_CAT(a, b) STORAGE_CAT_(a, b)

#if defined(OPTUNE_I8)
#define ACC_T int
#define MAD(a, b, c) ((a) * (b) + (c))
#else
#define ACC_T float
#define MAD(a, b, c) mad((a), (b), (c))
#endif
typedef ACC_T acc_t;

#if defined(OPTUNE_F16)
typedef half elem_t;
#define ELEM_LOAD(p, i) vload_half((i), (p))
#define OUT_STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define ELEM_LOADV(n, p, i) STORAGE_CAT(vload_half, n)(0, (p) + (i))
#define OUT_STOREV(n, p, i, v) STORAGE_CAT(STORAGE_CAT(vstore_half, n), _rte)((v), 0, (p) + (i))
#elif defined(OPTUNE_BF16)
typedef ushort elem_t;
#define BF16_ROUND(u) (((u) + 0x7fffu + (((u) >> 16) & 1u)) >> 16)
inline float bf16_load(__global const ushort* p, int i) { return as_float((uint)p[i] << 16); }
inline void bf16_store(__global ushort* p, int i, float v) {
  const uint u = as_uint(v);
  p[i] = (ushort)BF16_ROUND(u);
}
#define ELEM_LOAD(p, i) bf16_load((p), (i))
#define OUT_STORE(p, i, v) bf16_store((p), (i), (v))
#define ELEM_LOADV(n, p, i) \
  STORAGE_CAT(as_float, n)(STORAGE_CAT(convert_uint, n)(STORAGE_CAT(vload, n)(0, (p) + (i))) << 16)
#define OUT_STOREV(n, p, i, v) \
  STORAGE_CAT(vstore, n)(STORAGE_CAT(convert_ushort, n)(BF16_ROUND(STORAGE_CAT(as_uint, n)(v))), 0, (p) + (i))
#elif defined(OPTUNE_I8)
typedef char elem_t;
typedef int out_t;
#define ELEM_LOAD(p, i) ((int)(p)[i])
#define OUT_STORE(p, i, v) ((p)[i] = (v))
#define ELEM_LOADV(n, p, i) STORAGE_CAT(convert_int, n)(STORAGE_CAT(vload, n)(0, (p) + (i)))
#define OUT_STOREV(n, p, i, v) STORAGE_CAT(vstore, n)((v), 0, (p) + (i))
#else
typedef float elem_t;
#define ELEM_LOAD(p, i) ((p)[i])
#define OUT_STORE(p, i, v) ((p)[i] = (v))
#define ELEM_LOADV(n, p, i) STORAGE_CAT(vload, n)(0, (p) + (i))
#define OUT_STOREV(n, p, i, v) STORAGE_CAT(vstore, n)((v), 0, (p) + (i))
#endif
#if !defined(OPTUNE_I8)
typedef elem_t out_t;  // the output in the inputs' type
#endif
