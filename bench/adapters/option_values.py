"""One conversion for every option value a family's constructor gets, whatever gave it.

Values come typed from a `--model-config` file (YAML/JSON) or from Python, and as text from
`--model-args key=value` and the family flags (`--batch-size 64`). Each is read against the annotation
of the constructor parameter it goes to (`bench/adapters/options.py`) by `coerce_option`, and a value
that does not fit is one ConfigError naming where it came from (the file, `--model-args` or the flag),
the option and the type it needs.

Why one function: the file's values used to pass through unread while text was converted, so
`batch_size: 2.5` (or `.inf`, or JSON `1e999`) reached MTEB's batching as a float, a TypeError deep
inside the run even under `--dry-run`, and `batch_size: true` or a 4,000-digit batch size were taken.

What fits each member of an annotation:
* `int`: a whole number of at most 64 bits (what torch and numpy index with); never a bool, nor a float,
  even `2.0` (YAML and JSON keep the fraction a user typed: `2.0` was not meant as an integer by chance);
* `float`: a finite number; an int is a valid float (PEP 484) and stays an int, as it always did, so a
  setting's experiment name and cache key do not change; never a bool, `.inf`, `nan` or `1e999`;
* `bool`: true/false (as text also yes/no/on/off/1/0 when the option takes no number or text);
* `str`, `Path`: text; a number is refused and the fix is to quote it (YAML reads `revision: 0123` as 83);
* `Literal[...]`: one of its values;
* `list[...]`, `tuple[...]`: a list whose items fit; text too where the annotation names `str` inside
  (the family splits it: `filter_words=a|b`);
* `dict[...]`: a mapping; `None`: none/null (every option's null means the family's default);
* `Any`, no annotation, or one this module does not read: the value as given (text still converted to a
  number or bool when it reads as one, and numbers still finite).

`auto` (any case, as text from any source) for an option of `AUTO_OPTIONS` (`--batch-size auto`, lm-eval's
habit) is None, the family's default: on a CUDA GPU the LM families size their batches for the device
(bench/adapters/device_budget.py), every other family and device takes its documented default (32 rows;
512 inputs for an API). Only the word is read so: `--batch-size 2.5` is still refused.

Nothing here imports torch or mteb.
"""

from __future__ import annotations

import ast
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath
from typing import Any, Literal

from bench.core.bounded import brief
from bench.core.errors import ConfigError

# The largest integer an integer option takes: int64, what torch, numpy and the tokenizers index with.
INT_LIMIT = 2**63 - 1
_TRUE_WORDS = ("yes", "on", "1")
_BOOL_WORDS = ("yes", "no", "on", "off", "1", "0")
_LISTS = {"list", "tuple", "set", "frozenset", "Sequence", "Iterable", "Collection"}
_MAPPINGS = {"dict", "Mapping", "MutableMapping"}
_TEXTS = {"str", "Path", "PurePath", "PathLike"}
# Options whose `auto` means "the family decides" (None, its default; see the module docstring).
AUTO_OPTIONS = frozenset({"batch_size"})


@dataclass(frozen=True)
class OptionSource:
    """Where an option value came from, as its error line names it and as the fix is written there."""

    kind: Literal["file", "model-args", "flag", "python"]
    where: str = ""  # the file's path, or the flag as typed (`--batch-size`)

    @property
    def name(self) -> str:
        if self.kind == "file":
            return f"--model-config {self.where}"
        if self.kind == "model-args":
            return "--model-args"
        return self.where if self.kind == "flag" else "model option"

    def example(self, key: str, value: str) -> str:
        """How `key` set to `value` is written in this source."""
        if self.kind == "file":
            return f"`{key}: {value}` in the file"
        if self.kind == "model-args":
            return f"--model-args {key}={value}"
        return f"{self.where} {value}" if self.kind == "flag" else f"{key}={value}"


PYTHON = OptionSource("python")
MODEL_ARGS = OptionSource("model-args")


@dataclass(frozen=True)
class OptionType:
    """An annotation as the conversion reads it: the names of its union's members (`int`, `str`, `None`,
    `list` ...; `Any` when it cannot be read), the values of its `Literal`s, and the item type of its
    `list[...]`/`tuple[...]` members."""

    names: frozenset[str]
    choices: tuple[Any, ...] = ()
    items: OptionType | None = None


ANY = OptionType(frozenset({"Any"}))


@cache
def option_type(annotation: str) -> OptionType:
    """The `OptionType` of an annotation as written (`"int | None"`, `"Literal['a', 'b']"`); `Any` for an
    empty one or one that is not an expression."""
    if not annotation.strip():
        return ANY
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return ANY
    return _read(node)


def _read(node: ast.expr) -> OptionType:
    names: set[str] = set()
    choices: list[Any] = []
    items: list[OptionType] = []
    for member in _members(node):
        if isinstance(member, ast.Constant) and member.value is None:
            names.add("None")
        elif isinstance(member, ast.Constant) and isinstance(member.value, str):  # a forward reference
            inner = option_type(member.value)
            names |= inner.names
            choices += inner.choices
            items += [inner.items] if inner.items else []
        elif isinstance(member, ast.Subscript):
            base = _name(member.value)
            args = list(member.slice.elts) if isinstance(member.slice, ast.Tuple) else [member.slice]
            if base == "Literal":
                try:
                    choices += [ast.literal_eval(a) for a in args]
                except ValueError:
                    names.add("Any")
            elif base == "Optional":
                inner = _read(args[0])
                names |= inner.names | {"None"}
                choices += inner.choices
                items += [inner.items] if inner.items else []
            elif base in _LISTS:
                names.add("list")
                read = [_read(a) for a in args if not (isinstance(a, ast.Constant) and a.value is Ellipsis)]
                items.append(_union(read) if read else ANY)
            elif base in _MAPPINGS:
                names.add("dict")
            else:
                names.add("Any")  # a generic this module does not read
        else:
            name = _name(member)
            names.add("list" if name in _LISTS else "dict" if name in _MAPPINGS else name if name in _KNOWN else "Any")
    return OptionType(frozenset(names), tuple(choices), _union(items) if items else None)


_KNOWN = {"int", "float", "bool", "str", "Path", "PurePath", "PathLike", "None", "Any"}


def _members(node: ast.expr) -> list[ast.expr]:
    """The members of a union written with `|` or `Union[...]`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _members(node.left) + _members(node.right)
    if isinstance(node, ast.Subscript) and _name(node.value) == "Union":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [m for e in elts for m in _members(e)]
    return [node]


def _name(node: ast.expr) -> str:
    """`int` for `int`, `Literal` for `typing.Literal`; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _union(types: list[OptionType]) -> OptionType:
    items = [t.items for t in types if t.items is not None]
    return OptionType(
        frozenset().union(*(t.names for t in types)),
        tuple(c for t in types for c in t.choices),
        _union(items) if items else None,
    )


class _Misfit(Exception):
    """Why a value does not fit an annotation (a phrase for the error line)."""


def coerce_option(key: str, value: Any, annotation: str, source: OptionSource = PYTHON, *, default: Any = None) -> Any:
    """`value` as the type the constructor's `annotation` names, from any source (see the module docstring).

    Raises:
        ConfigError: one line naming `source` (the file, `--model-args`, the flag), `key`, the value, the
            type it needs and why it does not fit, and how to write a valid value there.
    """
    kind = option_type(annotation)
    if key in AUTO_OPTIONS and isinstance(value, str) and value.strip().lower() == "auto":
        return None
    try:
        converted = _from_text(value, kind) if isinstance(value, str) else value
        return None if converted is None else _typed(converted, kind)
    except _Misfit as e:
        example = source.example(key, _example(kind, default))
        raise ConfigError(
            f"{source.name}: {key}={_shown(value)} is not a valid {annotation or 'value'} ({e}); give e.g. {example}."
        ) from None


def _from_text(text: str, kind: OptionType) -> Any:
    """Text (`--model-args`, a flag, a quoted YAML value) as the value it spells for `kind`; the text itself
    when it spells no number, bool or null the option takes (`_typed` then says whether text fits)."""
    names = kind.names
    low = text.strip().lower()
    for choice in kind.choices:
        if text == str(choice) and not isinstance(choice, bool):
            return choice
    if low in ("none", "null") and names & {"None", "Any"}:
        return None
    if low in ("true", "false"):
        if names & {"bool", "Any"}:
            return low == "true"
        if not names & _TEXTS:
            raise _Misfit(f"a boolean, not {_needed(kind)}")
    if "bool" in names and not names & {"int", "float", "str"} and low in _BOOL_WORDS:
        return low in _TRUE_WORDS
    if names & {"int", "Any"}:
        try:
            return int(text)
        except ValueError as e:
            if "digits" in str(e):  # past sys.get_int_max_str_digits(): surely not a count
                raise _Misfit(_too_long(len(text.strip().lstrip("+-")))) from None
    if names & {"float", "int", "Any"} and not names & _TEXTS:
        try:
            return float(text)  # `_typed` refuses a fraction for an int, and inf/nan for either
        except ValueError:
            pass
    return text


def _typed(value: Any, kind: OptionType) -> Any:
    """`value` if it fits `kind` (an int64-sized int, a finite float, a Literal's value ...), else _Misfit."""
    names = kind.names
    if any(value == c and type(value) is type(c) for c in kind.choices):
        return value
    if kind.choices and not names - {"None"}:
        raise _Misfit("not one of " + ", ".join(brief(c) for c in kind.choices))
    if isinstance(value, bool):  # before int: a bool is an int to Python, never to a user
        if names & {"bool", "Any"}:
            return value
        raise _Misfit(f"a boolean, not {_needed(kind)}")
    if isinstance(value, numbers.Integral):
        if names & {"int", "float", "Any"}:
            if abs(int(value)) > INT_LIMIT:
                raise _Misfit(_too_long(len(str(abs(int(value))))))
            return int(value)
        raise _Misfit(_not_a_number(kind))
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise _Misfit(f"{number} is not a finite number")
        if names & {"float", "Any"}:
            return number
        if "int" in names:
            raise _Misfit("a number with a fraction, not a whole number")
        raise _Misfit(_not_a_number(kind))
    if isinstance(value, str):
        if names & (_TEXTS | {"Any"}) or (kind.items is not None and kind.items.names & {"str", "Any"}):
            return value
        raise _Misfit(f"text, not {_needed(kind)}")
    if isinstance(value, PurePath):
        if names & {"Path", "PurePath", "PathLike", "Any"}:
            return value
        raise _Misfit(f"a path, not {_needed(kind)}")
    if isinstance(value, list | tuple):
        if names & {"list", "Any"}:
            items = kind.items or ANY
            return type(value)(_typed(item, items) for item in value)
        raise _Misfit(f"a list, not {_needed(kind)}")
    if isinstance(value, Mapping):
        if names & {"dict", "Any"}:
            return value
        raise _Misfit(f"a mapping, not {_needed(kind)}")
    if "Any" in names:
        return value
    raise _Misfit(f"a {type(value).__name__}, not {_needed(kind)}")


def _not_a_number(kind: OptionType) -> str:
    quote = "; quote it to mean text" if kind.names & _TEXTS else ""
    return f"a number, not {_needed(kind)}{quote}"


def _too_long(digits: int) -> str:
    return f"an integer of {digits:,} digits; an integer option holds at most {INT_LIMIT:,}"


_NEEDED = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "str": "text",
    "Path": "a path",
    "list": "a list",
    "dict": "a mapping",
}


def _needed(kind: OptionType) -> str:
    """What `kind` takes, in words: `a whole number or none`."""
    words = [_NEEDED[n] for n in _NEEDED if n in kind.names]
    if kind.choices:
        words.append("one of " + ", ".join(brief(c) for c in kind.choices))
    return " or ".join(words + (["none"] if "None" in kind.names else [])) or "a value"


def _shown(value: Any) -> str:
    """`value` in an error line: short (`brief`), a bool as the user writes it (`true`)."""
    return str(value).lower() if isinstance(value, bool) else brief(value)


def _example(kind: OptionType, default: Any) -> str:
    """A value that fits `kind`, as it is written on a command line: the default where there is one."""
    if default is not None and not isinstance(default, list | tuple | Mapping):
        return str(default).lower() if isinstance(default, bool) else str(default)
    if kind.choices:
        return str(kind.choices[0])
    for name, text in (("int", "8"), ("float", "0.5"), ("bool", "true"), ("str", "TEXT"), ("Path", "PATH")):
        if name in kind.names:
            return text
    return "VALUE"
