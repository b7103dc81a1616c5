// A sum reduction (reduction.toml): work-group p sums part p of `in`, the floats p * L to
// p * L + L - 1 with L = n / parts, into out[p]. Tuned by optune; WG, VW, UNROLL and ACCESS come as
// -D defines. Each work-item keeps UNROLL vector accumulators of VW floats, adds its share of the
// part's vectors, folds them into one float, and the group adds those in a tree in local memory.
// Needs L to be a multiple of VW (the file's rules), so that vector loads are aligned; any L is
// covered (work-items with nothing to read add 0).

// ACCESS arrives as a bare word (-DACCESS=strided); give the words values #if can compare.
#define strided 1
#define blocked 2

#if VW == 1
typedef float floatv;
#define FOLD(v) (v)
#elif VW == 2
typedef float2 floatv;
#define FOLD(v) ((v).s0 + (v).s1)
#elif VW == 4
typedef float4 floatv;
#define FOLD(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#elif VW == 8
typedef float8 floatv;
#define FOLD(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduction(__global const float* restrict in, __global float* restrict out, const int n, const int parts) {
  __local float scratch[WG];
  const int part = get_group_id(0);
  const int lid = get_local_id(0);
  const int vectors = n / parts / VW;  // in this part
  __global const floatv* part_in = (__global const floatv*)(in + (size_t)part * (n / parts));

  floatv acc[UNROLL];
  for (int u = 0; u < UNROLL; ++u) acc[u] = (floatv)(0.0f);

#if ACCESS == strided
  // Step k reads vectors k * WG * UNROLL + u * WG + lid: the group reads WG neighbours at once.
  int v = lid;
  for (; v + (UNROLL - 1) * WG < vectors; v += UNROLL * WG)
    for (int u = 0; u < UNROLL; ++u) acc[u] += part_in[v + u * WG];
  for (; v < vectors; v += WG) acc[0] += part_in[v];  // the part's tail, fewer than UNROLL steps
#elif ACCESS == blocked
  // Work-item lid reads its own run of ceil(vectors / WG) neighbouring vectors.
  const int run = (vectors + WG - 1) / WG;
  const int begin = min(lid * run, vectors);
  const int end = min(begin + run, vectors);
  int v = begin;
  for (; v + UNROLL <= end; v += UNROLL)
    for (int u = 0; u < UNROLL; ++u) acc[u] += part_in[v + u];
  for (; v < end; ++v) acc[0] += part_in[v];
#else
#error ACCESS must be strided or blocked
#endif

  floatv total = acc[0];
  for (int u = 1; u < UNROLL; ++u) total += acc[u];
  scratch[lid] = FOLD(total);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = WG / 2; stride > 0; stride /= 2) {  // WG is a power of two
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[part] = scratch[0];
}

// The reference: one work-item per part, a sequential sum with Kahan's compensation, so that it is
// nearly exact whatever the part's length (the file's tolerance is for the config's rounding).
__kernel void reduction_naive(__global const float* restrict in, __global float* restrict out, const int n, const int parts) {
  const int part = get_global_id(0);
  if (part >= parts) return;
  const int length = n / parts;
  __global const float* part_in = in + (size_t)part * length;
  float sum = 0.0f, compensation = 0.0f;
  for (int i = 0; i < length; ++i) {
    const float y = part_in[i] - compensation;
    const float t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
  out[part] = sum;
}
