"""bench/core/bounded.py: depth, expansion and duplicate keys counted without trusting the parsers, against
hand counts; `brief` bounded whatever it is given."""

from __future__ import annotations

import json
import random

import pytest
import yaml

import bench.core.bounded as bounded
from bench.core.bounded import (
    MAX_EXPANDED,
    brief,
    is_blank,
    json_depth,
    json_too_deep,
    load_json_bounded,
    load_yaml_bounded,
    lone_surrogate,
    yaml_depth,
    yaml_expansion,
)
from bench.core.errors import ConfigError, DataError


# ---------------------------------------------------------------------------------------- depth
@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("x", 0),
        ("a: 1", 1),
        ("[[1], {a: [2]}]", 3),
        ("- - - x", 3),
        ("a:\n  b:\n    c: [1, {d: e}]\n", 5),  # map a > map b > map c > list > {d: e}
        ("a:\n- b:\n  - c\n", 4),  # map > indentless list > map > indentless list: no start token opens the lists
        ("a:\n- 1\nb:\n- 2\nc: {d: [3]}\n", 3),  # the indentless list closes at the next key
        ("- a: 1\n  b:\n  - 2\n- 3\n", 3),
        ("a: &x [1, [2]]\nb: *x\n", 3),  # an alias is not followed here (yaml_expansion does)
    ],
)
def test_yaml_depth_from_tokens_matches_a_hand_count(text, depth):
    assert yaml_depth(text) == depth


def _object_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_object_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_object_depth, value), default=0)
    return 0


def test_yaml_depth_agrees_with_the_loaded_objects_on_the_builtin_files():
    from bench.core.variants import builtin_variant_files

    for path in builtin_variant_files().values():
        text = path.read_text(encoding="utf-8")
        assert yaml_depth(text) == _object_depth(yaml.safe_load(text)) > 1


@pytest.mark.parametrize("limit", [3, 4])
def test_a_deep_yaml_stops_at_the_limit_naming_the_line(limit):
    text = "a:\n  b:\n    c: [1]\n"  # depth 4 (three mappings, a list); the list opens on line 3
    if limit == 4:
        assert load_yaml_bounded(text, "f.yaml", max_depth=limit) == {"a": {"b": {"c": [1]}}}
    else:
        with pytest.raises(ConfigError, match=r"f\.yaml line 3: mappings/lists nest more than 3 levels"):
            load_yaml_bounded(text, "f.yaml", max_depth=limit)


def test_yaml_nested_100000_deep_is_refused_without_recursion():
    for text in (
        "[" * 100_000 + "]" * 100_000,
        "{a: " * 100_000 + "}" * 100_000,
        "".join(" " * i + "- \n" for i in range(0, 400, 2)),  # block lists, 200 deep
        "a:\n" + "".join("  " * i + f"- k{i}:\n" for i in range(200)),
    ):  # map > indentless list > map ...
        with pytest.raises(ConfigError, match="more than 64 levels"):
            load_yaml_bounded(text, "f.yaml")


def test_json_depth_in_chunks_equals_the_whole(monkeypatch):
    rng = random.Random(0)
    docs = [json.dumps([[{'a\\"[': ["]]", {"b": [[1]]}]}] * rng.randint(1, 5)]) for _ in range(20)]
    docs += ['"\\\\"[[[', '[["\\"]]]"]]', "[" * 50 + "]" * 50]
    whole = [json_depth(d.encode()) for d in docs]
    monkeypatch.setattr(bounded, "_CHUNK", 3)
    assert [json_depth(d.encode()) for d in docs] == whole
    assert whole[-3:] == [3, 2, 50]  # an escaped backslash does not escape the quote after it


def test_json_too_deep_names_the_line():
    assert json_too_deep(b'{"a":\n [\n  [[1]]]}', 3) == 3
    assert json_too_deep(b'{"a": "[[[[[[["}', 3) is None
    from bench.leaderboard.limits import json_depth as leaderboard_json_depth

    assert leaderboard_json_depth is json_depth  # one scan, shared


# ---------------------------------------------------------------------------------------- expansion
def test_alias_expansion_matches_a_hand_count():
    # root map 1 + key "a" (1 + 1 char) + [p, q] (1 + 2 + 2) + key "b" 2 + [*x, *x] (1 + 5 + 5) = 21;
    # depth: root > [*x, *x] > [p, q]
    node = yaml.compose("a: &x [p, q]\nb: [*x, *x]\n", Loader=yaml.SafeLoader)
    assert yaml_expansion(node) == (21, 3)


def test_billion_laughs_is_counted_in_linear_time_and_refused_before_construction(monkeypatch):
    from test_faults import BILLION_LAUGHS

    node = yaml.compose(BILLION_LAUGHS, Loader=yaml.SafeLoader)
    sizes = [1 + 9 * 4]  # [lol x 9]: the list node and nine scalars of 1 + 3
    for _ in range(8):
        sizes.append(1 + 9 * sizes[-1])
    keys = 9 * (1 + 2) + (1 + len("STSBenchmark"))  # l0..l8, STSBenchmark
    # the root, its keys, l0..l8, and l8 again under STSBenchmark; depth: root > l8 > ... > l0
    assert yaml_expansion(node) == (1 + keys + sum(sizes) + sizes[-1], 10)
    assert yaml_expansion(node)[0] > 9**9 > MAX_EXPANDED
    built = []
    monkeypatch.setattr(yaml.SafeLoader, "construct_document", lambda self, node: built.append(node))
    with pytest.raises(ConfigError, match="billion laughs"):
        load_yaml_bounded(BILLION_LAUGHS, "v.yaml")
    assert not built


def test_an_alias_inside_its_own_anchor_is_refused():
    for text in ("a: &x [1, *x]\n", "a: &x {b: [*x]}\n"):
        with pytest.raises(ConfigError, match=r"line 1: an alias refers to a value that holds it"):
            load_yaml_bounded(text, "f.yaml")


def test_aliases_within_the_bound_load_as_plain_yaml():
    text = "base: &b {query: 'Q: ', document: 'D: '}\nSciDocsRR: [*b, *b]\nother:\n  <<: *b\n  query: 'R: '\n"
    assert load_yaml_bounded(text, "f.yaml") == yaml.safe_load(text)


# ---------------------------------------------------------------------------------------- duplicate keys
def test_yaml_duplicate_keys_are_refused_with_their_line():
    with pytest.raises(ConfigError, match=r"f\.yaml line 4: key 'b' appears twice"):
        load_yaml_bounded("a: 1\nb:\n  c: 2\nb: 3\n", "f.yaml")
    with pytest.raises(ConfigError, match=r"line 2: key 1 appears twice"):  # the same key once built: 1 == 0x1
        load_yaml_bounded("1: a\n0x1: b\n", "f.yaml")
    # the same key in two mappings, and a merge key overridden, are not duplicates
    assert load_yaml_bounded("a: {k: 1}\nb: {k: 2}\nc: &c {k: 3}\nd:\n  <<: *c\n  k: 4\n", "f.yaml")["d"] == {"k": 4}


def test_json_duplicate_keys_are_refused_with_their_line():
    text = '{\n "a": {"k": 1, "z": [1, {"k": 2}]},\n "b": {"k": 1},\n "c": 1,\n "a": 2\n}'
    with pytest.raises(ConfigError, match=r"f\.json line 5: key 'a' appears twice in one object"):
        load_json_bounded(text.encode(), "f.json")
    with pytest.raises(ConfigError, match=r"line 2: key 'k' appears twice"):
        load_json_bounded(b'{"x": [\n {"k": 1, "k": 2}]}', "f.json")
    assert load_json_bounded(text.encode(), "f.json", unique_keys=False)["a"] == 2  # data files: json's own rule


# ---------------------------------------------------------------------------------------- other refusals
def test_json_refusals_name_the_file():
    cases = [
        (b'{"a": ' + b"9" * 5000 + b"}", "holds an integer of more than 4,300 digits"),
        (b'{"a": ["ok", "\\ud800"]}', r"the text at 'a\[1\]' holds a lone surrogate \(U\+D800"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b"[" * 65 + b"]" * 65, "line 1: arrays/objects nest more than 64 levels"),
        (b"\xff", "not UTF-8"),
        (b"{", "not valid JSON"),
        (b" " * (2**20 + 1), "at most 1,048,576 are read"),
    ]
    for data, message in cases:
        with pytest.raises(DataError, match=rf"^f\.json.*{message}"):
            load_json_bounded(data, "f.json", error=DataError)
    assert load_json_bounded(b'{"e": "\\ud83d\\ude00"}', "f.json") == {"e": "\U0001f600"}  # a pair is one character


def test_yaml_lone_surrogate_names_the_line():
    with pytest.raises(ConfigError, match=r"line 3: the text 'a\\ud800' holds a lone surrogate"):
        load_yaml_bounded('x: 1\ny:\n  - "a\\ud800"\n', "f.yaml")


# ---------------------------------------------------------------------------------------- texts and brief
@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("", True),
        (" \t\n", True),
        ("\u200b\u200c\u200d\u2060\ufeff", True),
        ("\u00a0\u3000", True),
        ("\x00\x1f", True),
        ("\u3164\ufe0f\u034f", True),
        ("a", False),
        ("\u200bx", False),
        ("\u0301", False),
    ],
)
def test_is_blank(text, blank):
    assert is_blank(text) is blank


def test_lone_surrogate():
    assert lone_surrogate("ab\udc00") == 2 and lone_surrogate("ok \U0001f600") is None


def test_brief_is_repr_for_small_values_and_bounded_for_any():
    for value in ("pooling", 3, 2.5, None, True, ["a", 1], {"k": "v"}):
        assert brief(value) == repr(value)
    laughs: list = ["lol"] * 9
    for _ in range(9):
        laughs = [laughs] * 9  # 9^10 strings once expanded
    cyclic: list = [1]
    cyclic.append(cyclic)

    class Text(str):
        def __repr__(self) -> str:  # a subclass's own repr is never called: it could be anything
            raise AssertionError("called")

    huge = {f"k{i}": "v" * 10**6 for i in range(1000)}
    for value in (
        laughs,
        cyclic,
        10**5000,
        "x" * 10**7,
        Text("y" * 10**6),
        b"z" * 10**6,
        huge,
        set(range(10**5)),
        (1,) * 10**6,
    ):
        text = brief(value)
        assert len(text) <= 80, text
    assert brief(10**5000).startswith("<integer of about 5,0")
    assert brief("x" * 100, 20) == "'xxxxxxxxxxxxxxxx..."
