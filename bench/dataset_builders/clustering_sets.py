"""Builders for the robustness clustering corpora (`bench build-data NAME --source-dir RAW --out DIR`).

Each writes `<out>/<TaskName>/<part>.jsonl` (keys text, cluster: the published schema) and a
`manifest.json` beside it (builder, note, seed, size, source files with sha256, output rows and sha256,
cluster counts). Outputs hold no timestamps, so a rebuild with the same inputs is byte-identical.

Sources, and how close each is to the published set:

* FewRel / FewNerd / FewEvent: ClusterLLM's dataset release (`Cluster-Swarm/datasets/{few_rel_nat,
  few_nerd_nat,few_event}/small.jsonl`, keys task,input,label). InBedder took these three sets from
  ClusterLLM (appendix B, same authors), and the files have exactly the published sizes and label counts
  (4,480 / 64, 3,789 / 58, 4,742 / 34); each input already ends with the appended entities, entity or
  trigger ("The relation between X and Y.") that the instructions refer to. Identity with the BrandonZYW
  revisions is likely but unverified. FewRel's own `val_wiki.json` (16 other relations) and FewShot_ED's
  FewEvent split (10 types, different sentences) are NOT used: they are different sets, and the
  instructions assume the appended-entity form.
* RateMyProf / Feedbacks: STAND-INS. InBedder's sets were labelled with GPT-4 from GoalEx runs that are
  not public. Here the texts are real (GoalEx `taxonomy/taxonomy_4.json`: RateMyProfessor reviews;
  `taxonomy_0.json`: human feedback on summaries) and the labels are GoalEx's own LLM cluster
  assignments (multi-label, covering part of the texts). The child clusters matching InBedder's
  clusters are mapped to them (4 for RateMyProf, 3 for Feedbacks; `GOALEX_CLUSTERS`), texts in exactly
  one mapped cluster are kept, and the clusters are balanced to equal size, as appendix B describes.
  The result is far smaller than the published sets (48 and 66 texts instead of 2,296 and 756).
* NYT: GoalEx `processed_data/nyt/{topic,location}/labels.json` hold label ids only; the texts
  (`data.json`, ~2,160 articles) could not be obtained offline. The builder needs the user to place
  GoalEx's `data.json` files in the source directory and fails with instructions otherwise; it never
  invents texts.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bench.core.bounded import MAX_SOURCE_BYTES, load_json_bounded, load_jsonl_bounded, read_at_most
from bench.core.errors import DataError
from bench.core.fileio import atomic_write_text, sha256_text

CLUSTER_LLM = {
    "FewRelClustering": "Cluster-Swarm/datasets/few_rel_nat/small.jsonl",
    "FewNerdClustering": "Cluster-Swarm/datasets/few_nerd_nat/small.jsonl",
    "FewEventClustering": "Cluster-Swarm/datasets/few_event/small.jsonl",
}
GOALEX_TAXONOMY = {
    "RateMyProfClustering": "GoalEx/taxonomy/taxonomy_4.json",
    "FeedbacksClustering": "GoalEx/taxonomy/taxonomy_0.json",
}
NYT_DIR = "GoalEx/processed_data/nyt"
NYT_ASPECTS = ("topic", "location")

# GoalEx child-cluster description prefix -> InBedder cluster name (paper Table 3).
GOALEX_CLUSTERS = {
    "RateMyProfClustering": {
        "talks about professor's personality": "personal qualities",
        "comments on course difficulty": "ease or difficulty",
        "mentions grading or exams": "assessment-related",
        "comments on workload and time commitment": "amount of work",
    },
    "FeedbacksClustering": {
        "points out an omission in the summary": "inclusion of main points",
        "identifies inaccuracies or errors": "content accuracy",
        "highlights ambiguity or vagueness": "structure, coherence",
        "suggests a rephrasing for better flow": "structure, coherence",
    },
}

CLUSTER_LLM_NOTE = (
    "{task} corpus from ClusterLLM's release ({source}), the source InBedder names (appendix B); same "
    "size and number of clusters as the published BrandonZYW/{task}, identity unverified. Texts and "
    "labels verbatim."
)
GOALEX_NOTE = (
    "STAND-IN for InBedder's {task}, NOT the published set (which was labelled with GPT-4 from unpublished "
    "GoalEx runs). Texts are real ({source}); labels are GoalEx's LLM cluster assignments, kept only for texts "
    "assigned to exactly one of the mapped clusters, mapped to InBedder's cluster names and balanced to equal size. Scores "
    "are not comparable to published {task} numbers."
)
NYT_NOTE = (
    "NYTClustering topic/location corpus: GoalEx NYT texts ({texts}) with GoalEx label ids mapped to their "
    "class descriptions."
)


Row = TypeVar("Row", bound=Mapping[str, object])  # a row of a part: {"text": ..., "cluster": ...}


# --------------------------------------------------------------------------- shared helpers
def _source(source_dir: Path, rel_path: str, why: str = "") -> tuple[str, dict[str, object]]:
    """Text of a raw file and its manifest record; a missing file is a DataError saying what to pass."""
    path = Path(source_dir) / rel_path
    if not path.is_file():
        raise DataError(
            f"Source file not found: {path}.{why} Pass --source-dir the raw data root that holds "
            f"'{rel_path}' (e.g. ../shared/data/raw)."
        )
    data = read_at_most(path, MAX_SOURCE_BYTES)
    if len(data) > MAX_SOURCE_BYTES:
        raise DataError(
            f"{path} is larger than {MAX_SOURCE_BYTES:,} bytes; the published file is a few MB. Check that it is the "
            "file the builder expects."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}).") from None
    return text, {"path": rel_path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def _json(text: str, rel_path: str) -> Any:
    """A raw JSON source, parsed within bounds (size, nesting, integer digits): one DataError naming it."""
    return load_json_bounded(text, rel_path, error=DataError, max_bytes=MAX_SOURCE_BYTES, unique_keys=False)


def _jsonl(rows: Sequence[Mapping[str, object]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _write_task(
    out_dir: Path, task: str, parts: Mapping[str, Sequence[Mapping[str, object]]], manifest: dict[str, object]
) -> dict[str, object]:
    """Write each part as `<part>.jsonl` and the manifest (atomically); return the manifest."""
    task_dir = Path(out_dir) / task
    outputs = {}
    for part, rows in parts.items():
        text = _jsonl(rows)
        atomic_write_text(task_dir / f"{part}.jsonl", text)
        counts = Counter(str(r["cluster"]) for r in rows)
        outputs[f"{part}.jsonl"] = {
            "rows": len(rows),
            "clusters": len(counts),
            "cluster_sizes": dict(sorted(counts.items())),
            "sha256": sha256_text(text),
        }
    manifest = {**manifest, "task": task, "outputs": outputs}
    atomic_write_text(task_dir / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    summary = {
        "task": task,
        "folder": str(task_dir),
        **{name: f"{o['rows']} rows, {o['clusters']} clusters" for name, o in outputs.items()},
        "stand_in": manifest.get("proxy", False),
    }
    return {**manifest, "summary": summary}  # the summary (with the output path) stays out of the file


def _sample(rows: list[Row], size: int | None, seed: int) -> list[Row]:
    """All rows, or a stratified sample of `size` (every cluster kept when size allows), in source order."""
    if size is None:
        return rows
    from bench.tasks.data import stratified_indices  # importing `bench.tasks` loads mteb: only when sampling

    if size <= 0:
        raise DataError(f"--size must be a positive number of rows, got {size}.")
    return [rows[i] for i in stratified_indices([r["cluster"] for r in rows], size, seed=seed)]


# --------------------------------------------------------------------------- ClusterLLM (Few*)
def parse_cluster_llm(text: str, rel_path: str) -> list[dict[str, str]]:
    """ClusterLLM JSON lines {task, input, label} -> rows {text, cluster}; bad lines name their number."""
    rows = []
    for line_no, obj in load_jsonl_bounded(text, rel_path, error=DataError):  # size, depth, digits bounded
        if not isinstance(obj, dict) or not isinstance(obj.get("input"), str) or obj.get("label") in (None, ""):
            raise DataError(f"{rel_path} line {line_no}: expected an object with a text 'input' and a 'label'.")
        if not obj["input"].strip():
            raise DataError(f"{rel_path} line {line_no}: empty 'input'.")
        rows.append({"text": obj["input"], "cluster": str(obj["label"])})
    if not rows:
        raise DataError(f"{rel_path}: no rows.")
    return rows


def _build_cluster_llm(task: str, *, source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    rel = CLUSTER_LLM[task]
    text, record = _source(source_dir, rel)
    rows = _sample(parse_cluster_llm(text, rel), size, seed)
    manifest = {
        "builder": f"bench.dataset_builders.clustering_sets:{_BUILDER_NAMES[task]}",
        "proxy": False,
        "note": CLUSTER_LLM_NOTE.format(task=task, source=rel),
        "seed": seed,
        "size": size,
        "sources": [record],
    }
    return _write_task(out_dir, task, {"test": rows}, manifest)


def build_few_rel(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, object]:
    """FewRelClustering/test.jsonl from ClusterLLM few_rel_nat (all 4,480 rows unless --size)."""
    return _build_cluster_llm("FewRelClustering", source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)


def build_few_nerd(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, object]:
    """FewNerdClustering/test.jsonl from ClusterLLM few_nerd_nat (all 3,789 rows unless --size)."""
    return _build_cluster_llm("FewNerdClustering", source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)


def build_few_event(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, object]:
    """FewEventClustering/test.jsonl from ClusterLLM few_event (all 4,742 rows unless --size)."""
    return _build_cluster_llm("FewEventClustering", source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)


# --------------------------------------------------------------------------- GoalEx stand-ins
def single_assigned(taxonomy: dict[str, object], mapping: dict[str, str], rel_path: str) -> dict[str, str]:
    """text -> its InBedder cluster, for texts that GoalEx put in exactly one of the mapped clusters.

    Texts in two mapped clusters are ambiguous and dropped; membership in unmapped clusters is ignored.
    """
    children = taxonomy.get("description2taxonomy") if isinstance(taxonomy, dict) else None
    if not isinstance(children, dict) or not children:
        raise DataError(f"{rel_path}: expected a GoalEx taxonomy with a non-empty 'description2taxonomy'.")
    owners: dict[str, set[str]] = {}
    for description, node in children.items():
        texts = node.get("texts") if isinstance(node, dict) else None
        if not isinstance(texts, list):
            raise DataError(f"{rel_path}: child cluster {description[:60]!r} has no 'texts' list.")
        label = next((lab for prefix, lab in mapping.items() if description.startswith(prefix)), None)
        for t in texts:
            if isinstance(t, str) and t.strip():
                owners.setdefault(t, set()).update([label] if label else [])
    return {t: next(iter(labels)) for t, labels in owners.items() if len(labels) == 1}


def _build_goalex(task: str, *, source_dir: Path, out_dir: Path, seed: int, size: int | None) -> dict[str, object]:
    rel = GOALEX_TAXONOMY[task]
    text, record = _source(source_dir, rel)
    taxonomy = _json(text, rel)
    mapping = GOALEX_CLUSTERS[task]
    by_label: dict[str, list[str]] = {label: [] for label in dict.fromkeys(mapping.values())}
    for t, label in single_assigned(taxonomy, mapping, rel).items():  # dict order = first appearance
        by_label[label].append(t)
    empty = [label for label, texts in by_label.items() if not texts]
    if empty:
        raise DataError(f"{rel}: no single-assigned texts for cluster(s) {', '.join(empty)}; is this the right file?")
    per_cluster = min(len(texts) for texts in by_label.values())
    if size is not None:
        if size < len(by_label):
            raise DataError(f"--size {size} is below the {len(by_label)} clusters of {task}.")
        per_cluster = min(per_cluster, size // len(by_label))
    rng = np.random.default_rng(seed)
    rows = []
    for label, texts in by_label.items():
        keep = sorted(rng.choice(len(texts), size=per_cluster, replace=False).tolist())
        rows += [{"text": texts[i], "cluster": label} for i in keep]
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    manifest = {
        "builder": f"bench.dataset_builders.clustering_sets:{_BUILDER_NAMES[task]}",
        "proxy": True,
        "note": GOALEX_NOTE.format(task=task, source=rel),
        "seed": seed,
        "size": size,
        "cluster_map": mapping,
        "single_assigned_available": {label: len(texts) for label, texts in by_label.items()},
        "per_cluster": per_cluster,
        "sources": [record],
    }
    return _write_task(out_dir, task, {"test": rows}, manifest)


def build_ratemyprof_standin(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None
) -> dict[str, object]:
    """RateMyProfClustering/test.jsonl STAND-IN from GoalEx taxonomy_4 (4 balanced clusters)."""
    return _build_goalex("RateMyProfClustering", source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)


def build_feedbacks_standin(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None
) -> dict[str, object]:
    """FeedbacksClustering/test.jsonl STAND-IN from GoalEx taxonomy_0 (3 balanced clusters)."""
    return _build_goalex("FeedbacksClustering", source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)


# --------------------------------------------------------------------------- NYT (needs texts)
def _nyt_texts(source_dir: Path, aspect: str) -> tuple[list[str], dict[str, object]]:
    rel = f"{NYT_DIR}/{aspect}/data.json"
    upstream = rel.removeprefix("GoalEx/")
    why = (
        f" The NYT texts are not in the staged raw data (GoalEx's {upstream.replace('data.json', 'labels.json')} "
        f"holds label ids only, and no text is ever made up here). Download {upstream} from "
        f"github.com/ZihanWangKi/GoalEx (commit a38275e) to that path, or lay out the published "
        f"BrandonZYW/NYTClustering files as DATA_DIR/NYTClustering/{{topic,location}}.csv instead."
    )
    text, record = _source(source_dir, rel, why)
    data = _json(text, rel)
    texts = data.get("texts") if isinstance(data, dict) else data
    if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
        raise DataError(f"{rel}: expected GoalEx's {{'texts': [non-empty strings, ...]}}.")
    return texts, record


def _nyt_labels(source_dir: Path, aspect: str) -> tuple[list[str], dict[str, object]]:
    rel = f"{NYT_DIR}/{aspect}/labels.json"
    text, record = _source(source_dir, rel)
    data = _json(text, rel)
    try:
        names = [d.removeprefix(f"has a {aspect} of ").strip() for d in data["class_descriptions"]]
        return [names[i] for i in data["labels"]], record
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise DataError(f"{rel}: expected GoalEx's {{'class_descriptions': [...], 'labels': [index, ...]}}.") from None


def build_nyt(*, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None) -> dict[str, object]:
    """NYTClustering/{topic,location}.jsonl (also NYTTopicClustering's corpus) from GoalEx NYT texts + labels.

    Needs `GoalEx/processed_data/nyt/topic/data.json` (and location/data.json for the location aspect) in
    the source directory; without the topic texts it fails with instructions. A missing location file
    only skips the location aspect (recorded in the manifest), so NYTTopicClustering can still run.
    """
    parts: dict[str, list[dict[str, str]]] = {}
    sources, skipped = [], []
    for aspect in NYT_ASPECTS:
        if aspect != "topic" and not (Path(source_dir) / NYT_DIR / aspect / "data.json").is_file():
            skipped.append(aspect)
            continue
        texts, text_record = _nyt_texts(source_dir, aspect)
        labels, label_record = _nyt_labels(source_dir, aspect)
        if len(texts) != len(labels):
            raise DataError(
                f"{NYT_DIR}/{aspect}: data.json has {len(texts)} texts but labels.json {len(labels)} labels; "
                f"they must come from the same GoalEx commit."
            )
        rows = [{"text": t, "cluster": c} for t, c in zip(texts, labels, strict=True)]
        parts[aspect] = _sample(rows, size, seed)
        sources += [text_record, label_record]
    manifest = {
        "builder": "bench.dataset_builders.clustering_sets:build_nyt",
        "proxy": False,
        "note": NYT_NOTE.format(texts=f"{NYT_DIR}/<aspect>/data.json"),
        "seed": seed,
        "size": size,
        "skipped_aspects": skipped,
        "sources": sources,
    }
    return _write_task(out_dir, "NYTClustering", parts, manifest)


# --------------------------------------------------------------------------- everything at once
def build_robustness_sets(
    *, source_dir: Path, out_dir: Path, seed: int = 42, size: int | None = None
) -> dict[str, object]:
    """Every robustness corpus the source directory allows (NYT only when its texts are there)."""
    builders = [build_few_rel, build_few_nerd, build_few_event, build_ratemyprof_standin, build_feedbacks_standin]
    if (Path(source_dir) / NYT_DIR / "topic" / "data.json").is_file():
        builders.append(build_nyt)
    summaries = [b(source_dir=source_dir, out_dir=out_dir, seed=seed, size=size)["summary"] for b in builders]
    missing = (
        [] if build_nyt in builders else ["NYTClustering (needs GoalEx NYT texts; see `build-data nyt-clustering`)"]
    )
    return {"summary": {"built": summaries, "not_built": missing}}


_BUILDER_NAMES = {
    "FewRelClustering": "build_few_rel",
    "FewNerdClustering": "build_few_nerd",
    "FewEventClustering": "build_few_event",
    "RateMyProfClustering": "build_ratemyprof_standin",
    "FeedbacksClustering": "build_feedbacks_standin",
}
