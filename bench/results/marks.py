"""The marks a score or a row can carry, one set for the CLI tables, the site and the exports.

Why one place: a reader who learns that `‡` means stand-in data in `bench results` must not find it
meaning something else on the leaderboard or in a paper's LaTeX table. Every surface takes its symbol,
its words and its explanation from here, and explains each mark it uses once (`legend`).

- local copy (†): the score was computed on a local copy of the data (`--data-dir`) whose revision is not
  the task's pinned one; not comparable with the papers.
- stand-in (‡): the run record says the data is a stand-in (proxy) for the task's published set.
- verified (✓): `bench leaderboard verify` recomputed the result and it agreed within 1e-4.
- baseline (∅): the setting is instruction-blind (its model input does not change with the
  instruction, `instruction_use` in the run record): shown for comparison, never ranked or shaded best.
- subset (⊂): a `--limit` run, scored on N of the task's M texts: shown, never ranked or shaded best.
- reported (§): a number a paper printed (`bench.results.literature`), never verified.
- published by MTEB (◇): a number from MTEB's results repository, read with MTEB's loader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


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

MARKS: tuple[Mark, ...] = (LOCAL_COPY, STAND_IN, VERIFIED, BASELINE, SUBSET, REPORTED, PUBLISHED)
BY_KEY = {m.key: m for m in MARKS}


def legend(used: Iterable[Mark | str]) -> list[str]:
    """One line per mark used ("† local copy: computed on ..."), in MARKS order, each once."""
    keys = {u.key if isinstance(u, Mark) else u for u in used}
    return [f"{m.symbol} {m.label}: {m.meaning}." for m in MARKS if m.key in keys]


def follows_instructions(record: dict[str, Any] | None) -> bool | None:
    """Whether a run record's setting feeds the instruction to the model (see `instruction_use`).

    Measured by the run (`model.instruction_use.follows_instructions`); a record from before the
    measurement falls back to the one setting known to be blind (`--template none`): False there,
    None (unknown, treated as following) elsewhere.
    """
    model = (record or {}).get("model") or {}
    use = model.get("instruction_use")
    if isinstance(use, dict) and isinstance(use.get("follows_instructions"), bool):
        return use["follows_instructions"]
    settings = model.get("settings") or {}
    if settings.get("template") == "none" or settings.get("instruction_template") == "none":
        return False
    return None


def is_baseline(record: dict[str, Any] | None) -> bool:
    """An instruction-blind setting: marked BASELINE, never ranked."""
    return follows_instructions(record) is False
