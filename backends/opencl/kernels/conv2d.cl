// optune's OpenCL direct convolution: Y[N,K,P,Q] = conv(X[N,C,H,W], F[K,C/groups,R,S]), float32
// arithmetic on buffers of float32, f16 or bf16, int32 on s8 (storage.cl), NCHW, any stride,
// padding, dilation and groups. A work-group computes a tile of TILE_K output
// channels x TILE_P rows x TILE_Q columns of one image with TQ x TP x (TK x TC) work-items; each
// work-item computes KPT channels x PPT rows (strided by TP, so neighbours read neighbouring rows)
// x QPT consecutive columns in registers, summed over its share of the input channels. With TC > 1
// the TC slices of a work-group split the input channels and add their partial sums in local
// memory at the end: at batch 1 the deep layers (7x7 x 512) have too few outputs to fill a GPU
// with one work-item per output, and splitting the reduction gives the parallelism back.
// Defines from the conv2d.opencl template:
//   N C H W K R S P Q STRIDE PAD DIL   the shape; CPG, KPG: input and output channels per group
//   TQ TP TK, QPT PPT KPT              work-items per work-group and outputs per work-item
//   TC                                 slices of a work-group that split the input channels
//   CB                                 input channels per slice and step (one local-memory fill
//                                      holds CB x TC channels)
//   LOCAL_IN                           1: the input tile of CB channels is staged in local memory
//   UNROLL_RS                          1: the R x S filter window is fully unrolled
//   VW                                 vector width of output stores (and of local-memory input
//                                      reads when STRIDE is 1)
//   EDGE_Q EDGE_P EDGE_K EDGE_C        1 when the extent is not a multiple of its tile (C: of CB x TC)
// A tile of output channels never spans two groups (the template guarantees it).

#define TILE_Q (TQ * QPT)
#define TILE_P (TP * PPT)
#define TILE_K (TK * KPT)
#define K_TILES ((K + TILE_K - 1) / TILE_K)
#define THREADS (TQ * TP * TK * TC)
#define C_STEP (CB * TC)
#define IN_TH ((TILE_P - 1) * STRIDE + (R - 1) * DIL + 1)
#define IN_TW ((TILE_Q - 1) * STRIDE + (S - 1) * DIL + 1)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#include "storage.cl"
#if UNROLL_RS
#define UNROLL_WINDOW _Pragma("unroll")
#else
#define UNROLL_WINDOW _Pragma("unroll 1")
#endif

#define UNPACK1(arr, i, v) arr[(i)] = (v);
#define UNPACK2(arr, i, v) arr[(i)] = (v).s0; arr[(i) + 1] = (v).s1;
#define UNPACK4(arr, i, v) UNPACK2(arr, i, (v).s01) UNPACK2(arr, (i) + 2, (v).s23)
#define PACK1(arr, i) (arr[(i)])
#define PACK2(arr, i) ((CAT(ACC_T, 2))(arr[(i)], arr[(i) + 1]))
#define PACK4(arr, i) ((CAT(ACC_T, 4))(PACK2(arr, i), PACK2(arr, (i) + 2)))
// VW values of local memory (the staged input), and VW outputs into global memory.
#if VW == 1
#define LOAD_V(p) (*(p))
#define STORE_OUT_V(v, p, i) OUT_STORE(p, i, v)
typedef acc_t accV;
#else
#define LOAD_V(p) CAT(vload, VW)(0, p)
#define STORE_OUT_V(v, p, i) OUT_STOREV(VW, p, i, v)
typedef CAT(ACC_T, VW) accV;
#endif

__kernel __attribute__((reqd_work_group_size(TQ, TP, TK * TC)))
void optune_conv2d(__global const elem_t* restrict X, __global const elem_t* restrict F,
                   __global out_t* restrict Y) {
  const int tq = get_local_id(0), tp = get_local_id(1);
  const int tk = get_local_id(2) % TK, tc = get_local_id(2) / TK;
  const int tid = (get_local_id(2) * TP + tp) * TQ + tq;
  const int q0 = get_group_id(0) * TILE_Q, p0 = get_group_id(1) * TILE_P;
  const int n = get_group_id(2) / K_TILES, k0 = (get_group_id(2) % K_TILES) * TILE_K;
  // This tile's group: its first input channel.
  const __global elem_t* x = X + (n * C + (k0 / KPG) * CPG) * H * W;
  int f_row[KPT];
#pragma unroll
  for (int i = 0; i < KPT; ++i) f_row[i] = min(k0 + tk * KPT + i, K - 1) * CPG * R * S;

  acc_t acc[KPT][PPT][QPT];
#pragma unroll
  for (int i = 0; i < KPT; ++i)
#pragma unroll
    for (int pi = 0; pi < PPT; ++pi)
#pragma unroll
      for (int qj = 0; qj < QPT; ++qj) acc[i][pi][qj] = 0;

#if LOCAL_IN
  __local acc_t tile[C_STEP * IN_TH * IN_TW];
  const int ih0 = p0 * STRIDE - PAD, iw0 = q0 * STRIDE - PAD;
#endif

  for (int c0 = 0; c0 < CPG; c0 += C_STEP) {
#if LOCAL_IN
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int idx = tid; idx < C_STEP * IN_TH * IN_TW; idx += THREADS) {
      const int cc = idx / (IN_TH * IN_TW), rest = idx % (IN_TH * IN_TW);
      const int ih = ih0 + rest / IN_TW, iw = iw0 + rest % IN_TW;
      const bool inside = c0 + cc < CPG && ih >= 0 && ih < H && iw >= 0 && iw < W;
      tile[idx] = inside ? ELEM_LOAD(x, ((c0 + cc) * H + ih) * W + iw) : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const int cs = c0 + tc * CB;  // this slice's first channel of the step
#if EDGE_C
    const int c_end = clamp(CPG - cs, 0, CB);
#else
#define c_end CB
#endif
    for (int cc = 0; cc < c_end; ++cc) {
      UNROLL_WINDOW
      for (int r = 0; r < R; ++r) {
        UNROLL_WINDOW
        for (int s = 0; s < S; ++s) {
          acc_t w[KPT];
#pragma unroll
          for (int i = 0; i < KPT; ++i) w[i] = ELEM_LOAD(F, f_row[i] + ((cs + cc) * R + r) * S + s);
          acc_t in[PPT][QPT];
#pragma unroll
          for (int pi = 0; pi < PPT; ++pi) {
#if LOCAL_IN
            const __local acc_t* row =
                tile + ((tc * CB + cc) * IN_TH + (tp + pi * TP) * STRIDE + r * DIL) * IN_TW + s * DIL;
#if STRIDE == 1 && VW > 1
#pragma unroll
            for (int qj = 0; qj < QPT; qj += VW) {
              const accV v = LOAD_V(row + tq * QPT + qj);
              CAT(UNPACK, VW)(in[pi], qj, v)
            }
#else
#pragma unroll
            for (int qj = 0; qj < QPT; ++qj) in[pi][qj] = row[(tq * QPT + qj) * STRIDE];
#endif
#else
            const int ih = (p0 + tp + pi * TP) * STRIDE - PAD + r * DIL;
#pragma unroll
            for (int qj = 0; qj < QPT; ++qj) {
              const int iw = (q0 + tq * QPT + qj) * STRIDE - PAD + s * DIL;
              const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
              in[pi][qj] = inside ? ELEM_LOAD(x, ((cs + cc) * H + ih) * W + iw) : 0;
            }
#endif
          }
#pragma unroll
          for (int i = 0; i < KPT; ++i)
#pragma unroll
            for (int pi = 0; pi < PPT; ++pi)
#pragma unroll
              for (int qj = 0; qj < QPT; ++qj) acc[i][pi][qj] = MAD(w[i], in[pi][qj], acc[i][pi][qj]);
        }
      }
    }
#undef c_end
  }

#if TC > 1
  // The slices' partial sums meet in local memory; then every work-item sums and stores outputs
  // in row order, so neighbouring work-items store neighbouring columns.
  __local acc_t partial[TC * TILE_K * TILE_P * TILE_Q];
#pragma unroll
  for (int i = 0; i < KPT; ++i)
#pragma unroll
    for (int pi = 0; pi < PPT; ++pi)
#pragma unroll
      for (int qj = 0; qj < QPT; ++qj)
        partial[((tc * TILE_K + tk * KPT + i) * TILE_P + tp + pi * TP) * TILE_Q + tq * QPT + qj] = acc[i][pi][qj];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int idx = tid; idx < TILE_K * TILE_P * TILE_Q; idx += THREADS) {
    const int kk = idx / (TILE_P * TILE_Q), pp = idx / TILE_Q % TILE_P, qq = idx % TILE_Q;
    const int k = k0 + kk, p = p0 + pp, q = q0 + qq;
    if (k >= K || p >= P || q >= Q) continue;
    acc_t sum = 0;
#pragma unroll
    for (int t = 0; t < TC; ++t) sum += partial[t * TILE_K * TILE_P * TILE_Q + idx];
    OUT_STORE(Y, ((n * K + k) * P + p) * Q + q, sum);
  }
#else
#pragma unroll
  for (int i = 0; i < KPT; ++i) {
    const int k = k0 + tk * KPT + i;
#if EDGE_K
    if (k >= K) continue;
#endif
#pragma unroll
    for (int pi = 0; pi < PPT; ++pi) {
      const int p = p0 + tp + pi * TP;
#if EDGE_P
      if (p >= P) continue;
#endif
      __global out_t* y = Y + ((n * K + k) * P + p) * Q + q0 + tq * QPT;
#if EDGE_Q
#pragma unroll
      for (int qj = 0; qj < QPT; ++qj)
        if (q0 + tq * QPT + qj < Q) OUT_STORE(y, qj, acc[i][pi][qj]);
#else
#pragma unroll
      for (int qj = 0; qj < QPT; qj += VW) STORE_OUT_V(CAT(PACK, VW)(acc[i][pi], qj), y, qj);
#endif
    }
  }
#endif
}
