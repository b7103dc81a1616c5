"""optune from Python: tune operator schedules, query the records, inspect spaces and devices.

The same library as the ``optune`` command does the work (no shelling out): ``tune`` measures
candidates in optune's isolated worker and records every measurement in the SQLite database
``db``; ``query`` reads records back. Bad input raises ``optune.BadInput`` with the one-line
message the command line prints before exiting with code 2.

    import optune
    best = optune.tune(op="gemm", shape="256,256,256", target="cpu", trials=16)
    print(best["best"]["gflops"], best["speedup"])
    optune.query(db="optune.db", op="gemm").to_pandas()
"""
import importlib.machinery
import json
import math
import os
import sys
import tempfile

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _missing_native_part(error):
    """One line saying what to do when the compiled part does not load. Python's own words for a
    package whose compiled module is missing blame "a circular import", which sends readers astray."""
    present = sorted(name for name in os.listdir(_PACKAGE_DIR) if name.startswith("_optune."))
    loadable = [name for name in present if name[len("_optune"):] in importlib.machinery.EXTENSION_SUFFIXES]
    if not present:
        return (f"optune's compiled part (_optune) is not in {_PACKAGE_DIR}: build it (cmake --build BUILD --target "
                f"_optune, configured with -DOPTUNE_BUILD_PYTHON=ON) or install the package (pip install .)")
    if not loadable:
        return (f"optune's compiled part in {_PACKAGE_DIR} ({', '.join(present)}) was built for another Python than "
                f"this one ({sys.version.split()[0]}); build it with this Python, or run the Python it was built for")
    return f"optune's compiled part in {_PACKAGE_DIR} does not load: {error}"


try:
    from . import _optune
except ImportError as error:
    raise ImportError(_missing_native_part(error)) from None
from ._optune import BadInput

from . import _kernel_file, _kernel_tuner

__all__ = ["BadInput", "Records", "tune", "tune_kernel", "query", "pick", "replay", "space", "devices", "cmake_dir",
           "__version__"]
__version__ = _optune.__version__
# tune()'s defaults are the command line's (app::TuneRequest's), read from the native part: one list.
_DEFAULTS = json.loads(_optune.tune_defaults())
_D = _DEFAULTS


class Records(list):
    """Records as dicts (the fields of ``optune query --format json``); ``to_pandas()`` makes a
    DataFrame where pandas is installed."""

    def to_pandas(self):
        try:
            import pandas
        except ImportError as error:
            raise ImportError("Records.to_pandas() needs pandas (pip install pandas)") from error
        return pandas.DataFrame(list(self))


def _count(name, value, minimum=0, maximum=2**63 - 1):
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise BadInput(f"{name}: expected an integer in [{minimum}, {maximum}], got {value!r}")
    return value


def _seconds(name, value, minimum, maximum):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not minimum <= value <= maximum:
        raise BadInput(f"{name}: expected a number in [{minimum}, {maximum}], got {value!r}")
    return float(value)


def _text(name, value):
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadInput(f"{name}: expected a string, got {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{name}: {value!r} is not UTF-8 text") from None
    if "\0" in value:  # the native part's C strings would end there
        raise BadInput(f"{name}: {value!r} holds a NUL character")
    return value


def _path(name, value, required=True):
    """A file's path as the native part takes it: bytes, so that a file name that is not UTF-8
    (os.fsdecode's surrogate escapes) reaches the file system unchanged, as on the command line.
    None is "not given" where the file is optional."""
    if value is None and not required:
        return b""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise BadInput(f"{name}: expected a path (str, bytes or os.PathLike), got {value!r}")
    path = os.fsencode(value)
    if b"\0" in path:  # the file system would take the path up to it: 'a\0b.db' would be ./a
        raise BadInput(f"{name}: {value!r} holds a NUL byte, which no file name may")
    return path


def _items(name, value, single=()):
    """`value`'s items as a list; a value of a `single` type is one item (a name, not its characters)."""
    if isinstance(value, single):
        return [value]
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise BadInput(f"{name}: expected a list, got {value!r}")
    return list(value)


def _native(function, *arguments):
    """Calls the native part, whose messages pybind11 decodes as UTF-8: one that names a file whose
    name is not UTF-8 would arrive as a UnicodeDecodeError, so it is decoded here as file names are."""
    try:
        return function(*arguments)
    except UnicodeDecodeError as error:
        if not isinstance(error.object, bytes):
            raise
        raise BadInput(error.object.decode("utf-8", "surrogateescape")) from None


def _target(target, kernel):
    """The target given, else a kernel file's backend (the command line's --target default is cpu)."""
    if target is not None:
        return target
    return (kernel and _kernel_file.backend_of(kernel)) or "cpu"


# The command line's limits and choices (optune tune --help).
_MAX_TRIALS = 100_000_000
_OBJECTIVES = ("rank:pairwise", "reg:squarederror")
_SCHEDULERS = ("gradient", "round_robin")


def _choice(name, value, choices):
    if value not in choices:
        raise BadInput(f"{name}: expected one of {', '.join(choices)}, got {value!r}")
    return value


def _shape_text(shape, dtype=None):
    """A shape as the command line's --shape takes it; ``dtype`` ("bf16") becomes its dtype= item."""
    text = _plain_shape_text(shape)
    dtype = _text("dtype", dtype)
    if dtype:
        if not text:
            raise BadInput("dtype: goes with a shape")
        text += ",dtype=" + dtype
    return text


def _plain_shape_text(shape):
    # (512, 512, 512) or {"M": 512, ...} as well as "512,512,512".
    if isinstance(shape, dict):
        return ",".join(f"{k}={v}" for k, v in shape.items())
    if isinstance(shape, (tuple, list)):
        return ",".join(str(v) for v in shape)
    return _text("shape", shape)


def _program_cache_dir():
    """Where the worker caches the programs it compiles: the command line's folder, so both share it."""
    if os.environ.get("OPTUNE_CACHE_DIR"):
        return os.environ["OPTUNE_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "optune", "programs")
    if os.environ.get("HOME"):
        return os.path.join(os.environ["HOME"], ".cache", "optune", "programs")
    return os.path.join(tempfile.gettempdir(), "optune-program-cache")


def tune(op=_D["op"], shape=None, target=None, tuner=_D["tuner"], trials=_D["trials"], db=_D["db"], *, suite=None,
         kernel=None, layout=None, trials_per_task=0, budget=None, seed=_D["seed"], batch_size=_D["batch_size"],
         early_stopping=_D["early_stopping"], remeasure=_D["remeasure"], transfer=_D["transfer"], repeat=_D["repeat"],
         number=_D["number"], min_repeat_ms=_D["min_repeat_ms"], timeout=_D["timeout"], jobs=_D["jobs"],
         compiler=_D["compiler"], rpc=None, token_file=None, wait_lock=False, progress=None, template=None,
         objective=_D["objective"], scheduler=_D["scheduler"], compile_timeout=_D["compile_timeout"],
         rpc_wait=_D["rpc_wait"], dtype=None, bail_out=_D["bail_out"], timing=_D["timing"],
         cheap_share=_D["cheap_share"], compile_ahead=_D["compile_ahead"]):
    """Tunes one workload (``op`` and ``shape``) or every workload of a ``suite`` file on ``target``.

    Returns a dict: for one workload ``workload``, ``template``, ``target``, ``device``, ``trials``,
    ``failures``, ``seconds``, ``default`` and ``best`` (records as ``query`` gives them; ``best``
    holds ``config``, ``gflops``, ``median_seconds``), ``speedup`` over the default (None when the
    best is the default itself, see ``best_is_default``); for a suite, ``tasks`` (one such dict
    each, with ``name`` and ``count``) and the network's ``default_seconds`` and ``tuned_seconds``.
    A ``shape`` with a range (``"M=1..512,N=768,K=768"``) tunes its representative shapes (at most
    ``trials`` of them, and at most 9), ``trials`` split among them, and returns a list of one such
    dict per shape.
    ``target``: default cpu, or a ``kernel`` file's backend. ``db``, ``suite``, ``kernel`` and
    ``token_file`` are paths (str, bytes or os.PathLike; None for ``db`` is bad input).
    ``progress``: called with a dict (``task``, ``trial``, ``trials``, ``best_gflops``, ``unit``
    (what ``best_gflops`` counts: GFLOP/s, or GB/s or runs/s for a kernel file without flops),
    ``failures``) after every batch; an exception it raises stops the run.
    ``dtype``: the operands' type, ``"f32"`` (default), ``"f16"``, ``"bf16"``, ``"i8"``, ``"u7"`` or ``"e4m3"`` (as ``--dtype``; with
    ``suite`` and no ``shape``, of the suite's workloads that name none).
    ``bail_out``: stop timing a candidate whose first runs exceed this many times the best so far
    (a ``slow`` record); ``"off"`` or None times every one in full. ``timing``: ``"adaptive"`` (fewer
    repeats the further a candidate is behind the best, 3 where they agree) or ``"full"`` (as ``--timing``).
    ``cheap_share``: xgb's share of each batch among run-time variants of the best configs, which
    need no compile (as ``--cheap-share``; 0: none). ``compile_ahead``: ``"auto"`` (CUDA GPUs),
    ``"on"`` or ``"off"``: build each batch while the one before it is measured (as ``--compile-ahead``).
    """
    arguments = _tune_arguments(op=op, shape=shape, target=target, tuner=tuner, trials=trials, db=db, suite=suite,
                                kernel=kernel, layout=layout, trials_per_task=trials_per_task, budget=budget, seed=seed,
                                batch_size=batch_size, early_stopping=early_stopping, remeasure=remeasure,
                                transfer=transfer, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
                                timeout=timeout, jobs=jobs, compiler=compiler, rpc=rpc, token_file=token_file,
                                wait_lock=wait_lock, template=template, objective=objective, scheduler=scheduler,
                                compile_timeout=compile_timeout, rpc_wait=rpc_wait, dtype=dtype, bail_out=bail_out,
                                timing=timing, cheap_share=cheap_share, compile_ahead=compile_ahead)
    if progress is not None and not callable(progress):
        raise BadInput("progress: expected a callable")
    return json.loads(_native(_optune.tune, arguments, _PACKAGE_DIR, progress))


def _tuned_defaults():
    """Every keyword of _tune_arguments at tune()'s default, for the calls that set only some."""
    keywords = ("op", "tuner", "trials", "db", "seed", "batch_size", "early_stopping", "remeasure", "transfer",
                "repeat", "number", "min_repeat_ms", "timeout", "jobs", "compiler", "objective", "scheduler",
                "compile_timeout", "rpc_wait", "bail_out", "timing", "cheap_share", "compile_ahead")
    defaults = {name: _DEFAULTS[name] for name in keywords}
    defaults.update(shape=None, target=None, suite=None, kernel=None, layout=None, trials_per_task=0, budget=None,
                    rpc=None, token_file=None, wait_lock=False, template=None, dtype=None)
    return defaults


def _tune_arguments(*, op, shape, target, tuner, trials, db, suite, kernel, layout, trials_per_task, budget, seed,
                    batch_size, early_stopping, remeasure, transfer, repeat, number, min_repeat_ms, timeout, jobs,
                    compiler, rpc, token_file, wait_lock, template, objective, scheduler, compile_timeout, rpc_wait,
                    dtype, bail_out, timing, cheap_share, compile_ahead):
    """tune()'s keywords checked as the command line checks its options, as the native part takes them."""
    kernel = _path("kernel", kernel, required=False)
    suite = _path("suite", suite, required=False)
    # With a suite and no shape, dtype is the suite's workloads' (as tune --suite --dtype).
    suite_dtype = _text("dtype", dtype) if suite and shape is None else ""
    arguments = {
        "op": _text("op", op), "shape": _shape_text(shape, None if suite_dtype else dtype), "suite": suite,
        "suite_dtype": suite_dtype,
        "kernel": kernel, "layout": _text("layout", layout), "db": _path("db", db),
        "target": _text("target", _target(target, kernel)),
        "tuner": _text("tuner", tuner), "trials": _count("trials", trials, 1, _MAX_TRIALS),
        "trials_per_task": _count("trials_per_task", trials_per_task, 0, _MAX_TRIALS), "budget": _text("budget", budget),
        "seed": _count("seed", seed), "batch_size": _count("batch_size", batch_size, 1, 4096),
        "early_stopping": _count("early_stopping", early_stopping, 0, _MAX_TRIALS),
        "remeasure": _count("remeasure", remeasure, 0, 1000),
        "transfer": bool(transfer), "repeat": _count("repeat", repeat, 1), "number": _count("number", number),
        "min_repeat_ms": None if min_repeat_ms is None else _seconds("min_repeat_ms", min_repeat_ms, 0, 60000),
        "timeout": _seconds("timeout", timeout, 0.1, 86400), "jobs": _count("jobs", jobs, 0, 4096),
        "compiler": _text("compiler", compiler), "rpc": _text("rpc", rpc),
        "token_file": _path("token_file", token_file, required=False),
        "wait_lock": bool(wait_lock), "cache_dir": _program_cache_dir(),
        # The machine's folder of run locks, as the command line reads it ("": the machine's default).
        "lock_dir": os.environ.get("OPTUNE_LOCK_DIR", ""),
        "template": _text("template", template), "objective": _choice("objective", objective, _OBJECTIVES),
        "scheduler": _choice("scheduler", scheduler, _SCHEDULERS),
        "compile_timeout": _seconds("compile_timeout", compile_timeout, 1, 86400),
        "rpc_wait": _seconds("rpc_wait", rpc_wait, 0, 86400),
        "bail_out": 0.0 if bail_out in (None, "off") else _seconds("bail_out", bail_out, 1.1, 1000),
        "timing": _choice("timing", timing, ("adaptive", "full")),
        "cheap_share": _seconds("cheap_share", cheap_share, 0, 1),
        "compile_ahead": _choice("compile_ahead", compile_ahead, ("auto", "on", "off")),
    }
    if arguments["repeat"] > 1000 or arguments["number"] > 1000000:
        raise BadInput("repeat must be at most 1000 and number at most 1000000")
    return arguments


def dispatch(op, shape, target=_D["target"], trials=_D["trials"], db=_D["db"], *, samples=16, configs=8, within=5.0,
             finalists=4, held_out=(), held_out_count=4, refine=2, rounds=3, dtype=None, template=None,
             tuner=_D["tuner"], seed=_D["seed"], repeat=_D["repeat"], number=_D["number"],
             min_repeat_ms=_D["min_repeat_ms"], timeout=_D["timeout"], jobs=_D["jobs"], compiler=_D["compiler"],
             rpc=None, token_file=None, wait_lock=False):
    """A measured dispatch for a shape range, as ``optune dispatch`` makes it: ``shape`` is one range
    (``"M=1..2048,N=768,K=768"``) or a list of two shapes or more; each sampled shape is tuned with
    ``trials`` (0: what is recorded serves), the ``finalists`` best of each measured on every shape,
    at most ``configs`` kept so that every shape is within ``within`` percent of its best, a rule fitted
    over the extents, checked on ``held_out`` shapes (or ``held_out_count`` drawn from a range) and
    refined up to ``refine`` rounds. The rule is stored in ``db``, where ``pick`` and ``apply-best``
    find it. Returns the stored rule as ``--format json`` prints it: ``id``, ``range``, ``template``,
    ``configs``, ``leaves``, ``shapes``, ``finalists``, ``matrix`` (seconds, finalist by shape),
    ``held_out`` (each ``own_best``, ``rule`` and ``nearest`` seconds) and ``refinements``."""
    shapes = [_shape_text(shape, dtype)] if isinstance(shape, (str, dict)) else [
        _shape_text(one, dtype) for one in _items("shape", shape)]
    arguments = _tune_arguments(**{**_tuned_defaults(), "op": op, "shape": None, "target": target, "tuner": tuner,
                                   "trials": 1, "db": db, "seed": seed, "repeat": repeat, "number": number,
                                   "min_repeat_ms": min_repeat_ms, "timeout": timeout, "jobs": jobs,
                                   "compiler": compiler, "rpc": rpc, "token_file": token_file, "wait_lock": wait_lock,
                                   "template": template})
    arguments.update({
        "trials": _count("trials", trials, 0, _MAX_TRIALS), "shapes": shapes, "samples": _count("samples", samples, 2, 256),
        "held_out": [_shape_text(one, dtype) for one in _items("held_out", held_out, str)],
        "held_out_count": _count("held_out_count", held_out_count, 0, 64), "configs": _count("configs", configs, 1, 64),
        "within": _seconds("within", within, 0, 1000), "finalists": _count("finalists", finalists, 1, 64),
        "refine": _count("refine", refine, 0, 8), "rounds": _count("rounds", rounds, 1, 100),
    })
    return json.loads(_native(_optune.dispatch, arguments, _PACKAGE_DIR))


def query(db="optune.db", op=None, shape=None, target=None, device=None, *, top=1, history=False, since=None, dtype=None,
          pandas=False):
    """The best ``top`` configs per workload, target and device (or, with ``history``, every record,
    failures included, oldest first), as ``Records`` of dicts; ``pandas=True`` returns a DataFrame.
    ``since``: a date (``"2026-11-22"``, ``"2026-11-22T18:30"``) or a duration back from now (``"12h"``)."""
    records = Records(json.loads(_native(_optune.query, _path("db", db), _text("op", op), _shape_text(shape, dtype),
                                         _text("target", target), _text("device", device), _count("top", top, 1),
                                         bool(history), _text("since", since))))
    return records.to_pandas() if pandas else records


def pick(op, shape, target="cpu", device=None, db="optune.db", *, dtype=None):
    """The config that would run for a shape on a device and where it came from, as a dict:
    ``source`` is ``"tuned"`` (the shape's own best), ``"nearest"`` (the config tuned for another
    shape of the template that optune's cost model ranks best for this one; ``from_workload``
    names it), ``"dispatch"`` (the leaf holding it of a measured dispatch of its range: ``dispatch``
    names the rule and the leaf) or ``"default"``; ``config``, ``template``, ``workload``, ``device`` and ``record``
    (the tuned record the config came from, None for the default). Shape ranges are not shapes:
    pick one shape of a range."""
    return json.loads(_native(_optune.pick, _path("db", db), _text("op", op), _shape_text(shape, dtype),
                              _text("target", target), _text("device", device)))


def replay(landscape, tuner="xgb", seeds=20, budgets=(25, 50, 100, 200, 400), *, batch_size=1, transfer_from=()):
    """Replays tuners against an exhaustively measured landscape (a Kernel Tuner cache file,
    ``.json`` or ``.json.gz``, or a T4 results file); measures nothing. ``tuner``: a name, a list
    of names or ``"all"``. Returns one dict per tuner: ``landscape``, ``tuner``, ``seeds``,
    ``budgets``, ``fraction`` (median fraction of the optimum after each budget), ``evals_to``
    (median evaluations to 90/95/99% of the optimum, None where fewer than half the seeds got
    there) and ``score`` (0 = random search, 1 = the optimum). ``landscape`` and ``transfer_from``
    (one file or a list of files) are paths: str, bytes or os.PathLike."""
    tuners = [_text("tuner", t) for t in _items("tuner", tuner, str)]
    if "all" in tuners and len(tuners) > 1:  # as the command line's --tuner all,grid
        raise BadInput(f"tuner: \"all\" is every tuner; give it alone, not in a list ({tuners!r})")
    transfer_from = [_path("transfer_from", f) for f in _items("transfer_from", transfer_from, (str, bytes, os.PathLike))]
    return json.loads(_native(_optune.replay, _path("landscape", landscape), tuners, _count("seeds", seeds, 1),
                              [_count("budgets", b, 1) for b in _items("budgets", budgets)],
                              _count("batch_size", batch_size, 1), transfer_from))


def space(op="gemm", shape=None, target=None, *, kernel=None, dtype=None):
    """The template's space for a workload on a target (or a kernel file's, ``kernel``, at ``shape``,
    its extents): ``knobs``, ``size``, ``valid_share_estimate`` (counted exactly where
    ``valid_share_counted``: spaces of at most 20,000 configs), ``default_config``.
    ``target``: default cpu, or the ``kernel`` file's backend."""
    kernel = _path("kernel", kernel, required=False)
    return json.loads(_native(_optune.space, _text("op", op), _shape_text(shape, dtype),
                              _text("target", _target(target, kernel)), kernel))


def cmake_dir():
    """The folder of optune's CMake package (``optuneConfig.cmake``) inside the installed package, for
    a CMake project's ``find_package(optune CONFIG)``: ``-Doptune_DIR=`` this (``python -m optune
    --cmake-dir`` prints it). None for a build tree's module, which holds no CMake package."""
    # <package>/lib/cmake/optune, or lib64 where GNUInstallDirs chose that.
    for lib in sorted(name for name in os.listdir(_PACKAGE_DIR) if name.startswith("lib")):
        folder = os.path.join(_PACKAGE_DIR, lib, "cmake", "optune")
        if os.path.isfile(os.path.join(folder, "optuneConfig.cmake")):
            return folder
    return None


def devices():
    """This machine's devices, every backend's: ``target``, ``id`` and ``fingerprint`` each."""
    return json.loads(_optune.devices())


def tune_kernel(*arguments, **keywords):
    """Tunes a user's own kernel, called as Kernel Tuner's ``tune_kernel`` is called, in either of two forms.

    Kernel Tuner's own: ``tune_kernel(kernel_name, kernel_source, problem_size, arguments,
    tune_params, grid_div_x=None, ..., restrictions=None, answer=None, atol=1e-6, ...)``, every
    keyword of Kernel Tuner 1.x's in its meaning (docs/python.md lists how each maps, and which are
    refused as BadInput), and optune's ``tune`` options besides (``db``, ``timeout``, ...). Returns
    Kernel Tuner's ``(results, env)``: a dict per measured config (its tune parameters, ``time`` in
    milliseconds, ``times``, ...) and a dict describing the run (``device_name``, ``best_config``,
    and ``optune``: what ``tune`` returns).

    The kernel-file form: ``tune_kernel(kernel, arguments=None, answer=None, *, shape=None,
    atol=None, rtol=None, target=None, tuner="xgb", trials=64, db="optune.db", **options)`` (tune's
    defaults); returns
    what ``tune`` returns. It is Kernel Tuner's form where the second argument is code or a file name
    (``kernel_source``), or a keyword only Kernel Tuner's form has is given.
    """
    if _kernel_tuner.is_kernel_tuner_call(arguments, keywords):
        return _kernel_tuner.tune_kernel(arguments, keywords, _tune_kernel_file, tune, query)
    return _tune_kernel_file(*arguments, **keywords)


def _tune_kernel_file(kernel, arguments=None, answer=None, *, shape=None, atol=None, rtol=None, target=None,
                      tuner=_D["tuner"], trials=_D["trials"], db=_D["db"], **options):
    """tune_kernel's kernel-file form.

    ``kernel``: a kernel file's path (``configs/kernels/*.toml``), or a dict of the same fields
    (``name``, ``backend``, ``source``, ``entry``, ``args``, ``extents``, ``knobs``,
    ``constraints``, ``launch``, ``check``; ``source`` relative to the working directory, or the
    code itself, as Kernel Tuner's kernel_string: a ``source`` or ``check.reference_source`` with a
    newline is code, compiled from a temporary ``.cl`` (opencl) or ``.cpp`` (cpu) file). Knob values
    and extents may be numpy arrays and scalars or ranges.
    ``arguments``: optional, one value per kernel argument in order (a list or any iterable), as
    Kernel Tuner takes them: numpy arrays for buffers (their bytes become the buffers' initial
    values: the file's ``data``; any byte order) and numbers for scalars (the file's ``value``;
    finite and within the dtype's range). ``answer``: optional, one entry per argument, None
    except for outputs, whose expected values it gives (the file's ``check.expected``);
    ``atol``/``rtol`` set the check's tolerances. ``shape``: the extents (``{"N": 4096}`` or
    ``"N=4096"``). ``target``: default the file's backend. Other keywords are ``tune``'s, but
    ``op`` (the kernel is the template). Returns what ``tune`` returns.
    """
    if "op" in options:  # as the command line refuses --op with --kernel
        raise BadInput("tune_kernel: op does not go with a kernel (the kernel is the template)")
    with tempfile.TemporaryDirectory(prefix="optune-kernel-") as folder:
        path, backend, origin = _kernel_file.prepare(kernel, arguments, answer, atol, rtol, folder, BadInput)
        try:
            return tune(shape=shape, target=target or backend, tuner=tuner, trials=trials, db=db, kernel=path,
                        **options)
        except BadInput as error:
            # The temporary files are gone when the message is read: name what the caller passed.
            message = str(error).replace(path, origin).replace(os.path.join(folder, ""), "")
            raise BadInput(message) from None
