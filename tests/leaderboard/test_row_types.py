"""leaderboard.json's shapes (bench/leaderboard/row_types.py) are the document the writers build: every
object has each key its TypedDict requires and no key it does not name, down to the leaves' types, and the
keys named by a mark are the marks' own keys."""

from __future__ import annotations

import types
import typing
from pathlib import Path

import pytest

from bench.leaderboard import row_types
from bench.leaderboard.entries import Entry, ModelKey, Report
from bench.leaderboard.external import reported_rows
from bench.leaderboard.mteb_published import published_rows
from bench.leaderboard.row_types import (
    ExternalJson,
    LeaderboardJson,
    ModelJson,
    ResultCell,
    SensitivityModel,
    SuiteRow,
)
from bench.leaderboard.schema import Problem
from bench.leaderboard.table import leaderboard_data
from bench.results import marks

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mteb_results"


def _keys(cls: type) -> tuple[set[str], set[str]]:
    """(required, optional) keys of a TypedDict, read from its annotations (`NotRequired[...]`: optional)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    optional = {k for k, h in hints.items() if typing.get_origin(h) is typing.NotRequired}
    return set(hints) - optional, optional


def _mismatches(value: object, hint: object, where: str) -> list[str]:
    """Where `value` does not have the shape `hint` says: a missing or unnamed key, a value of another type."""
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        required, optional = _keys(hint)
        found = [f"{where}: {k} is missing" for k in sorted(required - set(value))]
        found += [f"{where}: {k} is not in {hint.__name__}" for k in sorted(set(value) - required - optional)]
        hints = typing.get_type_hints(hint)
        return found + [p for k, v in value.items() if k in hints for p in _mismatches(v, hints[k], f"{where}.{k}")]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        tried = [_mismatches(value, a, where) for a in args]
        return [] if any(not t for t in tried) else [f"{where}: {value!r:.80} is none of {hint}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        return [p for i, v in enumerate(value) for p in _mismatches(v, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        return [p for k, v in value.items() for p in _mismatches(v, args[1], f"{where}[{k}]")]
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint in (str, bool, type(None)):
        ok = isinstance(value, hint)
    else:  # parsed JSON (`JSON`'s forward references): any value
        ok = True
    return [] if ok else [f"{where}: {value!r:.80} is not {hint}"]


def _board() -> dict:
    """leaderboard.json as `leaderboard_data` builds it: a submitted row, the
    packaged papers' reported rows, MTEB's published rows (the test fixture) and a rejected submission."""
    record = {
        "model": {"name": "org/m", "family": "sentence-transformers", "settings": {"pooling": "mean"}},
        "task": {"main_score": "cosine_spearman", "type": "STS", "instructions_sha256": "abc"},
    }
    result = {"scores": {"test": [{"main_score": 0.5, "cosine_spearman": 0.5}]}, "dataset_revision": "r"}
    key = ModelKey("org/m", "r1", "default")
    shown = Entry("s.zip", "org/m/STSX.json", "STSX", key, result, record)
    external = [*reported_rows(), *published_rows(FIXTURE)]
    rejected = Report("bad.zip", problems=[Problem("unreadable", "x.json", "", "not JSON")])
    return dict(leaderboard_data([Report("s.zip", entries=[shown]), rejected], None, external))


def test_leaderboard_json_has_the_shape_its_types_say():
    data = _board()
    assert data["models"] and data["external"] and data["rejected"] and any(s["rows"] for s in data["suites"])
    assert _mismatches(data, LeaderboardJson, "leaderboard.json") == []


def test_a_key_the_types_do_not_name_or_a_missing_one_is_found():
    """The check above can fail: a row with an extra key, one without a required key, a value of another type."""
    data = _board()
    model = data["models"][0]
    assert _mismatches({**model, "extra": 1}, ModelJson, "m") == ["m: extra is not in ModelJson"]
    assert _mismatches({k: v for k, v in model.items() if k != "id"}, ModelJson, "m") == ["m: id is missing"]
    assert _mismatches({**model, "n_parameters": "7B"}, ModelJson, "m") == [
        "m.n_parameters: '7B' is none of int | None"
    ]
    assert _mismatches({**model, "reproduces": []}, ModelJson, "m") == []  # NotRequired: optional


@pytest.mark.parametrize(
    ("cls", "mark_keys"),
    [
        (ResultCell, (marks.LOCAL_COPY.key, marks.STAND_IN.key)),
        (ModelJson, (marks.BASELINE.key,)),
        (ExternalJson, (marks.BASELINE.key, marks.UNREGISTERED.key)),
        (SuiteRow, (marks.BASELINE.key, marks.LOCAL_COPY.key, marks.STAND_IN.key, marks.SUBSET.key)),
        (SensitivityModel, (marks.BASELINE.key,)),
    ],
)
def test_the_keys_a_mark_names_are_the_marks_own(cls, mark_keys):
    """The writers spell these keys out (a TypedDict's keys are literals); the marks own the names the site's
    CSS and the CSV use, so a renamed mark must rename the key here too."""
    assert set(mark_keys) <= set(typing.get_type_hints(cls))


def test_every_type_says_what_it_is():
    typed = [v for v in vars(row_types).values() if typing.is_typeddict(v) and v.__module__ == row_types.__name__]
    assert len(typed) > 20 and all(t.__doc__ for t in typed)
