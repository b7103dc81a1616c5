// The element type of a built-in kernel's buffers in global memory, and its conversions to and
// from float (included by gemm.cl and conv2d.cl; their arithmetic, local memory and accumulation
// stay float32). Defines: OPTUNE_F16 for f16, OPTUNE_BF16 for bf16, else float32.
// f16 goes through vload_half/vstore_half_rte, core OpenCL that needs no cl_khr_fp16 (no half
// arithmetic); bf16 is its bits in a ushort, widened by a shift and rounded to nearest even when
// stored. ELEM_LOAD(p, i) and ELEM_STORE(p, i, v) move one element at p + i; ELEM_LOADV(n, p, i)
// and ELEM_STOREV(n, p, i, v) n of them (2, 4, 8) as a floatn.
#define STORAGE_CAT_(a, b) a##b
#define STORAGE_CAT(a, b) STORAGE_CAT_(a, b)

#if defined(OPTUNE_F16)
typedef half elem_t;
#define ELEM_LOAD(p, i) vload_half((i), (p))
#define ELEM_STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define ELEM_LOADV(n, p, i) STORAGE_CAT(vload_half, n)(0, (p) + (i))
#define ELEM_STOREV(n, p, i, v) STORAGE_CAT(STORAGE_CAT(vstore_half, n), _rte)((v), 0, (p) + (i))
#elif defined(OPTUNE_BF16)
typedef ushort elem_t;
#define BF16_ROUND(u) (((u) + 0x7fffu + (((u) >> 16) & 1u)) >> 16)
inline float bf16_load(__global const ushort* p, int i) { return as_float((uint)p[i] << 16); }
inline void bf16_store(__global ushort* p, int i, float v) {
  const uint u = as_uint(v);
  p[i] = (ushort)BF16_ROUND(u);
}
#define ELEM_LOAD(p, i) bf16_load((p), (i))
#define ELEM_STORE(p, i, v) bf16_store((p), (i), (v))
#define ELEM_LOADV(n, p, i) \
  STORAGE_CAT(as_float, n)(STORAGE_CAT(convert_uint, n)(STORAGE_CAT(vload, n)(0, (p) + (i))) << 16)
#define ELEM_STOREV(n, p, i, v) \
  STORAGE_CAT(vstore, n)(STORAGE_CAT(convert_ushort, n)(BF16_ROUND(STORAGE_CAT(as_uint, n)(v))), 0, (p) + (i))
#else
typedef float elem_t;
#define ELEM_LOAD(p, i) ((p)[i])
#define ELEM_STORE(p, i, v) ((p)[i] = (v))
#define ELEM_LOADV(n, p, i) STORAGE_CAT(vload, n)(0, (p) + (i))
#define ELEM_STOREV(n, p, i, v) STORAGE_CAT(vstore, n)((v), 0, (p) + (i))
#endif
