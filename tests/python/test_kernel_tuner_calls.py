"""optune.tune_kernel called as Kernel Tuner's tune_kernel: Kernel Tuner-style scripts (a vector add
and a matrix multiply tiled through local memory, in OpenCL on PoCL) run unchanged but for their
import line; restrictions (strings and a function) keep exactly their configs in the results; the
answer check catches a wrong answer; Kernel Tuner's keywords optune cannot honour are BadInput."""
import itertools

import pytest

import optune
from optune import _restrictions

numpy = pytest.importorskip("numpy")


def opencl_device_present():
    return any(device["target"].startswith("opencl") for device in optune.devices())


needs_opencl = pytest.mark.skipif(not opencl_device_present(), reason="no OpenCL device (PoCL)")

# --- The scripts: as a Kernel Tuner user writes them, but for the import line. ---------------------------

VECTOR_ADD = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int start = get_group_id(0) * block_size_x * work_per_thread + get_local_id(0);
    for (int k = 0; k < work_per_thread; k++) {
        int i = start + k * block_size_x;
        if (i < n) c[i] = a[i] + b[i];
    }
}
"""
VECTOR_ADD_RESTRICTIONS = ["block_size_x * work_per_thread <= 256"]


def vector_add_script(answer_offset=0.0):
    from optune import tune_kernel  # Kernel Tuner: from kernel_tuner import tune_kernel

    size = 1000
    a = numpy.random.randn(size).astype(numpy.float32)
    b = numpy.random.randn(size).astype(numpy.float32)
    c = numpy.zeros_like(a)
    n = numpy.int32(size)
    args = [c, a, b, n]
    tune_params = dict(block_size_x=[32, 64, 128], work_per_thread=[1, 2, 4])
    answer = [a + b + answer_offset, None, None, None]
    return tune_kernel("vector_add", VECTOR_ADD, size, args, tune_params,
                       grid_div_x=["block_size_x", "work_per_thread"], restrictions=VECTOR_ADD_RESTRICTIONS,
                       answer=answer, iterations=3, quiet=True)


MATMUL = """
__kernel void matmul(__global float *C, __global const float *A, __global const float *B, const int n) {
    __local float sA[block_size_y * tile_size_y][block_size_x];
    __local float sB[block_size_x][block_size_x];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_group_id(0) * block_size_x + tx;
    int row = get_group_id(1) * block_size_y * tile_size_y + ty;
    float sum[tile_size_y];
    for (int i = 0; i < tile_size_y; i++) sum[i] = 0.0f;
    for (int k = 0; k < n; k += block_size_x) {
        for (int i = 0; i < tile_size_y; i++)
            sA[ty + i * block_size_y][tx] = A[(row + i * block_size_y) * n + k + tx];
        sB[ty][tx] = B[(k + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < block_size_x; j++)
            for (int i = 0; i < tile_size_y; i++)
                sum[i] += sA[ty + i * block_size_y][j] * sB[j][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < tile_size_y; i++) C[(row + i * block_size_y) * n + col] = sum[i];
}
"""


def matmul_restriction(p):  # square blocks (sB is loaded one element a thread), at most 32 rows a block
    return p["block_size_x"] == p["block_size_y"] and p["block_size_y"] * p["tile_size_y"] <= 32


def matmul_script():
    from optune import tune_kernel  # Kernel Tuner: from kernel_tuner import tune_kernel

    n = 64
    A = numpy.random.randn(n, n).astype(numpy.float32)
    B = numpy.random.randn(n, n).astype(numpy.float32)
    C = numpy.zeros((n, n), dtype=numpy.float32)
    tune_params = {"block_size_x": [8, 16], "block_size_y": [8, 16], "tile_size_y": [1, 2, 4]}
    metrics = {"GFLOP/s": lambda p: 2 * n ** 3 / 1e9 / (p["time"] / 1e3)}
    return tune_kernel("matmul", MATMUL, (n, n), [C, A, B, numpy.int32(n)], tune_params,
                       grid_div_y=["block_size_y", "tile_size_y"], restrictions=matmul_restriction,
                       answer=[A @ B, None, None, None], atol=1e-3, iterations=3, metrics=metrics, quiet=True,
                       lang="OpenCL")


# --- What the scripts get back. ------------------------------------------------------------------------


def allowed_and_excluded(tune_params, allows):
    product = [dict(zip(tune_params, values)) for values in itertools.product(*tune_params.values())]
    return [p for p in product if allows(p)], [p for p in product if not allows(p)]


def assert_results_are_the_allowed_configs(results, env, tune_params, allows):
    allowed, excluded = allowed_and_excluded(tune_params, allows)
    assert excluded, "the restrictions should exclude some configs"
    configs = [{name: result[name] for name in tune_params} for result in results]
    # Brute force (Kernel Tuner's default) measures every allowed config once, and none of the others.
    assert sorted(map(sorted, map(dict.items, configs))) == sorted(map(sorted, map(dict.items, allowed)))
    for result in results:
        assert isinstance(result["time"], float) and result["time"] > 0, result
        assert result["times"] and all(t > 0 for t in result["times"])
    assert env["best_config"] in results and env["device_name"]
    assert env["best_config"]["time"] == min(result["time"] for result in results)


@needs_opencl
def test_a_kernel_tuner_vector_add_script_runs_unchanged_with_string_restrictions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results, env = vector_add_script()
    tune_params = dict(block_size_x=[32, 64, 128], work_per_thread=[1, 2, 4])
    assert_results_are_the_allowed_configs(results, env, tune_params,
                                           lambda p: eval(VECTOR_ADD_RESTRICTIONS[0], {}, dict(p)))
    assert env["optune"]["failures"] == 0 and env["lang"] == "OpenCL"
    # The records are optune's: in optune.db of the working directory, under the kernel's name.
    assert {r["workload"] for r in optune.query(db="optune.db", history=True)} == {"kernel.vector_add.problem_size_x1000"}


@needs_opencl
def test_a_kernel_tuner_matmul_script_runs_unchanged_with_a_restriction_function(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results, env = matmul_script()
    tune_params = {"block_size_x": [8, 16], "block_size_y": [8, 16], "tile_size_y": [1, 2, 4]}
    assert_results_are_the_allowed_configs(results, env, tune_params, matmul_restriction)
    assert all(result["GFLOP/s"] > 0 for result in results)  # the script's metric, from each result's time


@needs_opencl
def test_a_wrong_answer_is_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(optune.BadInput, match="disagree with the check"):
        vector_add_script(answer_offset=1.0)


# --- Kernel Tuner's keywords optune cannot honour, and input it cannot take: BadInput, before anything runs.


def kernel_tuner_call(**keywords):
    n = 64
    a = numpy.ones(n, dtype=numpy.float32)
    call = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=n,
                arguments=[numpy.zeros_like(a), a, a, numpy.int32(n)],
                tune_params={"block_size_x": [32, 64], "work_per_thread": [1]}, quiet=True)
    call.update(keywords)
    return optune.tune_kernel(**call)


@pytest.mark.parametrize("keywords, words", [
    ({"texmem_args": {"tex": numpy.ones(4)}}, "texmem_args: optune's kernels take no texture memory"),
    ({"cmem_args": {"c": numpy.ones(4)}}, "cmem_args"),
    ({"observers": [object()]}, "observers: optune measures time only"),
    ({"simulation_mode": True}, "simulation_mode"),
    ({"verify": lambda answer, result: True}, "verify: a Python function cannot run in optune's worker"),
    ({"cache": "cache.json"}, "cache"),
    ({"defines": {"N": 1}}, "defines"),
    ({"objective": "GFLOP/s"}, "objective 'GFLOP/s'"),
    ({"frobnicate": 1}, "unknown keyword 'frobnicate'"),
    ({"tuner": "grid"}, "tuner: a Kernel Tuner call gives it as strategy"),
    ({"lang": "HIP"}, "lang 'HIP'"),
    ({"strategy": "hill_climbing"}, "strategy 'hill_climbing'"),
    ({"problem_size": "n"}, "problem_size: expected a positive integer"),
    ({"grid_div_x": lambda p: p["block_size_x"]}, "grid_div_x: a function is not supported"),
    ({"grid_div_x": ["block_size_x * wpt"]}, "grid_div_x: 'block_size_x \\* wpt' names 'wpt'"),
    ({"smem_args": {"size": 128}}, "smem_args"),
    ({"arguments": [1, 2, 3, 4]}, "argument 0 is a int: Kernel Tuner's arguments are numpy arrays"),
    ({"arguments": [numpy.ones(4, dtype=numpy.complex64)] * 4}, "argument 0 is complex64"),
    ({"restrictions": ["block_size_x > 1000"]}, "restriction 'block_size_x > 1000' allows no configuration"),
    ({"restrictions": ["block_size_x >"]}, "is no Python expression"),
    ({"tune_params": {"time": [1]}}, "'time' is a name Kernel Tuner reserves"),
    ({"kernel_source": "no_such_kernel.cl"}, "kernel_source: cannot read no_such_kernel.cl"),
])
def test_what_optune_cannot_honour_is_badinput_naming_it(tmp_path, monkeypatch, keywords, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(optune.BadInput, match=words) as error:
        kernel_tuner_call(**keywords)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "optune.db").exists()


def test_a_missing_or_doubled_argument_is_badinput_not_typeerror():
    with pytest.raises(optune.BadInput, match="missing a required argument: 'tune_params'"):
        optune.tune_kernel("vector_add", VECTOR_ADD, 64, [])
    with pytest.raises(optune.BadInput, match="multiple values for argument 'problem_size'"):
        optune.tune_kernel("vector_add", VECTOR_ADD, 64, [], {}, problem_size=64)


# --- The restrictions' translation, without measuring. ---------------------------------------------------


def test_restrictions_of_every_form_keep_exactly_their_configs():
    knobs = {"bx": [8, 16, 32], "by": [8, 16], "t": [1, 2, 4], "layout": ["row", "col"]}
    forms = [
        ["bx == by", "t <= 2"],
        lambda p: p["bx"] * p["t"] <= 32,
        [(lambda bx, t: bx * t <= 32, ["bx", "t"]), lambda **p: p["layout"] == "row"],
        ["bx // by + t % 3 >= 2", lambda **p: 1 / 0],  # a restriction dividing by zero lets the config pass
    ]
    checks = [
        lambda p: p["bx"] == p["by"] and p["t"] <= 2,
        lambda p: p["bx"] * p["t"] <= 32,
        lambda p: p["bx"] * p["t"] <= 32 and p["layout"] == "row",
        lambda p: p["bx"] // p["by"] + p["t"] % 3 >= 2,
    ]
    for restrictions, check in zip(forms, checks):
        space = _restrictions.apply(restrictions, knobs, optune.BadInput)
        allowed, _ = allowed_and_excluded(knobs, check)
        product = [dict(zip(knobs, values)) for values in itertools.product(*knobs.values())]
        assert [p for p in product if space.allows(p)] == allowed and space.count == len(allowed)
        # A rule names only the parameters its restriction depends on (not "layout" above).
        assert all("layout" not in rule for rule in space.rules)


def test_python_arithmetic_becomes_a_kernel_file_expression():
    text = _restrictions.expression("block_size_x * tile // 2 + max(1, tile) ** 2 - -1 % 3",
                                    ["block_size_x", "tile"], "grid_div_x", optune.BadInput)
    assert text == "((div((block_size_x * tile), 2) + (max(1, tile) ^ 2)) - ((-1) % 3))"
    with pytest.raises(optune.BadInput, match="beyond what optune translates"):
        _restrictions.expression("tile if tile else 1", ["tile"], "grid_div_x", optune.BadInput)
