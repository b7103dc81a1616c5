// optune's OpenCL depthwise convolution: Y[N,C,P,Q] = X[N,C,H,W] convolved channel by channel
// with F[C,1,R,S], float32 arithmetic on buffers of float32, f16 or bf16, int32 on s8 (storage.cl),
// NCHW, any stride, padding and dilation. A work-group computes TC
// channels x TILE_P rows x TILE_Q columns of one image with TQ x TP x TC work-items; each
// work-item holds its channel's R x S taps in registers and computes PPT rows (strided by TP) x
// QPT consecutive columns. Defines from the depthwise_conv2d.opencl template:
//   N C H W R S P Q STRIDE PAD DIL   the shape
//   TQ TP TC, QPT PPT                work-items per work-group and outputs per work-item
//   LOCAL_IN                         1: each channel's input tile is staged in local memory
//   UNROLL_RS                        1: the R x S filter window is fully unrolled
//   VW                               vector width of output stores (and of local-memory input
//                                    reads when STRIDE is 1)
//   EDGE_Q EDGE_P EDGE_C             1 when the extent is not a multiple of its tile

#define TILE_Q (TQ * QPT)
#define TILE_P (TP * PPT)
#define C_TILES ((C + TC - 1) / TC)
#define THREADS (TQ * TP * TC)
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

__kernel __attribute__((reqd_work_group_size(TQ, TP, TC)))
void optune_depthwise_conv2d(__global const elem_t* restrict X, __global const elem_t* restrict F,
                             __global out_t* restrict Y) {
  const int tq = get_local_id(0), tp = get_local_id(1), tc = get_local_id(2);
  const int q0 = get_group_id(0) * TILE_Q, p0 = get_group_id(1) * TILE_P;
  const int n = get_group_id(2) / C_TILES;
  const int c = (get_group_id(2) % C_TILES) * TC + tc;
  const int c_loaded = min(c, C - 1);  // edge work-items load a real channel, store nothing
  const __global elem_t* x = X + (n * C + c_loaded) * H * W;

  acc_t taps[R * S];
#pragma unroll
  for (int t = 0; t < R * S; ++t) taps[t] = ELEM_LOAD(F, c_loaded * R * S + t);

  acc_t acc[PPT][QPT];
#pragma unroll
  for (int pi = 0; pi < PPT; ++pi)
#pragma unroll
    for (int qj = 0; qj < QPT; ++qj) acc[pi][qj] = 0;

#if LOCAL_IN
  __local acc_t tiles[TC * IN_TH * IN_TW];
  {
    // The work-items of one channel fill that channel's tile.
    __local acc_t* tile = tiles + tc * IN_TH * IN_TW;
    const int ih0 = p0 * STRIDE - PAD, iw0 = q0 * STRIDE - PAD;
    for (int idx = tp * TQ + tq; idx < IN_TH * IN_TW; idx += TQ * TP) {
      const int ih = ih0 + idx / IN_TW, iw = iw0 + idx % IN_TW;
      const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
      tile[idx] = inside ? ELEM_LOAD(x, ih * W + iw) : 0;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const __local acc_t* tile = tiles + tc * IN_TH * IN_TW;
#endif

  UNROLL_WINDOW
  for (int r = 0; r < R; ++r) {
    UNROLL_WINDOW
    for (int s = 0; s < S; ++s) {
      const acc_t w = taps[r * S + s];
#pragma unroll
      for (int pi = 0; pi < PPT; ++pi) {
        acc_t in[QPT];
#if LOCAL_IN
        const __local acc_t* row = tile + ((tp + pi * TP) * STRIDE + r * DIL) * IN_TW + s * DIL;
#if STRIDE == 1 && VW > 1
#pragma unroll
        for (int qj = 0; qj < QPT; qj += VW) {
          const accV v = LOAD_V(row + tq * QPT + qj);
          CAT(UNPACK, VW)(in, qj, v)
        }
#else
#pragma unroll
        for (int qj = 0; qj < QPT; ++qj) in[qj] = row[(tq * QPT + qj) * STRIDE];
#endif
#else
        const int ih = (p0 + tp + pi * TP) * STRIDE - PAD + r * DIL;
#pragma unroll
        for (int qj = 0; qj < QPT; ++qj) {
          const int iw = (q0 + tq * QPT + qj) * STRIDE - PAD + s * DIL;
          const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
          in[qj] = inside ? ELEM_LOAD(x, ih * W + iw) : 0;
        }
#endif
#pragma unroll
        for (int qj = 0; qj < QPT; ++qj) acc[pi][qj] = MAD(w, in[qj], acc[pi][qj]);
      }
    }
  }

#if EDGE_C
  if (c >= C) return;
#endif
#pragma unroll
  for (int pi = 0; pi < PPT; ++pi) {
    const int p = p0 + tp + pi * TP;
#if EDGE_P
    if (p >= P) continue;
#endif
    __global out_t* y = Y + ((n * C + c) * P + p) * Q + q0 + tq * QPT;
#if EDGE_Q
#pragma unroll
    for (int qj = 0; qj < QPT; ++qj)
      if (q0 + tq * QPT + qj < Q) OUT_STORE(y, qj, acc[pi][qj]);
#else
#pragma unroll
    for (int qj = 0; qj < QPT; qj += VW) STORE_OUT_V(CAT(PACK, VW)(acc[pi], qj), y, qj);
#endif
  }
}
