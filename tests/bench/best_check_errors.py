#!/usr/bin/env python3
"""Per workload of an optune database: the best ok record's throughput, its check error (the
relative L2 error of its output against the float64 reference of the same inputs) and the range
of check errors over every ok record: optune's side of the peers' error lines. Usage:
best_check_errors.py OPTUNE QUERY_DB."""
import json
import subprocess
import sys


def main(optune, db):
    records = json.loads(subprocess.run([optune, "query", "--db", db, "--history", "--format", "json"],
                                        check=True, capture_output=True, text=True).stdout)
    by_workload = {}
    for record in records:
        if record["error_kind"] == "ok" and record["check_error"] is not None:
            by_workload.setdefault(record["workload"], []).append(record)
    for workload, ok in sorted(by_workload.items()):
        best = max(ok, key=lambda r: r["gflops"])
        errors = [r["check_error"] for r in ok]
        print(f"optune {workload} best {best['gflops'] / 1000:.1f} TFLOP/s rel_l2 {best['check_error']:.2e} "
              f"(ok records: {min(errors):.2e} to {max(errors):.2e}) config {json.dumps(best['config'], sort_keys=True)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
