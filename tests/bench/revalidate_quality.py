#!/usr/bin/env python3
"""How good revalidate's re-tunes are: per entry of revalidate_bench.sh's clang++ run, the best it
left (the re-tune's winner, or the stored best that held, as measured now) against the winner of
tuning the suite again from scratch under clang++ (clang-tuned.db), both under clang++.
Usage: revalidate_quality.py WORK (revalidate_bench.sh's work folder)."""
import json
import sqlite3
import sys

work = sys.argv[1]
run = json.load(open(f"{work}/clang.json"))
fresh = sqlite3.connect(f"{work}/clang-tuned.db")
print(f"{'entry':<32} {'status':<10} {'trials':>6} {'revalidated ms':>15} {'tuned again ms':>15} {'ratio':>6}")
for entry in run["entries"]:
    retune = entry.get("retune")
    left = retune["best"]["median_seconds"] if retune and retune.get("best") else entry["now_seconds"]
    row = fresh.execute("SELECT median_seconds FROM records WHERE workload_key = ? AND winner = 1 "
                        "ORDER BY timestamp DESC LIMIT 1", (entry["workload"],)).fetchone()
    again = row[0] if row else None
    ratio = f"{left / again:.2f}" if left and again else "-"
    print(f"{entry['name']:<32} {entry['status']:<10} {retune['trials'] if retune else '-':>6} "
          f"{left * 1e3:>15.4f} {again * 1e3 if again else float('nan'):>15.4f} {ratio:>6}")
