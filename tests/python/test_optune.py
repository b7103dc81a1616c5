"""The Python module against the real library: real tuning runs in the real worker, records read
back from the real SQLite file, errors compared with the command line's own lines."""
import os
import subprocess
import threading

import pytest

import optune

OPTUNE = os.environ["OPTUNE_BIN"]  # the command line, to compare messages with
QUICK = dict(target="cpu", repeat=2, min_repeat_ms=1.0, batch_size=4, remeasure=1)
DISPATCH_QUICK = dict(target="cpu", repeat=2, min_repeat_ms=1.0)


def test_tune_returns_the_best_record_and_the_database_holds_it(tmp_path):
    db = tmp_path / "t.db"
    result = optune.tune(op="gemm", shape="64,64,64", trials=6, db=db, tuner="random", **QUICK)
    assert result["workload"] == "gemm.f32.M64.N64.K64"
    assert result["template"] == "gemm.cpu"
    assert result["trials"] >= 6
    best = result["best"]
    assert best["error_kind"] == "ok" and best["gflops"] > 0 and best["median_seconds"] > 0
    # The default config, counted by its latest record (the closing re-measurement's).
    assert result["default"]["config"] == optune.space(op="gemm", shape="64,64,64")["default_config"]
    assert result["speedup"] is None or result["speedup"] > 0
    # The speed-up is the final comparison's where the best was one of its finalists (the winner, or,
    # where a busy machine left the winner unmarked, the database's best): an interval of
    # interleaved rounds, or why it is not given. Else (a busy comparison, a faster earlier record
    # of another config) the records'.
    comparison = result["comparison"]
    assert comparison["rounds"] >= 5 and {f["role"] for f in comparison["finalists"]} >= {"default"}
    if not result["best_is_default"]:
        finalist = best["config"] in [f["config"] for f in comparison["finalists"]]
        assert result["speedup_source"] == ("final comparison" if finalist else "records")
        assert (result["speedup"] is None) == (result["unreliable"] is not None)
        if finalist:
            low, high = result["speedup_interval"]
            if result["speedup"] is not None:
                assert low <= result["speedup"] <= high
    assert result["noisy"] <= result["trials"]
    top = optune.query(db=db, op="gemm", shape=(64, 64, 64))
    assert len(top) == 1
    assert top[0]["config"] == best["config"]
    history = optune.query(db=db, history=True)
    assert len(history) >= 7  # the default and six candidates, re-measurements on top
    assert {r["workload"] for r in history} == {"gemm.f32.M64.N64.K64"}


def test_tune_takes_its_defaults_from_the_command_lines_request():
    """One list of defaults: Python's tune() signature shows what `optune tune --help` shows."""
    import inspect
    import re
    parameters = inspect.signature(optune.tune).parameters
    help_text = subprocess.run([OPTUNE, "tune", "--help"], capture_output=True, text=True, check=True).stdout
    # A repeat's length has no one default: the target backend's (40 ms, 5 for CUDA) unless given.
    assert parameters["min_repeat_ms"].default is None
    assert re.search(r"--min-repeat-ms[^\n]*\n[^\n]*\(default: 40; 5 for CUDA", help_text)
    for option, keyword in [("--trials", "trials"), ("--batch-size", "batch_size"), ("--repeat", "repeat"),
                            ("--timeout", "timeout"), ("--tuner", "tuner"),
                            ("--objective", "objective"), ("--scheduler", "scheduler"), ("--remeasure", "remeasure"),
                            ("--compile-timeout", "compile_timeout"), ("--cheap-share", "cheap_share"),
                            ("--bail-out", "bail_out"), ("--compiler", "compiler"), ("--rpc-wait", "rpc_wait"),
                            ("--compile-ahead", "compile_ahead")]:
        shown = re.search(re.escape(option) + r" [^\n=]*=(\S+)", help_text)
        assert shown, option
        default = parameters[keyword].default
        if isinstance(default, float):
            assert float(shown.group(1)) == default, (option, shown.group(1), default)
        else:
            assert shown.group(1) == str(default), (option, shown.group(1), default)


def test_progress_callback_sees_every_batch_and_its_exception_stops_the_run(tmp_path):
    seen = []
    optune.tune(op="gemm", shape="32,32,32", trials=8, db=tmp_path / "p.db", progress=seen.append, **QUICK)
    assert seen and seen[-1]["trial"] == 8 and seen[-1]["trials"] == 8
    assert all(s["noisy"] <= s["trial"] and (s["load"] is None or 0 <= s["load"] <= 1) for s in seen)
    assert all(s["trial"] <= s["trials"] for s in seen)

    class Stop(Exception):
        pass

    def stop(_):
        raise Stop("enough")

    with pytest.raises(Stop):
        optune.tune(op="gemm", shape="32,32,32", trials=8, db=tmp_path / "s.db", progress=stop, **QUICK)


def test_the_gil_is_released_while_measuring(tmp_path):
    done = threading.Event()
    outcome = {}

    def run():
        outcome["result"] = optune.tune(op="gemm", shape="48,48,48", trials=4, db=tmp_path / "g.db", **QUICK)
        done.set()

    thread = threading.Thread(target=run)
    thread.start()
    spins = 0
    while not done.is_set():
        spins += 1  # runs only while the tuning thread has let go of the GIL
    thread.join()
    assert outcome["result"]["best"] is not None
    assert spins > 10000


def cli_error(*args):
    run = subprocess.run([OPTUNE, *args], capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    line = run.stderr.strip()
    assert line.startswith("optune: error: ")
    return line[len("optune: error: "):]


def test_bad_input_raises_badinput_with_the_command_lines_message(tmp_path):
    db = str(tmp_path / "b.db")
    with pytest.raises(optune.BadInput) as error:
        optune.tune(op="gemm", shape="0,64,64", trials=2, db=db, **QUICK)
    assert str(error.value) == cli_error("tune", "--op", "gemm", "--shape", "0,64,64", "--trials", "2", "--db", db)
    with pytest.raises(optune.BadInput) as error:
        optune.space(op="conv3d", shape="1,2,3")
    assert str(error.value) == cli_error("space", "--op", "conv3d", "--shape", "1,2,3")
    with pytest.raises(optune.BadInput) as error:
        optune.tune(op="gemm", shape="64,64,64", target="tpu", trials=2, db=db)
    assert str(error.value) == cli_error("tune", "--shape", "64,64,64", "--target", "tpu", "--trials", "2", "--db", db)
    with pytest.raises(optune.BadInput):
        optune.tune(op="gemm", shape="64,64,64", trials=-5, db=db)
    with pytest.raises(optune.BadInput):
        optune.tune(op="gemm", shape="64,64,64", trials=2, timeout=float("nan"), db=db)
    with pytest.raises(optune.BadInput):
        optune.tune(op="gemm", shape="64,64,64", trials=2, compile_ahead="sometimes", db=db)
    assert not os.path.exists(db)  # nothing was opened, let alone written


def test_a_duration_of_hundreds_of_digits_is_badinput_with_the_command_lines_message(tmp_path):
    db = str(tmp_path / "d.db")
    digits = "9" * 400
    with pytest.raises(optune.BadInput) as error:  # was IndexError (std::out_of_range of std::stod)
        optune.query(db=db, since=digits + "s")
    assert str(error.value) == cli_error("query", "--db", db, "--since", digits + "s")
    assert "is longer than 3650d" in str(error.value)
    with pytest.raises(optune.BadInput, match="--budget: duration '9+m' is longer than 3650d"):
        optune.tune(suite=str(tmp_path / "x.toml"), budget=digits + "m", db=db)
    assert not os.path.exists(db)


def test_query_of_a_file_that_is_not_a_database_is_badinput(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database, just bytes" * 100)
    with pytest.raises(optune.BadInput) as error:
        optune.query(db=junk)
    assert str(error.value) == cli_error("query", "--db", str(junk))
    assert junk.read_bytes() == b"not a database, just bytes" * 100


def test_space_and_devices_describe_what_the_command_line_does():
    space = optune.space(op="gemm", shape={"M": 128, "N": 128, "K": 128}, target="cpu")
    assert space["template"] == "gemm.cpu" and space["size"] > 1
    names = {knob["name"] for knob in space["knobs"]}
    assert set(space["default_config"]) <= names
    devices = optune.devices()
    assert devices[0]["target"] == "cpu" and len(devices[0]["id"]) > 0


def test_pick_gives_an_untuned_shape_the_config_of_a_tuned_one_and_tune_takes_a_range(tmp_path):
    db = tmp_path / "t.db"
    results = optune.tune(op="gemm", shape="M=8..16,N=16,K=16", trials=2, db=db, tuner="random", **QUICK)
    assert [r["workload"] for r in results] == ["gemm.f32.M8.N16.K16", "gemm.f32.M16.N16.K16"]
    tuned = optune.pick("gemm", (16, 16, 16), db=db)
    assert tuned["source"] == "tuned"
    assert tuned["config"] == optune.query(db=db, op="gemm", shape="16,16,16")[0]["config"]
    nearest = optune.pick("gemm", "M=12,N=16,K=16", db=db)
    assert nearest["source"] == "nearest"
    assert nearest["from_workload"] in {"gemm.f32.M8.N16.K16", "gemm.f32.M16.N16.K16"}
    with pytest.raises(optune.BadInput, match="malformed"):
        optune.tune(op="gemm", shape="M=8..,N=16,K=16", db=db, **QUICK)


def test_dispatch_measures_a_rule_that_pick_then_answers_with(tmp_path):
    db = tmp_path / "d.db"
    rule = optune.dispatch("gemm", "M=1..16,N=16,K=16", trials=2, db=db, samples=3, finalists=1, held_out="5,16,16",
                           refine=0, rounds=1, tuner="random", **DISPATCH_QUICK)
    assert rule["shapes"] == ["gemm.f32.M1.N16.K16", "gemm.f32.M4.N16.K16", "gemm.f32.M16.N16.K16"]
    assert [check["workload"] for check in rule["held_out"]] == ["gemm.f32.M5.N16.K16"]
    assert rule["leaves"][0]["low"]["M"] == 1 and rule["leaves"][-1]["high"]["M"] == 16
    answer = optune.pick("gemm", (9, 16, 16), db=db)
    assert answer["source"] == "dispatch"
    assert answer["dispatch"]["rule_id"] == rule["id"]
    with pytest.raises(optune.BadInput, match="one shape is no range"):
        optune.dispatch("gemm", ["8,16,16"], db=db, **DISPATCH_QUICK)
    with pytest.raises(optune.BadInput, match="configs"):
        optune.dispatch("gemm", "M=1..16,N=16,K=16", db=db, configs=0, **DISPATCH_QUICK)


def test_query_to_pandas(tmp_path):
    pandas = pytest.importorskip("pandas")
    db = tmp_path / "q.db"
    optune.tune(op="gemm", shape="32,32,32", trials=4, db=db, tuner="grid", **QUICK)
    frame = optune.query(db=db, history=True, pandas=True)
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) >= 5 and {"workload", "config", "gflops", "error_kind"} <= set(frame.columns)


def test_replay_of_a_small_landscape_finds_its_optimum_and_rejects_a_bad_file(tmp_path):
    # A Kernel Tuner cache file of 12 configurations with a known optimum (time 0.5 at X=4, Y=2).
    import json
    cache = {}
    for x in (1, 2, 4, 8):
        for y in (1, 2, 3):
            cache[f"{x},{y}"] = {"X": x, "Y": y, "time": 0.5 if (x, y) == (4, 2) else 1.0 + x + y}
    landscape = tmp_path / "tiny.json"
    landscape.write_text(json.dumps({"device_name": "tiny", "kernel_name": "k", "tune_params_keys": ["X", "Y"],
                                     "tune_params": {"X": [1, 2, 4, 8], "Y": [1, 2, 3]}, "objective": "time",
                                     "cache": cache}))
    reports = optune.replay(landscape, tuner=["grid", "random"], seeds=3, budgets=[6, 12])
    assert [r["tuner"] for r in reports] == ["grid", "random"]
    for report in reports:
        assert report["budgets"] == [6, 12] and report["fraction"][-1] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(optune.BadInput) as error:
        optune.replay(bad)
    assert str(error.value) == cli_error("replay", "--landscape", str(bad))


SCALE_SOURCE = """
#include <cstdint>
extern "C" void scale(const float* x, float* y, float a, std::int32_t n) {
  for (std::int32_t start = 0; start < n; start += BLOCK)
    for (std::int32_t i = start; i < n && i < start + BLOCK; ++i) y[i] = a * x[i];
}
"""


def scale_kernel(tmp_path):
    (tmp_path / "scale.cpp").write_text(SCALE_SOURCE)
    return {
        "name": "scale", "backend": "cpu", "source": str(tmp_path / "scale.cpp"), "entry": "scale",
        "flops": "N", "build_options": ["-O2"],
        "args": [{"name": "x", "kind": "buffer", "dtype": "f32", "count": "N"},
                 {"name": "y", "kind": "buffer", "dtype": "f32", "count": "N", "output": True},
                 {"name": "a", "kind": "scalar", "dtype": "f32", "value": "1"},
                 {"name": "n", "kind": "scalar", "dtype": "i32", "value": "N"}],
        "extents": {"N": 1000},
        "knobs": {"BLOCK": [64, 128, 256]},
    }


def test_tune_kernel_takes_numpy_arguments_and_answers_as_kernel_tuner_does(tmp_path):
    numpy = pytest.importorskip("numpy")
    x = numpy.linspace(-1, 1, 1000, dtype=numpy.float32)
    db = tmp_path / "k.db"
    result = optune.tune_kernel(scale_kernel(tmp_path), [x, None, numpy.float32(3.0), numpy.int32(1000)],
                                answer=[None, 3 * x, None, None], atol=1e-6, trials=3, db=db, tuner="grid", **QUICK)
    assert result["workload"] == "kernel.scale.N1000"
    assert result["template"].startswith("kernel.scale.cpu#")
    assert result["best"]["error_kind"] == "ok" and result["best"]["config"]["BLOCK"] in (64, 128, 256)
    records = optune.query(db=db, history=True)
    # Every config passed the check ("slow": one cut short by the bail-out after it).
    assert {r["error_kind"] for r in records} <= {"ok", "slow"} and "ok" in {r["error_kind"] for r in records}
    # The answer is what is checked: a wrong one makes every config a wrong answer.
    with pytest.raises(optune.BadInput, match="disagree with the check"):
        optune.tune_kernel(scale_kernel(tmp_path), [x, None, 3.0, 1000], answer=[None, 3 * x + 1, None, None],
                           trials=3, db=tmp_path / "wrong.db", tuner="grid", **QUICK)


def test_tune_kernel_reads_kernel_files_and_refuses_bad_arguments(tmp_path):
    numpy = pytest.importorskip("numpy")
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    result = optune.tune_kernel(os.path.join(root, "configs", "kernels", "saxpy_cpu.toml"), shape={"N": 4096},
                                trials=2, db=tmp_path / "s.db", **QUICK)
    assert result["workload"] == "kernel.saxpy.N4096" and result["best"]["error_kind"] == "ok"
    x = numpy.zeros(1000, dtype=numpy.float32)
    with pytest.raises(optune.BadInput, match="3 arguments for 4 kernel args"):
        optune.tune_kernel(scale_kernel(tmp_path), [x, x, 1.0], db=tmp_path / "b.db", **QUICK)
    with pytest.raises(optune.BadInput, match="float64"):
        optune.tune_kernel(scale_kernel(tmp_path), [x.astype(numpy.float64), None, 1.0, 1000], db=tmp_path / "b.db",
                           **QUICK)
    with pytest.raises(optune.BadInput, match="knobs.BLOCK"):
        bad = scale_kernel(tmp_path)
        bad["knobs"] = {"BLOCK": []}
        optune.tune_kernel(bad, db=tmp_path / "b.db", **QUICK)
    assert not (tmp_path / "b.db").exists()


def test_options_keep_the_command_lines_limits_and_choices(tmp_path):
    db = str(tmp_path / "limits.db")
    for options, words in [({"trials": 10**9}, "trials"), ({"batch_size": 2**40}, "batch_size"),
                           ({"jobs": 2**31}, "jobs"), ({"remeasure": 10**6}, "remeasure"),
                           ({"objective": "rank:ndcg"}, "objective"), ({"scheduler": "fifo"}, "scheduler"),
                           ({"compile_timeout": 0.5}, "compile_timeout"), ({"db": ""}, "database path is empty")]:
        arguments = dict(op="gemm", shape="16,16,16", target="cpu", db=db, trials=1)
        arguments.update(options)
        with pytest.raises(optune.BadInput, match=words):
            optune.tune(**arguments)
    assert not os.path.exists(db)


def test_tune_kernel_checks_again_when_the_answer_changes(tmp_path):
    # Records belong to the kernel's digest (source, arguments, answer): a second call with another
    # answer is another kernel, measured and checked again, never served by the first call's records.
    numpy = pytest.importorskip("numpy")
    x = numpy.linspace(-1, 1, 1000, dtype=numpy.float32)
    db = tmp_path / "again.db"
    arguments = [x, None, numpy.float32(3.0), numpy.int32(1000)]
    first = optune.tune_kernel(scale_kernel(tmp_path), arguments, answer=[None, 3 * x, None, None], atol=1e-6,
                               trials=2, db=db, tuner="grid", **QUICK)
    assert first["best"]["error_kind"] == "ok"
    with pytest.raises(optune.BadInput, match="disagree with the check"):
        optune.tune_kernel(scale_kernel(tmp_path), arguments, answer=[None, 3 * x + 1, None, None], atol=1e-6,
                           trials=2, db=db, tuner="grid", **QUICK)
    again = optune.tune_kernel(scale_kernel(tmp_path), arguments, answer=[None, 3 * x, None, None], atol=1e-6,
                               trials=2, db=db, tuner="grid", **QUICK)
    assert again["template"] == first["template"]  # the same kernel again: the first call's records count
    assert {r["template"] for r in optune.query(db=db, history=True)} == {first["template"]}


def test_dtype_with_a_suite_tunes_its_workloads_in_that_dtype(tmp_path):
    suite = tmp_path / "net.toml"
    suite.write_text('name = "net"\n[[workload]]\nname = "fc"\nop = "gemm"\nshape = "3,40,68"\n')
    db = tmp_path / "d.db"
    optune.tune(suite=str(suite), dtype="i8", budget="2", tuner="random", db=db, **QUICK)
    assert {r["workload"] for r in optune.query(db=db, history=True)} == {"gemm.i8.M3.N40.K68"}


def test_dtype_tunes_a_bfloat16_gemm_under_its_own_key_and_bad_dtypes_are_badinput(tmp_path):
    db = tmp_path / "d.db"
    result = optune.tune(op="gemm", shape=(24, 40, 64), dtype="bf16", trials=2, db=db, **QUICK)
    assert result["workload"] == "gemm.bf16.M24.N40.K64"
    assert result["best"]["error_kind"] == "ok"
    assert [r["workload"] for r in optune.query(db=db, op="gemm", shape="24,40,64", dtype="bf16")] == \
        ["gemm.bf16.M24.N40.K64"]
    assert optune.query(db=db, op="gemm", shape="24,40,64") == []
    with pytest.raises(optune.BadInput, match="runs"):
        optune.space(op="conv2d", shape="N=1,C=8,H=8,W=8,K=8,R=3,S=3", dtype="i32")
    with pytest.raises(optune.BadInput, match="dtype"):
        optune.tune(op="gemm", dtype="bf16", db=db)
