"""The run layer's one entry point for `bench leaderboard verify`: re-run a submitted run group as the
maintainer would run it.

The leaderboard reads results through the results layer and runs nothing itself; what a verification
may load is decided here, beside the run, because only the run knows the model families: the model
by what it is (a registered name or hub id at its recorded revision), of the recorded settings only
the family's vector options (bench/adapters/options.py), never a path outside the working directory, and
an API model only against the endpoint the maintainer names. The threat model is in
bench/leaderboard/verify.py.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.adapters.options import family_options, runtime_options
from bench.adapters.registry import MODELS, MTEB_FAMILY, ST_FAMILY, family_class, resolve
from bench.adapters.remote_code import is_api_client, registered_meta, runs_own_code
from bench.core.bounded import printable
from bench.core.fileio import sha256_json, unsafe_member_name
from bench.core.variants import Variant, VariantFile
from bench.results.outcome import TaskOutcome
from bench.results.store import run_settings
from bench.run.runner import RunOptions, run

if TYPE_CHECKING:
    from mteb.models import ModelMeta

ENDPOINT_OPTIONS = (
    "base_url",
)  # a family that takes one of these is remote: re-run only against the maintainer's endpoint


class Refused(Exception):
    """Why a run group is not re-run (its results stay self-reported with this reason)."""


def rerun(
    records: list[dict[str, Any]],
    *,
    data_dir: str | None,
    cache_dir: str | None,
    use_cache: bool,
    output_dir: str,
    base_url: str | None = None,
    trusted: Collection[str] = (),
) -> list[TaskOutcome]:
    """Recompute one run group (records that one `bench run` made together) as the maintainer's run.

    `Refused` says why the group may not be re-run; any other failure is the run's own.
    """
    return run(
        rerun_options(
            records,
            data_dir=data_dir,
            cache_dir=cache_dir,
            use_cache=use_cache,
            output_dir=output_dir,
            base_url=base_url,
            trusted=trusted,
        )
    )


@dataclass(frozen=True)
class Rerun:
    """What the maintainer's re-run of one run group is: the model as it is, with allow-listed options."""

    spec: str
    revision: str | None
    options: dict[str, object]


def rerun_plan(record: dict[str, Any], *, base_url: str | None = None, trusted: Collection[str] = ()) -> Rerun:
    """The maintainer's re-run of the model of a run `record`; `Refused` says why there is none.

    Only the family's vector options come from the record (runtime options such as endpoints, timeouts,
    retries, cache, device are the maintainer's defaults); a hub model is loaded at its recorded revision
    and under its own name, never with its own code (a model MTEB registers: only at MTEB's revision, and
    one whose loader runs the repository's code only when the maintainer names it in `trusted`); an API
    model only against `base_url`.
    """
    recorded = run_settings(record)
    spec = recorded["spec"]
    _check_no_path(spec, "model spec")
    family, source, _ = resolve(spec)  # an unknown model or family: a BenchError, "could not re-run"
    if family in (MTEB_FAMILY, ST_FAMILY) and recorded.get("family") in (MTEB_FAMILY, ST_FAMILY):
        family = recorded["family"]  # one spec, two families: MTEB's implementation or the harness's templates
    cls = family_class(family)
    vector = set(family_options(cls)) - runtime_options(cls) - {"revision"}
    options = {k: v for k, v in recorded["settings"].items() if k in vector}
    for key, value in recorded["settings"].items():  # a template MTEB's implementation ignores too: refused
        if key in vector or key == "template":
            _check_no_path(value, f"option {key}")
    if set(ENDPOINT_OPTIONS) & set(family_options(cls)):
        if not base_url:
            raise Refused(
                "an API result is re-run only against an endpoint the maintainer names "
                "(`bench leaderboard verify --base-url URL`); the recorded endpoint is never contacted"
            )
        options["base_url"] = base_url
    hub = spec not in MODELS and not Path(source).expanduser().exists()
    if hub and getattr(cls, "local_weights", True) and (meta := registered_meta(source)) is not None:
        options |= _registered_options(meta, recorded["revision"], cls, trusted)
    return Rerun(spec, recorded["revision"] if hub else None, options)


def _registered_options(meta: ModelMeta, revision: str, cls: type, trusted: Collection[str]) -> dict[str, object]:
    """What a model MTEB registers may be re-run with; `Refused` when it may not be re-run at all.

    The revision a submission records is the submitter's choice (on the hub, a pull-request ref anyone
    can open): only MTEB's is loaded. A loader that imports the repository's code runs only for a
    model the maintainer names (`--trust-remote-code MODEL`), and MTEB's API clients call their
    provider directly, with the maintainer's key, so they are never re-run.
    """
    if is_api_client(meta):
        raise Refused(
            f"MTEB's implementation of {meta.name} calls its provider's API directly, so it cannot be pointed at "
            "the maintainer's endpoint; an API result is re-run only as `openai:` against `--base-url`"
        )
    if revision != meta.revision:
        raise Refused(
            f"revision differs from the registry's (the submission says {printable(str(revision), 60)}, "
            f"MTEB registers {meta.revision})"
        )
    if "trust_remote_code" not in family_options(cls) or not runs_own_code(meta):
        return {}
    if meta.name not in trusted:
        raise Refused(
            f"{meta.name} runs its own code from its hub repository; re-run it only by naming it: "
            f"`bench leaderboard verify --trust-remote-code {meta.name}`"
        )
    return {"trust_remote_code": True}


def _check_no_path(value: object, what: str) -> None:
    """A recorded value may name a hub id or a file in the working directory, never a path elsewhere."""
    texts = (
        [value]
        if isinstance(value, str)
        else [v for v in (value if isinstance(value, list) else []) if isinstance(v, str)]
    )
    for text in texts:
        body = text.partition(":")[2] if ":" in text and not text.startswith(("/", "~")) else text
        if body.startswith("~") or unsafe_member_name(body):  # absolute, a drive, or climbing out with ..
            raise Refused(
                f"the recorded {what} names a path outside the working directory ({printable(text, 80)}); "
                "a verification loads only models the maintainer controls"
            )


def rerun_options(
    records: list[dict[str, Any]],
    *,
    data_dir: str | None,
    cache_dir: str | None,
    use_cache: bool,
    output_dir: str,
    base_url: str | None = None,
    trusted: Collection[str] = (),
) -> RunOptions:
    """The RunOptions that recompute `records` (one run group) as the maintainer's run (`rerun_plan`)."""
    plan, recorded = rerun_plan(records[0], base_url=base_url, trusted=trusted), run_settings(records[0])
    return RunOptions(
        model=plan.spec,
        model_revision=plan.revision,
        model_options=plan.options,
        tasks=sorted({r["task"]["name"] for r in records}),
        data_dir=data_dir,
        output_dir=output_dir,
        cache_dir=cache_dir,
        use_cache=use_cache,
        limit=recorded["limit"],
        seed=recorded["seed"],
        overwrite=True,
        show_progress_bar=False,
        instruction_style=recorded["instruction_style"],
        instruction_variants=variants_of(records),
    )


def variants_of(records: list[dict[str, Any]]) -> VariantFile | None:
    """The instruction variants the group's run records name, as a variants file (None when there are none).

    Each variant keeps its recorded set, position and label, so the re-run files it in the same experiment.
    """
    found: dict[str, dict[str, Variant]] = {}
    sets: dict[str, tuple[str, ...]] = {}
    for record in records:
        v, task = record.get("variant"), record["task"]["name"]
        if v:
            sets.setdefault(task, tuple(v.get("sets") or ()))
            found.setdefault(task, {})[v["label"]] = Variant(
                task, v["instruction"], v.get("set"), v["index"], v["label"]
            )
    if not found:
        return None
    variants = {
        task: sorted(by_label.values(), key=lambda v: (v.set or "", v.index)) for task, by_label in found.items()
    }
    return VariantFile(
        name="recorded",
        sha256=sha256_json({t: [asdict(v) for v in vs.values()] for t, vs in found.items()}),
        variants=variants,
        sets={t: s for t, s in sets.items() if s},
    )
