#!/usr/bin/env python3
"""Kernel Tuner against optune on the same user kernel file (CUDA or OpenCL), wall clock against wall clock.

What it measures: for each kernel file Kernel Tuner's tune_kernel and `optune tune --kernel FILE
--target T` tune the same source over the same knobs, restrictions, launch, problem size and
arguments, each with the same number of evaluations and seeds, each run a fresh process with empty
compile caches. The file's `backend` picks both sides: "cuda" (configs/kernels/*_cuda.toml, on a
GPU) is Kernel Tuner's cupy backend against --target cuda; "opencl" (e.g. configs/kernels/conv2d.toml,
on PoCL here) its OpenCL backend (pyopencl, platform 0, device 0) against --target opencl. For
every evaluation the wall time since the process started and the measured time are kept, so the
report can say when each run first held a config within 5% of the best any run found (Kernel
Tuner's brute force included when the space is small): evaluations and wall seconds to that
quality, total wall, seconds per evaluation, and the two open issues' checks.

The two tools time a candidate differently: optune's time is the median of its timed repeats
(each repeat at least --min-repeat-ms of back-to-back runs), Kernel Tuner's `time` the mean of
its 7 iterations, each one run between CUDA events (cupy) or timed by its OpenCL event's profiling.
Both check every candidate's output against the file's [check] reference (optune in its isolated
worker; Kernel Tuner through `verify`, with the reference computed once by cupy or pyopencl, as
optune computes it once).

The mapping of a kernel file onto tune_kernel (generic; a file it cannot map exits 2, one line):
  entry        kernel_name (extent names replaced by their values; Kernel Tuner replaces knobs)
  [knobs]      tune_params, in file order
  [constraints] rules, and the launch's own validity (positive whole grid and block sizes, block
               within the device's threads, shared memory within its opt-in limit; OpenCL: local
               dividing global, the work-group within max_work_group_size and max_work_item_size_d)
               -> one restrictions function (the expressions translated from optune's language;
               device-limit names take the device's values: cupy's attributes, or pyopencl's
               max_work_group_size, local_mem_size, ... of the OpenCL device)
  [launch] grid -> problem_size as a function of the config, grid_div_* = 1 (the grid in blocks)
  [launch] global (OpenCL, in work-items) -> problem_size global / local, grid_div_* = 1: Kernel
               Tuner's OpenCL backend launches grid * block work-items, so its grid counts work-groups
  [launch] block (or block_size_x/_y/_z), OpenCL's local -> block_size_names; a number becomes a
               one-value param
  shared_memory -> smem_args size; above 48 KiB the kernel's attribute is raised as optune does
               (Kernel Tuner's cupy backend does not; KT_SMEM_OPTIN=0 keeps KT below 48 KiB)
  args         numpy arrays (random in [-1, 1) for floats, [0, 100) for integers) and scalars
  build_options compiler_options (CUDA: with --std=c++17, NVRTC's dialect in optune; OpenCL: as
               they are, clBuildProgram's options)
  [check]      answer + verify (|out - ref| <= atol + rtol |ref|), reference run once by cupy
               (grid, block, shared_memory) or pyopencl (global, local)

Subcommands:
  run OUT TOML... --optune BIN   every run, on the device's machine (kt_vs_optune_cuda.sh and
                                 kt_vs_optune_pocl.sh call it); with --simulate, Kernel Tuner's
                                 runs only, on made-up times (no device)
  kt TOML --strategy S --seed N --budget B --out JSON [--simulate CACHE]   one Kernel Tuner run
  report OUT                     the markdown tables of the runs under OUT
  space TOML                     the mapping and the valid space's size (no device needed)
  limits BACKEND                 the device's limits (cuda: cupy's GPU 0; opencl: Kernel Tuner's device)
  fake-cache TOML CACHE          a cache of made-up times, for `kt --simulate` without a device
  selftest                       the mapping of the example files and the reporter on synthetic runs
"""
import argparse
import contextlib
import json
import math
import os
import pathlib
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
import warnings

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

WITHIN = 0.95  # "within 5%": a time at most best / 0.95, as time_to_result.py counts it
KT_STATISTIC = ("Kernel Tuner: `time`, the mean of its 7 iterations (CUDA events around each run, or the "
                "OpenCL event's profiling of each run)")
OPTUNE_STATISTIC = "optune: median_seconds, the median of its timed repeats (--repeat, --min-repeat-ms)"
# Device limits (optune's names for the cuda backend) where no GPU answers: an H200's.
H200_LIMITS = {
    "max_threads_per_block": 1024, "max_block_dim_x": 1024, "max_block_dim_y": 1024, "max_block_dim_z": 64,
    "max_grid_dim_x": 2147483647, "max_grid_dim_y": 65535, "max_grid_dim_z": 65535,
    "max_shared_memory_per_block": 232448, "multiprocessor_count": 132, "warp_size": 32,
    "compute_capability": 90, "l2_cache_size": 52428800,
}
# Device limits (optune's names for the opencl backend) where no OpenCL device is asked: PoCL's
# (pthread) on the 2-core Xeon the OpenCL comparison runs on.
POCL_LIMITS = {
    "max_work_group_size": 4096, "local_mem_size": 2097152, "compute_units": 2, "vector_width_float": 16,
    "max_work_item_size_0": 4096, "max_work_item_size_1": 4096, "max_work_item_size_2": 4096,
}
DEFAULT_SHARED_MEMORY = 48 * 1024  # what a launch may ask for without raising the kernel's attribute


class Backend:
    """What a kernel file's backend decides on both sides: Kernel Tuner's lang, optune's target, the
    [launch] fields (the first two the sizes: grid and block, or global and local), the device-limit
    names that bound a block, and the limits where no device answers."""

    def __init__(self, target, lang, launch_fields, max_threads, max_dims, stand_in, stand_in_name):
        self.target, self.lang, self.launch_fields = target, lang, launch_fields
        self.grid, self.block = launch_fields[:2]
        self.max_threads, self.max_dims = max_threads, max_dims
        self.stand_in, self.stand_in_name = stand_in, stand_in_name


BACKENDS = {
    "cuda": Backend("cuda", "cupy", ("grid", "block", "shared_memory"), "max_threads_per_block",
                    ["max_block_dim_x", "max_block_dim_y", "max_block_dim_z"], H200_LIMITS, "an H200's (no GPU asked)"),
    "opencl": Backend("opencl", "OpenCL", ("global", "local"), "max_work_group_size",
                      ["max_work_item_size_0", "max_work_item_size_1", "max_work_item_size_2"], POCL_LIMITS,
                      "PoCL's on a 2-core Xeon (no OpenCL device asked)"),
}


class Unmappable(Exception):
    """A kernel file this script cannot hand to Kernel Tuner."""


# ---------------------------------------------------------------------------------------------
# optune's expression language (kernels/src/expression.cpp: muparser plus %, !, div, ceil_div)
# translated to Python.

_FUNCTIONS = {
    "ceil_div": lambda a, b: math.ceil(a / b), "div": lambda a, b: math.floor(a / b),
    "floor": math.floor, "ceil": math.ceil, "min": min, "max": max, "abs": abs, "sqrt": math.sqrt,
    "exp": math.exp, "ln": math.log, "log": math.log10, "log10": math.log10, "log2": math.log2,
    "rint": lambda x: math.floor(x + 0.5), "sign": lambda x: (x > 0) - (x < 0),
    "sum": lambda *v: sum(v), "avg": lambda *v: sum(v) / len(v),
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "_pi": math.pi, "_e": math.e,
}
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_]\w*)"
                    r"|(&&|\|\||==|!=|<=|>=|[-+*/%^()<>!,?:]))")


def _tokens(text):
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if not match:
            raise Unmappable(f"cannot read expression '{text}' at '{text[position:].strip()}'")
        tokens.append(match.group(match.lastindex))
        position = match.end()
    return tokens


def _operand_end(tokens, i):
    """Index after the operand of a prefix '!' starting at tokens[i]."""
    if i >= len(tokens):
        raise Unmappable("'!' without an operand")
    if tokens[i] == "!":
        return _operand_end(tokens, i + 1)
    if tokens[i] == "(" or (i + 1 < len(tokens) and tokens[i + 1] == "(" and re.match(r"[A-Za-z_]", tokens[i])):
        depth, j = 0, i if tokens[i] == "(" else i + 1
        while j < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[j], 0)
            j += 1
            if depth == 0:
                return j
        raise Unmappable("unbalanced parentheses")
    if re.match(r"[\w.]", tokens[i]):
        return i + 1
    raise Unmappable(f"'!' before '{tokens[i]}'")


def _python(tokens):
    out, i = [], 0
    while i < len(tokens):
        token = tokens[i]
        if token == "!":
            end = _operand_end(tokens, i + 1)
            out.append("(not " + _python(tokens[i + 1:end]) + ")")
            i = end
            continue
        if token in ("?", ":"):
            raise Unmappable("the conditional operator '?:' is not mapped")
        out.append({"&&": " and ", "||": " or ", "^": "**"}.get(token, token))
        i += 1
    return " ".join(out)


class Expression:
    """One expression of extents, knobs and device limits, evaluated as muparser would (doubles)."""

    def __init__(self, text, names):
        self.text = str(text)
        tokens = _tokens(self.text)
        unknown = [t for t in tokens if re.match(r"[A-Za-z_]", t) and t not in names and t not in _FUNCTIONS]
        if unknown:
            raise Unmappable(f"unknown name '{unknown[0]}' in '{self.text}'")
        comparisons = [t for t in tokens if t in ("<", ">", "<=", ">=", "==", "!=")]
        if len(comparisons) > 1 and not any(t in ("&&", "||", "(") for t in tokens):
            raise Unmappable(f"chained comparison in '{self.text}' (Python would read it otherwise)")
        try:
            self.code = compile(_python(tokens), self.text, "eval")
        except SyntaxError as error:  # a name that is a Python keyword, or no expression at all
            raise Unmappable(f"cannot translate '{self.text}' to Python: {error.msg}")

    def value(self, names):
        """The value, or NaN where the expression cannot be evaluated (division by zero, ...)."""
        try:
            return float(eval(self.code, {"__builtins__": {}, **_FUNCTIONS}, names))
        except (ArithmeticError, ValueError, TypeError):
            return math.nan

    def holds(self, names):
        value = self.value(names)
        return not math.isnan(value) and value != 0

    def whole(self, names):
        """The value as an int, or None where it is not a whole number."""
        value = self.value(names)
        if not math.isfinite(value) or value != math.floor(value):
            return None
        return int(value)


# ---------------------------------------------------------------------------------------------
# The kernel file, and its tune_kernel arguments.

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8", "i16": "int16",
           "u16": "uint16", "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64"}
_TOLERANCES = {"f16": (1e-2, 1e-3), "f32": (1e-5, 1e-6), "f64": (1e-5, 1e-6)}  # rtol, atol; integers 0, 0
_FIELDS = {"name", "backend", "source", "entry", "description", "build_options", "flops", "bytes", "args",
           "extents", "knobs", "constraints", "launch", "check"}


class KernelFile:
    def __init__(self, path, limits=None):
        self.path = pathlib.Path(path).resolve()
        if tomllib is None:
            raise Unmappable("Python 3.11 or later is needed (tomllib)")
        try:
            data = tomllib.loads(self.path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise Unmappable(f"cannot read it: {error}")
        unknown = set(data) - _FIELDS
        if unknown:
            raise Unmappable(f"unknown field '{sorted(unknown)[0]}'")
        if data.get("backend") not in BACKENDS:
            raise Unmappable(f"backend '{data.get('backend')}': only cuda and opencl kernel files are compared")
        self.backend = BACKENDS[data["backend"]]
        self.name, self.entry = data["name"], data["entry"]
        self.source = self.path.parent / data["source"]
        self.build_options = list(data.get("build_options", []))
        self.extents = dict(data["extents"])
        self.knobs = {k: list(v) for k, v in data["knobs"].items()}
        self.limits = dict(limits or self.backend.stand_in)
        numeric = [k for k, v in self.knobs.items() if all(isinstance(x, (int, float)) for x in v)]
        names = set(self.extents) | set(numeric) | set(self.limits)
        self.rules = [Expression(r, names) for r in data.get("constraints", {}).get("rules", [])]
        launch = data.get("launch", {})
        foreign = sorted(set(launch) - set(self.backend.launch_fields))
        if foreign:
            raise Unmappable(f"[launch] {foreign[0]} is no field of a {self.backend.target} launch")
        if not launch.get(self.backend.grid):
            raise Unmappable(f"no [launch] {self.backend.grid}")
        # the grid in blocks, or (OpenCL) the NDRange in work-items: launch() makes it work-groups
        self.grid = [Expression(e, names) for e in launch[self.backend.grid]]
        self.shared_memory = Expression(launch["shared_memory"], names) if "shared_memory" in launch else None
        self._map_block(launch.get(self.backend.block), numeric)
        self.args = data["args"]
        for arg in self.args:
            if arg["dtype"] not in _DTYPES:
                raise Unmappable(f"argument '{arg['name']}': dtype {arg['dtype']} has no numpy type")
            if arg["kind"] not in ("buffer", "scalar"):
                raise Unmappable(f"argument '{arg['name']}': kind {arg['kind']}")
            arg["_size"] = Expression(arg["count"] if arg["kind"] == "buffer" else arg["value"], names)
        self.check = data.get("check", {})
        limit_names = set(self.extents) | set(self.limits)
        if "reference" in self.check:
            self.check_grid = [Expression(e, limit_names) for e in self.check[self.backend.grid]]
            self.check_block = [Expression(e, limit_names) for e in self.check.get(self.backend.block, [])]
            self.check_shared = Expression(self.check.get("shared_memory", "0"), limit_names)
        outputs = [a for a in self.args if a.get("output")]
        if not outputs:
            raise Unmappable("no output argument")
        rtol, atol = _TOLERANCES.get(outputs[0]["dtype"], (0, 0))
        self.rtol, self.atol = self.check.get("rtol", rtol), self.check.get("atol", atol)

    def _map_block(self, block, numeric):
        """Kernel Tuner takes each block dimension from one tunable parameter (block_size_names);
        a number becomes a parameter of one value, a dimension not given is 1."""
        self.extra_params, self.block_size_names = {}, []
        if block is None and self.backend.block == "local":
            raise Unmappable("no [launch] local: Kernel Tuner needs the work-group's size")
        if block is None:
            if "block_size_x" not in self.knobs:
                raise Unmappable("no [launch] block and no knob block_size_x")
            block = [n if n in self.knobs else "1" for n in ("block_size_x", "block_size_y", "block_size_z")]
            self.block = [Expression(n, set(self.knobs)) for n in block]
            self.block_size_names = ["block_size_x", "block_size_y", "block_size_z"]
            return
        if len(block) != len(self.grid):
            raise Unmappable(f"[launch] {self.backend.block} and {self.backend.grid} differ in dimensions")
        self.block = []
        for dimension, text in enumerate(block):
            text = str(text).strip()
            name = f"kt_block_{'xyz'[dimension]}"
            if text in numeric:
                self.block_size_names.append(text)
            elif re.fullmatch(r"\d+", text) or text in self.extents:
                value = int(text) if text.isdigit() else int(self.extents[text])
                self.extra_params[name] = [value]
                self.block_size_names.append(name)
            else:
                raise Unmappable(f"[launch] {self.backend.block} '{text}' is no knob and no number: Kernel Tuner "
                                 "takes a block dimension from one tunable parameter (block_size_names)")
            self.block.append(Expression(text, set(self.knobs) | set(self.extents)))
        for dimension in range(len(block), 3):
            self.block_size_names.append(f"kt_block_{'xyz'[dimension]}")  # absent: Kernel Tuner's 1

    # --- a config -------------------------------------------------------------------------------
    def names(self, config):
        return {**self.limits, **self.extents, **config}

    def launch(self, config):
        """(grid in blocks or work-groups, block, shared memory bytes), or None where the launch is
        invalid for the device."""
        names = self.names(config)
        grid = [e.whole(names) for e in self.grid]
        block = [e.whole(names) for e in self.block]
        shared = self.shared_memory.whole(names) if self.shared_memory else 0
        if any(g is None or g < 1 for g in grid) or any(b is None or b < 1 for b in block) or shared is None:
            return None
        if self.backend.grid == "global":
            # Kernel Tuner launches grid * block work-items. optune's space holds no config whose
            # local does not divide global (OpenCL 1.2), so neither does this one.
            if any(g % b for g, b in zip(grid, block)):
                return None
            grid = [g // b for g, b in zip(grid, block)]
        if math.prod(block) > self.limits[self.backend.max_threads]:
            return None
        if any(b > self.limits[self.backend.max_dims[d]] for d, b in enumerate(block)):
            return None
        if self.shared_memory and not 0 <= shared <= self.limits["max_shared_memory_per_block"]:
            return None
        return grid, block, shared

    def is_valid(self, config):
        names = self.names(config)
        return all(rule.holds(names) for rule in self.rules) and self.launch(config) is not None

    def configs(self):
        """Every config of the knobs, in optune's order (the first knob varies slowest)."""
        import itertools
        keys = list(self.knobs)
        for values in itertools.product(*self.knobs.values()):
            yield dict(zip(keys, values))

    def valid_configs(self):
        return [c for c in self.configs() if self.is_valid(c)]

    def instantiated(self, entry, config):
        """A template entry with knob and extent names among its arguments replaced by their values,
        as KernelProblem::instantiated does (a name after '::' is a scope's member: kept)."""
        values = {**{k: str(v) for k, v in self.extents.items()}, **{k: str(v) for k, v in config.items()}}
        open = entry.find("<")
        if open < 0:
            return entry
        arguments = re.sub(r"(?<!::)\b[A-Za-z_]\w*", lambda m: values.get(m.group(0), m.group(0)), entry[open:])
        return entry[:open] + arguments

    # --- tune_kernel's arguments ----------------------------------------------------------------
    def kernel_name(self):
        """The entry with extents replaced; Kernel Tuner replaces the knobs itself, per config."""
        return self.instantiated(self.entry, {})

    def tune_params(self):
        return {**self.knobs, **self.extra_params}

    def restriction(self, smem_optin=True):
        names = list(self.tune_params())

        # Kernel Tuner calls it with the config as a dict (one function for the whole space), or,
        # where there is one parameter only, with its value.
        def valid(*values):
            params = values[0] if len(values) == 1 and isinstance(values[0], dict) else dict(zip(names, values))
            config = {k: params[k] for k in self.knobs}
            if not self.is_valid(config):
                return False
            return smem_optin or self.launch(config)[2] <= DEFAULT_SHARED_MEMORY
        return valid

    def problem_size(self):
        """Kernel Tuner's grid is ceil(problem_size / grid_div): the grid itself (in blocks or
        work-groups), with divisors of 1."""
        def grid(params):
            size = self.launch({k: params[k] for k in self.knobs})[0]
            return tuple(size + [1] * (3 - len(size)))
        return grid

    def smem_args(self):
        if not self.shared_memory:
            return None
        return {"size": lambda params: self.launch({k: params[k] for k in self.knobs})[2]}

    def compiler_options(self):
        if self.backend.target == "opencl":
            return list(self.build_options)
        has_std = any(o.startswith(("-std", "--std")) for o in self.build_options)
        return self.build_options + ([] if has_std else ["--std=c++17"])

    def arguments(self, seed=0):
        import numpy as np
        rng = np.random.default_rng(seed)
        names = self.names({})
        arguments = []
        for arg in self.args:
            dtype = np.dtype(_DTYPES[arg["dtype"]])
            size = arg["_size"].value(names)
            if arg["kind"] == "scalar":
                arguments.append(dtype.type(size))
                continue
            count = int(size)
            if "data" in arg:
                values = np.fromfile(self.path.parent / arg["data"], dtype=dtype)
                if values.size != count:
                    raise Unmappable(f"argument '{arg['name']}': {values.size} values in {arg['data']}, {count} expected")
            else:
                init = arg.get("init", None if arg.get("output") else "random")
                if init == "random":
                    values = (rng.uniform(-1, 1, count) if dtype.kind == "f" else rng.integers(0, 100, count)).astype(dtype)
                elif init in ("zeros", None):
                    values = np.zeros(count, dtype)
                elif init == "ones":
                    values = np.ones(count, dtype)
                elif init == "iota":
                    values = np.arange(count).astype(dtype)
                else:
                    raise Unmappable(f"argument '{arg['name']}': init {init}")
            arguments.append(values)
        return arguments

    def answer(self, arguments):
        """The check's expected outputs (None for the other arguments), or None without a check."""
        import numpy as np
        if "expected" in self.check:
            files = self.check["expected"]
            files = [files] if isinstance(files, str) else files
            outputs = [i for i, a in enumerate(self.args) if a.get("output")]
            answer = [None] * len(self.args)
            for i, file in zip(outputs, files):
                answer[i] = np.fromfile(self.path.parent / file, dtype=arguments[i].dtype)
            return answer
        if "reference" not in self.check:
            return None
        return self._reference_outputs(arguments)

    def _reference_outputs(self, arguments):
        """Runs the reference kernel once, built with the first valid config's defines (as optune
        builds it): its outputs, None for the other arguments."""
        config = next(c for c in self.configs() if self.is_valid(c))
        source = (self.path.parent / self.check.get("reference_source", self.source)).read_text()
        name = self.instantiated(self.check["reference"], config)
        options = [f"-D{k}={v}" for k, v in config.items()] + self.compiler_options()
        if self.backend.target == "cuda":
            return self._cupy_reference(source, name, options, arguments)
        return self._pyopencl_reference(source, name, options, arguments)

    def _cupy_reference(self, source, name, options, arguments):
        import cupy as cp
        import numpy as np
        kernel = cp.RawModule(code=source, options=tuple(options), name_expressions=[name]).get_function(name)
        names = self.names({})
        grid = tuple(e.whole(names) for e in self.check_grid)
        block = tuple(e.whole(names) for e in self.check_block)
        shared = self.check_shared.whole(names)
        if shared > DEFAULT_SHARED_MEMORY:
            kernel.max_dynamic_shared_size_bytes = shared
        device = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in arguments]
        kernel(grid, block, tuple(device), shared_mem=shared)
        cp.cuda.runtime.deviceSynchronize()
        return [cp.asnumpy(d) if a.get("output") else None for d, a in zip(device, self.args)]

    def _pyopencl_reference(self, source, name, options, arguments):
        """On Kernel Tuner's OpenCL device (platform 0, device 0); without a local size in the check
        the runtime picks one, as in optune."""
        import numpy as np
        import pyopencl as cl
        context = cl.Context(devices=[cl.get_platforms()[0].get_devices()[0]])
        queue = cl.CommandQueue(context)
        kernel = getattr(cl.Program(context, source).build(options=options), name)
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        device = [cl.Buffer(context, flags, hostbuf=a) if isinstance(a, np.ndarray) else a for a in arguments]
        names = self.names({})
        global_size = tuple(e.whole(names) for e in self.check_grid)
        local_size = tuple(e.whole(names) for e in self.check_block) or None
        kernel(queue, global_size, local_size, *device)
        outputs = [np.empty_like(a) if spec.get("output") else None for a, spec in zip(arguments, self.args)]
        for output, buffer in zip(outputs, device):
            if output is not None:
                cl.enqueue_copy(queue, output, buffer)
        queue.finish()
        return outputs

    def verify(self):
        import numpy as np

        def verify(answer, result, atol=None):
            for expected, got in zip(answer, result):
                if expected is None:
                    continue
                expected = np.asarray(expected, dtype=np.float64).ravel()
                got = np.asarray(got, dtype=np.float64).ravel()
                if not np.all(np.abs(got - expected) <= self.atol + self.rtol * np.abs(expected)):  # NaN fails
                    return False
            return True
        return verify


def device_limits(target):
    """optune's device limits, by its names for the target, of the device Kernel Tuner runs on."""
    return cuda_limits() if target == "cuda" else opencl_limits()


def cuda_limits():
    """optune's device limits of GPU 0, from cupy."""
    import cupy as cp
    a = cp.cuda.Device(0).attributes
    cc = cp.cuda.Device(0).compute_capability
    return {
        "max_threads_per_block": a["MaxThreadsPerBlock"], "max_block_dim_x": a["MaxBlockDimX"],
        "max_block_dim_y": a["MaxBlockDimY"], "max_block_dim_z": a["MaxBlockDimZ"],
        "max_grid_dim_x": a["MaxGridDimX"], "max_grid_dim_y": a["MaxGridDimY"], "max_grid_dim_z": a["MaxGridDimZ"],
        "max_shared_memory_per_block": a.get("MaxSharedMemoryPerBlockOptin", a["MaxSharedMemoryPerBlock"]),
        "multiprocessor_count": a["MultiProcessorCount"], "warp_size": a["WarpSize"],
        "compute_capability": int(cc), "l2_cache_size": a["L2CacheSize"],
    }


def opencl_limits():
    """optune's device limits of Kernel Tuner's OpenCL device (platform 0, device 0), from pyopencl."""
    import pyopencl as cl
    d = cl.get_platforms()[0].get_devices()[0]
    sizes = d.max_work_item_sizes  # 3 at least, OpenCL's minimum
    return {
        "max_work_group_size": d.max_work_group_size, "local_mem_size": d.local_mem_size,
        "compute_units": d.max_compute_units, "vector_width_float": d.preferred_vector_width_float,
        "max_work_item_size_0": sizes[0], "max_work_item_size_1": sizes[1], "max_work_item_size_2": sizes[2],
    }


def config_key(values):
    """A config's values as text, 16 and 16.0 alike: the key that matches runs to each other."""
    return ",".join(str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in values)


# ---------------------------------------------------------------------------------------------
# One Kernel Tuner run (a process of its own, so each starts with empty caches).

def _raise_shared_memory_limit():
    """optune launches a block with up to the device's opt-in shared memory by raising the kernel's
    attribute; Kernel Tuner's cupy backend launches without (and stops on the error above 48 KiB)."""
    from kernel_tuner.backends.cupy import CupyFunctions
    copy = CupyFunctions.copy_shared_memory_args

    def copy_and_raise(self, smem_args):
        copy(self, smem_args)
        if self.smem_size > DEFAULT_SHARED_MEMORY:
            self.func.max_dynamic_shared_size_bytes = int(self.smem_size)
    CupyFunctions.copy_shared_memory_args = copy_and_raise


def kt_run(args):
    spawned = float(os.environ.get("KT_SPAWNED", time.time()))  # unix time the orchestrator started us
    import random
    import numpy as np
    import kernel_tuner
    from kernel_tuner.observers.observer import BenchmarkObserver

    kernel = KernelFile(args.toml)
    if not args.simulate:  # the device's own limits in place of the stand-in's
        kernel = KernelFile(args.toml, device_limits(kernel.backend.target))
    # dynamic shared memory is CUDA's (an OpenCL kernel declares its local memory itself)
    smem_optin = os.environ.get("KT_SMEM_OPTIN", "1") == "1" and kernel.backend.lang == "cupy"
    arguments = kernel.arguments()
    check = os.environ.get("KT_CHECK", "1") == "1" and not args.simulate
    answer = kernel.answer(arguments) if check else None

    class CheckOutcome(BenchmarkObserver):
        """Puts the last check's outcome into the config's result: a wrong answer is a failed
        config here (as in optune's records), not the end of the run as Kernel Tuner has it."""
        last = None

        def get_results(self):
            outcome, CheckOutcome.last = CheckOutcome.last, None
            return {} if outcome is None else {"check_ok": outcome}

    verify_output = kernel.verify()

    def verify(expected, result, atol=None):
        CheckOutcome.last = bool(verify_output(expected, result))
        return True

    if smem_optin and not args.simulate:
        _raise_shared_memory_limit()
    random.seed(args.seed)
    np.random.seed(args.seed)
    options = dict(
        grid_div_x=1, grid_div_y=1, grid_div_z=1, restrictions=kernel.restriction(smem_optin),
        lang=kernel.backend.lang, smem_args=kernel.smem_args(), compiler_options=kernel.compiler_options(),
        block_size_names=kernel.block_size_names, quiet=True, strategy=args.strategy, iterations=args.iterations)
    if args.strategy != "brute_force":  # which takes no options
        options["strategy_options"] = {"max_fevals": args.budget}
    if answer is not None:
        options.update(answer=answer, verify=verify, observers=[CheckOutcome()])
    if args.simulate:
        options.update(simulation_mode=True, cache=args.simulate)
    if "seed" in kernel_tuner.interface.tune_kernel.__code__.co_varnames:
        options["seed"] = args.seed
    run = {"tool": "kt", "strategy": args.strategy, "kernel": kernel.name, "seed": args.seed,
           "budget": args.budget, "start": spawned, "statistic": KT_STATISTIC,
           "version": getattr(kernel_tuner, "__version__", "?"), "checked": answer is not None,
           "smem_optin": smem_optin, "torch_hidden": sys.modules.get("torch", 0) is None, "evals": [], "error": None}
    call = time.time()
    warnings.filterwarnings("ignore", message="Block size name .* is not specified")  # the padding names
    try:
        results, env = kernel_tuner.tune_kernel(kernel.kernel_name(), kernel.source.read_text(), kernel.problem_size(),
                                                arguments, kernel.tune_params(), **options)
    except Exception as error:  # the run's end; the report shows it
        run["error"] = f"{type(error).__name__}: {error}"
        results, env = [], {}
    run["in_call_wall"] = time.time() - call
    run["env_timings_ms"] = {k: v for k, v in env.items() if k.startswith("total_") and isinstance(v, (int, float))}
    seen, simulated = set(), 0.0
    for result in results:
        if result is None:
            continue
        key = config_key(result[k] for k in kernel.knobs)
        if key in seen:
            continue
        seen.add(key)
        simulated += sum(result.get(k, 0) for k in ("compile_time", "verification_time", "benchmark_time")) / 1e3
        error = result.get("__error__")
        ms = result.get("time")
        if error is not None or not isinstance(ms, (int, float)) or not math.isfinite(ms):
            error, ms = str(error or ms), None
        elif result.get("check_ok") is False:
            error, ms = "wrong_answer", None
        stamp = result.get("timestamp")
        t = simulated if args.simulate else _unix(stamp) - spawned if stamp else None  # simulated: KT's own sum
        times = result.get("times") or []
        run["evals"].append({"config": key, "t": t, "ms": ms, "error": error,
                             "median_ms": statistics.median(times) if times else None})
    pathlib.Path(args.out).write_text(json.dumps(run, indent=1))
    return 0 if run["error"] is None else 1


def kt_space_size(kernel, smem_optin=True):
    """The size of Kernel Tuner's own search space of the mapping, built as tune_kernel builds it
    (it should be `space`, this script's count)."""
    from kernel_tuner.searchspace import Searchspace
    return Searchspace(kernel.tune_params(), kernel.restriction(smem_optin),
                       kernel.limits[kernel.backend.max_threads]).size


def _unix(stamp):
    from datetime import datetime
    return datetime.fromisoformat(str(stamp)).timestamp()


# ---------------------------------------------------------------------------------------------
# optune's records as a run.

def optune_run_from_db(db, kernel, start, wall, seed, budget, returncode):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT config, median_seconds, error_kind, timestamp, tuner FROM records "
                                  "ORDER BY timestamp, id").fetchall()
    run = {"tool": "optune", "strategy": "xgb", "kernel": kernel.name, "seed": seed, "budget": budget,
           "start": start, "wall": wall, "statistic": OPTUNE_STATISTIC, "evals": [],
           "error": None if returncode == 0 else f"optune exited {returncode}"}
    seen = set()
    for config, seconds, error_kind, stamp, tuner in rows:
        if tuner in ("remeasure", "final"):  # the closing re-measurements: no new config
            continue
        values = json.loads(config)
        key = config_key(values.get(k) for k in kernel.knobs)
        if key in seen:
            continue
        seen.add(key)
        ok = error_kind == "ok"
        run["evals"].append({"config": key, "t": stamp - start, "ms": seconds * 1e3 if ok else None,
                             "error": None if ok else error_kind})
    return run


# ---------------------------------------------------------------------------------------------
# The whole comparison (on the GPU machine).

def available_strategies(requested):
    """The requested strategies this Kernel Tuner has and can import (scipy's need scipy);
    adaptive_tabu_greywolf, the best of our replay study, is genetic_algorithm where it is missing."""
    import importlib
    from kernel_tuner import interface
    strategies = []
    for strategy in requested:
        if strategy not in interface.strategy_map and strategy == "adaptive_tabu_greywolf":
            print("kernel_tuner has no adaptive_tabu_greywolf: genetic_algorithm instead", flush=True)
            strategy = "genetic_algorithm"
        if strategy not in interface.strategy_map:
            print(f"kernel_tuner has no strategy {strategy}; it has {', '.join(sorted(interface.strategy_map))}",
                  file=sys.stderr)
            continue
        module = getattr(interface, "_STRATEGY_IMPORTS", {}).get(strategy)
        try:
            if module:
                importlib.import_module(module)
        except ImportError as error:
            print(f"strategy {strategy} left out: {error}", flush=True)
            continue
        strategies.append(strategy)
    return strategies


class Deadline(Exception):
    """The time given to the whole comparison is up: the runs so far stay, a later call resumes."""


def _check_deadline(deadline_at):
    if deadline_at and time.time() > deadline_at:
        raise Deadline()


def orchestrate(args):
    started = time.time()
    deadline_at = started + args.deadline if args.deadline > 0 else 0
    try:
        return _orchestrate(args, deadline_at)
    except Deadline:
        print(f"stopped after {time.time() - started:.0f} s (--deadline {args.deadline:.0f} s): the same command "
              "again runs the rest", flush=True)
        return 0
    finally:
        print(f"comparison: {time.time() - started:.0f} s", flush=True)


def _orchestrate(args, deadline_at):
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    me = str(pathlib.Path(__file__).resolve())
    strategies = available_strategies([s for s in args.strategies.split(",") if s])
    if not strategies:
        print("no Kernel Tuner strategy to run", file=sys.stderr)
        return 2
    optune_args = args.optune_args.split()
    limits = {}  # the devices' limits, by backend (_on_device)
    for toml in args.kernels:
        try:
            kernel = _on_device(me, toml, args.simulate, limits)
        except Unmappable as error:
            print(f"{toml}: cannot map onto Kernel Tuner: {error}", file=sys.stderr)
            return 2
        space = len(kernel.valid_configs())
        budget = min(args.trials, max(8, space // 2))
        runs = out / kernel.name
        runs.mkdir(exist_ok=True)
        # Kernel Tuner's own count of the mapped space, outside the timed runs (it should be `space`)
        counted = json.loads(subprocess.check_output([sys.executable, me, "space", str(toml), "--limits",
                                                      json.dumps(kernel.limits)]))
        (runs / "space.json").write_text(json.dumps({"space": space, "kt_space": counted.get("kt_valid_configs"),
                                                     "budget": budget, "limits": kernel.limits,
                                                     "knobs": list(kernel.knobs)}, indent=1))
        print(f"== {kernel.name}: {space} valid configs ({counted.get('kt_valid_configs')} in Kernel Tuner's space), "
              f"{budget} evaluations a run, seeds 1..{args.seeds}", flush=True)
        simulate = []
        if args.simulate:  # Kernel Tuner on made-up times, no optune: the driver tested without a GPU
            fake_cache(toml, runs / "made-up-cache.json")
            simulate = ["--simulate", str(runs / "made-up-cache.json")]
        for seed in range(1, args.seeds + 1):
            for strategy in strategies:
                _kt_once(me, toml, strategy, seed, budget, runs / f"kt-{strategy}-{seed}.json", args.iterations, simulate,
                         deadline_at=deadline_at)
            if not args.simulate:
                _optune_once(args, kernel, toml, seed, budget, runs, optune_args, deadline_at)
    for toml in args.kernels:  # last: the longest runs, and a report stands without them
        kernel = _on_device(me, toml, args.simulate, limits)
        space = len(kernel.valid_configs())
        if space <= args.brute_max:  # the truth of the times only: no output checked
            simulate = ["--simulate", str(out / kernel.name / "made-up-cache.json")] if args.simulate else []
            _kt_once(me, toml, "brute_force", 0, space, out / kernel.name / "kt-brute_force-0.json", args.iterations,
                     simulate, {"KT_CHECK": "0"}, deadline_at)
    return 0


def _on_device(me, toml, simulate, limits):
    """The kernel file with its device's limits (the stand-in's when simulated), asked of a child
    process once a backend, so that this one holds no CUDA context or OpenCL device meanwhile."""
    backend = KernelFile(toml).backend
    if backend.target not in limits:
        limits[backend.target] = backend.stand_in if simulate else json.loads(
            subprocess.check_output([sys.executable, me, "limits", backend.target]))
    return KernelFile(toml, limits[backend.target])


def _kt_once(me, toml, strategy, seed, budget, path, iterations, simulate, extra_env=None, deadline_at=0):
    if path.exists():
        return
    _check_deadline(deadline_at)
    cache = path.with_suffix(".cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "CUPY_CACHE_DIR": str(cache), "POCL_CACHE_DIR": _pocl_cache(cache), **(extra_env or {})}
    start = time.time()
    env["KT_SPAWNED"] = repr(start)
    log = path.with_suffix(".log")
    with open(log, "w") as stream:
        code = _call([sys.executable, me, "kt", str(toml), "--strategy", strategy, "--seed", str(seed),
                      "--budget", str(budget), "--iterations", str(iterations), "--out", str(path), *simulate],
                     env, stream)
    wall = time.time() - start
    shutil.rmtree(cache, ignore_errors=True)
    if not path.exists():
        tail = log.read_text()[-300:].strip().replace("\n", " | ")
        path.write_text(json.dumps({"tool": "kt", "strategy": strategy, "kernel": KernelFile(toml).name, "seed": seed,
                                    "budget": budget, "start": start, "evals": [], "statistic": KT_STATISTIC,
                                    "error": f"exited {code}: {tail}"}))
    run = json.loads(path.read_text())
    run["wall"] = wall
    path.write_text(json.dumps(run, indent=1))
    print(f"   {run['kernel']}: kt {strategy} seed {seed}: {len(run['evals'])} evaluations, {wall:.1f} s"
          + (f"  ERROR {run['error']}" if run.get("error") else ""), flush=True)


def _pocl_cache(cache):
    """PoCL keeps the kernels it compiles (for pyopencl and for optune's OpenCL worker alike) in a
    cache of its own: under the run's cache folder, so that no run reuses another's builds. Made
    here, since older PoCLs take POCL_CACHE_DIR only where it exists."""
    (cache / "pocl").mkdir(parents=True)
    return str(cache / "pocl")


# Seconds a single run may take before it is killed and recorded as cut (a brute force on PoCL
# takes longer than on a GPU: kt_vs_optune_pocl.sh gives it more).
RUN_TIMEOUT = float(os.environ.get("RUN_TIMEOUT", 600))


def _call(command, env, stream):
    try:
        return subprocess.call(command, env=env, stdout=stream, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"killed after {RUN_TIMEOUT:.0f} s"


def _optune_once(args, kernel, toml, seed, budget, runs, optune_args, deadline_at=0):
    path = runs / f"optune-xgb-{seed}.json"
    if path.exists():
        return
    _check_deadline(deadline_at)
    db = runs / f"optune-{seed}.db"
    for stale in (db, pathlib.Path(f"{db}-wal"), pathlib.Path(f"{db}-shm")):
        stale.unlink(missing_ok=True)
    cache = runs / f"optune-{seed}.cache"
    shutil.rmtree(cache, ignore_errors=True)
    # its compiled programs: none from an earlier run
    env = {**os.environ, "OPTUNE_CACHE_DIR": str(cache), "POCL_CACHE_DIR": _pocl_cache(cache)}
    if args.optune_lib:
        env["LD_LIBRARY_PATH"] = args.optune_lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    # --trials counts the configs after the default, which optune measures first.
    command = [args.optune, "tune", "--kernel", str(toml), "--target", kernel.backend.target,
               "--trials", str(budget - 1), "--seed", str(seed), "--db", str(db), "--quiet", *optune_args]
    start = time.time()
    with open(runs / f"optune-{seed}.log", "w") as stream:
        code = _call(command, env, stream)
    wall = time.time() - start
    shutil.rmtree(cache, ignore_errors=True)
    run = optune_run_from_db(db, kernel, start, wall, seed, budget, code) if db.exists() else {
        "tool": "optune", "strategy": "xgb", "kernel": kernel.name, "seed": seed, "budget": budget, "start": start,
        "wall": wall, "evals": [], "statistic": OPTUNE_STATISTIC, "error": f"optune exited {code}, no database"}
    run["command"] = " ".join(command)
    path.write_text(json.dumps(run, indent=1))
    print(f"   {kernel.name}: optune seed {seed}: {len(run['evals'])} evaluations, {wall:.1f} s"
          + (f"  ERROR {run['error']}" if run.get("error") else ""), flush=True)


# ---------------------------------------------------------------------------------------------
# The report.

def run_figures(run, target, truth=None, truth_target=None):
    evals = run["evals"]
    wall = run.get("wall") or max((e["t"] or 0 for e in evals), default=0)
    hit = next((i for i, e in enumerate(evals) if e["ms"] is not None and e["ms"] <= target), None)
    times = [e["t"] for e in evals if e["t"] is not None]
    figures = {
        "best": min((e["ms"] for e in evals if e["ms"] is not None), default=math.inf),
        "evals_to": hit + 1 if hit is not None else math.inf,
        "t_to": evals[hit]["t"] if hit is not None and evals[hit]["t"] is not None else math.inf,
        "wall": wall, "n": len(evals), "failed": sum(1 for e in evals if e["ms"] is None and e["error"] != "slow"),
        "per_eval": wall / len(evals) if evals else math.inf,
        # between the first and the last record: no start-up, no closing re-measurement
        "steady": (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else math.inf,
    }
    if truth:
        hit = next((i for i, e in enumerate(evals) if truth.get(e["config"], math.inf) <= truth_target), None)
        figures["evals_to_truth"] = hit + 1 if hit is not None else math.inf
        figures["t_to_truth"] = evals[hit]["t"] if hit is not None and evals[hit]["t"] is not None else math.inf
    return figures


def timed_entries(cache):
    """A Kernel Tuner cache's entries that hold a time (not a failure's text), by their keys."""
    return {key: entry for key, entry in cache["cache"].items()
            if isinstance(entry.get("time"), (int, float)) and math.isfinite(entry["time"])}


def load_truth(path, knobs=None):
    """A Kernel Tuner cache file (its brute force's, or `optune export --kernel-tuner` of a grid run
    over the whole space): each config's time, keyed as the runs key theirs (its values of the
    file's `knobs`, where the entries name them all; else the cache's own key); configs without a
    time (failures) left out."""
    cache = json.loads(pathlib.Path(path).read_text())

    def key(cache_key, entry):
        return config_key(entry[k] for k in knobs) if knobs and all(k in entry for k in knobs) else cache_key
    truth = {key(k, entry): entry["time"] for k, entry in timed_entries(cache).items()}
    if not truth:
        raise ValueError(f"{path}: no config with a time")
    return truth


def evals_to_time(run, ms):
    return next((i + 1 for i, e in enumerate(run["evals"]) if e["ms"] is not None and e["ms"] <= ms), math.inf)


def _median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2] if values else math.inf  # lower median: never an inf averaged in


def _show(value, digits=1, limit=None):
    if math.isinf(value):
        return f">{limit}" if limit is not None else "-"
    return f"{value:.{digits}f}"


def load_runs(out):
    runs = {}
    for path in sorted(p for p in pathlib.Path(out).glob("*/*.json") if p.name.startswith(("kt-", "optune-"))):
        run = json.loads(path.read_text())
        runs.setdefault(run["kernel"], []).append(run)
    return runs


# A grid run times each config once, so its best may be a lucky reading that no tool's run of the
# same config repeats (on PoCL, one config 7% ahead of the next, where a careful re-measurement had
# several within 5%): the truth's front is timed again, interleaved, before it judges anything.
TRUTH_FRONT = 1.2  # configs within this factor of the truth's best are re-measured ...
TRUTH_FRONT_MAX = 24  # ... at most this many, the fastest first


def truth_front(path):
    """The truth's configs to re-measure, as JSON objects (knob values by name), one a line."""
    cache = json.loads(pathlib.Path(path).read_text())
    timed = sorted((entry["time"], key) for key, entry in timed_entries(cache).items())
    for time, key in timed[:TRUTH_FRONT_MAX]:
        if time > TRUTH_FRONT * timed[0][0]:
            break
        entry = cache["cache"][key]
        print(json.dumps({k: entry[k] for k in cache["tune_params_keys"]}))
    return 0


def refine_truth(path, measured_path):
    """Replaces the truth's times of the configs `optune measure --format json` re-measured by their
    medians over its interleaved rounds."""
    cache = json.loads(pathlib.Path(path).read_text())
    measured = json.loads(pathlib.Path(measured_path).read_text())
    changed = 0
    for item in measured["configs"]:
        record = item["record"]
        key = ",".join(str(item["config"][k]) for k in cache["tune_params_keys"])
        if key not in cache["cache"]:
            raise ValueError(f"{measured_path}: config {key} is not in the truth {path}")
        entry = cache["cache"][key]
        entry["grid_time"] = entry["time"]
        entry["time"] = record["median_seconds"] * 1e3 if record["error_kind"] == "ok" else record["error_kind"]
        entry["rounds"] = measured["rounds"]
        changed += 1
    pathlib.Path(path).write_text(json.dumps(cache, indent=1))
    print(f"the truth's front re-measured: {changed} configs, {measured['rounds']} interleaved rounds")
    return 0


def report(out, stream=sys.stdout):
    """Where OUT/KERNEL/truth.json is a Kernel Tuner cache of the whole space (load_truth: a grid run
    of optune's, kt_vs_optune_pocl.sh's TRUTH), every run is also judged by its times: one yardstick
    for both tools, in place of a brute force of this script's."""
    runs_by_kernel = load_runs(out)
    if not runs_by_kernel:
        print(f"no runs under {out}", file=stream)
        return 1
    print(f"Times: {OPTUNE_STATISTIC}; {KT_STATISTIC}. \"Within 5%\": at most best / {WITHIN} of the best "
          "that any run measured (Kernel Tuner's brute force included). Medians over seeds (the lower median; "
          "'>' a run that never got there, counted as never). failed: evaluations without a time (build, launch "
          "or check failed; optune's `slow` records, timed only until clearly slower than the best, are not "
          "counted). s / eval (total): the process's wall over its evaluations; (steady): between its first "
          "and last evaluation, without start-up and optune's closing re-measurement.", file=stream)
    for kernel, runs in sorted(runs_by_kernel.items()):
        measured = [e["ms"] for r in runs for e in r["evals"] if e["ms"] is not None]
        if not measured:
            print(f"\n## {kernel}: no successful evaluation", file=stream)
            continue
        best = min(measured)
        target = best / WITHIN
        brute = next((r for r in runs if r["strategy"] == "brute_force" and not r.get("error")), None)
        truth = {e["config"]: e["ms"] for e in brute["evals"] if e["ms"] is not None} if brute else None
        truth_file = pathlib.Path(out) / kernel / "truth.json"
        space_file = pathlib.Path(out) / kernel / "space.json"
        if truth_file.exists():
            knobs = json.loads(space_file.read_text()).get("knobs") if space_file.exists() else None
            truth = load_truth(truth_file, knobs)
            unknown = {e["config"] for r in runs for e in r["evals"]} - set(truth)
            print(f"\nThe truth: {truth_file}, {len(truth)} configs timed ({len(unknown)} configs the runs measured "
                  "are not among them: never within 5% by it)", file=stream)
        truth_target = min(truth.values()) / WITHIN if truth else None
        print(f"\n## {kernel}: best {best:.4f} ms, within 5%: <= {target:.4f} ms", file=stream)
        if space_file.exists():
            space = json.loads(space_file.read_text())
            print(f"valid configs: {space['space']} by this script's mapping, {space.get('kt_space')} in Kernel "
                  f"Tuner's space of it; {space['budget']} evaluations a run", file=stream)
        kt = [r for r in runs if r["tool"] == "kt" and "version" in r and r["strategy"] != "brute_force"]
        if kt:
            inside = _median([r["in_call_wall"] / r["wall"] for r in kt if r.get("wall") and "in_call_wall" in r])
            print(f"Kernel Tuner {kt[0]['version']}: outputs checked {kt[0].get('checked')}, shared memory above "
                  f"48 KiB {kt[0].get('smem_optin')}, torch hidden from its import {kt[0].get('torch_hidden')}; "
                  f"{_show(100 * inside, 0)}% of its wall inside tune_kernel (median; the rest: Python, cupy or "
                  "pyopencl, the reference's run). The brute force (the truth of the times) checks no output.",
                  file=stream)
        header = ("| tool | strategy | seeds | best ms (median) | evals to 5% | wall s to 5% | total wall s "
                  "| evaluations | failed | s / eval (total) | s / eval (steady) |")
        if truth:
            header += " evals to 5% by the truth | wall s to 5% by the truth |"
        print(header, file=stream)
        print("|" + "---|" * (header.count("|") - 1), file=stream)
        groups = {}
        for run in runs:
            groups.setdefault((run["tool"], run["strategy"]), []).append(run)
        summary = {}
        for (tool, strategy), group in sorted(groups.items()):
            figures = [run_figures(r, target, truth, truth_target) for r in group]
            med = {k: _median([f[k] for f in figures]) for k in figures[0]}
            summary[(tool, strategy)] = (group, med)
            budget = max(r["budget"] for r in group)
            errors = [r["error"] for r in group if r.get("error")]
            row = (f"| {tool} | {strategy} | {len(group)} | {_show(med['best'], 4)} | {_show(med['evals_to'], 0, budget)} "
                   f"| {_show(med['t_to'], 1, _show(med['wall']))} | {_show(med['wall'])} | {_show(med['n'], 0)} "
                   f"| {_show(med['failed'], 0)} | {_show(med['per_eval'], 3)} | {_show(med['steady'], 3)} |")
            if truth:
                row += f" {_show(med['evals_to_truth'], 0, budget)} | {_show(med['t_to_truth'], 1, _show(med['wall']))} |"
            print(row, file=stream)
            for error in errors:
                print(f"\n{tool} {strategy}: {error[:300]}", file=stream)
        verdicts(kernel, summary, stream, truth is not None)
    return 0


def wall_verdict(o, strategies, figure, prefix, stream):
    """optune's wall time to within 5% (`figure`: "t_to", "t_to_truth") against that of the Kernel
    Tuner strategy that got there soonest: met at 0.5x or less."""
    (_, strategy), (_, k) = min(strategies.items(), key=lambda kv: (kv[1][1][figure], kv[1][1]["wall"]))
    o_t, k_t = o[figure], k[figure]
    if math.isinf(o_t) and math.isinf(k_t):
        verdict = "neither got there in half its seeds: no verdict"
    elif math.isinf(o_t):
        verdict = f"optune did not get there in half its seeds, Kernel Tuner {strategy} in {k_t:.1f} s: not met"
    elif math.isinf(k_t):
        bound = o_t / k["wall"] if k["wall"] > 0 else math.inf
        verdict = (f"optune {o_t:.1f} s; Kernel Tuner did not get there in half its seeds (best strategy "
                   f"{strategy}, {k['wall']:.1f} s a run): at most {bound:.2f}x its time "
                   f"({'met' if bound <= 0.5 else 'unknown'}: at most 0.5x)")
    else:
        ratio = o_t / k_t if k_t > 0 else math.inf
        verdict = (f"optune {o_t:.1f} s against Kernel Tuner {strategy} {k_t:.1f} s: {ratio:.2f}x its time "
                   f"({'met' if ratio <= 0.5 else 'not met'}: at most 0.5x)")
    print(f"{prefix}: {verdict}", file=stream)


def verdicts(kernel, summary, stream, judged_by_truth=False):
    """The two open issues' checks, against Kernel Tuner's best strategy here (brute force aside)."""
    optune = summary.get(("optune", "xgb"))
    strategies = {k: v for k, v in summary.items() if k[0] == "kt" and k[1] != "brute_force"}
    if not optune or not strategies:
        return
    o_group, o = optune
    print(f"\nChecks for {kernel}:", file=stream)
    # 1. wall time to the same quality, against the KT strategy that got there soonest; by each
    # tool's own times, then (1b) by the truth's, one yardstick, so that neither tool's way of timing
    # decides (Kernel Tuner's figures of the same config can read 25% slower than optune's)
    wall_verdict(o, strategies, "t_to", "- wall to within 5%", stream)
    if judged_by_truth:
        wall_verdict(o, strategies, "t_to_truth", "- wall to within 5% by the truth's times", stream)
    # 2. a candidate's cost: optune's seconds per evaluation against twice Kernel Tuner's, and 2 x 65 ms
    kt_total = _median([m["per_eval"] for _, m in strategies.values()])
    kt_steady = _median([m["steady"] for _, m in strategies.values()])
    print(f"- cost of a candidate (best {o['best']:.4f} ms a run), seconds an evaluation, total / steady: optune "
          f"{o['per_eval']:.3f} / {o['steady']:.3f}, Kernel Tuner {kt_total:.3f} / {kt_steady:.3f} (median of its "
          f"strategies); at most twice Kernel Tuner's: {'met' if o['per_eval'] <= 2 * kt_total else 'not met'} / "
          f"{'met' if o['steady'] <= 2 * kt_steady else 'not met'}; at most 2 x 65 ms: "
          f"{'met' if o['per_eval'] <= 0.130 else 'not met'} / {'met' if o['steady'] <= 0.130 else 'not met'}",
          file=stream)
    # 3. evaluations to Kernel Tuner's best time (its best strategy: the lowest median best)
    (_, s_best), (b_group, b) = min(strategies.items(), key=lambda kv: (kv[1][1]["best"], kv[1][1]["evals_to"]))
    if math.isinf(b["best"]):
        return
    o_evals = _median([evals_to_time(r, b["best"]) for r in o_group])
    k_evals = _median([evals_to_time(r, b["best"]) for r in b_group])
    budget = max(r["budget"] for r in o_group)
    print(f"- evaluations to Kernel Tuner's best time ({s_best}, median best {b['best']:.4f} ms): optune "
          f"{_show(o_evals, 0, budget)}, {s_best} {_show(k_evals, 0, budget)} "
          f"({'met' if o_evals < k_evals else 'not met'}: fewer)", file=stream)


# ---------------------------------------------------------------------------------------------
# Checks that need no GPU.

def selftest():
    here = pathlib.Path(__file__).resolve().parent
    kernels = here.parent.parent / "configs" / "kernels"
    # The example files' valid spaces, as `optune space --kernel ... --target cuda` counts them on an
    # H200-like device and `--target opencl` on PoCL on the 2-core Xeon (size times
    # valid_share_estimate, counted).
    expected = {"matmul_cuda.toml": 630, "reduction_cuda.toml": 54, "conv2d_cuda.toml": 704,
                "conv2d.toml": 416, "reduction.toml": 144, "axpy_f16.toml": 128}
    for name, count in expected.items():
        kernel = KernelFile(kernels / name)
        valid = kernel.valid_configs()
        assert len(valid) == count, (name, len(valid), count)
        grid = kernel.problem_size()({**valid[0], **{k: v[0] for k, v in kernel.extra_params.items()}})
        assert all(g >= 1 for g in grid), grid
    matmul = KernelFile(kernels / "matmul_cuda.toml")
    assert matmul.kernel_name() == "matmul<WPT_X, WPT_Y>"
    assert matmul.problem_size()({"block_size_x": 16, "block_size_y": 8, "WPT_X": 2, "WPT_Y": 4, "TILE_K": 8}) == (64, 64, 1)
    assert matmul.launch({"block_size_x": 16, "block_size_y": 8, "WPT_X": 2, "WPT_Y": 4, "TILE_K": 8})[2] == 4 * 8 * (32 + 32)
    assert matmul.instantiated("matmul<WPT_X, WPT_Y>", {"WPT_X": 2, "WPT_Y": 4}) == "matmul<2, 4>"
    reduction = KernelFile(kernels / "reduction_cuda.toml")
    assert reduction.block_size_names == ["block_size_x", "rows_per_block", "kt_block_z"]
    # OpenCL: global [ceil_div(1024, 16 * 2) * 16, ceil_div(1024, 4 * 1) * 4] work-items in work-groups
    # of 16 x 4; the device's max_work_group_size bounds the work-group through the file's rule
    conv2d = KernelFile(kernels / "conv2d.toml")
    config = {"BLOCK_X": 16, "BLOCK_Y": 4, "TILE_X": 2, "TILE_Y": 1, "USE_LOCAL": 1, "UNROLL": 0}
    assert conv2d.block_size_names == ["BLOCK_X", "BLOCK_Y", "kt_block_z"]
    assert conv2d.problem_size()(config) == (32, 256, 1) and conv2d.launch(config)[1] == [16, 4]
    assert conv2d.compiler_options() == []
    assert len(KernelFile(kernels / "conv2d.toml", {**POCL_LIMITS, "max_work_group_size": 64}).valid_configs()) == 96
    try:  # its local size TILE / WPT is no tunable parameter
        KernelFile(kernels / "transpose.toml")
        raise AssertionError("transpose.toml")
    except Unmappable:
        pass
    try:
        from kernel_tuner import util as kt_util
    except ImportError:
        kt_util = None
        print("kernel_tuner not importable: its grid, block and space are not compared")
    for name in expected if kt_util else ():
        kernel = KernelFile(kernels / name)
        assert kt_space_size(kernel) == expected[name], name
        for config in kernel.valid_configs()[::37]:
            params = {**config, **{k: v[0] for k, v in kernel.extra_params.items()}}
            threads, grid = kt_util.setup_block_and_grid(kernel.problem_size(), (1, 1, 1), params,
                                                         kernel.block_size_names)
            ours = kernel.launch(config)
            assert list(grid[:len(ours[0])]) == ours[0] and list(threads[:len(ours[1])]) == ours[1], (name, config)
            if kernel.shared_memory:
                assert kt_util.get_smem_args(kernel.smem_args(), params)["size"] == ours[2]
    # the expression language
    names = {"a": 3, "b": 0, "N": 10}
    assert Expression("ceil_div(N, 4) == 3 && !b", names).holds(names)
    assert not Expression("!(a > 1) || b", names).holds(names)
    assert Expression("N % 4 + a ^ 2", names).value(names) == 11
    assert math.isnan(Expression("N / b", names).value(names))
    for bad in ("a ? 1 : 2", "c + 1", "a < N < 20"):
        try:
            Expression(bad, names)
            raise AssertionError(bad)
        except Unmappable:
            pass
    # the reporter on synthetic runs: optune reaches 1.0 ms at its 3rd evaluation, KT 1.02 ms at its
    # 5th; by the brute force's times KT's 3rd config (config "2", 1.0 ms there) was within 5% already
    import tempfile
    with tempfile.TemporaryDirectory() as out:
        (pathlib.Path(out) / "k").mkdir()

        def write(tool, strategy, seed, times, step, wall):
            evals = [{"config": str(i), "t": step * (i + 1), "ms": ms, "error": None if ms else "x"}
                     for i, ms in enumerate(times)]
            run = {"tool": tool, "strategy": strategy, "kernel": "k", "seed": seed, "budget": len(times),
                   "wall": wall, "evals": evals, "error": None}
            (pathlib.Path(out) / "k" / f"{tool}-{strategy}-{seed}.json").write_text(json.dumps(run))
        for seed in (1, 2, 3):
            write("optune", "xgb", seed, [3.0, 2.0, 1.0, 1.2, None, 1.1], 0.5, 4.0)
            write("kt", "random_sample", seed, [3.0, 2.5, 2.0, 1.5, 1.02, 1.3], 0.2, 2.0)
        write("kt", "brute_force", 0, [3.0, 2.0, 1.0, 1.2, 1.02, 1.1], 0.2, 2.0)
        import io

        def report_text():
            text = io.StringIO()
            assert report(out, text) == 0
            return text.getvalue()
        lines = report_text()
        assert "| optune | xgb | 3 | 1.0000 | 3 | 1.5 | 4.0 | 6 | 1 | 0.667 | 0.500 | 3 |" in lines, lines
        assert "| kt | random_sample | 3 | 1.0200 | 5 | 1.0 | 2.0 | 6 | 0 | 0.333 | 0.200 | 3 |" in lines, lines
        assert "1.50x its time (not met" in lines, lines
        assert "optune 0.667 / 0.500, Kernel Tuner 0.333 / 0.200 (median of its strategies); at most twice Kernel " \
               "Tuner's: met / not met; at most 2 x 65 ms: not met / not met" in lines, lines
        assert "evaluations to Kernel Tuner's best time (random_sample, median best 1.0200 ms): optune 3, random_sample 5 (met" in lines, lines
        # a truth file instead of the brute force: config "1" is the best there, config "2" 2.0 ms,
        # so KT (config "1" at its 2nd evaluation, 0.4 s) gets there before optune (its 2nd, 1.0 s)
        truth = pathlib.Path(out) / "k" / "truth.json"
        truth.write_text(json.dumps({"cache": {"0": {"time": 3.0}, "1": {"time": 0.9}, "2": {"time": 2.0},
                                               "3": {"time": "InvalidConfig"}}}))
        lines = report_text()
        assert "3 configs timed (3 configs the runs measured are not among them" in lines, lines
        assert "| optune | xgb | 3 | 1.0000 | 3 | 1.5 | 4.0 | 6 | 1 | 0.667 | 0.500 | 2 | 1.0 |" in lines, lines
        assert "by the truth's times: optune 1.0 s against Kernel Tuner random_sample 0.4 s: 2.50x its time (not met" in lines, lines
        # the truth's front (within 20% of its best) re-measured: a lucky grid reading replaced
        cache = {"tune_params_keys": ["A"], "cache": {str(a): {"A": a, "time": t} for a, t in
                                                      ((1, 10.0), (2, 11.5), (3, 13.0), (4, "InvalidConfig"))}}
        truth.write_text(json.dumps(cache))
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            truth_front(truth)
        assert text.getvalue().split("\n")[:-1] == ['{"A": 1}', '{"A": 2}'], text.getvalue()
        measured = pathlib.Path(out) / "measured.json"
        measured.write_text(json.dumps({"rounds": 5, "configs": [
            {"config": {"A": 1}, "record": {"median_seconds": 0.0121, "error_kind": "ok"}},
            {"config": {"A": 2}, "record": {"median_seconds": 0.0115, "error_kind": "ok"}}]}))
        with contextlib.redirect_stdout(io.StringIO()):
            refine_truth(truth, measured)
        assert load_truth(truth) == {"1": 12.1, "2": 11.5, "3": 13.0}, load_truth(truth)
    print("selftest ok")
    return 0


def fake_cache(toml, path):
    """A Kernel Tuner cache file of made-up times for every valid config, so that `kt --simulate`
    runs Kernel Tuner's strategies through this script's mapping without a GPU."""
    import random
    kernel = KernelFile(toml)
    params = kernel.tune_params()
    rng = random.Random(1)
    cache = {}
    for config in kernel.valid_configs():
        values = {**config, **{k: v[0] for k, v in kernel.extra_params.items()}}
        times = [1 + sum(rng.random() for _ in range(3)) for _ in range(7)]
        cache[",".join(str(values[k]) for k in params)] = {
            **values, "time": statistics.mean(times), "times": times, "compile_time": 100.0, "verification_time": 0,
            "benchmark_time": sum(times), "strategy_time": 0, "framework_time": 0, "timestamp": "2026-11-30 00:00:00+00:00"}
    pathlib.Path(path).write_text(json.dumps({
        "device_name": "made-up GPU", "kernel_name": kernel.kernel_name(), "problem_size": "callable",
        "tune_params_keys": list(params), "tune_params": params, "objective": "time", "cache": cache}))
    return 0


def space(toml, limits=None):
    kernel = KernelFile(toml, json.loads(limits) if limits else None)
    valid = kernel.valid_configs()
    try:
        kt_valid = int(kt_space_size(kernel, os.environ.get("KT_SMEM_OPTIN", "1") == "1"))
    except Exception as error:  # no kernel_tuner here, or it refused the mapping
        print(f"Kernel Tuner's space not counted: {type(error).__name__}: {error}", file=sys.stderr)
        kt_valid = None
    print(json.dumps({
        "kernel_name": kernel.kernel_name(), "tune_params": kernel.tune_params(),
        "block_size_names": kernel.block_size_names, "compiler_options": kernel.compiler_options(),
        "grid_of_first_valid": kernel.problem_size()({**valid[0], **{k: v[0] for k, v in kernel.extra_params.items()}}) if valid else None,
        "shared_memory": kernel.shared_memory.text if kernel.shared_memory else None,
        "rules": [r.text for r in kernel.rules], "check": {"rtol": kernel.rtol, "atol": kernel.atol, **{
            k: v for k, v in kernel.check.items() if k in ("reference", "expected")}},
        "configs": math.prod(len(v) for v in kernel.knobs.values()), "valid_configs": len(valid),
        "kt_valid_configs": kt_valid, "device_limits": kernel.limits if limits else kernel.backend.stand_in_name},
        indent=1))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("out")
    p.add_argument("kernels", nargs="+")
    p.add_argument("--optune", required=True)
    p.add_argument("--optune-lib", default="")
    p.add_argument("--optune-args", default="")
    p.add_argument("--strategies", default="adaptive_tabu_greywolf,random_sample")
    p.add_argument("--trials", type=int, default=60)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--brute-max", type=int, default=1000)
    p.add_argument("--iterations", type=int, default=7)
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds after which no further run starts (0: none); a later call resumes")
    p.add_argument("--simulate", action="store_true",
                   help="Kernel Tuner on made-up times, no optune, no GPU; its times since start are its simulated ones")
    p = sub.add_parser("kt")
    p.add_argument("toml")
    p.add_argument("--strategy", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--budget", type=int, required=True)
    p.add_argument("--iterations", type=int, default=7)
    p.add_argument("--out", required=True)
    p.add_argument("--simulate", help="Kernel Tuner's simulation mode from this cache file (no GPU)")
    sub.add_parser("report").add_argument("out")
    p = sub.add_parser("space")
    p.add_argument("toml")
    p.add_argument("--limits", help="the device's limits as JSON (default: an H200's, or PoCL's on a 2-core Xeon)")
    p = sub.add_parser("fake-cache")
    p.add_argument("toml")
    p.add_argument("cache")
    sub.add_parser("truth-front").add_argument("truth")
    p = sub.add_parser("refine-truth")
    p.add_argument("truth")
    p.add_argument("measured")
    sub.add_parser("selftest")
    sub.add_parser("limits").add_argument("backend", choices=BACKENDS)
    args = parser.parse_args()
    if os.environ.get("KT_HIDE_TORCH", "1") == "1":
        # Kernel Tuner imports torch where it is installed (seconds a process), though its cupy
        # and OpenCL backends need none of it: hidden, so that its start-up is what it needs.
        sys.modules.setdefault("torch", None)
    try:
        if args.command == "run":
            return orchestrate(args)
        if args.command == "kt":
            return kt_run(args)
        if args.command == "report":
            return report(args.out)
        if args.command == "space":
            return space(args.toml, args.limits)
        if args.command == "limits":
            print(json.dumps(device_limits(args.backend)))
            return 0
        if args.command == "truth-front":
            return truth_front(args.truth)
        if args.command == "refine-truth":
            return refine_truth(args.truth, args.measured)
        if args.command == "fake-cache":
            return fake_cache(args.toml, args.cache)
        return selftest()
    except Unmappable as error:
        print(f"{getattr(args, 'toml', '')}: cannot map onto Kernel Tuner: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
