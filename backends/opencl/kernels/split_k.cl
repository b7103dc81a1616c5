// Split-K's reduction, shared by gemm.cl and gemm_mma.cl (included where SPLITK > 1), in the
// kernel's arithmetic type acc_t (storage.cl): float, or int for i8.
//
// SPLITK work-groups (dimension 2 of the launch) share one output tile's K blocks. Every
// work-item writes its partial values to the scratch buffer and counts itself in its own counter
// (the same work-item of each split shares one); the last to arrive adds the SPLITK partials in
// split order and stores its outputs like an unsplit kernel, then sets the counter back to 0 for
// the next launch. No barrier and nothing shared within the group: a work-item's outputs depend on
// its own values alone. One launch, no zero fill of the output (on NVIDIA's OpenCL the fill and its
// gap before the kernel took as long as the kernel on small GEMMs), and the sum does not depend on
// which split came last: results are reproducible, as atomic adds into the output are not.
//
// Scratch (OpenCLKernel::scratch_bytes, zero-filled when allocated): a uint counter per work-item
// of every tile, padded to 4, then SPLITK partial tiles per tile; work-item i's v-th value at
// v * items + i, so every write and read is coalesced.

inline void split_fence(void) {
#ifdef cl_nv_pragma_unroll
  __asm__ __volatile__("membar.gl;\n" ::: "memory");  // __threadfence(): device-wide order
#else
  mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

// `acc`: this work-item's `values` accumulators; `item` of `items` work-items. Returns whether
// this work-item came last of its splits and `acc` now holds the sums (the others are done).
inline bool sum_splits(acc_t* acc, int values, int items, int item, __global uint* scratch) {
  const int tiles = get_num_groups(0) * get_num_groups(1);
  const int tile = get_group_id(1) * get_num_groups(0) + get_group_id(0), split = get_group_id(2);
  const size_t tile_values = (size_t)values * items, counters = ((size_t)tiles * items + 3) / 4 * 4;
  __global acc_t* partials = (__global acc_t*)(scratch + counters) + (size_t)tile * SPLITK * tile_values;
  __global acc_t* mine = partials + split * tile_values;
#pragma unroll
  for (int v = 0; v < values; ++v) mine[v * items + item] = acc[v];
  __global uint* counter = scratch + (size_t)tile * items + item;
#if SPLIT_ACQREL
  // One atomic that releases this partial and acquires the others' (PTX's memory model: NVIDIA
  // sm_70 and later, where the template sets SPLIT_ACQREL).
  uint before;
  __asm__ __volatile__("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n" : "=r"(before) : "l"(counter) : "memory");
  if (before != SPLITK - 1) return false;
#else
  split_fence();  // the partial is visible before the count
  if (atomic_inc(counter) != SPLITK - 1) return false;
  split_fence();  // the others' partials are read after their counts
#endif
#pragma unroll
  for (int v = 0; v < values; ++v) {
    acc_t sum = 0;
    for (int s = 0; s < SPLITK; ++s)
      sum += s == split ? acc[v] : ((volatile __global const acc_t*)partials)[s * tile_values + v * items + item];
    acc[v] = sum;
  }
  *counter = 0;
  return true;
}
