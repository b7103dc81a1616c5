# Sourced by the CPU benchmarks (emitted_gemm.sh, conv_vs_peers.sh): the code both sides run.
# Sets arch_flags, the flags optune's candidates are compiled with.
# OPTUNE_MAX_CPU_ISA=avx2 on an AVX-512 machine: optune's candidates are compiled without AVX-512
# (what the CPU backend's isa_cap_flags() adds to the tuner's compiles), and oneDNN
# (ONEDNN_MAX_CPU_ISA) and OpenBLAS (OPENBLAS_CORETYPE) are capped alike.
arch_flags=(-march=native)
case "${OPTUNE_MAX_CPU_ISA:-}" in
  "") ;;
  avx2|AVX2)
    arch_flags+=(-mno-avx512f -mno-amx-tile)
    export ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ;;
  *) echo "$(basename "$0"): OPTUNE_MAX_CPU_ISA: unknown ISA '$OPTUNE_MAX_CPU_ISA' (supported: avx2)" >&2; exit 2 ;;
esac
