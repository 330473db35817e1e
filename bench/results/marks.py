"""The marks a score or a row can carry, one set for the CLI tables, the site and the exports.

Why one place: a reader who learns that `‡` means stand-in data in `bench results` must not find it
meaning something else on the leaderboard or in a paper's LaTeX table. Every surface takes its symbol,
its words and its explanation from here, and explains each mark it uses once (`legend`).

- local copy (†): the score was computed on a local copy of the data (`--data-dir`) whose revision is not
  the task's pinned one; not comparable with the papers. A task whose only data is a paper's own split built
  locally (`paper_split`) is not marked: that copy is the paper's data.
- stand-in (‡): the run record says the data is a stand-in (proxy) for the task's published set.
- verified (✓): `bench leaderboard verify` recomputed the result and it agreed within 1e-4.
- baseline (∅): the setting is instruction-blind (its model input does not change with the
  instruction, `instruction_use` in the run record): shown for comparison, never ranked or shaded best.
- subset (⊂): a `--limit` run, scored on N of the task's M texts: shown, never ranked or shaded best.
- reported (§): a number a paper printed (`bench.results.literature`), never verified.
- published by MTEB (◇): a number from MTEB's results repository, read with MTEB's loader.
- not in MTEB's registry (∉): a row read with MTEB's loader (`--mteb-results`) for a model MTEB's model
  registry does not know: its name, revision and facts are its own files', unchecked by MTEB.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bench.core.json_types import object_at
from bench.core.run_record import RecordView


@dataclass(frozen=True)
class Mark:
    key: str  # the field name in leaderboard.json / CSV and the CSS class on the site
    symbol: str  # what the CLI and the site print after a score or a name
    latex: str  # the same symbol for a LaTeX table (math mode where needed; \checkmark needs amssymb)
    label: str  # a word or two: the badge's text
    meaning: str  # the one explanation, shown once under a table that uses the mark


LOCAL_COPY = Mark(
    "local_copy",
    "†",
    r"$^\dagger$",
    "local copy",
    "computed on a local copy of the data (--data-dir), not the task's pinned dataset: not comparable with the papers",
)
STAND_IN = Mark(
    "stand_in",
    "‡",
    r"$^\ddagger$",
    "stand-in",
    "computed on stand-in (proxy) data, not the task's published set: not comparable with published scores",
)
VERIFIED = Mark(
    "verified",
    "✓",
    r"$^\checkmark$",
    "verified",
    "every score recomputed by the leaderboard (bench leaderboard verify) and agrees within 1e-4",
)
BASELINE = Mark(
    "baseline",
    "∅",
    r"$^\varnothing$",
    "baseline",
    "instruction-blind: the model's input is the same under any instruction (measured, see "
    "instruction_use in the run record); shown for comparison, never ranked or shaded best",
)

SUBSET = Mark(
    "subset",
    "⊂",
    r"$^\subset$",
    "subset",
    "a limited run (bench run --limit): scored on a subset of the task's texts, not comparable with a full run; "
    "shown, never ranked or shaded best",
)
REPORTED = Mark(
    "reported",
    "§",
    r"$^\S$",
    "reported",
    "reported in a paper's table, copied as printed: not computed by this harness and never verified (the "
    "table's notes say how its setting differs)",
)
PUBLISHED = Mark(
    "mteb",
    "◇",
    r"$^\diamond$",
    "published by MTEB",
    "published in MTEB's results repository and read with MTEB's own loader: not computed by this harness",
)

UNREGISTERED = Mark(
    "unregistered",
    "∉",
    r"$^\notin$",
    "not in MTEB's registry",
    "a model MTEB's model registry does not know (read from a ResultCache folder, such as your own run): its name, "
    "revision and facts are its own files' (model_meta.json, else the folder's name and revision), unchecked by MTEB",
)

MARKS: tuple[Mark, ...] = (LOCAL_COPY, STAND_IN, VERIFIED, BASELINE, SUBSET, REPORTED, PUBLISHED, UNREGISTERED)


def legend(used: Iterable[Mark | str]) -> list[str]:
    """One line per mark used ("† local copy: computed on ..."), in MARKS order, each once."""
    keys = {u.key if isinstance(u, Mark) else u for u in used}
    return [f"{m.symbol} {m.label}: {m.meaning}." for m in MARKS if m.key in keys]


def follows_instructions(record: RecordView | None) -> bool | None:
    """Whether a run record's setting feeds the instruction to the model (see `instruction_use`).

    Measured by the run (`model.instruction_use.follows_instructions`); a record from before the
    measurement falls back to the one setting known to be blind (`--template none`): False there,
    None (unknown, treated as following) elsewhere.
    """
    model = object_at((record or {}).get("model"))
    follows = object_at(model.get("instruction_use")).get("follows_instructions")
    if isinstance(follows, bool):
        return follows
    settings = object_at(model.get("settings"))
    if settings.get("template") == "none" or settings.get("instruction_template") == "none":
        return False
    return None


def is_baseline(record: RecordView | None) -> bool:
    """An instruction-blind setting: marked BASELINE, never ranked."""
    return follows_instructions(record) is False


# The other marks a run record earns: its data (LOCAL_COPY, STAND_IN) and a --limit (SUBSET).
def stand_in(record: RecordView | None) -> str | None:
    """The stand-in note of a run record's data, or None when the data is the task's published set."""
    dataset = object_at(object_at((record or {}).get("task")).get("dataset"))
    return str(dataset.get("stand_in_note") or "stand-in data") if dataset.get("stand_in") else None


def local_copy(record: RecordView | None) -> bool:
    """True when a run record's data was a local copy (`--data-dir`): its source is `local:<folder>`, or its
    revision a `local-<hash>` not shipped in the package. A result without a record is not marked."""
    task = object_at((record or {}).get("task"))
    dataset = object_at(task.get("dataset"))
    source, revision = str(dataset.get("source") or ""), str(dataset.get("revision") or "")
    local = source.startswith("local:") or (revision.startswith("local-") and source != "package")
    return local and not paper_split(str(task.get("name") or ""))


def paper_split(task: str) -> bool:
    """True for a task whose only data is a paper's own split built locally (`bench build-data`, `local_only` in
    the task catalogue: MetaEOL's SentEval STS-B and SICK-R): its local copy is the paper's data, not another set."""
    from bench.results import task_catalog

    facts = task_catalog.facts(task) if task else None
    return bool(facts and facts.get("local_only"))


def data_marks(record: RecordView | None) -> tuple[Mark, ...]:
    """The marks a score carries for the data it was computed on (local copy †, stand-in ‡)."""
    return tuple(m for m, on in ((LOCAL_COPY, local_copy(record)), (STAND_IN, stand_in(record) is not None)) if on)


def limit_of(record: RecordView | None) -> int | None:
    """The `--limit` a result was run with (the run record's `task.limit`); None for a full run."""
    limit = object_at((record or {}).get("task")).get("limit")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def texts_of(record: RecordView | None) -> int | None:
    """How many texts the run sent to the model (`encode.texts_requested`), None when the record says not."""
    texts = object_at((record or {}).get("encode")).get("texts_requested")
    return texts if isinstance(texts, int) and not isinstance(texts, bool) and texts > 0 else None


def subset_words(limit: int, texts: int | None = None, total: int | None = None) -> str:
    """What a `--limit` result was scored on: "subset: 76 of 486 texts (--limit 8)" when the full run's count
    is known (a full run of the same tasks in the same table), else "subset of the texts (76, --limit 8)"."""
    if texts and total:
        return f"subset: {texts:,} of {total:,} texts (--limit {limit})"
    return f"subset of the texts ({f'{texts:,}, ' if texts else ''}--limit {limit})"
