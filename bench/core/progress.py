"""Progress of one encode call, for a person at a terminal and for a log file.

On a terminal, a tqdm bar that stays on screen when the task is done (`leave=True`), redraws on every
batch (`miniters=1`, at most twice a second) and, from a heartbeat thread, at least once a second even
while one batch runs (elapsed time and rate keep moving). Anywhere else (stderr redirected to a file, CI, a batch
job) a bar prints nothing useful, so progress becomes log lines on the `bench.core.progress` logger: one when
encoding starts, one at least every `LOG_INTERVAL` seconds with texts done, rate and ETA, and one at
the end. A heartbeat thread keeps the lines coming when a single batch takes longer than the interval
(a 7B model generating), so a log that stays silent means the process is gone, not slow.

The encoder reports whole groups (`update`, after each group is cached) and, from its batching loop,
single batches (`batch_done`), so the count moves per batch, not per group of eight. A family may send
one group's texts to the model as several inputs each (MetaEOL: eight prompts per text); a batch is
then counted as its share of the group, and never past the group's end.

"A terminal" means stderr is a TTY with a width: a pseudo-terminal that reports 0 columns (some CI
runners, `stty cols 0`) would get a bar redrawn as blank lines, so it gets log lines (`stderr_is_terminal`).
Libraries' own bars (transformers' GGUF de-quantisation, downloads) are switched off where the
harness's bar would be (`disable_library_bars`, called by the CLI), so none reaches a log file.

Each encode call is labelled with its task and which of the task's calls it is (`encode_part`, `pass_label`):
`STS12 (sentence 2)`, `SciFact (corpus)`, `NYTClustering (instruction 3)`.
"""

from __future__ import annotations

import datetime
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # MTEB's types load with a task, not with `bench --help`
    from mteb import TaskMetadata
    from mteb.types import PromptType

logger = logging.getLogger(__name__)

LOG_INTERVAL = 10.0  # seconds between log lines when stderr is not a terminal
BAR_MININTERVAL = 0.5  # seconds between redraws of the terminal bar, at most
BAR_REFRESH = 1.0  # seconds between redraws of the terminal bar, at least


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal a bar can be drawn on: a TTY that does not report 0 columns.

    The width is the TTY's own (as tqdm reads it); where it cannot be asked, $COLUMNS decides, and a TTY
    with neither counts as a terminal."""
    stream = sys.stderr
    try:
        if stream is None or not stream.isatty():
            return False
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
    try:
        columns: int | None = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").strip().isdigit() else None
    return columns is None or columns > 0


def disable_library_bars() -> None:
    """Switch off tqdm bars that libraries draw with tqdm's defaults (transformers' "Converting and
    de-quantizing GGUF tensors" uses plain `tqdm.auto.tqdm`, which no transformers setting reaches).

    `TQDM_DISABLE=1` is tqdm's own switch, read when tqdm is imported (and by child processes); when
    tqdm is imported already, its default is set as that variable would have set it. A bar that passes
    `disable` itself (the harness's own, `bench.core.llm_client`'s) keeps its choice. A `TQDM_DISABLE`
    the user set is left as it is."""
    if "TQDM_DISABLE" in os.environ:
        return
    os.environ["TQDM_DISABLE"] = "1"
    std = sys.modules.get("tqdm.std")
    if std is None:
        return
    init = getattr(std, "tqdm", object).__dict__.get("__init__")
    if isinstance(init, functools.partialmethod) and "disable" not in init.keywords:  # tqdm's envwrap
        std.tqdm.__init__ = functools.partialmethod(init.func, *init.args, **{**init.keywords, "disable": True})


def format_duration(seconds: float) -> str:
    """H:MM:SS, as tqdm prints it."""
    return str(datetime.timedelta(seconds=round(max(seconds, 0.0))))


class EncodeProgress:
    """Texts encoded out of `total` for one `encode` call: a tqdm bar on a terminal, log lines elsewhere.

    Args:
        total: texts to encode.
        desc: what is being encoded: the task and which pass of it, e.g. `STS12 (sentence 2)`.
        show: True = bar, False = no bar, None = bar only when stderr is a terminal (`stderr_is_terminal`). Without a bar,
            progress is logged (at INFO; `bench -q` hides it).
        interval: seconds between log lines.
        clock: time source (tests pass a fake one).
        heartbeat: log (or redraw the bar) from a background thread when no batch finishes in time.
    """

    def __init__(
        self,
        total: int,
        desc: str,
        show: bool | None = None,
        *,
        interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: bool = True,
    ) -> None:
        self.total, self.desc, self.interval, self.clock = total, desc, interval, clock
        self.done = 0  # texts of finished groups
        self._group, self._partial = 0, 0.0  # size of the group under way, its texts done so far
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._closed = False
        self._bar = _bar(total, desc) if (stderr_is_terminal() if show is None else show) else None
        self._start = self._last = clock()
        self._thread: threading.Thread | None = None
        if self._bar is None:
            logger.info("%s: encoding %s texts", desc, f"{total:,}")
        else:
            self.interval = BAR_REFRESH
        if heartbeat:
            self._thread = threading.Thread(target=self._beat, name="bench-progress", daemon=True)
            self._thread.start()

    # ----------------------------------------------------------------------------- counting
    @property
    def position(self) -> int:
        """Texts done: finished groups plus the finished share of the group under way."""
        return min(self.total, self.done + min(int(self._partial), self._group))

    def start_group(self, size: int) -> None:
        """A group of `size` texts goes to the model (batches reported next belong to it)."""
        with self._lock:
            self._group, self._partial = size, 0.0

    def batch_done(self, rows: int, call_size: int) -> None:
        """A batch of `rows` model inputs finished, out of `call_size` inputs in the family's call."""
        if self._closed:
            return
        with self._lock:
            share = min(1.0, self._group / call_size) if call_size and self._group else 1.0
            self._partial += rows * share
        self._refresh()

    def update(self, n: int) -> None:
        """A whole group of `n` texts is finished (and cached)."""
        with self._lock:
            self.done += n
            self._group, self._partial = 0, 0.0
        self._refresh()

    # ----------------------------------------------------------------------------- output
    def line(self) -> str:
        """`desc: done/total texts (pct), rate texts/s, ETA H:MM:SS`."""
        position, elapsed = self.position, self.clock() - self._start
        rate = position / elapsed if elapsed > 0 else 0.0
        pct = 100.0 * position / self.total if self.total else 100.0
        eta = format_duration((self.total - position) / rate) if rate > 0 else "unknown"
        return (
            f"{self.desc}: {position:,}/{self.total:,} texts ({pct:.0f}%), {rate:,.1f} texts/s, "
            f"elapsed {format_duration(elapsed)}, ETA {eta}"
        )

    def tick(self, *, force: bool = False) -> None:
        """Log a progress line (redraw the bar) if `interval` seconds passed since the last one, or `force`."""
        with self._lock:
            now = self.clock()
            if not force and now - self._last < self.interval:
                return
            self._last = now
        if self._bar is not None:
            self._bar.refresh()
        else:
            logger.info("%s", self.line())

    def _refresh(self) -> None:
        if self._bar is None:
            self.tick()
            return
        delta = self.position - self._bar.n
        if delta > 0:
            self._bar.update(delta)  # redraws when BAR_MININTERVAL has passed

    def _beat(self) -> None:
        while True:
            wait = max(0.0, self.interval - (self.clock() - self._last))
            if self._stop.wait(wait):
                return
            self.tick()

    def close(self, *, failed: bool = False) -> None:
        """Stop the heartbeat; leave the bar on screen, or log the total (or where it stopped, if `failed`)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.update(self.position - self._bar.n)
            self._bar.close()
        else:
            elapsed = self.clock() - self._start
            done = self.done if failed else self.position  # after a failure: the groups that were kept
            rate = f", {done / elapsed:,.1f} texts/s" if elapsed > 0 else ""
            what = "kept; encoding stopped after" if failed else "encoded in"
            logger.info(
                "%s: %s/%s texts %s %s%s",
                self.desc,
                f"{done:,}",
                f"{self.total:,}",
                what,
                format_duration(elapsed),
                rate,
            )

    def __enter__(self) -> EncodeProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: Any) -> None:
        self.close(failed=exc_type is not None)


def _bar(total: int, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="text",
        leave=True,
        miniters=1,
        mininterval=BAR_MININTERVAL,
        dynamic_ncols=True,
        disable=False,
    )  # shown when asked for, whatever `disable_library_bars` set


# MTEB task types whose evaluator encodes two sides, sentence 1 then sentence 2 (AnySTSEvaluator,
# PairClassificationEvaluator), and those that encode queries and a corpus.
_PAIRED_TYPES = frozenset({"STS", "PairClassification"})
_RETRIEVAL_TYPES = frozenset({"Retrieval", "Reranking", "InstructionRetrieval", "InstructionReranking"})


def encode_part(
    task_metadata: TaskMetadata, prompt_type: PromptType | None, instructions: Sequence[str | None]
) -> str | None:
    """What one `encode` call of a task encodes, as far as the call itself tells: `sentence` (one side of an
    MTEB STS or pair-classification set, whose evaluator encodes sentence 1 then sentence 2), `corpus`
    (documents), `queries` (a retrieval task's plain queries), `instruction` (every row under one
    instruction: a robustness or per-aspect pass), else None (a numbered pass)."""
    from mteb.types import PromptType

    per_row = any(i is not None for i in instructions)
    if not per_row and task_metadata.type in _PAIRED_TYPES and prompt_type != PromptType.document:
        return "sentence"
    if prompt_type == PromptType.document:
        return "corpus"
    if not per_row and prompt_type == PromptType.query and task_metadata.type in _RETRIEVAL_TYPES:
        return "queries"
    if per_row and len(set(instructions)) == 1:
        return "instruction"
    return None


def pass_label(task: str, part: str | None, n: int, subset: str | None = None) -> str:
    """`STS12 (sentence 2)`, `SciFact (corpus, pass 2)`, `NYTClustering (instruction 3)`, `X (pass 2)`: the
    task and which of its encode calls this is, the `n`-th call of its `part` (see `encode_part`)."""
    if part is None and n == 1 and subset is None:  # a task's one pass, or a call outside a task: its name says it
        return task
    if part == "sentence":
        what = f"sentence {2 - n % 2}"  # the evaluator's calls alternate: 1, 2 (and again for the next split)
    elif part in ("queries", "corpus"):
        what = part if n == 1 else f"{part}, pass {n:,}"
    elif part is not None:
        what = f"{part} {n:,}"
    else:
        what = f"pass {n:,}"
    return f"{task} ({subset}, {what})" if subset else f"{task} ({what})"


class PassLabels:
    """The progress labels of one task's encode calls, counting its calls per subset and part."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.passes: dict[tuple[str | None, str | None], int] = {}

    def next(self, part: str | None, subset: str | None) -> str:
        """The next call's label (`pass_label`)."""
        n = self.passes[subset, part] = self.passes.get((subset, part), 0) + 1
        return pass_label(self.task, part, n, subset)
