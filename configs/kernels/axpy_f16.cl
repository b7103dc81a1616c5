// z = a * x + y on halves (axpy_f16.toml). Tuned by optune; WG, VW, WPT and MATH come as -D
// defines. Work-group g owns the block of WG * VW * WPT halves from g * WG * VW * WPT; at step w
// its work-items move the WG neighbouring vectors of VW halves from w * WG * VW, so each step of
// the group is one contiguous, aligned stretch. Needs n to be a multiple of WG * VW * WPT (the
// file's rules).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// MATH arrives as a bare word (-DMATH=f16); give the words values #if can compare.
#define f16 1
#define f32 2

#if VW == 1
typedef half halfv;
typedef float floatv;
#define TO_FLOAT(v) ((float)(v))
#define TO_HALF(v) ((half)(v))
#elif VW == 2
typedef half2 halfv;
typedef float2 floatv;
#define TO_FLOAT(v) convert_float2(v)
#define TO_HALF(v) convert_half2(v)
#elif VW == 4
typedef half4 halfv;
typedef float4 floatv;
#define TO_FLOAT(v) convert_float4(v)
#define TO_HALF(v) convert_half4(v)
#elif VW == 8
typedef half8 halfv;
typedef float8 floatv;
#define TO_FLOAT(v) convert_float8(v)
#define TO_HALF(v) convert_half8(v)
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
    zv[i] = TO_HALF(a * TO_FLOAT(xv[i]) + TO_FLOAT(yv[i]));
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
