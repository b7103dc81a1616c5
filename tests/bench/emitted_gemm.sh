# Sourced by the CPU GEMM benchmarks (gemm_vs_peers.sh, gemm_lowp_vs_onednn.sh): the code both
# sides run, and the tuned configs compiled as the tuner compiled them. Reads root, bench_bin and
# work; sets arch_flags and candidates.
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

# Compiles each source bench_emit_best writes (its arguments after FLAG) and adds
# "FLAG M,N,K=object" to candidates.
candidates=()
compile_emitted() {
  local flag=$1; shift
  while read -r mnk source; do
    object=${source%.cpp}.so
    c++ -std=c++20 -O3 "${arch_flags[@]}" -fopenmp -fPIC -shared -I"$root/backends/cpu/include" "$source" -o "$object"
    candidates+=("$flag" "$mnk=$object")
  done < <("$bench_bin/bench_emit_best" --db "$work/tuned.db" "$@")
}
