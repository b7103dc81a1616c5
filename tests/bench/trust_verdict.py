#!/usr/bin/env python3
"""The verdicts of the trust benchmarks (trust_under_load.sh, trust_under_gpu_load.sh).

  trust_verdict.py reported TUNE_JSON   -> "REPORTED BEST_CONFIG_JSON": what `optune tune --format
      json` printed as its speed-up ("default" when it kept the default, "2.10x(1.95-2.31)", or
      "unreliable") and the config it reported best.
  trust_verdict.py verdict REPORTED TRUTH -> that speed-up against the quiet truth (the interleaved
      ratio default / best): within 10%, or flagged unreliable, and never "faster" for a config that
      the truth finds slower than the default.
"""
import json
import sys


def reported(path):
    o = json.load(open(path))
    if o["best_is_default"]:
        r = "default"
    elif o["speedup"] is not None:
        lo, hi = o["speedup_interval"] or (o["speedup"], o["speedup"])
        r = "%.2fx(%.2f-%.2f)" % (o["speedup"], lo, hi)
    else:
        r = "unreliable"
    return r + " " + json.dumps(o["best"]["config"], separators=(",", ":"))


def verdict(reported, truth):
    if reported == "unreliable":
        return "flagged unreliable" + ("" if truth >= 1 else " (the best is slower than the default)")
    if reported == "default":
        return "ok: the default kept" if truth <= 1.10 else "MISSED: a faster config than the default was found but not kept"
    value = float(reported.split("x")[0])
    ok = abs(value / truth - 1) <= 0.10 and not (truth < 1 and value > 1)
    return ("ok" if ok else "WRONG") + ": %+.1f%% off" % ((value / truth - 1) * 100)


if __name__ == "__main__":
    if sys.argv[1] == "reported":
        print(reported(sys.argv[2]))
    else:
        print(verdict(sys.argv[2], float(sys.argv[3])))
