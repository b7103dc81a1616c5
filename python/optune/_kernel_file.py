"""tune_kernel's side of the kernel file: a dict or a file, with Kernel Tuner-style arguments and
answers, written out as one kernel file (TOML) in a temporary folder that optune's library reads.
Arrays become raw files beside it (``data`` of an input, ``check.expected`` of an output)."""
import math
import os
import re
import sys

try:
    import tomllib  # Python 3.11
except ImportError:  # pragma: no cover
    tomllib = None

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8", "u7": "uint8",
           "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64"}
# The largest finite value of each floating dtype: a larger scalar would reach the kernel as inf.
_FLOAT_MAX = {"f16": 65504.0, "f32": 3.4028234663852886e38, "f64": sys.float_info.max}


def _plain(value):
    """numpy arrays and scalars as Python lists and numbers, a range as a list; others as they are.
    Kernel Tuner's users pass knob values and extents that way."""
    if hasattr(value, "tolist"):  # numpy.ndarray and numpy.generic alike
        return value.tolist()
    if isinstance(value, range):
        return list(value)
    return value


def _shown(value):
    """A value for a one-line message: an array by its shape, not by its (multi-line) elements."""
    if getattr(value, "shape", ()) != ():
        return f"an array of shape {value.shape}"
    return repr(value)


def _sequence(name, value, bad_input):
    """Any iterable of per-argument values (a list, a tuple, a generator) as a list."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise bad_input(f"tune_kernel: {name}: expected a list with one entry per kernel argument, got {_shown(value)}")
    return list(value)


def _write_source_text(fields, check, folder):
    """Kernel Tuner takes a kernel as code text: a `source` with a newline cannot be a file name, so it
    is written to a file in `folder` (extension by backend), which the fields then name."""
    from . import _optune  # the build's backends know their extensions

    backend = fields.get("backend")
    # An unknown backend still gets a file: the loader then names the backends there are.
    extensions = _optune.kernel_source_extensions().get(backend, [".cpp"]) if isinstance(backend, str) else [".cpp"]
    extension = extensions[0]
    for table, key in ((fields, "source"), (check, "reference_source")):
        if isinstance(table.get(key), str) and "\n" in table[key]:
            path = os.path.join(folder, key + extension)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(table[key])
            table[key] = path


def _load(kernel, folder, bad_input):
    """The kernel's fields as a dict, its paths absolute."""
    if isinstance(kernel, dict):
        fields, base = dict(kernel), os.getcwd()
    elif isinstance(kernel, (str, bytes, os.PathLike)):
        path = os.fsdecode(kernel)
        if tomllib is None:
            raise bad_input("tune_kernel: reading a kernel file needs Python 3.11 (tomllib); pass a dict")
        try:
            with open(path, "rb") as handle:
                fields = tomllib.load(handle)
        except OSError as error:
            raise bad_input(f"{path}: cannot read the kernel file ({error.strerror})") from None
        except tomllib.TOMLDecodeError as error:
            raise bad_input(f"{path}: {error}") from None
        base = os.path.dirname(os.path.abspath(path))
    else:
        raise bad_input(f"tune_kernel: kernel: expected a kernel file's path or a dict of its fields, got {kernel!r}")
    check = fields.get("check", {})
    if not isinstance(check, dict):
        raise bad_input(f"tune_kernel: check: expected a dict (the file's [check] table), got {check!r}")
    args = fields.get("args", [])
    if not isinstance(args, (list, tuple)) or not all(isinstance(arg, dict) for arg in args):
        raise bad_input(f"tune_kernel: args: expected a list of dicts, one per kernel argument, got {args!r}")
    check = dict(check)
    if isinstance(kernel, dict):
        _write_source_text(fields, check, folder)
    absolute = lambda p: p if os.path.isabs(p) else os.path.join(base, p)
    for key in ("source",):
        if isinstance(fields.get(key), str):
            fields[key] = absolute(fields[key])
    for key in ("reference_source",):
        if isinstance(check.get(key), str):
            check[key] = absolute(check[key])
    if isinstance(check.get("expected"), str):
        check["expected"] = absolute(check["expected"])
    elif isinstance(check.get("expected"), list):
        check["expected"] = [absolute(p) if isinstance(p, str) else p for p in check["expected"]]
    if check:
        fields["check"] = check
    fields["args"] = [dict(arg) for arg in args]
    for arg in fields["args"]:
        if isinstance(arg.get("data"), str):
            arg["data"] = absolute(arg["data"])
    return fields


def backend_of(path):
    """A kernel file's backend, or None where the file does not say (optune's loader then says why)."""
    if tomllib is None or not os.path.isfile(path):  # a FIFO would block the read
        return None
    try:
        with open(path, "rb") as handle:
            backend = tomllib.load(handle).get("backend")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return backend if isinstance(backend, str) else None


def _array_bytes(name, value, arg, bad_input):
    try:
        import numpy
    except ImportError as error:
        raise bad_input("tune_kernel: arrays as arguments need numpy (pip install numpy)") from error
    try:
        array = numpy.ascontiguousarray(value)
    except (ValueError, TypeError) as error:
        raise bad_input(f"tune_kernel: {name} '{arg.get('name')}' is not an array ({error})") from None
    if not array.dtype.isnative:  # '>f4' on a little-endian machine: the same numbers, swapped
        array = array.astype(array.dtype.newbyteorder("="))
    wanted = _DTYPES.get(arg.get("dtype")) if isinstance(arg.get("dtype"), str) else None
    if wanted and array.dtype != numpy.dtype(wanted):
        raise bad_input(f"tune_kernel: {name} '{arg.get('name')}' is {array.dtype}, the kernel file says "
                        f"{arg.get('dtype')} ({wanted})")
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _scalar_text(where, value, dtype, bad_input):
    """A scalar argument's value as the kernel file's expression text."""
    number = _plain(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise bad_input(f"tune_kernel: {where} is a scalar; got {_shown(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise bad_input(f"tune_kernel: {where}: {value!r} is not a finite number")
    if isinstance(dtype, str) and abs(number) > _FLOAT_MAX.get(dtype, math.inf):
        raise bad_input(f"tune_kernel: {where}: {value!r} is outside {dtype}'s range")
    return repr(number) if isinstance(number, float) else str(number)


def _with_arguments(fields, arguments, answer, folder, bad_input):
    args = fields["args"]
    if arguments is not None:
        arguments = _sequence("arguments", arguments, bad_input)
        if len(arguments) != len(args):
            raise bad_input(f"tune_kernel: {len(arguments)} arguments for {len(args)} kernel args")
        for i, (arg, value) in enumerate(zip(args, arguments)):
            if value is None:  # the file's own init (or, for a write-only output, nothing)
                continue
            if arg.get("kind") == "scalar":
                arg["value"] = _scalar_text(f"argument {i} ('{arg.get('name')}')", value, arg.get("dtype"), bad_input)
            else:
                path = os.path.join(folder, f"arg{i}.bin")
                with open(path, "wb") as handle:
                    handle.write(_array_bytes("argument", value, arg, bad_input))
                arg.pop("init", None)
                arg["data"] = path
    if answer is not None:
        answer = _sequence("answer", answer, bad_input)
        if len(answer) != len(args):
            raise bad_input(f"tune_kernel: {len(answer)} answers for {len(args)} kernel args")
        expected = []
        for i, (arg, value) in enumerate(zip(args, answer)):
            if value is None:
                if arg.get("output"):
                    raise bad_input(f"tune_kernel: output '{arg.get('name')}' needs its answer (not None)")
                continue
            if not arg.get("output"):
                raise bad_input(f"tune_kernel: argument {i} ('{arg.get('name')}') is not an output; its answer must be None")
            path = os.path.join(folder, f"answer{i}.bin")
            with open(path, "wb") as handle:
                handle.write(_array_bytes("answer", value, arg, bad_input))
            expected.append(path)
        check = {k: v for k, v in fields.get("check", {}).items() if k in ("rtol", "atol")}
        check["expected"] = expected
        fields["check"] = check


# TOML basic-string escapes; every other control character is written as \uXXXX.
_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f\x7f"\\]')
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a file name from os.fsdecode, say; TOML holds only UTF-8
        raise ValueError(f"{text!r} is not UTF-8 text") from None
    escape = lambda match: _ESCAPES.get(match.group(), f"\\u{ord(match.group()):04x}")
    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _toml_key(key):
    """A key as one TOML key: quoted unless bare, so that 'a.b' or a newline cannot make tables."""
    if not isinstance(key, str):
        raise ValueError(f"key {key!r} is not a string")
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_value(value):
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"{value!r} has no TOML form")


def _toml_line(where, key, value):
    try:
        return f"{_toml_key(key)} = {_toml_value(value)}"
    except ValueError as error:
        raise ValueError(f"{where}{key}: {error}") from None


def _toml(fields):
    lines = [_toml_line("", key, value) for key, value in fields.items() if not isinstance(value, dict)]
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"[{_toml_key(key)}]")
            lines.extend(_toml_line(f"{key}.", k, v) for k, v in value.items())
    return "\n".join(lines) + "\n"


def _tolerance(name, value, bad_input):
    number = _plain(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
        raise bad_input(f"tune_kernel: {name}: expected a finite number, got {value!r}")
    return float(number)


def prepare(kernel, arguments, answer, atol, rtol, folder, bad_input):
    """Writes the kernel file for tune_kernel into `folder`; returns its path, its backend and what the
    caller passed, as messages should name it in place of the temporary file."""
    fields = _load(kernel, folder, bad_input)
    _with_arguments(fields, arguments, answer, folder, bad_input)
    if atol is not None or rtol is not None:
        check = dict(fields.get("check", {}))
        if "reference" not in check and "expected" not in check:
            raise bad_input("tune_kernel: atol and rtol need a check (answer=..., or the file's reference)")
        if atol is not None:
            check["atol"] = _tolerance("atol", atol, bad_input)
        if rtol is not None:
            check["rtol"] = _tolerance("rtol", rtol, bad_input)
        fields["check"] = check
    name = fields.get("name") if isinstance(fields.get("name"), str) else "kernel"
    path = os.path.join(folder, "".join(c if c.isalnum() or c in "_-" else "_" for c in name) + ".toml")
    try:
        text = _toml(fields)
    except ValueError as error:
        raise bad_input(f"tune_kernel: {error}") from None
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    backend = fields.get("backend") if isinstance(fields.get("backend"), str) else "cpu"
    origin = f"kernel dict '{name}'" if isinstance(kernel, dict) else f"{os.fsdecode(kernel)} (tune_kernel's copy)"
    return path, backend, origin
