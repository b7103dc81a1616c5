# Sourced by the CPU GEMM benchmarks (gemm_vs_peers.sh, gemm_lowp_vs_onednn.sh): the code both
# sides run, and the tuned configs compiled as the tuner compiled them. Reads root, bench_bin and
# work; sets arch_flags (isa_cap.sh) and candidates.
source "$root/tests/bench/isa_cap.sh"

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
