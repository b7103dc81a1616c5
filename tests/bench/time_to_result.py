#!/usr/bin/env python3
"""Time to a result (issue 42) from the databases tests/bench/time_to_result.sh leaves.

For each row (a workload) the reference database holds one long run; its best throughput is the
best that run found. Each other database holds one run of `before` or `after` settings, with the
run's start time (unix seconds) in a file beside it. A run's time to a result is the time from its
start until its first successful record within 5% of the reference best (records carry the unix
time their measurement ended); a run that never gets there counts as its whole wall time and is
marked with '>'. A record is judged by the reference run's throughput of its config where the
reference measured that config, else by its own: the modes time differently (40 ms repeats before,
CUDA's 5 ms after, and a GPU at full load lowers its clock within tens of milliseconds), so the same
config must not count as slower in one mode than in the other. Prints a table of medians per row
and mode, and the ratio before / after.
"""
import json
import pathlib
import sqlite3
import statistics
import sys

WITHIN = 0.95  # of the reference best


def records(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute(
            "SELECT gflops, error_kind, timestamp, tuner, build_seconds, config FROM records ORDER BY timestamp, id"
        ).fetchall()
    return [dict(zip(("gflops", "error_kind", "timestamp", "tuner", "build_seconds", "config"), row)) for row in rows]


def reference_throughputs(db):
    """The reference run's best throughput of each config it measured."""
    best = {}
    for r in records(db):
        if r["error_kind"] == "ok":
            best[r["config"]] = max(best.get(r["config"], 0.0), r["gflops"])
    return best


def run_figures(db, target, reference):
    info = json.loads(db.with_suffix(".json").read_text())
    rows = records(db)
    ok = [r for r in rows if r["error_kind"] == "ok"]
    reached = next((r["timestamp"] - info["start"] for r in ok if reference.get(r["config"], r["gflops"]) >= target),
                   None)
    slow = [r for r in rows if r["error_kind"] == "slow"]
    return {
        "to_result": reached if reached is not None else info["wall"],
        "reached": reached is not None,
        "wall": info["wall"],
        "best": max((r["gflops"] for r in ok), default=0.0),
        "trials": sum(1 for r in rows if r["tuner"] not in ("default", "remeasure", "final")),
        "slow": len(slow),
        # A slow record's gflops is an upper bound: only one whose bound reaches the target could
        # have been within 5% of the best.
        "slow_maybe_near_best": sum(1 for r in slow if r["gflops"] >= target),
        "compiled": sum(1 for r in rows if r["build_seconds"] > 0),
    }


def main(work):
    work = pathlib.Path(work)
    print(f"| row | reference best | mode | time to within 5% (median, s) | wall (median, s) | best found (median) "
          f"| trials | compiles | slow records (could have been within 5%) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in sorted(p for p in work.iterdir() if p.is_dir()):
        ref = row / "reference.db"
        if not ref.exists():
            continue
        reference = reference_throughputs(ref)
        ref_best = max(reference.values(), default=0.0)
        target = WITHIN * ref_best
        medians = {}
        for mode in ("before", "after"):
            runs = [run_figures(db, target, reference) for db in sorted(row.glob(f"{mode}-*.db"))]
            if not runs:
                continue
            to_result = statistics.median(r["to_result"] for r in runs)
            medians[mode] = to_result
            times = ", ".join(f"{'' if r['reached'] else '>'}{r['to_result']:.0f}" for r in runs)
            print(f"| {row.name} | {ref_best:.1f} | {mode} | {to_result:.0f} ({times}) "
                  f"| {statistics.median(r['wall'] for r in runs):.0f} | {statistics.median(r['best'] for r in runs):.1f} "
                  f"| {statistics.median(r['trials'] for r in runs):.0f} | {statistics.median(r['compiled'] for r in runs):.0f} "
                  f"| {sum(r['slow'] for r in runs)} ({sum(r['slow_maybe_near_best'] for r in runs)}) |")
        if "before" in medians and "after" in medians and medians["after"] > 0:
            print(f"| {row.name} | | before / after | {medians['before'] / medians['after']:.2f}x | | | | | |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/time-to-result")
