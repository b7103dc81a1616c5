#!/usr/bin/env python3
"""The best ok configs per workload of an optune records CSV (`optune query --history --format csv`,
as the logs in docs/performance/logs keep them), as lines for `optune measure`: OP<TAB>DTYPE<TAB>
SHAPE<TAB>CONFIG JSON, fastest first. Re-measuring them with a later build (cuda_remeasure.sh)
asks what changed in the build, not in the search. Usage: best_configs.py CSV [PER_WORKLOAD]
(default 3); fp8's configs with and without float32 promotion (promote_every 0) count apart. GEMM
and conv2d keys only."""
import csv
import json
import re
import sys

CONV = re.compile(r"conv2d\.(?:(nhwc)\.)?(\w+)\.N(\d+)\.C(\d+)\.H(\d+)\.W(\d+)\.K(\d+)\.R(\d+)\.S(\d+)"
                  r"\.st(\d+)\.pad(\d+)\.dil(\d+)\.g(\d+)$")
GEMM = re.compile(r"gemm\.(\w+)\.M(\d+)\.N(\d+)\.K(\d+)$")


def measure_args(workload):
    if m := GEMM.match(workload):
        return "gemm", m[1], f"{m[2]},{m[3]},{m[4]}"
    if m := CONV.match(workload):
        layout, dtype, n, c, h, w, k, r, s, stride, pad, dilation, groups = m.groups()
        shape = (f"N={n},C={c},H={h},W={w},K={k},R={r},S={s},stride={stride},pad={pad},dilation={dilation},"
                 f"groups={groups}" + (f",layout={layout}" if layout else ""))
        return "conv2d", dtype, shape
    raise SystemExit(f"best_configs.py: {workload}: not a gemm or conv2d key")


def main(path, per_workload):
    by_workload = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["error_kind"] == "ok":
                by_workload.setdefault(row["workload"], []).append(row)
    for workload, rows in sorted(by_workload.items()):
        op, dtype, shape = measure_args(workload)
        kinds = {}  # fp8: fast accumulation and promoted, each its own best
        for row in sorted(rows, key=lambda r: float(r["median_seconds"])):
            config = json.loads(row["config"])
            seen = kinds.setdefault(config.get("promote_every") == 0, [])
            if config not in seen and len(seen) < per_workload:
                seen.append(config)
        for seen in kinds.values():
            for config in seen:
                print(f"{op}\t{dtype}\t{shape}\t{json.dumps(config, sort_keys=True)}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 3)
