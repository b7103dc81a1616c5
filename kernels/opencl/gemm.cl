// optune's OpenCL GEMM: C[M,N] = A[M,K] * B[K,N], float32, row-major, no transposes.
// One work-group computes an MWG x NWG tile of C with MDIMC x NDIMC work-items; each work-item
// computes MWI x NWI = (MWG / MDIMC) x (NWG / NDIMC) outputs in registers. The knobs (CLBlast's
// Xgemm parameters are the model) arrive as preprocessor defines from the gemm.opencl template:
//   M, N, K          the shape
//   MWG, NWG, KWG    work-group tile in M and N, K block (one local-memory step)
//   MDIMC, NDIMC     work-items per work-group in M (dimension 1) and N (dimension 0)
//   VWM, VWN         vector widths: local reads of A along M, loads and stores along N
//   SA, SB           1: cache the K block of A (B) in local memory; 0: read it from global memory
//   STRM, STRN       1: a work-item's rows (columns) are strided, vector by vector, over the
//                    tile, so neighbours touch neighbouring addresses; 0: they are contiguous
//   KWI              unroll factor of the K loop
//   EDGE_M, EDGE_N, EDGE_K  1 when the extent is not a multiple of its tile: bounds are checked
// Edge handling keeps the fast path clean: rows and columns past the matrix are clamped on load
// (their results are never stored) and the K loop stops at K.

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define THREADS (MDIMC * NDIMC)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// vloadN/vstoreN need only float alignment. Width 1 is a plain access.
#if VWN == 1
#define LOAD_N(p) (*(p))
#define STORE_N(v, p) (*(p) = (v))
typedef float floatN;
#else
#define LOAD_N(p) CAT(vload, VWN)(0, p)
#define STORE_N(v, p) CAT(vstore, VWN)(v, 0, p)
typedef CAT(float, VWN) floatN;
#endif
#if VWM == 1
#define LOAD_M(p) (*(p))
typedef float floatM;
#else
#define LOAD_M(p) CAT(vload, VWM)(0, p)
typedef CAT(float, VWM) floatM;
#endif

// Copies the components of a vector into consecutive array elements.
#define UNPACK1(arr, i, v) arr[(i)] = (v);
#define UNPACK2(arr, i, v) arr[(i)] = (v).s0; arr[(i) + 1] = (v).s1;
#define UNPACK4(arr, i, v) UNPACK2(arr, i, (v).s01) UNPACK2(arr, (i) + 2, (v).s23)
#define UNPACK8(arr, i, v) UNPACK4(arr, i, (v).s0123) UNPACK4(arr, (i) + 4, (v).s4567)
#define PACK1(arr, i) (arr[(i)])
#define PACK2(arr, i) ((float2)(arr[(i)], arr[(i) + 1]))
#define PACK4(arr, i) ((float4)(PACK2(arr, i), PACK2(arr, (i) + 2)))
#define PACK8(arr, i) ((float8)(PACK4(arr, i), PACK4(arr, (i) + 4)))

// Tile-local row of a work-item's i-th row (i in [0, MWI)) and column of its j-th column.
#if STRM
#define ROW(tm, i) (((i) / VWM) * (MDIMC * VWM) + (tm) * VWM + (i) % VWM)
#else
#define ROW(tm, i) ((tm) * MWI + (i))
#endif
#if STRN
#define COL(tn, j) (((j) / VWN) * (NDIMC * VWN) + (tn) * VWN + (j) % VWN)
#else
#define COL(tn, j) ((tn) * NWI + (j))
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void optune_gemm(__global const float* restrict A, __global const float* restrict B,
                 __global float* restrict C) {
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;
  const int n0 = get_group_id(0) * NWG, m0 = get_group_id(1) * MWG;
#if SA
  __local float As[KWG * MWG];  // transposed: As[k][m], so reads along M are contiguous
#endif
#if SB
  __local float Bs[KWG * NWG];  // Bs[k][n]
#endif

  float acc[MWI][NWI];
#pragma unroll
  for (int i = 0; i < MWI; ++i)
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = 0.0f;

#if !SA
  // Rows of A this work-item reads straight from global memory, clamped at the edge.
  int a_row[MWI];
#pragma unroll
  for (int i = 0; i < MWI; ++i) a_row[i] = min(m0 + ROW(tm, i), M - 1) * K;
#endif

  for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if SA
#if !EDGE_M && !EDGE_K && KWG % 4 == 0
    // Four consecutive k of one row per load, coalesced along K.
    for (int idx = tid; idx < MWG * KWG / 4; idx += THREADS) {
      const int kv = idx % (KWG / 4), m = idx / (KWG / 4);
      const float4 v = vload4(0, A + (m0 + m) * K + k0 + kv * 4);
      As[(kv * 4 + 0) * MWG + m] = v.s0;
      As[(kv * 4 + 1) * MWG + m] = v.s1;
      As[(kv * 4 + 2) * MWG + m] = v.s2;
      As[(kv * 4 + 3) * MWG + m] = v.s3;
    }
#else
    for (int idx = tid; idx < MWG * KWG; idx += THREADS) {
      const int k = idx % KWG, m = idx / KWG;
      const bool inside = m0 + m < M && k0 + k < K;
      As[k * MWG + m] = inside ? A[(m0 + m) * K + k0 + k] : 0.0f;
    }
#endif
#endif
#if SB
#if !EDGE_N && !EDGE_K
    for (int idx = tid; idx < KWG * NWG / VWN; idx += THREADS) {
      const int nv = idx % (NWG / VWN), k = idx / (NWG / VWN);
      STORE_N(LOAD_N(B + (k0 + k) * N + n0 + nv * VWN), Bs + k * NWG + nv * VWN);
    }
#else
    for (int idx = tid; idx < KWG * NWG; idx += THREADS) {
      const int n = idx % NWG, k = idx / NWG;
      const bool inside = n0 + n < N && k0 + k < K;
      Bs[k * NWG + n] = inside ? B[(k0 + k) * N + n0 + n] : 0.0f;
    }
#endif
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

#if EDGE_K
    const int k_end = min(KWG, K - k0);
#else
#define k_end KWG
#endif
#pragma unroll KWI
    for (int k = 0; k < k_end; ++k) {
      float a[MWI], b[NWI];
#if SA
#pragma unroll
      for (int i = 0; i < MWI; i += VWM) {
        const floatM v = LOAD_M(As + k * MWG + ROW(tm, i));
        CAT(UNPACK, VWM)(a, i, v)
      }
#else
#pragma unroll
      for (int i = 0; i < MWI; ++i) a[i] = A[a_row[i] + k0 + k];
#endif
#if SB
#pragma unroll
      for (int j = 0; j < NWI; j += VWN) {
        const floatN v = LOAD_N(Bs + k * NWG + COL(tn, j));
        CAT(UNPACK, VWN)(b, j, v)
      }
#elif !EDGE_N
#pragma unroll
      for (int j = 0; j < NWI; j += VWN) {
        const floatN v = LOAD_N(B + (k0 + k) * N + n0 + COL(tn, j));
        CAT(UNPACK, VWN)(b, j, v)
      }
#else
#pragma unroll
      for (int j = 0; j < NWI; ++j) b[j] = B[(k0 + k) * N + min(n0 + COL(tn, j), N - 1)];
#endif
#pragma unroll
      for (int i = 0; i < MWI; ++i)
#pragma unroll
        for (int j = 0; j < NWI; ++j) acc[i][j] = mad(a[i], b[j], acc[i][j]);
    }
#undef k_end
  }

#pragma unroll
  for (int i = 0; i < MWI; ++i) {
    const int m = m0 + ROW(tm, i);
#if EDGE_M
    if (m >= M) continue;
#endif
#if !EDGE_N
#pragma unroll
    for (int j = 0; j < NWI; j += VWN) STORE_N(CAT(PACK, VWN)(acc[i], j), C + m * N + n0 + COL(tn, j));
#else
#pragma unroll
    for (int j = 0; j < NWI; ++j) {
      const int n = n0 + COL(tn, j);
      if (n < N) C[m * N + n] = acc[i][j];
    }
#endif
  }
}
