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
