#!/usr/bin/env python3
"""Table of multi_gpu_tune.sh's runs: per row, the one-GPU run and the all-GPU run's wall time,
trials, best (TFLOP/s of the workload's work) and each device's share, and the ratio of wall times.
Usage: multi_gpu_tune.py WORKDIR ROW..."""
import json
import pathlib
import sys


def run(work, row, target):
    stem = work / f"{row}-{target.replace(':', '-')}"
    outcome = json.loads((stem.with_suffix(".json")).read_text())
    wall = float((stem.with_suffix(".wall")).read_text())
    best = outcome.get("best") or {}
    return {"wall": wall, "trials": outcome["trials"], "tflops": best.get("gflops", 0) / 1000,
            "devices": outcome.get("devices") or {target: outcome["trials"]}}


def main():
    work = pathlib.Path(sys.argv[1])
    print("| row | target | wall, s | trials | best, TFLOP/s | candidates per device |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for row in sys.argv[2:]:
        one, every = run(work, row, "cuda:0"), run(work, row, "cuda:all")
        for target, r in (("cuda:0", one), ("cuda:all", every)):
            shares = ", ".join(f"{device} {count}" for device, count in r["devices"].items())
            print(f"| {row} | {target} | {r['wall']:.1f} | {r['trials']} | {r['tflops']:.1f} | {shares} |")
        ratios.append(f"{row} {one['wall'] / every['wall']:.2f}x sooner on {len(every['devices'])} GPUs "
                      f"(best {every['tflops'] / one['tflops']:.3f} of one GPU's)" if one["tflops"] else row)
    print()
    print("; ".join(ratios))


if __name__ == "__main__":
    main()
