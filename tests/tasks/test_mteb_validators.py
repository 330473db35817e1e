"""MTEB's own checks on every task and benchmark the harness registers, as MTEB's test suite runs them.

With `import bench.tasks`, MTEB lists the harness's tasks (`mteb.get_tasks`) and suites (`mteb.get_benchmarks`);
MTEB's contributor tests then hold them to three rules, each checked here with MTEB's public API:

1. Metadata: `TaskMetadata` validates (pydantic, plus every language code through
   `mteb.languages.check_language_code`, which is what `TaskMetadata._validate_metadata` runs) and
   `TaskMetadata.is_filled()` is true.
2. BibTeX: a task's `bibtex_citation` and a benchmark's `citation` are in MTEB's canonical form. MTEB 2.26
   ships no public function for it: its check (`tests/test_citation_formatting.py` in MTEB's repository) parses
   the entry with bibtexparser 1.x (`BibTexParser(common_strings=True, ignore_nonstandard_types=False,
   interpolate_strings=False)`), writes it back with `BibTexWriter` (indent two spaces, comma last, trailing
   comma) and requires the text unchanged. `mteb_bibtex_form` applies that same rule with the same library
   (a dev dependency, `bibtexparser>=1.4,<2`: 2.x dropped that API).
3. Descriptive statistics: MTEB requires `TaskMetadata.descriptive_stats` (and so `n_samples`) for every task.
   Tasks that have none are declared in `NO_STATISTICS`, each with its reason; a new task without statistics
   fails here until it is declared (or ships its statistics).

Not marked `registry`: a task added exactly as docs/guides/add-a-task.md says (one file) is not held to MTEB's
contributor rules, which ask for a reference, a citation and statistics that a private task may not have.
"""

from __future__ import annotations

import bibtexparser
import mteb
import pytest
from bibtexparser.bparser import BibTexParser
from bibtexparser.bwriter import BibTexWriter
from mteb import TaskMetadata
from mteb.languages import check_language_code

from bench import tasks
from bench.tasks import mteb_compat
from bench.tasks.benchmarks import benchmark_name, suite_benchmarks
from bench.tasks.citations import SUITE_SOURCES
from bench.tasks.registry import SUITES


def mteb_bibtex_form(bibtex: str) -> str | None:
    """`bibtex` as MTEB's citation check writes it (None: no entry parsed). See the module docstring."""
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False, interpolate_strings=False)
    database = bibtexparser.loads(bibtex, parser)
    if not database.entries:
        return None
    writer = BibTexWriter()
    writer.indent = "  "
    writer.comma_first = False
    writer.add_trailing_comma = True
    return writer.write(database).strip()


def _own(task: object) -> bool:
    """A task MTEB lists whose class is the harness's (not one of MTEB's own classes)."""
    cls = type(task)
    return tasks.TASKS.get(cls.metadata.name) is cls


# The tasks MTEB lists with all its filters off, as MTEB's metadata test enumerates them.
LISTED = {t.metadata.name: t for t in mteb.get_tasks(exclude_superseded=False, exclude_aggregate=False) if _own(t)}
BENCHMARK_NAMES = [benchmark_name(s) for s in SUITES]

_HUB = "its pinned hub data ({}) is not on this machine and the harness runs offline; no local copy is provably that revision"

# Every harness task MTEB lists without descriptive statistics, and why (docs/guides/mteb.md lists the same:
# tests/tasks/test_task_statistics.py). The demo tasks and the SentEval splits ship theirs (bench/tasks/descriptive_stats).
NO_STATISTICS: dict[str, str] = {
    "GSTPaperCode": "a loading-script dataset that datasets>=4 cannot load: the task runs only from a local directory",
    "RateMyProfClustering": _HUB.format("BrandonZYW/RateMyProfClustering")
    + "; `bench build-data` writes a label-derived stand-in, not the published set",
    "FeedbacksClustering": _HUB.format("BrandonZYW/FeedbacksClustering")
    + "; `bench build-data` writes a label-derived stand-in, not the published set",
    **{
        name: _HUB.format(path)
        for name, path in {
            "IntentEmotion": "BrandonZYW/IntentEmotion",
            "NYTClustering": "BrandonZYW/NYTClustering",
            "InstructSTSB": "BrandonZYW/InstructSTSB",
            "NYTTopicClustering": "BrandonZYW/NYTClustering",
            "FewRelClustering": "BrandonZYW/FewRelClustering",
            "FewEventClustering": "BrandonZYW/FewEventClustering",
            "FewNerdClustering": "BrandonZYW/FewNerdClustering",
            "GSTNYTClust": "BrandonZYW/NYTClustering",
            "GSTIntEmo": "BrandonZYW/IntentEmotion",
            "GSTAmzCF": "mteb/amazon_counterfactual",
            "GSTMNews": "mteb/masakhanews",
            "GSTMultiHate": "mteb/multi-hatecheck",
            "GSTBigPatent": "mteb/big-patent",
            "GSTToxic": "mteb/toxic_conversations_50k",
            "GSTAGNews": "fancyzhx/ag_news",
        }.items()
    },
}


# ---------------------------------------------------------------- the rule itself


PADDED = """@article{feng2025gstransform,
  title   = {Don't Reinvent the Wheel},
  author  = {Feng, Yingchaojie and Chen, Wei},
  year    = {2025}
}"""
CANONICAL = """@article{feng2025gstransform,
  author = {Feng, Yingchaojie and Chen, Wei},
  title = {Don't Reinvent the Wheel},
  year = {2025},
}"""


def test_mteb_bibtex_form_rewrites_padded_fields_and_keeps_the_canonical_form():
    assert mteb_bibtex_form(PADDED) == CANONICAL != PADDED
    assert mteb_bibtex_form(CANONICAL) == CANONICAL
    assert mteb_bibtex_form("no entry here") is None


def test_mteb_bibtex_form_orders_several_entries_by_key():
    second = CANONICAL.replace("feng2025gstransform", "aaa2020first")
    assert mteb_bibtex_form(f"{CANONICAL}\n\n{second}") == f"{second}\n\n{CANONICAL}"


# ---------------------------------------------------------------- (1) metadata


def test_mteb_lists_every_harness_task():
    own = {n for n, c in tasks.TASKS.items() if mteb_compat.mteb_registry().get(n) is c}
    assert set(LISTED) == own and {"IntentEmotion", "DemoNYTClustering", "GSTAGNews", "FewRelClustering"} <= own


@pytest.mark.parametrize("name", sorted(LISTED))
def test_task_metadata_is_valid_and_filled(name):
    meta = LISTED[name].metadata
    TaskMetadata.model_validate(meta.model_dump())  # every field validator again, on the values as they are
    for langs in meta.hf_subsets_to_langscripts.values():
        for code in langs:
            check_language_code(code)
    assert meta.is_filled(), [f for f in TaskMetadata.model_fields if getattr(meta, f) is None]
    assert meta.dataset.get("trust_remote_code", False) is False


# ---------------------------------------------------------------- (2) BibTeX


@pytest.mark.parametrize("name", sorted(tasks.TASKS))
def test_task_bibtex_is_in_mteb_form(name):
    """Every registered task, the instructed copies of MTEB's tasks included (they keep MTEB's citation)."""
    citation = (tasks.TASKS[name].metadata.bibtex_citation or "").strip()
    if citation:
        assert mteb_bibtex_form(citation) == citation, f"{name}: write it as\n{mteb_bibtex_form(citation)}"


def test_only_the_demo_tasks_have_no_citation():
    uncited = {n for n, c in tasks.TASKS.items() if not (c.metadata.bibtex_citation or "").strip()}
    assert uncited == {"DemoIntentEmotion", "DemoInstructSTS", "DemoNYTClustering"}  # data made for the harness


@pytest.mark.parametrize("name", BENCHMARK_NAMES)
def test_benchmark_has_a_reference_and_a_citation_in_mteb_form(name):
    benchmark = mteb.get_benchmark(name)
    assert benchmark.reference and benchmark.reference.startswith("https://"), name
    citation = (benchmark.citation or "").strip()
    assert citation, f"{name} has no citation"
    assert mteb_bibtex_form(citation) == citation, f"{name}: write it as\n{mteb_bibtex_form(citation)}"


def test_every_suite_declares_its_sources():
    assert set(SUITES) <= set(SUITE_SOURCES)
    assert {b.name for b in suite_benchmarks()} == set(BENCHMARK_NAMES)


# ---------------------------------------------------------------- (3) descriptive statistics


def test_tasks_without_descriptive_statistics_are_the_declared_ones():
    missing = {name for name, task in LISTED.items() if task.metadata.descriptive_stats is None}
    assert missing == set(NO_STATISTICS), (
        f"undeclared: {sorted(missing - set(NO_STATISTICS))}; declared but now present: "
        f"{sorted(set(NO_STATISTICS) - missing)}"
    )
    assert all(reason.strip() for reason in NO_STATISTICS.values())
    for name, task in LISTED.items():  # MTEB derives n_samples from the statistics
        assert (task.metadata.n_samples is None) == (name in NO_STATISTICS), name


# ---------------------------------------------------------------- MTEB's whole registry


def test_mteb_whole_registry_still_works():
    listed = [t.metadata.name for t in mteb.get_tasks(exclude_superseded=False, exclude_aggregate=False)]
    assert len(listed) == len(set(listed)) and set(LISTED) <= set(listed)
    benchmarks = [b.name for b in mteb.get_benchmarks()]
    assert len(benchmarks) == len(set(benchmarks)) and set(BENCHMARK_NAMES) <= set(benchmarks)
    assert "MTEB(eng, v2)" in benchmarks  # MTEB's own stay listed
