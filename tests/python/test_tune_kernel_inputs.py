"""tune_kernel with what Kernel Tuner's users pass: numpy values anywhere, code text as the source,
any byte order; and with what they should not pass, which is optune.BadInput naming the field,
never a TypeError from deep inside, nor a kernel file whose structure a key or a string rewrote."""
import os

import pytest

import optune
from optune import _kernel_file

numpy = pytest.importorskip("numpy")
tomllib = pytest.importorskip("tomllib")

QUICK = dict(repeat=1, min_repeat_ms=1.0, batch_size=4, remeasure=0, tuner="grid", trials=2)
SCALE_SOURCE = """
#include <cstdint>
extern "C" void scale(const float* x, float* y, float a, std::int32_t n) {
  for (std::int32_t start = 0; start < n; start += BLOCK)
    for (std::int32_t i = start; i < n && i < start + BLOCK; ++i) y[i] = a * x[i];
}
"""


def scale_kernel(tmp_path, **fields):
    (tmp_path / "scale.cpp").write_text(SCALE_SOURCE)
    kernel = {
        "name": "scale", "backend": "cpu", "source": str(tmp_path / "scale.cpp"), "entry": "scale", "flops": "N",
        "args": [{"name": "x", "kind": "buffer", "dtype": "f32", "count": "N"},
                 {"name": "y", "kind": "buffer", "dtype": "f32", "count": "N", "output": True},
                 {"name": "a", "kind": "scalar", "dtype": "f32", "value": "1"},
                 {"name": "n", "kind": "scalar", "dtype": "i32", "value": "N"}],
        "extents": {"N": 256},
        "knobs": {"BLOCK": [64, 128]},
    }
    kernel.update(fields)
    return kernel


def assert_all_ok(db):
    records = optune.query(db=db, history=True)
    # Every config passed the check ("slow": one cut short by the bail-out after it).
    assert records and {r["error_kind"] for r in records} <= {"ok", "slow"}


# A scalar argument given an array or a complex, or a number that is not finite or is outside its
# dtype: one line naming the argument, and no database made.
@pytest.mark.parametrize("value, words", [
    (numpy.array([1.0, 2.0]), "is a scalar; got an array of shape"), (numpy.complex64(1), "is a scalar"),
    (float("nan"), "not a finite number"), (numpy.float32("inf"), "not a finite number"),
    (1e300, "outside f32's range"), (numpy.float64(-1e39), "outside f32's range")])
def test_a_scalar_argument_that_is_no_number_of_its_dtype_is_badinput(tmp_path, value, words):
    x = numpy.ones(256, dtype=numpy.float32)
    with pytest.raises(optune.BadInput, match=words) as error:
        optune.tune_kernel(scale_kernel(tmp_path), [x, None, value, 256], db=tmp_path / "b.db", **QUICK)
    assert "argument 2 ('a')" in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "b.db").exists()


def test_bad_kernel_fields_and_tolerances_are_badinput_naming_the_field(tmp_path):
    x = numpy.ones(256, dtype=numpy.float32)
    for fields, words in [({"check": None}, "check: expected a dict"), ({"args": None}, "args: expected a list"),
                          ({"args": ["x"]}, "args: expected a list of dicts")]:
        with pytest.raises(optune.BadInput, match=words):
            optune.tune_kernel(scale_kernel(tmp_path, **fields), db=tmp_path / "b.db", **QUICK)
    with pytest.raises(optune.BadInput, match="kernel: expected a kernel file's path or a dict"):
        optune.tune_kernel(None, db=tmp_path / "b.db", **QUICK)
    with pytest.raises(optune.BadInput, match="atol: expected a finite number, got 'abc'"):
        optune.tune_kernel(scale_kernel(tmp_path), [x, None, 1.0, 256], answer=[None, x, None, None], atol="abc",
                           db=tmp_path / "b.db", **QUICK)
    with pytest.raises(optune.BadInput, match="arguments: expected a list"):
        optune.tune_kernel(scale_kernel(tmp_path), 5, db=tmp_path / "b.db", **QUICK)
    assert not (tmp_path / "b.db").exists()


def test_tune_kernel_refuses_op_as_the_command_line_refuses_it_with_kernel(tmp_path):
    with pytest.raises(optune.BadInput, match="op does not go with a kernel"):
        optune.tune_kernel(scale_kernel(tmp_path), op="gemm", db=tmp_path / "b.db", **QUICK)
    assert not (tmp_path / "b.db").exists()


def test_arguments_and_answers_may_be_any_iterable(tmp_path):
    x = numpy.linspace(-1, 1, 256, dtype=numpy.float32)
    db = tmp_path / "k.db"
    optune.tune_kernel(scale_kernel(tmp_path), (value for value in [x, None, 2.0, 256]),
                       answer=iter([None, 2 * x, None, None]), db=db, **QUICK)
    assert_all_ok(db)


def test_numpy_knob_values_ranges_and_extents_work(tmp_path):
    x = numpy.linspace(-1, 1, 256, dtype=numpy.float32)
    kernel = scale_kernel(tmp_path, knobs={"BLOCK": numpy.array([64, 128]), "UNROLL": range(1, 3),
                                           "HALF": [numpy.float32(0.5)]}, extents={"N": numpy.int64(256)})
    db = tmp_path / "k.db"
    result = optune.tune_kernel(kernel, [x, None, numpy.float32(2.0), numpy.int32(256)],
                                answer=[None, 2 * x, None, None], db=db, **QUICK)
    assert result["workload"] == "kernel.scale.N256"
    assert result["best"]["config"]["BLOCK"] in (64, 128) and result["best"]["config"]["UNROLL"] in (1, 2)
    assert_all_ok(db)


def test_big_endian_arrays_reach_the_kernel_as_their_numbers(tmp_path):
    x = numpy.linspace(-1, 1, 256, dtype=numpy.float32)
    db = tmp_path / "k.db"
    optune.tune_kernel(scale_kernel(tmp_path), [x.astype(">f4"), None, 3.0, 256],
                       answer=[None, (3 * x).astype(">f4"), None, None], db=db, **QUICK)
    assert_all_ok(db)  # swapped bytes would be a wrong_answer


def test_kernel_file_text_keeps_keys_and_strings_as_given():
    nasty = {"name": 'a"b\\c\r\n\t\b\f\x00\x1b\x7f é', "knobs": {"a.b": [1], "X\n[launch]\nglobal = [\"1\"]": [2]},
             "check": {"reference": "x = 1\n[extents]", "a b": "c"}, "args": [{"na me": "v\r"}]}
    assert tomllib.loads(_kernel_file._toml(nasty)) == nasty


def test_a_knob_name_that_is_no_identifier_is_refused_by_optunes_loader(tmp_path):
    with pytest.raises(optune.BadInput, match="'a.b' must be an identifier"):
        optune.tune_kernel(scale_kernel(tmp_path, knobs={"a.b": [1]}), db=tmp_path / "b.db", **QUICK)
    with pytest.raises(optune.BadInput, match="entry: .* is not an identifier"):
        optune.tune_kernel(scale_kernel(tmp_path, entry="sc\rale"), db=tmp_path / "b.db", **QUICK)


def test_messages_name_the_kernel_dict_not_its_deleted_temporary_file(tmp_path):
    with pytest.raises(optune.BadInput) as error:
        optune.tune_kernel(scale_kernel(tmp_path, flops="N +"), db=tmp_path / "b.db", **QUICK)
    assert str(error.value).startswith("kernel dict 'scale':") and "flops" in str(error.value)
    with pytest.raises(optune.BadInput) as error:
        short = numpy.ones(100, dtype=numpy.float32)
        optune.tune_kernel(scale_kernel(tmp_path), [short, None, 1.0, 256], db=tmp_path / "b.db", **QUICK)
    assert str(error.value).startswith("kernel dict 'scale':") and "optune-kernel-" not in str(error.value)


def test_source_given_as_code_text_is_compiled(tmp_path):
    x = numpy.linspace(-1, 1, 256, dtype=numpy.float32)
    db = tmp_path / "k.db"
    optune.tune_kernel(scale_kernel(tmp_path, source=SCALE_SOURCE), [x, None, 3.0, 256],
                       answer=[None, 3 * x, None, None], db=db, **QUICK)
    assert_all_ok(db)
    with pytest.raises(optune.BadInput, match="source: no file"):
        optune.tune_kernel(scale_kernel(tmp_path, source="nothing_here.cpp"), db=tmp_path / "b.db", **QUICK)


OPENCL_SCALE = """
__kernel void scale(__global const float* x, __global float* y, float a, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i];
}
"""


def test_opencl_source_given_as_code_text_is_compiled(tmp_path):
    if not any(device["target"].startswith("opencl") for device in optune.devices()):
        pytest.skip("no OpenCL device")
    x = numpy.linspace(-1, 1, 256, dtype=numpy.float32)
    kernel = scale_kernel(tmp_path, backend="opencl", source=OPENCL_SCALE, knobs={"BLOCK": [16, 32]},
                          launch={"global": ["N"], "local": ["BLOCK"]})
    db = tmp_path / "k.db"
    optune.tune_kernel(kernel, [x, None, 3.0, 256], answer=[None, 3 * x, None, None], db=db, **QUICK)
    assert_all_ok(db)
