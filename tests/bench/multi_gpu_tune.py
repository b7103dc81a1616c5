#!/usr/bin/env python3
"""Table of multi_gpu_tune.sh's runs: per row, each target's run (the first, one GPU, the baseline;
TARGETS as the script's, default "cuda:0 cuda:all") with its wall time, trials, best (TFLOP/s of
the workload's work) and each device's share, and the ratio of wall times to the baseline's.
Usage: [TARGETS="cuda:0 cuda:0,1 cuda:all"] multi_gpu_tune.py WORKDIR ROW..."""
import json
import os
import pathlib
import sys


def run(work, row, target):
    stem = work / f"{row}-{target.replace(':', '-').replace(',', '-')}"
    outcome = json.loads((stem.with_suffix(".json")).read_text())
    wall = float((stem.with_suffix(".wall")).read_text())
    best = outcome.get("best") or {}
    return {"wall": wall, "trials": outcome["trials"], "tflops": best.get("gflops", 0) / 1000,
            "devices": outcome.get("devices") or {target: outcome["trials"]}}


def main():
    work = pathlib.Path(sys.argv[1])
    print("| row | target | wall, s | trials | best, TFLOP/s | candidates per device |")
    print("|---|---|---|---|---|---|")
    targets = os.environ.get("TARGETS", "cuda:0 cuda:all").split()
    ratios = []
    for row in sys.argv[2:]:
        runs = {target: run(work, row, target) for target in targets}
        one = runs[targets[0]]
        for target, r in runs.items():
            shares = ", ".join(f"{device} {count}" for device, count in r["devices"].items())
            print(f"| {row} | {target} | {r['wall']:.1f} | {r['trials']} | {r['tflops']:.1f} | {shares} |")
        for target in targets[1:]:
            every = runs[target]
            ratios.append(f"{row} {one['wall'] / every['wall']:.2f}x sooner on {len(every['devices'])} GPUs "
                          f"(best {every['tflops'] / one['tflops']:.3f} of one GPU's)" if one["tflops"] else row)
    print()
    print("; ".join(ratios))


if __name__ == "__main__":
    main()
