"""Local copies of the GSTransform datasets whose public sources are staged (paper §4.2, appendix B).

Each builder writes the local layout of its task (bench/tasks/gstransform.py): one file per aspect,
`text,cluster` for the clustering tasks and `text,label` for the tasks that sample pairs or
triplets at run time (sampling is the task's job, seeded by `bench run --seed`, so the files hold
every labelled row). `size` keeps a label-stratified random subset of that many rows per aspect.

| task         | source (staged)                                                      | stand-in? |
|--------------|----------------------------------------------------------------------|-----------|
| GSTAmzCF     | Amazon counterfactual EN_test.tsv (670; = MTEB amazon_counterfactual en test) | no |
| GSTMNews     | MasakhaNEWS eng test.tsv (948; `text` column)                        | no        |
| GSTMultiHate | Multilingual HateCheck (10 languages) + English HateCheck            | no        |
| GSTToxic     | 101-row Jigsaw-2018 sample (IBM MAX), not toxic_conversations_50k    | yes       |
| GSTAGNews    | AG News test.csv (7,600; title + " " + description)                  | no        |
| GSTIntEmo    | label-derived triplets: BANKING77 intents, GoEmotions emotions        | yes       |

NYTClust, PaperCode and Big Patent have no staged source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench.core.errors import DataError
from bench.dataset_builders.common import (
    SourceFile,
    csv_bytes,
    parse_delimited,
    read_source,
    summary,
    write_manifest,
    write_outputs,
)
from bench.tasks.data import stratified_indices

AMZCF_TEST = "amazon-multilingual-counterfactual-dataset/data/EN_test.tsv"
MNEWS_TEST = "masakhane-news/data/eng/test.tsv"
MHC_DIR = "multilingual-hatecheck/MHC Final Cases"
MHC_LANGUAGES = (
    "arabic",
    "dutch",
    "french",
    "german",
    "hindi",
    "italian",
    "mandarin",
    "polish",
    "portuguese",
    "spanish",
)
HATECHECK_EN = "hatecheck-data/test_suite_cases.csv"
TOXIC_SAMPLE = "MAX-Toxic-Comment-Classifier/samples/test_examples.csv"
AGNEWS_TEST = "CharCnn_Keras/data/ag_news_csv/test.csv"
AGNEWS_CLASSES = "CharCnn_Keras/data/ag_news_csv/classes.txt"

Labelled = list[tuple[str, str]]  # (text, label)


def _clean(rows: Labelled, where: str) -> Labelled:
    """Strip texts, drop empty ones; the first occurrence of a repeated (text, label) is kept."""
    out, seen = [], set()
    for text, label in rows:
        text, label = text.strip(), label.strip()
        if not label:
            raise DataError(f"{where}: empty label for text {text[:60]!r}.")
        if text and (text, label) not in seen:
            seen.add((text, label))
            out.append((text, label))
    if not out:
        raise DataError(f"{where}: no labelled rows.")
    return out


def amzcf_rows(src: SourceFile) -> Labelled:
    rows = parse_delimited(src, delimiter="\t", required=("sentence", "is_counterfactual"))
    names = {"0": "not-counterfactual", "1": "counterfactual"}
    for r in rows:
        if r["is_counterfactual"] not in names:
            raise DataError(f"{src.rel_path}: is_counterfactual must be 0 or 1, found {r['is_counterfactual']!r}.")
    return _clean([(r["sentence"], names[r["is_counterfactual"]]) for r in rows], src.rel_path)


def mnews_rows(src: SourceFile) -> Labelled:
    rows = parse_delimited(src, delimiter="\t", required=("category", "headline", "text"))
    return _clean([(r["text"], r["category"]) for r in rows], src.rel_path)


def hatecheck_rows(src: SourceFile) -> Labelled:
    rows = parse_delimited(src, required=("test_case", "label_gold"))
    return _clean([(r["test_case"], r["label_gold"]) for r in rows], src.rel_path)


def toxic_rows(src: SourceFile) -> Labelled:
    rows = parse_delimited(src, required=("comment_text", "toxic"))
    names = {"0": "not toxic", "1": "toxic"}
    return _clean([(r["comment_text"], names.get(r["toxic"], "")) for r in rows], src.rel_path)


def agnews_rows(src: SourceFile, classes: SourceFile) -> Labelled:
    names = [line.strip() for line in classes.text.splitlines() if line.strip()]
    out = []
    for n, row in enumerate(parse_delimited(src, header=False), start=1):
        if len(row) != 3 or not row[0].isdigit() or not 1 <= int(row[0]) <= len(names):
            raise DataError(f"{src.rel_path} record {n}: expected class (1-{len(names)}), title, description.")
        out.append((f"{row[1]} {row[2]}", names[int(row[0]) - 1]))
    return _clean(out, src.rel_path)


def _subset(rows: Labelled, size: int | None, seed: int) -> Labelled:
    if size is None:
        return rows
    if size <= 0:
        raise DataError(f"--size must be a positive number of rows, got {size}.")
    return [rows[i] for i in stratified_indices([lab for _, lab in rows], size, seed=seed)]


def _write_task(
    out_dir: Path,
    task: str,
    files: dict[str, Labelled],
    label_column: str,
    *,
    sources: list[SourceFile],
    seed: int,
    size: int | None,
    note: str,
    proxy: bool = False,
) -> dict[str, object]:
    task_dir = Path(out_dir) / task
    kept = {aspect: _subset(rows, size, seed) for aspect, rows in files.items()}
    outputs = write_outputs(
        task_dir,
        {f"{aspect}.csv": (csv_bytes(("text", label_column), rows), len(rows)) for aspect, rows in kept.items()},
    )
    labels = {f"{a}.csv": sorted({lab for _, lab in rows}) for a, rows in files.items()}
    return write_manifest(
        task_dir,
        {
            "builder": f"bench.dataset_builders.gstransform_sources ({task})",
            "task": task,
            "proxy": proxy,
            "note": note,
            "seed": seed,
            "parameters": {"size": size, "label_column": label_column},
            "labels": labels,
            "sources": [s.record for s in sources],
            "outputs": outputs,
        },
    )


def _amzcf(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    src = read_source(source_dir, AMZCF_TEST)
    return _write_task(
        out_dir,
        "GSTAmzCF",
        {"counterfactual": amzcf_rows(src)},
        "cluster",
        sources=[src],
        seed=seed,
        size=size,
        note="Amazon counterfactual EN test split (MTEB amazon_counterfactual, config en, split test).",
    )


def _mnews(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    src = read_source(source_dir, MNEWS_TEST)
    return _write_task(
        out_dir,
        "GSTMNews",
        {"topic": mnews_rows(src)},
        "cluster",
        sources=[src],
        seed=seed,
        size=size,
        note="MasakhaNEWS English test split; text = article body (the `text` column).",
    )


def _multihate(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    sources, hateful, language = [], [], []
    files = [(lang.capitalize(), f"{MHC_DIR}/hatecheck_cases_final_{lang}.csv") for lang in MHC_LANGUAGES]
    for lang, rel in [*files, ("English", HATECHECK_EN)]:
        src = read_source(source_dir, rel)
        sources.append(src)
        rows = hatecheck_rows(src)
        hateful += rows
        language += [(text, lang) for text, _ in rows]
    return _write_task(
        out_dir,
        "GSTMultiHate",
        {"hateful": hateful, "language": language},
        "label",
        sources=sources,
        seed=seed,
        size=size,
        note="Multilingual HateCheck (10 languages) plus the original English HateCheck, as MTEB "
        "multi-hatecheck; the same texts labelled hateful/non-hateful and by language.",
    )


def _toxic(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    src = read_source(source_dir, TOXIC_SAMPLE)
    return _write_task(
        out_dir,
        "GSTToxic",
        {"toxic": toxic_rows(src)},
        "label",
        sources=[src],
        seed=seed,
        size=size,
        proxy=True,
        note="STAND-IN: 101 Jigsaw-2018 Wikipedia comments (IBM MAX sample), not the paper's "
        "toxic_conversations_50k (Civil Comments); scores are not comparable.",
    )


def _agnews(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    src, classes = read_source(source_dir, AGNEWS_TEST), read_source(source_dir, AGNEWS_CLASSES)
    return _write_task(
        out_dir,
        "GSTAGNews",
        {"topic": agnews_rows(src, classes)},
        "label",
        sources=[src, classes],
        seed=seed,
        size=size,
        note="AG News test split (7,600); text = title + ' ' + description.",
    )


def _intemo(source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    from bench.dataset_builders.label_derived import build_intent_emotion_proxy

    return build_intent_emotion_proxy(
        source_dir=source_dir, out_dir=out_dir, seed=seed, size=size, task_name="GSTIntEmo"
    )


PARTS: dict[str, Callable[[Path, Path, int, int | None], dict[str, object]]] = {
    "GSTAmzCF": _amzcf,
    "GSTMNews": _mnews,
    "GSTMultiHate": _multihate,
    "GSTToxic": _toxic,
    "GSTAGNews": _agnews,
    "GSTIntEmo": _intemo,
}


def build_gstransform(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None, only: tuple[str, ...] | None = None
) -> dict[str, object]:
    """Every GSTransform task with a staged source (or the tasks in `only`)."""
    manifests = {task: PARTS[task](Path(source_dir), Path(out_dir), seed, size) for task in (only or tuple(PARTS))}
    return {"summary": summary("gstransform", seed, manifests), "tasks": manifests}


def _single(task: str) -> Callable[..., dict[str, object]]:
    def build(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, object]:
        return build_gstransform(source_dir=source_dir, out_dir=out_dir, seed=seed, size=size, only=(task,))

    build.__doc__ = f"Only {task} (see build_gstransform)."
    return build


build_gst_amzcf = _single("GSTAmzCF")
build_gst_mnews = _single("GSTMNews")
build_gst_multihate = _single("GSTMultiHate")
build_gst_toxic = _single("GSTToxic")
build_gst_agnews = _single("GSTAGNews")
build_gst_intemo = _single("GSTIntEmo")
