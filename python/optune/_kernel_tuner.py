"""Kernel Tuner's call on optune: ``tune_kernel(kernel_name, kernel_source, problem_size, arguments,
tune_params, ...)``, each keyword in Kernel Tuner's meaning, becomes a kernel file (a dict that
_kernel_file writes out) and the options of one tune() run, and the run's records come back as
Kernel Tuner's ``(results, env)``. What optune cannot honour is BadInput naming it, before anything
is built.

Kernel Tuner's conventions kept: every tune parameter is #defined, and so are the block's
dimensions (block_size_x/_y/_z or block_size_names, 256 x 1 x 1 where they are no tune parameters:
one-valued knobs here) and kernel_tuner = 1; the grid is ceil(problem_size / grid_div) blocks per
dimension, grid_div defaulting to the block dimension's parameter where that is tuned; an OpenCL
NDRange is grid * block work-items, three-dimensional; restrictions are evaluated in Python
(_restrictions.py); results' times are milliseconds, the mean of the timed runs."""
import inspect
import math
import os
import re

from . import _kernel_file, _restrictions
from ._kernel_file import _plain
from ._optune import BadInput


def _kernel_tuner_call(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                       grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                       verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                       compiler=None, compiler_options=None, defines=None, log=None, iterations=7,
                       block_size_names=None, quiet=False, strategy=None, strategy_options=None, cache=None,
                       metrics=None, simulation_mode=False, observers=None, objective=None,
                       objective_higher_is_better=None, **optune_options):
    """Kernel Tuner 1.x's tune_kernel, keyword for keyword (kernel_tuner/interface.py); other keywords
    are optune's tune() options."""


_SIGNATURE = inspect.signature(_kernel_tuner_call)
# Names that only the Kernel Tuner form takes (the kernel-file form shares arguments, answer, atol,
# and tune()'s compiler and objective).
_KERNEL_TUNER_ONLY = set(_SIGNATURE.parameters) - {"arguments", "answer", "atol", "compiler", "objective",
                                                    "optune_options"}

# Kernel Tuner's keywords optune cannot honour: any value but the default is BadInput, saying why.
_REFUSED = {
    "verify": "a Python function cannot run in optune's worker; answer= and atol= check the outputs there",
    "cmem_args": "optune copies no constant-memory symbols; pass them as kernel arguments",
    "texmem_args": "optune's kernels take no texture memory",
    "defines": "optune #defines the tune parameters, the block's dimensions and kernel_tuner, no other set",
    "log": "optune writes no log file",
    "cache": "optune keeps every measurement in its database (db=); `optune export --kernel-tuner` writes a cache",
    "simulation_mode": "optune measures; `optune replay` replays tuners over a Kernel Tuner cache",
    "observers": "optune measures time only",
}
# tune()'s options that a Kernel Tuner call gives in Kernel Tuner's words.
_MAPPED = {"op": "kernel_name", "kernel": "kernel_name and kernel_source", "shape": "problem_size",
           "target": "lang, device and platform", "tuner": "strategy", "trials": "strategy_options' max_fevals",
           "budget": "strategy_options' time_limit", "repeat": "iterations", "suite": "kernel_name",
           "template": "kernel_name"}
_BACKENDS = {"opencl": "opencl", "cuda": "cuda", "cupy": "cuda", "nvcuda": "cuda", "c": "cpu"}
_TUNERS = {"brute_force": "grid", "random_sample": "random", "genetic_algorithm": "ga"}
# Kernel Tuner's other strategies: optune's model-based tuner searches in their place.
_SEARCHES = ("basinhopping", "bayes_opt", "diff_evo", "dual_annealing", "firefly_algorithm", "greedy_ils",
             "greedy_mls", "minimize", "mls", "ordered_greedy_mls", "pso", "simulated_annealing", "skopt")
_DEFAULT_BLOCK = (256, 1, 1)
_DEFAULT_BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
_NUMPY_DTYPES = {numpy_name: dtype for dtype, numpy_name in _kernel_file._DTYPES.items()}


def is_kernel_tuner_call(args, kwargs):
    """Whether tune_kernel was called as Kernel Tuner's: a source (code, a file name, or a list of them)
    second, where the kernel-file form takes its list of arguments, more than three positional
    arguments, or a keyword only Kernel Tuner's form takes."""
    source = args[1] if len(args) > 1 else None
    return (len(args) > 3 or isinstance(source, (str, os.PathLike))
            or (isinstance(source, (list, tuple)) and any(isinstance(s, (str, os.PathLike)) for s in source))
            or any(name in _KERNEL_TUNER_ONLY for name in kwargs))


def tune_kernel(args, kwargs, tune_kernel_file, tune, query):
    """Runs Kernel Tuner's call through the kernel-file form (``tune_kernel_file``); returns
    (results, env) as Kernel Tuner does."""
    call = _bind(args, kwargs, tune)
    source, source_path = _source(call["kernel_source"])
    lang = call["lang"] if call["lang"] is not None else _detected_language(source)
    backend = _backend(lang)
    tune_params = _tune_params(call["tune_params"])
    space = _restrictions.apply(call["restrictions"], tune_params, BadInput)
    arguments, answer, args_fields = _arguments(call["arguments"], call["answer"])
    # Code text reaches the kernel file as code by its newline (_kernel_file._write_source_text).
    kernel = _kernel(call, backend, source_path or (source if "\n" in source else source + "\n"), tune_params, space,
                     args_fields)
    options = _tune_options(call, backend, space, answer is not None)
    outcome = tune_kernel_file(kernel, arguments, answer, target=_target(backend, call), **options)
    database = options.get("db", inspect.signature(tune).parameters["db"].default)  # tune's default
    results = _results(outcome, database, tune_params, space, call["metrics"], query)
    env = _environment(outcome, call, lang, kernel["extents"], results)
    if not call["quiet"] and "best_config" in env:  # as Kernel Tuner ends
        best = env["best_config"]
        print("best performing configuration:")
        print(", ".join([*(f"{k}={_shown_value(best[k])}" for k in tune_params), f"time={best['time']:.3f}ms"]))
    return results, env


def _kernel(call, backend, source, tune_params, space, args_fields):
    """The kernel file's fields."""
    block_names = _block_size_names(call["block_size_names"])
    knobs = dict(space.knobs)
    for name, size in zip(block_names, _DEFAULT_BLOCK):  # #defined as Kernel Tuner defines them
        knobs.setdefault(name, [size])
    knobs.setdefault("kernel_tuner", [1])
    extents = _extents(call["problem_size"])
    kernel = {"name": _file_name(call["kernel_name"]), "backend": backend, "source": source,
              "entry": _text("kernel_name", call["kernel_name"]), "args": args_fields, "extents": extents, "knobs": knobs}
    if space.rules:
        kernel["constraints"] = {"rules": space.rules}
    if backend != "cpu":  # Kernel Tuner calls a C function once: no launch
        kernel["launch"] = _launch(backend, call, extents, tune_params, list(knobs), block_names)
    elif call["smem_args"] is not None:
        raise BadInput("tune_kernel: smem_args: CUDA's dynamic shared memory has no meaning for a C function")
    if call["compiler_options"] is not None:
        kernel["build_options"] = _texts("compiler_options", call["compiler_options"])
    return kernel


def _tune_options(call, backend, space, is_checked):
    options = dict(call["optune_options"])
    options.update(_search(call["strategy"], call["strategy_options"], space.count))
    options["repeat"] = _positive("iterations", call["iterations"])
    if backend == "cpu" and call["compiler"] is not None:  # Kernel Tuner's compiler is the C one only
        options["compiler"] = _text("compiler", call["compiler"])
    if is_checked:  # numpy.allclose's test: its rtol, Kernel Tuner's atol
        options.update(atol=call["atol"], rtol=options.get("rtol", 1e-5))
    return options


def _bind(args, kwargs, tune):
    try:
        call = _SIGNATURE.bind(*args, **kwargs)
    except TypeError as error:  # a missing argument, too many, one given twice
        raise BadInput(f"tune_kernel: {error} (Kernel Tuner's tune_kernel(kernel_name, kernel_source, "
                       f"problem_size, arguments, tune_params, ...))") from None
    call.apply_defaults()
    call = dict(call.arguments)
    for name, why in _REFUSED.items():
        given = bool(call[name]) if name == "simulation_mode" else call[name] is not None
        if given:
            raise BadInput(f"tune_kernel: {name}: {why}")
    if call["objective"] not in (None, "time") or call["objective_higher_is_better"]:
        raise BadInput(f"tune_kernel: objective {call['objective']!r}: optune minimises the time")
    tune_options = set(inspect.signature(tune).parameters)
    for name in call["optune_options"]:
        if name in _MAPPED:
            raise BadInput(f"tune_kernel: {name}: a Kernel Tuner call gives it as {_MAPPED[name]}")
        if name not in tune_options and name != "rtol":
            raise BadInput(f"tune_kernel: unknown keyword '{name}': neither Kernel Tuner's tune_kernel nor optune's "
                           f"tune takes it")
    return call


def _text(name, value):
    if not isinstance(value, str) or not value:
        raise BadInput(f"tune_kernel: {name}: expected a non-empty string, got {value!r}")
    return value


def _texts(name, value):
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise BadInput(f"tune_kernel: {name}: expected a list of strings, got {value!r}")
    return [_text(name, one) for one in value]


def _positive(name, value):
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadInput(f"tune_kernel: {name}: expected a positive integer, got {value!r}")
    return value


def _looks_like_a_file_name(text):
    # Kernel Tuner's test (util.looks_like_a_filename): code has brackets, semicolons or newlines.
    return len(text) <= 250 and not any(c in text for c in "();{}\\\n")


def _source(kernel_source):
    """(code, its file's absolute path or None) of Kernel Tuner's kernel_source: code, or a file's name."""
    if isinstance(kernel_source, (list, tuple)):
        if len(kernel_source) != 1:
            raise BadInput("tune_kernel: kernel_source: give the kernel's one file (a list of several is Kernel "
                           "Tuner's, for files it reads beside the kernel's)")
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, os.PathLike) or (isinstance(kernel_source, str)
                                                   and _looks_like_a_file_name(kernel_source)):
        path = os.fsdecode(kernel_source)
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read(), os.path.abspath(path)
        except (OSError, UnicodeDecodeError) as error:
            raise BadInput(f"tune_kernel: kernel_source: cannot read {path} "
                           f"({getattr(error, 'strerror', None) or error})") from None
    if not isinstance(kernel_source, str) or not kernel_source.strip():
        raise BadInput(f"tune_kernel: kernel_source: expected the kernel's code or its file's name, got "
                       f"{kernel_source!r}")
    return kernel_source, None


def _detected_language(source):
    # As Kernel Tuner's util.detect_language.
    if "__global__" in source:
        return "CUDA"
    return "OpenCL" if "__kernel" in source else "C"


def _backend(lang):
    if not isinstance(lang, str) or lang.lower() not in _BACKENDS:
        raise BadInput(f"tune_kernel: lang {lang!r}: optune tunes OpenCL, CUDA and C kernels")
    return _BACKENDS[lang.lower()]


def _target(backend, call):
    device = call["device"]
    if isinstance(device, bool) or not isinstance(_plain(device), int) or _plain(device) < 0:
        raise BadInput(f"tune_kernel: device: expected a device number, got {device!r}")
    platform = call["platform"]
    if isinstance(platform, bool) or not isinstance(_plain(platform), int) or _plain(platform) < 0:
        raise BadInput(f"tune_kernel: platform: expected a platform number, got {platform!r}")
    if backend == "opencl" and (device or platform):
        return f"opencl:{platform}:{device}"
    if backend == "cuda" and device:
        return f"cuda:{device}"
    return backend  # the C function runs on this machine, as Kernel Tuner ignores device for it


def _tune_params(tune_params):
    if not isinstance(tune_params, dict) or not tune_params:
        raise BadInput(f"tune_kernel: tune_params: expected a dict of parameter names and their values, got "
                       f"{tune_params!r}")
    plain = {}
    for name, values in tune_params.items():
        if name in ("grid_size_x", "grid_size_y", "grid_size_z", "time"):  # as Kernel Tuner refuses them
            raise BadInput(f"tune_kernel: tune_params: '{name}' is a name Kernel Tuner reserves")
        values = _plain(values)
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise BadInput(f"tune_kernel: tune_params['{name}']: expected a list of values, got {values!r}")
        plain[name] = [_plain(v) for v in values]
        if not plain[name]:
            raise BadInput(f"tune_kernel: tune_params['{name}'] has no values")
    return plain


def _block_size_names(names):
    if names is None:
        return list(_DEFAULT_BLOCK_NAMES)
    names = _texts("block_size_names", names)
    if len(names) > 3:
        raise BadInput(f"tune_kernel: block_size_names: at most 3 names, got {names!r}")
    return names + list(_DEFAULT_BLOCK_NAMES[len(names):])


def _extents(problem_size):
    sizes = _plain(problem_size)
    sizes = [_plain(s) for s in (sizes if isinstance(sizes, (list, tuple)) else [sizes])]
    if not 1 <= len(sizes) <= 3 or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in sizes):
        raise BadInput(f"tune_kernel: problem_size: expected a positive integer or a tuple of 1 to 3 of them (a size "
                       f"computed from the tune parameters is not supported), got {problem_size!r}")
    return {f"problem_size_{axis}": size for axis, size in zip("xyz", sizes)}


def _file_name(kernel_name):
    """A kernel file's name (the records' workload key) from the kernel's: "matmul<float, 16>" is matmul_float_16."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", _text("kernel_name", kernel_name)).strip("_-")
    return name if name[:1].isalpha() else "kernel_" + name


def _arguments(arguments, answer):
    """Kernel Tuner's numpy arguments as a kernel file's args, with the arguments and answer as the
    kernel-file form takes them. Outputs are the answered buffers; without an answer, every buffer
    (Kernel Tuner copies each one in and out)."""
    try:
        import numpy
    except ImportError:
        raise BadInput("tune_kernel: Kernel Tuner's arguments are numpy arrays; install numpy") from None
    arguments = _kernel_file._sequence("arguments", arguments, BadInput)
    answered = None
    if answer is not None:
        answer = _kernel_file._sequence("answer", answer, BadInput)
        if len(answer) != len(arguments):
            raise BadInput(f"tune_kernel: {len(answer)} answers for {len(arguments)} arguments")
        answered = {i for i, expected in enumerate(answer) if expected is not None}
        if not answered:  # Kernel Tuner then checks nothing
            answer = answered = None
    fields = []
    for i, value in enumerate(arguments):
        if not isinstance(value, (numpy.ndarray, numpy.generic)):
            raise BadInput(f"tune_kernel: argument {i} is a {type(value).__name__}: Kernel Tuner's arguments are numpy "
                           f"arrays and numpy scalars (numpy.int32(n), numpy.float32(x))")
        dtype = _NUMPY_DTYPES.get(value.dtype.name)
        if dtype is None:
            raise BadInput(f"tune_kernel: argument {i} is {value.dtype.name}, which optune's kernels do not take "
                           f"({', '.join(_NUMPY_DTYPES)})")
        if isinstance(value, numpy.generic):
            fields.append({"name": f"arg{i}", "kind": "scalar", "dtype": dtype, "value": "0"})  # the value: below
        else:
            fields.append({"name": f"arg{i}", "kind": "buffer", "dtype": dtype, "count": str(value.size),
                           "output": answered is None or i in answered})
    return arguments, answer, fields


def _divisor(grid_div, block_name, tune_params, knob_names, where):
    """Kernel Tuner's grid divisor of one dimension: the product of its entries, each rounded down as
    int() rounds a positive number; by default the block dimension's parameter where it is tuned."""
    if grid_div is None:
        return block_name if block_name in tune_params else "1"
    if callable(grid_div):
        raise BadInput(f"tune_kernel: {where}: a function is not supported; give a list of strings (Python "
                       f"arithmetic of tune parameters)")
    entries = [grid_div] if isinstance(grid_div, str) else grid_div
    if not isinstance(entries, (list, tuple)):
        raise BadInput(f"tune_kernel: {where}: expected a list of strings, got {grid_div!r}")
    terms = [_restrictions.expression(entry, knob_names, where, BadInput) for entry in entries]
    return " * ".join(term if re.fullmatch(r"\w+", term) else f"floor({term})" for term in terms) or "1"


def _launch(backend, call, extents, tune_params, knob_names, block_names):
    grid = []
    for axis, block_name in zip("xyz", block_names):
        size = f"problem_size_{axis}" if f"problem_size_{axis}" in extents else "1"
        divisor = _divisor(call[f"grid_div_{axis}"], block_name, tune_params, knob_names, f"grid_div_{axis}")
        grid.append(f"ceil_div({size}, {divisor})")
    if backend == "opencl":
        if call["smem_args"] is not None:
            raise BadInput("tune_kernel: smem_args: CUDA's dynamic shared memory; an OpenCL kernel declares its "
                           "__local arrays")
        return {"global": [f"{blocks} * {name}" for blocks, name in zip(grid, block_names)], "local": block_names}
    launch = {"grid": grid, "block": block_names}
    if call["smem_args"] is not None:
        smem = call["smem_args"]
        if not isinstance(smem, dict) or set(smem) != {"size"}:
            raise BadInput(f"tune_kernel: smem_args: expected {{'size': bytes}}, got {smem!r}")
        launch["shared_memory"] = _restrictions.expression(smem["size"], knob_names, "smem_args", BadInput)
    return launch


def _search(strategy, strategy_options, allowed):
    """tune()'s tuner, trials and budget for Kernel Tuner's strategy and its max_fevals and time_limit.
    Brute force (the default) measures every allowed config; random_sample its fraction (0.1) of
    them; the others at most max_fevals, or 64 configs without it or a time limit."""
    if strategy is not None and strategy not in _TUNERS and strategy not in _SEARCHES:
        raise BadInput(f"tune_kernel: strategy {strategy!r}: expected one of Kernel Tuner's "
                       f"({', '.join(sorted([*_TUNERS, *_SEARCHES]))})")
    options = {} if strategy_options is None else strategy_options
    if not isinstance(options, dict):
        raise BadInput(f"tune_kernel: strategy_options: expected a dict, got {options!r}")
    search = {"tuner": _TUNERS.get(strategy or "brute_force", "xgb")}
    max_fevals = options.get("max_fevals")
    if max_fevals is not None:
        max_fevals = _positive("strategy_options' max_fevals", max_fevals)
    time_limit = _plain(options.get("time_limit"))
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not 0 < time_limit < 1e9:
            raise BadInput(f"tune_kernel: strategy_options' time_limit: expected seconds, got {time_limit!r}")
        search["budget"] = f"{math.ceil(time_limit)}s"
    if strategy in (None, "brute_force") or time_limit is not None:
        trials = allowed
    elif strategy == "random_sample":
        fraction = _plain(options.get("fraction", 0.1))
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            raise BadInput(f"tune_kernel: strategy_options' fraction: expected a number in (0, 1], got {fraction!r}")
        trials = math.ceil(fraction * allowed)
    else:
        trials = max_fevals or 64
    # tune() measures the default config besides its trials: one of Kernel Tuner's evaluations.
    search["trials"] = max(1, min(trials, allowed, max_fevals or trials) - 1)
    return search


def _results(outcome, db, tune_params, space, metrics, query):
    """Kernel Tuner's results: one dict per config measured for this kernel, size and device (in this
    call, or an earlier one on the same db, which optune does not measure again), in the order they
    were first measured, the latest measurement of each: the tune parameters, ``time`` (ms, the
    mean of the timed runs) and ``times``, or for a failure Kernel Tuner's name of it in ``time``."""
    latest = {}
    for record in query(db=db, target=outcome["target"], history=True):
        if (record["template"], record["workload"], record["device_name"]) != \
                (outcome["template"], outcome["workload"], outcome["device"]):
            continue
        params = _tune_values(record["config"], tune_params)
        if params is not None and space.allows(params):  # records of a wider space of earlier calls stay out
            latest[tuple(params.values())] = (params, record)
    results = [_result(params, record) for params, record in latest.values()]
    for result in results:
        if isinstance(result["time"], float) and metrics is not None:
            _add_metrics(result, metrics)
    return results


def _tune_values(config, tune_params):
    """A record's config as the caller's own tune-parameter values (16 where the record says 16.0)."""
    params = {}
    for name, values in tune_params.items():
        if name not in config:
            return None
        matching = [v for v in values if v == config[name]]
        if not matching:
            return None
        params[name] = matching[0]
    return params


def _result(params, record):
    result = dict(params)
    costs = record["costs"] or [record["median_seconds"]]
    if record["error_kind"] in ("ok", "slow"):
        result["time"] = 1000 * sum(costs) / len(costs)
        result["times"] = [1000 * cost for cost in costs]
    else:  # Kernel Tuner's names of failures; optune's own beside them
        result["time"] = "CompilationFailedConfig" if record["error_kind"] == "build_error" else "RuntimeFailedConfig"
        result["error_kind"], result["error_message"] = record["error_kind"], record["error_message"]
    result["compile_time"] = 1000 * (record["build_seconds"] or 0)
    result["verification_time"] = 1000 * (record["check_seconds"] or 0)
    result["benchmark_time"] = 1000 * (record["timing_seconds"] or 0)
    result["timestamp"] = record["timestamp"]
    return result


def _add_metrics(result, metrics):
    """Kernel Tuner's metrics: each a string of Python over the result's values, or a function of the
    result; later ones may use earlier ones."""
    if not isinstance(metrics, dict):
        raise BadInput(f"tune_kernel: metrics: expected a dict of names and strings or functions, got {metrics!r}")
    for name, metric in metrics.items():
        try:
            result[name] = metric(result) if callable(metric) else eval(_text(f"metrics['{name}']", metric), {},
                                                                        dict(result))
        except BadInput:
            raise
        except Exception as error:
            raise BadInput(f"tune_kernel: metrics['{name}'] fails: {type(error).__name__}: {error}") from None


def _environment(outcome, call, lang, extents, results):
    env = {"device_name": outcome["device"], "lang": lang, "kernel_name": call["kernel_name"],
           "problem_size": tuple(extents.values()), "iterations": call["iterations"],
           "compiler_options": call["compiler_options"], "block_size_names": _block_size_names(call["block_size_names"]),
           "strategy": call["strategy"] or "brute_force", "objective": "time", "objective_higher_is_better": False,
           "target": outcome["target"], "optune": outcome}
    timed = [result for result in results if isinstance(result["time"], float)]
    if timed:
        env["best_config"] = min(timed, key=lambda result: result["time"])
    return env


def _shown_value(value):
    return f"{value:.3f}" if isinstance(value, float) else str(value)
