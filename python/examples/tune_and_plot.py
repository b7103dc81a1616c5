"""Tune a GEMM from Python, read the records into a table, and plot the best GFLOP/s found
against the trials measured (matplotlib where it is installed, else the curve as text).

    python python/examples/tune_and_plot.py [--shape 256,256,256] [--trials 32] [--db example.db]
"""
import argparse

import optune


def best_so_far(records):
    best, curve = 0.0, []
    for record in records:  # history: oldest first, failures included
        if record["tuner"] in ("default", "remeasure", "final"):
            continue
        best = max(best, record["gflops"] if record["error_kind"] == "ok" else 0.0)
        curve.append(best)
    return curve


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="256,256,256")
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--db", default="example.db")
    args = parser.parse_args()

    result = optune.tune(op="gemm", shape=args.shape, target="cpu", trials=args.trials, db=args.db,
                         progress=lambda p: print(f"\rtrial {p['trial']}/{p['trials']}  best {p['best_gflops']:.1f} GFLOP/s",
                                                  end="", flush=True))
    print()
    speedup = "the default is the best" if result["best_is_default"] else f"{result['speedup']:.2f}x over the default"
    print(f"{result['workload']}: best {result['best']['gflops']:.1f} GFLOP/s, {speedup}")
    print(f"config {result['best']['config']}")

    history = optune.query(db=args.db, op="gemm", shape=args.shape, history=True)
    try:
        frame = history.to_pandas()
        print(frame[["tuner", "error_kind", "gflops", "median_seconds"]].describe())
    except ImportError:
        print(f"{len(history)} records (pip install pandas for a table)")

    curve = best_so_far(history)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.plot(range(1, len(curve) + 1), curve)
        plt.xlabel("trials")
        plt.ylabel("best GFLOP/s")
        plt.title(result["workload"])
        plt.savefig("best_gflops.png", dpi=100)
        print("plot: best_gflops.png")
    except ImportError:
        print("best GFLOP/s after each trial:", " ".join(f"{g:.0f}" for g in curve))


if __name__ == "__main__":
    main()
