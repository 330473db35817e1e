"""Reading files a user (or anyone) hands the harness, with every cost bounded before it is paid.

A small file can still crash or stall a parser: JSON or YAML nested 100,000 deep overflows Python's
recursion (json, PyYAML's composer and constructor are recursive); a 500-byte YAML "billion laughs"
(anchors that alias the previous anchor nine times, nine levels deep) composes into a tiny graph
whose expansion is 9^9 values, harmless until something (a hash, `json.dumps`, an error message's
`repr`) walks it; a key written twice silently keeps the last; a JSON integer of 5,000 digits is a
ValueError from `json.loads`; a `\\ud800` escape decodes to half a UTF-16 pair that no UTF-8 writer
accepts. So, before the work each bounds:

* size: config files (`--model-config`, `--instruction-variants`) are read at most MAX_CONFIG_BYTES
  (a real one is a few KB), which also bounds the time the pure-Python parsers take; a builder's raw
  JSON/JSONL source or a saved transform's config at most MAX_SOURCE_BYTES (`read_at_most` reads one
  byte past a limit, never a whole device or a huge file);
* depth: JSON by `json_depth`, a vectorised scan of the bytes (no recursion); YAML from its tokens,
  counted as the parser takes them (`_Nesting`), so the composer stops at MAX_DEPTH + 1 levels;
* expansion: a YAML's composed node graph is walked once per node (memoised, no recursion) to count
  what it would expand to, nodes plus characters, and to find an alias cycle, before any Python
  object is built;
* duplicate keys are refused naming their line (for JSON with the pure-Python scanner, which knows
  where each object starts); lone surrogates naming the line (YAML) or the path of keys (JSON);
* values Python will not build: an integer past `sys.get_int_max_str_digits()` digits (JSON or YAML),
  a YAML date that does not exist (2001-02-30), each a ValueError from the parser, named by its line.

Every problem is one error of the caller's `bench.core.errors` class naming the file and the fix; `brief`
is the bounded `repr` every error message of hostile input uses. This module imports nothing from
`bench.tasks`, `bench.adapters` or `bench.leaderboard` (which imports `json_depth` from here).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
import reprlib
import sys
import unicodedata
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.errors import BenchError, ConfigError
from bench.core.json_types import JSON

if TYPE_CHECKING:
    from types import ModuleType

    import numpy as np
    import yaml

# json.scanner's `scan_once(text, index) -> (value, end)`, which the JSON object parser is handed
_Scan = Callable[[str, int], tuple[object, int]]

MAX_DEPTH = 64  # a config or result needs fewer than 10 levels
# The largest built-in variants file is 19 KB. PyYAML's pure-Python parser takes ~10 µs a token, so
# this also bounds the time: about 15 s for the densest 1 MiB YAML (`[a,a,a,...]`), 0.3 s as JSON.
MAX_CONFIG_BYTES = 2**20
MAX_EXPANDED = 2 * MAX_CONFIG_BYTES  # nodes + characters after aliases: what a plain file could say, twice
# A builder's raw JSON or JSONL source (the largest staged one, FewRel's val_wiki.json, is 3.5 MB) or a
# saved GSTransform's config.json (a few KB): the whole file is decoded at once, so its size is the bound.
MAX_SOURCE_BYTES = 64 * 2**20

_CHUNK = 16 * 2**20  # bytes per step of json_depth: its temporary arrays are ~10 bytes per byte scanned
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# Invisible characters outside category Cf (which holds U+200B..U+200F, U+2060, U+FEFF, ...): the
# default-ignorable fillers and variation selectors, which render as nothing.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
)


# ---------------------------------------------------------------------------------------- error messages
STRING_CHARS = 60  # of a string quoted in an error message


class _Brief(reprlib.Repr):
    """reprlib with small limits, and without its whole-value steps: it sorts every key of a dict or
    set before taking four, and calls the builtin repr of an int (a ValueError past 4,300 digits),
    of bytes and of subclasses."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, STRING_CHARS, 40, 40
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = 4

    def repr_str(self, x: str, level: int) -> str:  # its start, which reads better than reprlib's head...tail
        return repr(x[: self.maxstring]) + ("…" if len(x) > self.maxstring else "")

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<integer of about {int(x.bit_length() * 0.30103):,} digits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict, level: int) -> str:
        if not x or level <= 0:
            return "{}" if not x else "{...}"
        pieces = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in islice(x.items(), self.maxdict)]
        return "{" + ", ".join(pieces + ["..."] * (len(x) > self.maxdict)) + "}"

    def repr_set(self, x: set, level: int) -> str:
        return self._repr_iterable(x, level, "{", "}", self.maxset) if x else "set()"  # type: ignore[attr-defined]  # reprlib helper typeshed omits

    def repr_frozenset(self, x: frozenset, level: int) -> str:
        return self._repr_iterable(x, level, "frozenset({", "})", self.maxset) if x else "frozenset()"  # type: ignore[attr-defined]  # as above

    def repr_bytes(self, x: bytes, level: int) -> str:
        return repr(x[: self.maxstring]) + ("..." if len(x) > self.maxstring else "")

    def repr_instance(self, x: object, level: int) -> str:
        if isinstance(x, (bool, float)) or x is None:
            return repr(x)
        bases: tuple[type[Any], ...] = (str, bytes, int, dict, list, tuple, set, frozenset)
        for base in bases:
            if isinstance(x, base):
                return getattr(self, f"repr_{base.__name__}")(base(x) if base in (str, bytes, int) else x, level)
        return super().repr_instance(x, level)


def brief(value: object, limit: int = 80) -> str:
    """A `repr` of `value` in at most `limit` characters, for error messages about hostile input.

    Its cost is bounded whatever `value` is (a 4 MB string, a graph of 9^9 aliased lists, a 5,000-digit
    integer): only a few items of a few levels are looked at. A short string reads as `repr` would.
    """
    text = _Brief().repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def printable(text: str, limit: int = 200) -> str:
    """`text`'s first `limit` characters with control and invisible ones (bidi overrides, zero-width
    spaces, terminal escapes) written as escapes, so a name can neither hide nor steer a terminal."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return shown if len(text) <= limit and len(shown) <= limit else shown[:limit] + "…"  # escapes lengthen it


# ---------------------------------------------------------------------------------------- texts
def is_blank(text: str) -> bool:
    """True when nothing of `text` would be seen: only whitespace, control and format characters
    (zero-width space, joiners, word joiner, byte-order mark, ...) and invisible fillers.

    Stops at the first visible character, so a real text costs a character or two.
    """
    return all(c.isspace() or c in _INVISIBLE or unicodedata.category(c) in ("Cf", "Cc") for c in text)


def lone_surrogate(text: str) -> int | None:
    """Index of the first surrogate code point in `text`, or None.

    In a Python string a surrogate is always lone (JSON and YAML decoders join escaped pairs), and no
    UTF-8 writer (the cache, a result file, the API client) can encode it.
    """
    match = _SURROGATE.search(text)
    return match.start() if match else None


def surrogate_problem(text: str) -> str | None:
    """The sentence an error gives for a lone surrogate in `text`, or None when there is none."""
    at = lone_surrogate(text)
    if at is None:
        return None
    return (
        f"holds a lone surrogate (U+{ord(text[at]):04X} at character {at + 1}), half of a UTF-16 pair such "
        "as an emoji cut in two (an escape like \\uD83D without its partner), which cannot be written "
        "as UTF-8; remove it or complete the pair"
    )


# ---------------------------------------------------------------------------------------- files
def read_at_most(path: Path, max_bytes: int) -> bytes:
    """`path`'s bytes, at most `max_bytes` + 1 of them: enough for the parser's caller to tell that the file
    is over its limit, without reading a device (`/dev/zero`) or a huge file whole. OSError is the caller's."""
    with Path(path).open("rb") as f:
        return f.read(max_bytes + 1)


# ---------------------------------------------------------------------------------------- JSON
_QUOTE = ord('"')


def _steps_table() -> np.ndarray:
    import numpy as np

    table = np.zeros(256, dtype=np.int8)
    table[list(b"[{")], table[list(b"]}")] = 1, -1
    return table


def _json_levels(data: bytes) -> Iterator[tuple[int, np.ndarray]]:
    """(offset into the de-escaped bytes, nesting level after each byte) per chunk of `data`."""
    import numpy as np

    plain = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    steps_of = _steps_table()
    level, inside = 0, 0
    for start in range(0, len(plain), _CHUNK):
        part = np.frombuffer(plain, dtype=np.uint8, count=min(_CHUNK, len(plain) - start), offset=start)
        quotes = np.cumsum(part == _QUOTE, dtype=np.int64)
        outside = ((quotes + inside) & 1) == 0
        levels = np.cumsum(np.where(outside, steps_of[part], np.int8(0)), dtype=np.int64) + level
        yield start, levels
        level, inside = int(levels[-1]), (inside + int(quotes[-1])) & 1


def json_depth(data: bytes) -> int:
    """How deep `data`'s arrays and objects nest, counted without parsing (no recursion).

    Vectorised, so time and memory are a few passes over the bytes whatever they hold (in chunks, so
    a large data file needs no more than a copy of itself and ~160 MB): escaped backslashes and quotes
    are dropped, after which every quote opens or closes a string; brackets outside strings are
    summed. For invalid JSON the count is a best effort, and the parser that runs next reports the
    syntax error.
    """
    return max((int(levels.max()) for _, levels in _json_levels(data)), default=0)


def json_too_deep(data: bytes, limit: int = MAX_DEPTH) -> int | None:
    """The 1-based line on which `data` first nests deeper than `limit`, or None."""
    for start, levels in _json_levels(data):
        over = levels > limit
        if over.any():
            offset = start + int(over.argmax())
            plain = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # line breaks are never escaped away
            return plain.count(b"\n", 0, offset) + 1
    return None


class _DuplicateKey(Exception):
    def __init__(self, key: str, position: int) -> None:
        super().__init__(key)
        self.key, self.position = key, position


class _UniqueKeyDecoder(json.JSONDecoder):
    """The pure-Python JSON scanner (safe here: the depth is bounded first) with a check of each
    object's keys; only it says where an object starts, which names the line of a repeated key."""

    def __init__(self) -> None:
        super().__init__()
        self.parse_object = self._object
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]  # in json.scanner, not in typeshed

    def _object(
        self,
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: _Scan,
        object_hook: object,
        object_pairs_hook: object,
        memo: dict[str, str] | None = None,
    ) -> tuple[dict[str, object], int]:
        text, start = s_and_end
        pairs, end = json.decoder.JSONObject(  # type: ignore[attr-defined]  # in json.decoder, not in typeshed
            s_and_end, strict, scan_once, None, list, memo
        )
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key, _second_key_position(text, start, key, scan_once))
            seen.add(key)
        return dict(pairs), end


def _second_key_position(text: str, start: int, key: str, scan_once: _Scan) -> int:
    """Where `key` is written the second time in the object whose `{` ends at `start` (an error path)."""
    white = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]  # in json.decoder, not in typeshed
    pos, seen = start, False
    while True:
        pos = white(text, pos).end()
        name, after = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]  # as WHITESPACE
        if name == key and seen:
            return pos
        seen = seen or name == key
        _, pos = scan_once(text, white(text, white(text, after).end() + 1).end())
        pos = white(text, pos).end() + 1


def load_json_bounded(
    data: bytes | str,
    what: str,
    *,
    error: type[BenchError] = ConfigError,
    max_bytes: int | None = MAX_CONFIG_BYTES,
    max_depth: int = MAX_DEPTH,
    unique_keys: bool = True,
    fix: str | None = None,
) -> Any:
    """JSON `data` of the file `what` names (e.g. "--model-config my.json"), parsed within bounds.

    `unique_keys` parses with the pure-Python scanner to name the line of a repeated key: right for a
    config file, too slow for a large data file. Every problem is one `error` naming `what` and the fix;
    `fix` (default "Fix the file.") is the caller's, added where the problem has none of its own or
    where the caller has a better one (a result file is recomputed).
    """
    own, fix = f" {fix}" if fix else "", fix or "Fix the file."
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise error(f"{what} is {len(raw):,} bytes; at most {max_bytes:,} are read, a real one is far smaller. {fix}")
    line = json_too_deep(raw, max_depth)
    if line is not None:
        raise error(
            f"{what} line {line}: arrays/objects nest more than {max_depth} levels deep; a real file needs a few. {fix}"
        )
    try:
        text = data if isinstance(data, str) else raw.decode("utf-8-sig")
        value = json.loads(text, cls=_UniqueKeyDecoder) if unique_keys else json.loads(text)
    except UnicodeDecodeError:
        raise error(f"{what} is not UTF-8 text; save it as UTF-8. {fix}") from None
    except json.JSONDecodeError as e:
        raise error(f"{what} is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno}). {fix}") from None
    except _DuplicateKey as e:
        raise error(
            f"{what} line {text.count(chr(10), 0, e.position) + 1}: key {brief(e.key)} appears twice in "
            f"one object; keep one (JSON keeps only the last, silently dropping the first).{own}"
        ) from None
    except ValueError:  # the only other one: an integer past sys.get_int_max_str_digits()
        raise error(
            f"{what} holds an integer of more than {sys.get_int_max_str_digits():,} digits, which Python "
            f"refuses to read; no score or setting is that long, so the file is damaged. {fix}"
        ) from None
    if _SURROGATE_ESCAPE.search(raw):
        _refuse_surrogates(value, what, error, own)
    return value


def _refuse_surrogates(value: object, what: str, error: type[BenchError], fix: str) -> None:
    """Every string (keys too) of a parsed value, walked with a stack; the path names where."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack += [(f"{path}.{k}", k) for k in item] + [(f"{path}.{k}", v) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(f"{path}[{i}]", v) for i, v in enumerate(item)]
        elif isinstance(item, str) and (problem := surrogate_problem(item)):
            raise error(f"{what}: the text at {brief(path.lstrip('.') or '(top)', 60)} {problem}.{fix}")


def load_jsonl_bounded(
    data: bytes | str,
    what: str,
    *,
    error: type[BenchError] = ConfigError,
    max_bytes: int | None = MAX_SOURCE_BYTES,
    max_depth: int = MAX_DEPTH,
    fix: str | None = None,
) -> list[tuple[int, Any]]:
    """(line number, value) of each non-blank line of the JSON Lines `data` of the file `what` names,
    within the bounds of `load_json_bounded`: size first, then nesting on the bytes of the whole file
    (line by line only to name the line), then each line parsed; an integer Python will not read and a
    lone surrogate are one `error` naming the line. Lines end at "\\n" only: JSON allows U+2028 and the
    other breaks that `str.splitlines` splits at inside a string.
    """
    fix = fix or "Fix the file."
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if max_bytes is not None and len(data) > max_bytes:
        raise error(f"{what} is {len(data):,} bytes; at most {max_bytes:,} are read, a real one is far smaller. {fix}")
    if json_depth(data) > max_depth:  # an unclosed bracket carries over lines: then the parser names its line
        for line_no, raw in enumerate(data.split(b"\n"), start=1):
            if json_too_deep(raw, max_depth) is not None:
                raise error(
                    f"{what} line {line_no}: arrays/objects nest more than {max_depth} levels deep; a real "
                    f"line needs a few. {fix}"
                )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        at = data.count(b"\n", 0, e.start) + 1
        raise error(f"{what} line {at}: not UTF-8 text; save it as UTF-8. {fix}") from None
    rows = []
    for line_no, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            rows.append((line_no, _json_line(line, f"{what} line {line_no}", error, fix)))
    if _SURROGATE_ESCAPE.search(data):
        for line_no, value in rows:
            _refuse_surrogates(value, f"{what} line {line_no}", error, f" {fix}")
    return rows


def _json_line(line: str, where: str, error: type[BenchError], fix: str) -> JSON:
    """One JSON Lines line, whose nesting is already bounded."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise error(
            f"{where}: malformed JSON ({e.msg}, column {e.colno}); each line is one complete JSON value. {fix}"
        ) from None
    except ValueError:  # the only other one: an integer past sys.get_int_max_str_digits()
        raise error(
            f"{where}: holds an integer of more than {sys.get_int_max_str_digits():,} digits, which Python refuses "
            f"to read; no real value is that long, so the file is damaged. {fix}"
        ) from None


# ---------------------------------------------------------------------------------------- YAML
class _Nesting:
    """How many collections are open, from the YAML token stream (the scanner is iterative).

    Block and flow start/end tokens open and close one level; an "indentless" sequence (`key:` then
    `- item` at the key's column) has no start token: a `-` met directly in a block mapping opens it,
    and the mapping's next key (or its end) closes it.
    """

    def __init__(self) -> None:
        import yaml

        self.opens = (
            yaml.BlockMappingStartToken,
            yaml.BlockSequenceStartToken,
            yaml.FlowMappingStartToken,
            yaml.FlowSequenceStartToken,
        )
        self.closes = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
        self.ends_indentless = (yaml.KeyToken, yaml.ValueToken, yaml.BlockEndToken)
        self.entry, self.block_map = yaml.BlockEntryToken, yaml.BlockMappingStartToken
        self.stack: list[type] = []
        self.deepest = 0

    def feed(self, token: yaml.Token) -> int:
        """The nesting level after `token`."""
        if self.stack and self.stack[-1] is self.entry and isinstance(token, self.ends_indentless):
            self.stack.pop()
        if isinstance(token, self.opens) or (
            isinstance(token, self.entry) and self.stack and self.stack[-1] is self.block_map
        ):
            self.stack.append(type(token))
        elif isinstance(token, self.closes) and self.stack:
            self.stack.pop()
        self.deepest = max(self.deepest, len(self.stack))
        return len(self.stack)


def yaml_depth(text: str) -> int:
    """How deep `text`'s mappings and sequences nest (aliases not followed), from its tokens alone."""
    import yaml

    nesting = _Nesting()
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        nesting.feed(token)
    return nesting.deepest


def _bounded_loader(text: str, what: str, error: type[BenchError], max_depth: int) -> yaml.SafeLoader:
    """A SafeLoader that counts nesting as its parser takes each token: the composer recurses once per
    level, so it stops at `max_depth` + 1 levels, in the same single pass over the text."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.nesting = _Nesting()

        def get_token(self) -> yaml.Token:
            token = super().get_token()
            if self.nesting.feed(token) > max_depth:
                raise error(
                    f"{what} line {token.start_mark.line + 1}: mappings/lists nest more than {max_depth} "
                    "levels deep; a real file needs a few. Fix the file."
                )
            return token

    return Loader(text)


def yaml_expansion(root: yaml.Node) -> tuple[int, int]:
    """(size, depth) of a composed YAML node graph once every alias is expanded: size counts each node
    plus each scalar's characters. Each distinct node is visited once (memoised, explicit stack), so the
    cost is the graph's, not the expansion's. Raises ValueError(node) for an alias inside its own anchor.
    """
    import yaml

    done: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if id(node) in done:
            continue
        children = _children(node, yaml)
        if not finished:
            open_nodes.add(id(node))
            stack.append((node, True))
            for child in children:
                if id(child) in open_nodes:
                    raise ValueError(child)
                stack.append((child, False))
            continue
        open_nodes.discard(id(node))
        if isinstance(node, yaml.ScalarNode):
            done[id(node)] = (1 + len(node.value), 0)
        else:
            size = 1 + sum(done[id(c)][0] for c in children)
            done[id(node)] = (min(size, 2**62), 1 + max((done[id(c)][1] for c in children), default=0))
    return done[id(root)]


def _children(node: yaml.Node, yaml_module: ModuleType) -> list[yaml.Node]:
    if isinstance(node, yaml_module.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml_module.SequenceNode) else []


def _check_nodes(loader: yaml.SafeLoader, root: yaml.Node, what: str, error: type[BenchError]) -> None:
    """Each distinct node once: repeated mapping keys and lone surrogates, named by line."""
    import yaml

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        line = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode) and (problem := surrogate_problem(node.value)):
            raise error(f"{what} line {line}: the text {brief(node.value, 40)} {problem}.")
        if isinstance(node, yaml.ScalarNode) and node.tag in _BUILT_WITH_VALUE_ERRORS:
            _build_scalar(loader, node, what, error)
        if isinstance(node, yaml.MappingNode):
            _refuse_repeated_keys(loader, node, what, error)
        stack += _children(node, yaml)


# Scalars whose constructor can raise a bare ValueError: `int()` past sys.get_int_max_str_digits() digits,
# `datetime.date()` of a day that does not exist. Every other constructor error is a YAMLError.
_BUILT_WITH_VALUE_ERRORS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:timestamp")


def _build_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode, what: str, error: type[BenchError]) -> None:
    """Build one int or date scalar now (the loader keeps it for `construct_document`), so that a value
    Python refuses is one error naming its line, not a ValueError traceback from deep in PyYAML. A hex or
    octal integer builds at any length, but could never be printed or written: refused the same."""
    limit, line = sys.get_int_max_str_digits(), node.start_mark.line + 1
    try:
        value = loader.construct_object(node)
    except ValueError as e:
        if not node.tag.endswith(":int"):
            raise error(
                f"{what} line {line}: {brief(node.value, 40)} is not a date ({brief_line(e, 80)}). Fix the date, or quote it."
            ) from None
        value = None  # int() refused it: too many digits
    if value is None or (limit and isinstance(value, int) and value.bit_length() > limit * 3.32):
        raise error(
            f"{what} line {line}: an integer of {len(node.value):,} characters, more digits than Python reads "
            f"({limit:,}); no setting is that long, so the file is damaged. Fix the file."
        )


def _refuse_repeated_keys(loader: yaml.SafeLoader, node: yaml.MappingNode, what: str, error: type[BenchError]) -> None:
    import yaml

    keys: set[object] = set()
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue  # a `<<` merge may override keys; a list as a key is refused by the constructor
        if key_node.tag in _BUILT_WITH_VALUE_ERRORS:
            _build_scalar(loader, key_node, what, error)
        key = loader.construct_object(key_node)  # as built: `1` and `0x1` are the same key
        if key in keys:
            raise error(
                f"{what} line {key_node.start_mark.line + 1}: key {brief(key)} appears twice in one "
                "mapping; keep one (YAML keeps only the last, silently dropping the first)."
            )
        keys.add(key)


def load_yaml_bounded(
    text: str,
    what: str,
    *,
    error: type[BenchError] = ConfigError,
    max_depth: int = MAX_DEPTH,
    max_expanded: int = MAX_EXPANDED,
) -> Any:
    """YAML `text` of the file `what` names, with PyYAML's safe loader, within bounds.

    Composed (depth checked as the tokens come), then the node graph is checked (expansion, alias
    cycles, repeated keys, lone surrogates), and only then are Python objects built. Every problem is
    one `error` naming `what` and the fix; a syntax error says "is not valid YAML".
    """
    import yaml

    loader = _bounded_loader(text, what, error, max_depth)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        try:
            size, depth = yaml_expansion(root)
        except ValueError as e:
            raise error(
                f"{what} line {e.args[0].start_mark.line + 1}: an alias refers to a value that holds "
                "it (an anchor used inside itself); remove the cycle."
            ) from None
        if size > max_expanded or depth > max_depth:
            raise error(
                f"{what} expands, once its aliases (*name) are resolved, to "
                f"{'a size' if size > max_expanded else 'a nesting'} beyond the limit ({max_expanded:,} "
                f'values and characters, {max_depth} levels), like a "billion laughs" file; write '
                "the values out, or use fewer aliases."
            )
        _check_nodes(loader, root, what, error)
        return loader.construct_document(root)
    except yaml.YAMLError as e:
        raise error(f"{what} is not valid YAML: {brief_line(e)}") from None
    finally:
        loader.dispose()


def brief_line(error: Exception, limit: int = 200) -> str:
    """An exception's first line, at most `limit` characters (a parser may quote a 4 MB line)."""
    text = str(error)
    line = text[: text.find("\n")] if "\n" in text else text
    line = line or type(error).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_EXPANDED",
    "MAX_SOURCE_BYTES",
    "brief",
    "brief_line",
    "is_blank",
    "json_depth",
    "json_too_deep",
    "load_json_bounded",
    "load_jsonl_bounded",
    "load_yaml_bounded",
    "lone_surrogate",
    "printable",
    "read_at_most",
    "surrogate_problem",
    "yaml_depth",
    "yaml_expansion",
]
