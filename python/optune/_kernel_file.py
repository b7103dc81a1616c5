"""tune_kernel's side of the kernel file: a dict or a file, with Kernel Tuner-style arguments and
answers, written out as one kernel file (TOML) in a temporary folder that optune's library reads.
Arrays become raw files beside it (``data`` of an input, ``check.expected`` of an output)."""
import math
import os

try:
    import tomllib  # Python 3.11
except ImportError:  # pragma: no cover
    tomllib = None

_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "u8": "uint8", "i16": "int16",
           "u16": "uint16", "i32": "int32", "u32": "uint32", "i64": "int64", "u64": "uint64"}


def _load(kernel, bad_input):
    """The kernel's fields as a dict, its paths absolute."""
    if isinstance(kernel, dict):
        fields, base = dict(kernel), os.getcwd()
    else:
        path = os.fspath(kernel)
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
    absolute = lambda p: p if os.path.isabs(p) else os.path.join(base, p)
    for key in ("source",):
        if isinstance(fields.get(key), str):
            fields[key] = absolute(fields[key])
    check = dict(fields.get("check", {}))
    for key in ("reference_source",):
        if isinstance(check.get(key), str):
            check[key] = absolute(check[key])
    if isinstance(check.get("expected"), str):
        check["expected"] = absolute(check["expected"])
    elif isinstance(check.get("expected"), list):
        check["expected"] = [absolute(p) if isinstance(p, str) else p for p in check["expected"]]
    if check:
        fields["check"] = check
    fields["args"] = [dict(arg) for arg in fields.get("args", [])]
    for arg in fields["args"]:
        if isinstance(arg.get("data"), str):
            arg["data"] = absolute(arg["data"])
    return fields


def _array_bytes(name, value, arg, bad_input):
    try:
        import numpy
    except ImportError as error:
        raise bad_input("tune_kernel: arrays as arguments need numpy (pip install numpy)") from error
    array = numpy.ascontiguousarray(value)
    wanted = _DTYPES.get(arg.get("dtype"))
    if wanted and array.dtype != numpy.dtype(wanted):
        raise bad_input(f"tune_kernel: {name} '{arg.get('name')}' is {array.dtype}, the kernel file says "
                        f"{arg.get('dtype')} ({wanted})")
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _with_arguments(fields, arguments, answer, folder, bad_input):
    args = fields["args"]
    if arguments is not None:
        if len(arguments) != len(args):
            raise bad_input(f"tune_kernel: {len(arguments)} arguments for {len(args)} kernel args")
        for i, (arg, value) in enumerate(zip(args, arguments)):
            if value is None:  # the file's own init (or, for a write-only output, nothing)
                continue
            if arg.get("kind") == "scalar":
                if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "item"):
                    raise bad_input(f"tune_kernel: argument {i} ('{arg.get('name')}') is a scalar; got {value!r}")
                number = value.item() if hasattr(value, "item") else value
                arg["value"] = repr(number) if isinstance(number, float) else str(int(number))
            else:
                path = os.path.join(folder, f"arg{i}.bin")
                with open(path, "wb") as handle:
                    handle.write(_array_bytes("argument", value, arg, bad_input))
                arg.pop("init", None)
                arg["data"] = path
    if answer is not None:
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


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no TOML form")
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise ValueError(f"{value!r} has no TOML form")


def _toml(fields):
    lines = [f"{key} = {_toml_value(value)}" for key, value in fields.items() if not isinstance(value, dict)]
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"[{key}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in value.items())
    return "\n".join(lines) + "\n"


def prepare(kernel, arguments, answer, atol, rtol, folder, bad_input):
    """Writes the kernel file for tune_kernel into `folder`; returns its path and its backend."""
    fields = _load(kernel, bad_input)
    _with_arguments(fields, arguments, answer, folder, bad_input)
    if atol is not None or rtol is not None:
        check = dict(fields.get("check", {}))
        if "reference" not in check and "expected" not in check:
            raise bad_input("tune_kernel: atol and rtol need a check (answer=..., or the file's reference)")
        if atol is not None:
            check["atol"] = float(atol)
        if rtol is not None:
            check["rtol"] = float(rtol)
        fields["check"] = check
    name = fields.get("name") if isinstance(fields.get("name"), str) else "kernel"
    path = os.path.join(folder, "".join(c if c.isalnum() or c in "_-" else "_" for c in name) + ".toml")
    try:
        text = _toml(fields)
    except ValueError as error:
        raise bad_input(f"tune_kernel: {error}") from None
    with open(path, "w") as handle:
        handle.write(text)
    return path, fields.get("backend") if isinstance(fields.get("backend"), str) else "cpu"
