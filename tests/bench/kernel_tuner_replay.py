"""Replays Kernel Tuner's strategies in simulation mode on landscape files (Kernel Tuner cache
files, .json or .json.gz) and prints one JSON line per (landscape, strategy) with the keys of
`optune replay --format json`, computed the same way (see tuner/src/replay_summary.cpp):
  fraction   median over seeds of optimum time / best time after B unique evaluations
  evals_to   lower median over seeds of the evaluations to reach 90/95/99% (null: fewer than half)
  score      Willemsen et al. (FGCS 2024): the mean best-time curve standardised against calculated
             random search without replacement (0) and the optimum (1), averaged over 1..max budget
Usage: python kernel_tuner_replay.py --budgets 25,50,100,200,400 --seeds 20 --strategies a,b FILE...
Nothing is measured: Kernel Tuner answers from the cache file."""
import argparse
import gzip
import json
import math
import os
import random
import sys
import tempfile
import time
import warnings

import numpy as np


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def valid_times(cache):
    """Times of the configurations in the space (failed ones as None); InvalidConfig is outside."""
    times = []
    for entry in cache["cache"].values():
        t = entry.get(cache.get("objective", "time"))
        if isinstance(t, str):
            if t == "InvalidConfig":
                continue
            times.append(None)
        else:
            times.append(float(t))
    return times


def random_baseline(times, budget):
    """Expected best time of random search without replacement after k = 1..budget draws; a
    failed configuration is a draw that finds nothing (counted as the worst time)."""
    ok = sorted(t for t in times if t is not None)
    n = len(times)
    worst = ok[-1]
    curve = []
    for k in range(1, budget + 1):
        # q(i) = P(none of the i best drawn) = C(n - i, k) / C(n, k)
        q_prev, expected = 1.0, 0.0
        for i, t in enumerate(ok, start=1):
            q = q_prev * (n - i - k + 1) / (n - i + 1) if n - i - k + 1 > 0 else 0.0
            expected += t * (q_prev - q)
            q_prev = q
            if q_prev == 0.0:
                break
        expected += worst * q_prev
        curve.append(expected)
    return curve


def summarise(name, strategy, traces, optimum, baseline, budgets, seconds):
    """traces: per seed, the objective of each unique evaluation in order (None for failed)."""
    top = max(budgets)
    best_curves = []
    for trace in traces:
        best, curve = math.inf, []
        for t in trace[:top]:
            if t is not None:
                best = min(best, t)
            curve.append(best)
        while len(curve) < top:
            curve.append(curve[-1] if curve else math.inf)
        best_curves.append(curve)
    fraction = []
    for b in budgets:
        values = [optimum / c[b - 1] if math.isfinite(c[b - 1]) else 0.0 for c in best_curves]
        fraction.append(round(float(np.median(values)), 4))
    evals_to = {}
    for target in (0.9, 0.95, 0.99):
        reached = []
        for c in best_curves:
            hit = next((i + 1 for i, v in enumerate(c) if math.isfinite(v) and optimum / v >= target), math.inf)
            reached.append(hit)
        reached.sort()
        lower_median = reached[(len(reached) - 1) // 2]
        evals_to[str(target)] = None if math.isinf(lower_median) else int(lower_median)
    worst = max(baseline)
    scores = []
    for k in range(top):
        mean = float(np.mean([c[k] if math.isfinite(c[k]) else worst for c in best_curves]))
        if baseline[k] > optimum:
            scores.append((baseline[k] - mean) / (baseline[k] - optimum))
    score = round(float(np.mean(scores)), 4) if scores else None
    return {"landscape": name, "tuner": "kt:" + strategy, "seeds": len(traces), "budgets": budgets,
            "fraction": fraction, "evals_to": evals_to, "score": score,
            "seconds_per_seed": round(seconds / max(len(traces), 1), 2)}


def run_strategy(plain_path, cache, strategy, seed, budget):
    import kernel_tuner
    random.seed(seed)
    np.random.seed(seed)
    options = {"max_fevals": budget}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_cache(plain_path, strategy=strategy, strategy_options=options,
                                             verbose=False, quiet=True)
    keys = cache["tune_params_keys"]
    objective = cache.get("objective", "time")
    seen, trace = set(), []
    for r in results:
        if r is None:
            continue
        key = ",".join(str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        t = r.get(objective)
        failed = "__error__" in r or not isinstance(t, (int, float)) or (isinstance(t, float) and not math.isfinite(t))
        trace.append(None if failed else float(t))
    return trace


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--budgets", default="25,50,100,200,400")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--strategies", default="random_sample,genetic_algorithm,bayes_opt,pso,simulated_annealing,dual_annealing,adaptive_tabu_greywolf,hybrid_vndx")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    work = tempfile.mkdtemp(prefix="kt-replay-")
    for path in args.files:
        cache = load(path)
        name = os.path.basename(path).replace(".gz", "").replace(".json", "")
        plain = os.path.join(work, name + ".json")
        with open(plain, "w") as f:
            json.dump(cache, f)
        times = valid_times(cache)
        optimum = min(t for t in times if t is not None)
        baseline = random_baseline(times, max(budgets))
        for strategy in args.strategies.split(","):
            start = time.time()
            traces = [run_strategy(plain, cache, strategy, seed, max(budgets)) for seed in range(1, args.seeds + 1)]
            line = summarise(name, strategy, traces, optimum, baseline, budgets, time.time() - start)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
