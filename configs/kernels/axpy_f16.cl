// z = a * x + y on halves (axpy_f16.toml). Tuned by optune; WG, VW, WPT and MATH come as -D
// defines. Work-group g owns the block of WG * VW * WPT halves from g * WG * VW * WPT; at step w
// its work-items move the WG neighbouring vectors of VW halves from w * WG * VW, so each step of
// the group is one contiguous, aligned stretch. Needs n to be a multiple of WG * VW * WPT (the
// file's rules).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// MATH arrives as a bare word (-DMATH=f16); give the words values #if can compare.
#define f16 1
#define f32 2

// MATH=f32 reads and writes through vload_halfN / vstore_halfN (core OpenCL, with no need of
// cl_khr_fp16's conversions, which NVIDIA's driver lacks for vectors): LOAD(i, p) is the i-th
// vector of p as floats, STORE(v, i, p) rounds v into it. VLOAD_HALF/VSTORE_HALF name the
// functions of a width, so that a build can map them elsewhere (the tests map half to float on
// devices without half).
#ifndef VLOAD_HALF
#define VLOAD_HALF(n) vload_half##n
#define VSTORE_HALF(n) vstore_half##n
#endif
#if VW == 1
typedef half halfv;
#define LOAD(i, p) ((float)(p)[i])
#define STORE(v, i, p) ((p)[i] = (half)(v))
#else
#define CAT(a, b) a##b
#define WITH_WIDTH(f, n) f(n)  // n expanded first: VW's value reaches the ## of f
#define HALF_VECTOR(n) CAT(half, n)
typedef WITH_WIDTH(HALF_VECTOR, VW) halfv;
#define LOAD(i, p) WITH_WIDTH(VLOAD_HALF, VW)(i, p)
#define STORE(v, i, p) WITH_WIDTH(VSTORE_HALF, VW)(v, i, p)
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void axpy_f16(__global const half* restrict x, __global const half* restrict y, __global half* restrict z, const float a) {
  __global const halfv* xv = (__global const halfv*)x;
  __global const halfv* yv = (__global const halfv*)y;
  __global halfv* zv = (__global halfv*)z;
  const size_t first = get_group_id(0) * (size_t)(WG * WPT) + get_local_id(0);  // in vectors
#if MATH == f16
  const half a_half = (half)a;
  for (int w = 0; w < WPT; ++w) {
    const size_t i = first + w * WG;
    zv[i] = a_half * xv[i] + yv[i];
  }
#elif MATH == f32
  for (int w = 0; w < WPT; ++w) {
    const size_t i = first + w * WG;
    STORE(a * LOAD(i, x) + LOAD(i, y), i, z);
  }
#else
#error MATH must be f16 or f32
#endif
}

// The reference: one work-item per element, in float, rounded to half once.
__kernel void axpy_f16_naive(__global const half* restrict x, __global const half* restrict y, __global half* restrict z, const float a) {
  const size_t i = get_global_id(0);
  z[i] = (half)(a * (float)x[i] + (float)y[i]);
}
