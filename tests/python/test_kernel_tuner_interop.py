"""Kernel Tuner reads what `optune export --kernel-tuner` writes (issue 20): its simulation mode
tunes from the exported cache, and it reopens the file, appends an entry and closes it as it does
its own caches, after which optune still reads it. Needs the kernel_tuner package (1.5's
util.store_cache signature; skipped without it, as in the PythonModule test's environment, which
does not install its 0.5 GB of dependencies); to run it:
    python3 -m venv v && v/bin/pip install pytest kernel_tuner
    OPTUNE_BIN=build/bin/optune v/bin/pytest tests/python/test_kernel_tuner_interop.py
"""
import json
import os
import subprocess

import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")
np = pytest.importorskip("numpy")
from kernel_tuner import util  # noqa: E402

OPTUNE = os.environ.get("OPTUNE_BIN", "optune")
SOURCE = "__kernel void blocks(__global float* out, int n) {}\n"
KERNEL_FILE = """name = "blocks"
backend = "opencl"
source = "blocks.cl"
entry = "blocks"
flops = "2 * N"
args = [
  { name = "out", kind = "buffer", dtype = "f32", count = "N", output = true },
  { name = "n", kind = "scalar", dtype = "i32", value = "N" },
]
[extents]
N = 1000
[knobs]
BLOCK = [8, 16, 32]
MODE = ["plain", "fast"]
[launch]
global = ["N"]
local = ["1"]
"""
CACHE = {
    "device_name": "Imported GPU", "kernel_name": "blocks", "problem_size": [1000],
    "tune_params_keys": ["BLOCK", "MODE"], "tune_params": {"BLOCK": [8, 16], "MODE": ["plain", "fast"]},
    "objective": "time",
    "cache": {
        "8,plain": {"BLOCK": 8, "MODE": "plain", "time": 2.5, "times": [2.0, 3.0, 2.5], "compile_time": 120.5},
        "8,fast": {"BLOCK": 8, "MODE": "fast", "time": 1.25},
        "16,plain": {"BLOCK": 16, "MODE": "plain", "time": "RuntimeFailedConfig"},
        "16,fast": {"BLOCK": 16, "MODE": "fast", "time": "CompilationFailedConfig"},
    },
}


def optune(*arguments, cwd):
    run = subprocess.run([OPTUNE, *arguments], cwd=cwd, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return run


@pytest.fixture
def exported(tmp_path):
    (tmp_path / "blocks.cl").write_text(SOURCE)
    (tmp_path / "blocks.toml").write_text(KERNEL_FILE)
    (tmp_path / "history.json").write_text(json.dumps(CACHE))
    optune("import", "--kernel-tuner", "history.json", "--kernel", "blocks.toml", "--db", "k.db", cwd=tmp_path)
    optune("export", "--kernel-tuner", "--kernel", "blocks.toml", "--db", "k.db", "--out", "back.json", cwd=tmp_path)
    return tmp_path / "back.json"


def test_simulation_mode_tunes_from_the_exported_cache(exported):
    results, env = kernel_tuner.tune_kernel(
        "blocks", SOURCE, 1000, [np.zeros(1000, dtype=np.float32), np.int32(1000)], CACHE["tune_params"],
        lang="OpenCL", cache=str(exported), simulation_mode=True, strategy="brute_force", quiet=True)
    times = {(r["BLOCK"], r["MODE"]): r["time"] for r in results}
    assert times[(8, "plain")] == pytest.approx(2.5)  # the median of its times
    assert times[(8, "fast")] == pytest.approx(1.25)
    assert str(times[(16, "plain")]) == "RuntimeFailedConfig"
    assert str(times[(16, "fast")]) == "CompilationFailedConfig"
    assert env["device_name"] == "Imported GPU"


def test_kernel_tuner_appends_to_the_exported_cache(exported):
    data = util.read_cache(str(exported), open_cache=True)  # what tune_kernel does before it appends
    # a configuration the cache lacks (BLOCK 32 is a knob value no entry has): one entry per configuration
    util.store_cache("32,plain", {"BLOCK": 32, "MODE": "plain", "time": 3.0}, str(exported), data["cache"])
    util.close_cache(str(exported))
    assert len(json.loads(exported.read_text())["cache"]) == 5
    optune("replay", "--landscape", str(exported), "--tuner", "random", "--seeds", "2", "--budgets", "2",
           cwd=exported.parent)
