"""The rows a task reads and the rows of the split it evaluates, as types.

Why: a row read from a local file is whatever the file holds (`RawRow`: a CSV field is a `str`, a JSON value
any JSON, a parquet value any Arrow scalar as Python); once `bench.tasks.data.validate_rows` has checked
it against the task's `Schema` it is one of the TypedDicts below, so a task's `_assemble` indexes
columns whose types mypy knows (a text is a `str`, a score a `float`) instead of `Any`.

Published layouts (docs/guides/local-data.md), one TypedDict each; `Schema` checks that its columns are
exactly the TypedDict's keys:

* `TripletRow`: anchor, positive, negative (IntentEmotion).
* `STSRow`: sentence1, sentence2, score (MTEB's STS tasks in the jsonl layout); `InstructedSTSRow` adds
  the row's instruction (InstructSTSB).
* `ClusterRow`: text, cluster (NYTClustering, the robustness corpora, the GSTransform clustering sets).
* `LabelledRow`: text, label (the GSTransform sets whose pairs and triplets are sampled).

The assembled rows (`Dataset.from_list` of them is the evaluated split) are the `*Item` TypedDicts; the STS
tasks evaluate their validated rows as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, TypeVar

# A gold label as `validate_rows` keeps it: a text or a number (a bool is an int), never a list or null.
Label = str | int | float
# A row as a file or the hub gives it, before validation: its values are whatever the file holds.
RawRow = Mapping[str, object]
# A row of the split a task evaluates (what `_assemble` returns): an `*Item` TypedDict below, or the STS tasks' rows.
SplitRow = Mapping[str, object]


class TripletRow(TypedDict):
    anchor: str
    positive: str
    negative: str


class STSRow(TypedDict):
    sentence1: str
    sentence2: str
    score: float


class InstructedSTSRow(STSRow):
    instruction: str


class ClusterRow(TypedDict):
    text: str
    cluster: Label


class LabelledRow(TypedDict):
    text: str
    label: Label


class TripletItem(TripletRow):
    """A triplet of the evaluated split: the criterion it belongs to and the instruction it is embedded under."""

    criterion: str
    instruction: str


class CorpusItem(TypedDict):
    """A text of a robustness corpus; its cluster as a string, so int and str labels fit one Arrow column."""

    text: str
    cluster: str


class AspectClusterItem(CorpusItem):
    """A text of one aspect of a multi-aspect clustering, under that aspect's instruction."""

    aspect: str
    instruction: str


class PairIndexItem(TypedDict):
    """A sampled pair: indices into the aspect's pool of texts and its 0/1 gold score."""

    aspect: str
    first: int
    second: int
    score: int


class TripletIndexItem(TypedDict):
    """A sampled triplet: indices into the aspect's pool of texts."""

    aspect: str
    anchor: int
    positive: int
    negative: int


# The validated row type of a task's data files (one of the TypedDicts above).
RowT = TypeVar("RowT", bound=RawRow)

__all__ = [
    "AspectClusterItem",
    "ClusterRow",
    "CorpusItem",
    "InstructedSTSRow",
    "Label",
    "LabelledRow",
    "PairIndexItem",
    "RawRow",
    "RowT",
    "STSRow",
    "SplitRow",
    "TripletIndexItem",
    "TripletItem",
    "TripletRow",
]
