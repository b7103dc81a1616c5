#!/usr/bin/env bash
# The results store under a team's load (issue 41): a PostgreSQL server of its own (durable: fsync
# on, as a real one) and, as the peer in the same run, a SQLite file, each filled with RECORDS
# records (100 per task: 5 devices, 2 templates), then
#   - the latency of a workload's best (Database::best) and its top 5 (Database::top_k, what
#     `optune query --shape` asks), median and 95th percentile over 500 random tasks;
#   - `optune query --shape ... --format json` end to end (a process, a connection, the query), median of 20;
#   - records per second with 1, 4 and 8 writers at once, each its own connection, batches of 16;
#   - the server's plans of those queries (auto_explain), in $WORK/plans.txt.
# Usage: tests/bench/store_bench.sh [RECORDS=1000000] [BUILD=build] [WORK=a new temporary folder]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
records=${1:-1000000}
build=$(cd "${2:-build}" && pwd)
work=${3:-$(mktemp -d)}
mkdir -p "$work"
bench="$build/tests/bench/bench_store"
optune="$build/bin/optune"
tasks=$((records / 100))
server="$work/server"
trap 'bash tests/postgres/postgres_server.sh stop "$server"' EXIT
bash tests/postgres/postgres_server.sh start "$server" durable
export PGPASSFILE="$server/pgpass"
uri="$(cat "$server/uri")"
psql -q "$uri/postgres" -c "CREATE DATABASE bench"
postgres="$uri/bench"
sqlite="$work/bench.db"
rm -f "$sqlite"*

echo "# $(date -u +%F) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
     "$(psql -Atq "$postgres" -c 'SHOW server_version') (fsync on), SQLite $(sqlite3 --version | cut -d' ' -f1)"
for store in "$postgres" "$sqlite"; do
  "$bench" fill "$store" "$records" "$tasks"
done
for store in "$postgres" "$sqlite"; do
  "$bench" latency "$store" "$tasks" 500
done

# A workload that exists: task 4242's (bench_store's task_of: workload = task / 10).
m=$((64 + (4242 % tasks) / 10))
for store in "$postgres" "$sqlite"; do
  times=()
  for _ in $(seq 20); do
    start=$(date +%s%N)
    "$optune" query --db "$store" --op gemm --shape "$m,512,512" --device bench0 --format json >/dev/null
    times+=($(( ($(date +%s%N) - start) / 1000 )))
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 10p)
  echo "optune query --shape $m,512,512 on $store: median $(awk "BEGIN { printf \"%.1f\", $median / 1000 }") ms (20 runs, process start included)"
done

for writers in 1 4 8; do
  for store in "$postgres" "$sqlite"; do
    "$bench" writers "$store" "$writers" 10
  done
done

# The plans the server chose, from its log (auto_explain, this session only).
log_from=$(bash tests/postgres/postgres_server.sh log "$server" | wc -l)
PGOPTIONS="-c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on" \
  "$bench" latency "$postgres" "$tasks" 1 >/dev/null
PGOPTIONS="-c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on" \
  "$optune" query --db "$postgres" --op gemm --shape "$m,512,512" --device bench0 >/dev/null
bash tests/postgres/postgres_server.sh log "$server" | tail -n +"$((log_from + 1))" >"$work/plans.txt"
echo "plans: $work/plans.txt"
