// The OpenCL built-ins gemm_mma.cl calls, as NVIDIA's OpenCL compiler provides them, for clang's
// nvptx64-nvidia-nvcl target (which declares them but links no library that defines them).
#define get_local_id(d) ((d) == 0 ? __nvvm_read_ptx_sreg_tid_x() : __nvvm_read_ptx_sreg_tid_y())
#define get_group_id(d)                                                               \
  ((d) == 0 ? __nvvm_read_ptx_sreg_ctaid_x()                                          \
            : (d) == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z())
#define get_num_groups(d) ((d) == 0 ? __nvvm_read_ptx_sreg_nctaid_x() : __nvvm_read_ptx_sreg_nctaid_y())
#define barrier(flags) __asm__ __volatile__("bar.sync 0;" ::: "memory")
// NVIDIA's compiler defines it; the kernels take their NVIDIA paths (inline PTX) where it is.
#define cl_nv_pragma_unroll 1
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
// The stores of a 16-bit C (storage.cl's OUT_STOREV with n = 2): clang's header lacks
// vstore_half2_rte for this target and links no definition of the conversions.
#if defined(OPTUNE_F16)
void __attribute__((overloadable)) vstore_half2_rte(float2 v, size_t offset, __global half* p) {
  ushort x, y;
  __asm__("cvt.rn.f16.f32 %0, %1;" : "=h"(x) : "f"(v.x));
  __asm__("cvt.rn.f16.f32 %0, %1;" : "=h"(y) : "f"(v.y));
  ((__global ushort*)p)[2 * offset] = x;
  ((__global ushort*)p)[2 * offset + 1] = y;
}
#endif
#if defined(OPTUNE_BF16)
ushort2 __attribute__((overloadable)) convert_ushort2(uint2 v) { return (ushort2)((ushort)v.x, (ushort)v.y); }
void __attribute__((overloadable)) vstore2(ushort2 v, size_t offset, __global ushort* p) {
  p[2 * offset] = v.x;
  p[2 * offset + 1] = v.y;
}
#endif
// gemm_dot4.cl's loads of four s8 values of a row of A.
char4 __attribute__((overloadable)) vload4(size_t offset, const __global char* p) {
  return *(const __global char4*)(p + 4 * offset);
}
// gemm_mma.cl's int8 stores of two int32 outputs.
#if defined(OPTUNE_I8)
void __attribute__((overloadable)) vstore2(int2 v, size_t offset, __global int* p) {
  p[2 * offset] = v.x;
  p[2 * offset + 1] = v.y;
}
#endif
