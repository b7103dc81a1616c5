"""Kernel Tuner's restrictions, evaluated in Python as Kernel Tuner evaluates them, and handed to
optune in the terms of a kernel file: a restriction of one parameter narrows that knob's values; one
of several parameters becomes a ``[constraints]`` rule listing the value combinations it allows (or
those it refuses, whichever list is shorter). Each restriction is tabulated over only the parameters
it reads, so that a rule is as long as the restriction's own table, not the whole space's.

Also Kernel Tuner's Python arithmetic (a grid divisor, a shared-memory size) as the kernel file's
expression language (optune/kernels/expression.hpp), where it has a counterpart."""
import ast
import collections
import itertools

from ._kernel_file import _plain


def _shown(restriction):
    return repr(restriction) if isinstance(restriction, str) else getattr(restriction, "__name__", repr(restriction))


class _Restriction:
    """One of Kernel Tuner's restriction forms as a check of a config's parameters (a dict), with the
    names of the parameters it may read: a string's names, a pair's, else all."""

    def __init__(self, restriction, params, bad_input):
        self.shown = _shown(restriction)
        if isinstance(restriction, str):
            try:
                tree = ast.parse(restriction.strip(), mode="eval")
            except SyntaxError as error:
                raise bad_input(f"tune_kernel: restriction {restriction!r} is no Python expression ({error.msg})") from None
            named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
            self.names = [name for name in params if name in named]
            code = compile(tree, "<restriction>", "eval")
            self.check = lambda values: eval(code, {}, dict(values))
        elif (isinstance(restriction, tuple) and len(restriction) == 2 and callable(restriction[0])
              and isinstance(restriction[1], (list, tuple))):  # (function, names): called with those names
            function, names = restriction
            unknown = [name for name in names if name not in params]
            if unknown:
                raise bad_input(f"tune_kernel: restriction {_shown(function)} names {unknown}, which are no tune_params")
            self.shown, self.names = _shown(function), [name for name in params if name in names]
            self.check = lambda values: function(**{name: values[name] for name in names})
        elif callable(restriction):  # in a list: called with every parameter as a keyword, as Kernel Tuner does
            self.names = list(params)
            self.check = lambda values: restriction(**values)
        else:
            raise bad_input(f"tune_kernel: restriction {restriction!r}: expected a string, a function or "
                            f"(function, [names])")

    @classmethod
    def of_whole_config(cls, function, params):
        """Kernel Tuner's restrictions=function: called with a dict of the config's parameters."""
        self = cls.__new__(cls)
        self.shown, self.names, self.check = _shown(function), list(params), function
        return self

    def verdict(self, values, bad_input):
        try:
            return bool(self.check(values))
        except ZeroDivisionError:  # Kernel Tuner lets such a config pass this restriction
            return True
        except Exception as error:  # the user's code: any failure is theirs to see, on one line
            where = f" for {dict(values)}" if values else ""
            raise bad_input(f"tune_kernel: restriction {self.shown} fails{where}: {type(error).__name__}: {error}") \
                from None


def _table(restriction, knobs, bad_input):
    """The restriction's verdict for every combination of values of the parameters it depends on,
    as (names, {values: verdict}). A function is run over the whole space, as Kernel Tuner runs it;
    the parameters whose values never change its verdict are then left out."""
    names = restriction.names
    table = {combination: restriction.verdict(dict(zip(names, combination)), bad_input)
             for combination in itertools.product(*(knobs[name] for name in names))}
    for i in reversed(range(len(names))):
        without = {}
        for combination, verdict in table.items():
            if without.setdefault(combination[:i] + combination[i + 1:], verdict) != verdict:
                break  # the verdict depends on names[i]
        else:
            names, table = names[:i] + names[i + 1:], without
    return names, table


def _literal(value):
    return repr(value) if isinstance(value, float) else str(value)


def _rule(names, combinations):
    terms = ["(" + " && ".join(f"{name} == {_literal(v)}" for name, v in zip(names, c)) + ")" for c in combinations]
    return " || ".join(terms)


class Space(collections.namedtuple("Space", "knobs rules count tables")):
    """What Kernel Tuner's restrictions leave of the tune parameters: the knobs (values narrowed), the
    rules for the rest, how many configs are allowed, and each restriction's table."""

    def allows(self, params):
        """Whether a config ({name: value} of every knob) is in the space."""
        return (all(params[name] in values for name, values in self.knobs.items())
                and all(table[tuple(params[n] for n in names)] for names, table in self.tables))


def apply(restrictions, knobs, bad_input):
    """Kernel Tuner's ``restrictions`` (a function of a dict of the parameters, or a list of strings,
    functions and (function, names) pairs) over ``knobs`` ({name: [values]}, plain Python values),
    as a Space."""
    if restrictions is None:
        restrictions = []
    if callable(restrictions):
        checks = [_Restriction.of_whole_config(restrictions, knobs)]
    elif isinstance(restrictions, (list, tuple)):
        checks = [_Restriction(r, knobs, bad_input) for r in restrictions]
    else:
        raise bad_input(f"tune_kernel: restrictions: expected a function or a list, got {restrictions!r}")
    knobs = {name: list(values) for name, values in knobs.items()}
    tables = [(check, *_table(check, knobs, bad_input)) for check in checks]
    # One parameter's restriction narrows its knob first, so that the others' rules list fewer combinations.
    for check, names, table in tables:
        if len(names) == 1:
            knobs[names[0]] = [v for v in knobs[names[0]] if table[(v,)]]
    rules, kept = [], []
    for check, names, table in tables:
        table = {c: verdict for c, verdict in table.items() if all(v in knobs[n] for n, v in zip(names, c))}
        if not any(table.values()):
            raise bad_input(f"tune_kernel: restriction {check.shown} allows no configuration")
        kept.append((names, table))
        if len(names) < 2 or all(table.values()):
            continue
        textual = [name for name in names if any(isinstance(v, str) for v in knobs[name])]
        if textual:
            raise bad_input(f"tune_kernel: restriction {check.shown} ties the string parameter '{textual[0]}' to "
                            f"others; optune's rules compare numbers only")
        allowed = [c for c, verdict in table.items() if verdict]
        refused = [c for c, verdict in table.items() if not verdict]
        rules.append(_rule(names, allowed) if len(allowed) <= len(refused) else f"!({_rule(names, refused)})")
    space = Space(knobs, rules, 0, kept)
    count = sum(1 for config in itertools.product(*knobs.values()) if space.allows(dict(zip(knobs, config))))
    if count == 0:
        raise bad_input("tune_kernel: the restrictions together allow no configuration")
    return space._replace(count=count)


# Python's arithmetic in the kernel file's language: `/` is exact in both, `%` floored in both.
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.Pow: "^"}


def expression(text, names, where, bad_input):
    """``text``, Python arithmetic over the tune parameters ``names`` (Kernel Tuner's grid_div_x
    entries, smem_args' size), as a kernel-file expression."""
    def refuse():
        return bad_input(f"tune_kernel: {where}: {text!r} is beyond what optune translates: numbers, tune parameters, "
                         f"+ - * / // % **, min() and max()")

    def emit(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return _literal(node.value)
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise bad_input(f"tune_kernel: {where}: {text!r} names '{node.id}', which is no tune parameter")
            return node.id
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return f"div({emit(node.left)}, {emit(node.right)})"
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return f"({emit(node.left)} {_OPERATORS[type(node.op)]} {emit(node.right)})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return f"({'-' if isinstance(node.op, ast.USub) else ''}{emit(node.operand)})"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
                and node.args and not node.keywords):
            return f"{node.func.id}({', '.join(emit(a) for a in node.args)})"
        raise refuse()

    if type(_plain(text)) in (int, float):
        return _literal(_plain(text))
    if not isinstance(text, str):
        raise bad_input(f"tune_kernel: {where}: expected a string of Python arithmetic, got {_plain(text)!r}")
    try:
        return emit(ast.parse(text.strip(), mode="eval").body)
    except SyntaxError:
        raise refuse() from None
