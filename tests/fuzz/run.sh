#!/usr/bin/env bash
# Builds the libFuzzer targets (a clang build of their own in build-fuzz/, with ASan and UBSan) and
# runs each for SECONDS (default 30) from its seed corpus in tests/fuzz/corpus. New inputs go to a
# scratch folder, not the repository; a crash or broken promise stops that target, leaves its input
# in build-fuzz/findings/<target>/ and fails the script. Called by scripts/test; README.md here
# gives the command for long runs. Skipped (exit 0, one line) where clang has no libFuzzer.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds=${1:-30}
targets=(fuzz_rpc_message fuzz_workload fuzz_suite_job_toml fuzz_jsonl_import)

if ! command -v clang++ >/dev/null ||
   ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz: skipped (clang++ with libFuzzer not found: libclang-rt-14-dev)"
  exit 0
fi

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DOPTUNE_BUILD_FUZZ=ON -DOPTUNE_BUILD_TESTS=OFF \
  -DOPTUNE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
if ! cmake --build build-fuzz -j "${OPTUNE_FUZZ_BUILD_JOBS:-$(nproc)}" --target optune_fuzzers >build-fuzz/build.log 2>&1; then
  tail -40 build-fuzz/build.log
  exit 1
fi

status=0
for target in "${targets[@]}"; do
  scratch=build-fuzz/corpus/$target findings=build-fuzz/findings/$target
  rm -rf "$scratch" && mkdir -p "$scratch" "$findings"
  extra=()
  [ "$target" = fuzz_suite_job_toml ] && extra=(configs/workloads configs/jobs)
  if build-fuzz/fuzz/$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$findings/" "$scratch" "tests/fuzz/corpus/$target" "${extra[@]}" \
       >"build-fuzz/$target.log" 2>&1; then
    echo "fuzz: $target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$target.log" |
      grep -o '[0-9]*$') runs, $(grep -o 'cov: [0-9]*' "build-fuzz/$target.log" | tail -1), no finding"
  else
    echo "fuzz: $target: FOUND a problem (input in $findings/):"
    grep -E "ERROR|broken promise|SUMMARY|runtime error" "build-fuzz/$target.log" | head -5 || tail -20 "build-fuzz/$target.log"
    status=1
  fi
done
exit $status
