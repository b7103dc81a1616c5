"""How the module takes paths, targets and lists: a path of any type Python has for one (a file name
that is not UTF-8 included, as the command line takes it), a kernel file's own backend as its
target, one file or a list where a list goes; anything else is optune.BadInput, not a TypeError."""
import json
import os
import pathlib
import shutil

import pytest

import optune

QUICK = dict(target="cpu", repeat=1, min_repeat_ms=1.0, batch_size=4, remeasure=0, tuner="grid", trials=1)
KERNELS = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "kernels")


def has_opencl():
    return any(device["target"].startswith("opencl") for device in optune.devices())


def landscape(path, device):
    """A Kernel Tuner cache file of 12 configurations measured on `device`."""
    cache = {f"{x},{y}": {"X": x, "Y": y, "time": 0.5 if (x, y) == (4, 2) else 1.0 + x + y}
             for x in (1, 2, 4, 8) for y in (1, 2, 3)}
    path.write_text(json.dumps({"device_name": device, "kernel_name": "k", "tune_params_keys": ["X", "Y"],
                                "tune_params": {"X": [1, 2, 4, 8], "Y": [1, 2, 3]}, "objective": "time",
                                "cache": cache}))
    return path


def test_none_for_a_database_or_a_landscape_is_badinput():
    for call in (lambda: optune.tune(op="gemm", shape="16,16,16", db=None, **QUICK),
                 lambda: optune.query(db=None), lambda: optune.pick("gemm", "16,16,16", db=None),
                 lambda: optune.replay(None)):
        with pytest.raises(optune.BadInput, match="expected a path"):
            call()


def test_a_path_or_text_with_a_nul_is_badinput_and_nothing_is_written(tmp_path, monkeypatch):
    # A C string ends at a NUL: db='a\0b.db' wrote into ./a.
    monkeypatch.chdir(tmp_path)
    saxpy = os.path.join(KERNELS, "saxpy_cpu.toml")
    calls = [lambda: optune.tune(op="gemm", shape="16,16,16", db="a\0b.db", **QUICK),
             lambda: optune.tune(op="gemm", shape="16,16,16", db=b"a\0b.db", **QUICK),
             lambda: optune.tune(op="gemm", shape="16,16,16", db=pathlib.Path("a\0b.db"), **QUICK),
             lambda: optune.tune(kernel=saxpy + "\0.toml", db="k.db", **QUICK),
             lambda: optune.tune(op="gemm", shape="16,16,16", compiler="c++\0 -O0", db="c.db", **QUICK),
             lambda: optune.query(db="a\0b.db"), lambda: optune.pick("gemm", "16,16,16", db="a\0b.db"),
             lambda: optune.replay("a\0b.json")]
    for call in calls:
        with pytest.raises(optune.BadInput, match="holds a NUL"):
            call()
    assert os.listdir(tmp_path) == []


def test_space_of_a_kernel_file_takes_the_files_backend_as_its_target():
    if not has_opencl():
        pytest.skip("no OpenCL device")
    transpose = os.path.join(KERNELS, "transpose.toml")
    assert optune.space(kernel=transpose)["template"].startswith("kernel.transpose.opencl")
    assert optune.space(kernel=os.path.join(KERNELS, "saxpy_cpu.toml"))["template"].startswith("kernel.saxpy.cpu")
    with pytest.raises(optune.BadInput, match="not on target cpu"):  # a target given is still the target
        optune.space(kernel=transpose, target="cpu")


def test_replay_takes_one_transfer_file_of_any_path_type_and_refuses_a_non_list(tmp_path):
    tiny = landscape(tmp_path / "tiny.json", "tiny")
    other = landscape(tmp_path / "other.json", "other")
    for transfer_from in (os.fsencode(other), other, str(other), [os.fsencode(other)]):
        reports = optune.replay(tiny, tuner="xgb", seeds=1, budgets=[6], transfer_from=transfer_from)
        assert [r["tuner"] for r in reports] == ["xgb"]
    with pytest.raises(optune.BadInput, match="transfer_from: expected a list"):
        optune.replay(tiny, transfer_from=5)
    with pytest.raises(optune.BadInput, match="budgets: expected a list"):
        optune.replay(tiny, budgets=100)


def test_replay_takes_a_list_of_tuners_and_refuses_all_among_others(tmp_path):
    tiny = landscape(tmp_path / "tiny.json", "tiny")
    assert [r["tuner"] for r in optune.replay(tiny, tuner=("grid", "random"), seeds=1, budgets=[6])] == \
        ["grid", "random"]
    with pytest.raises(optune.BadInput, match='"all" is every tuner; give it alone'):
        optune.replay(tiny, tuner=["all", "grid"])


def test_file_names_that_are_not_utf8_work_as_on_the_command_line(tmp_path):
    folder = os.path.join(os.fsencode(tmp_path), b"not-utf8-\xff")
    os.mkdir(folder)
    for name in (b"saxpy_cpu.toml", b"saxpy_cpu.cpp"):
        shutil.copy(os.path.join(os.fsencode(KERNELS), name), folder)
    db = os.fsdecode(os.path.join(folder, b"records\xfe.db"))  # a str with surrogate escapes
    kernel = os.path.join(folder, b"saxpy_cpu.toml")  # bytes
    result = optune.tune(kernel=kernel, shape="N=1024", db=db, **QUICK)
    assert result["workload"] == "kernel.saxpy.N1024"
    assert os.path.exists(os.path.join(folder, b"records\xfe.db"))
    assert optune.query(db=db)[0]["config"] == result["best"]["config"]
    assert optune.pick("gemm", "16,16,16", db=os.fsencode(db))["source"] == "default"
    assert optune.space(kernel=os.fsdecode(kernel))["template"].startswith("kernel.saxpy.cpu")
    tiny = landscape(tmp_path / "tiny.json", "tiny")
    shutil.copy(tiny, os.path.join(folder, b"tiny\xfd.json"))
    assert len(optune.replay(os.path.join(folder, b"tiny\xfd.json"), tuner="grid", seeds=1, budgets=[6])) == 1


def test_a_message_naming_a_file_that_is_not_utf8_is_badinput_with_that_name(tmp_path):
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"gone-\xff", b"k.toml"))
    with pytest.raises(optune.BadInput) as error:
        optune.space(kernel=missing)
    assert missing in str(error.value)
    with pytest.raises(optune.BadInput, match="op: .* is not UTF-8 text"):
        optune.query(db=tmp_path / "q.db", op=os.fsdecode(b"gemm\xff"))
