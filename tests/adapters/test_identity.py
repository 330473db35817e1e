"""A result is its own: identity = (model, revision, family, every option that changes vectors).

The collisions of issue "Identity and MTEB-native results" as tests: families on one checkpoint, a
forgotten option in a subclass, duplicate registrations, MTEB's names and revisions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mteb
import pytest

from bench import tasks
from bench.adapters.base import BaseEncoder
from bench.adapters.identity import PUBLISHED, published_match
from bench.adapters.model_card import safetensors_parameters
from bench.adapters.options import experiment_label, family_options
from bench.adapters.registry import FAMILIES, load_model
from bench.core.errors import ConfigError
from bench.leaderboard.entries import model_key
from bench.results.result_cache import AtomicResultCache
from bench.results.store import result_path
from toy_encoders import HashEncoder


def _path(model, root: Path, task: str = "STS12") -> Path:
    return result_path(AtomicResultCache(root), model.mteb_model_meta, task)


def test_families_on_one_checkpoint_never_share_a_result_file_or_cache(minilm_path, tmp_path):
    # The MiniLM directory stands in for any checkpoint; loading options only, no weights.
    specs = [f"{family}:{minilm_path}" for family in ("mteb", "st", "instructor", "inbedder", "prompteol", "metaeol")]
    models = [load_model(spec, cache_dir=tmp_path) for spec in specs]
    paths = {_path(m, tmp_path) for m in models}
    fingerprints = {json.dumps(m.fingerprint, sort_keys=True) for m in models}
    assert len(paths) == len(fingerprints) == len(specs)
    mtebs, st, _instructor, _inbedder, prompteol, metaeol = models
    assert mtebs.mteb_model_meta.experiment_kwargs is None  # MTEB's own implementation: MTEB's key
    assert st.mteb_model_meta.experiment_kwargs == {"template": "prefix"}  # the harness's template: an experiment
    assert prompteol.experiment() == {"family": "prompteol"} and metaeol.experiment() == {"family": "metaeol"}
    # ... and the leaderboard keys them apart too
    records = [{"model": {"name": m.name, "revision": m.revision, "experiment": m.experiment()}} for m in models]
    assert len({model_key(r) for r in records}) == len(models)


def test_an_option_a_subclass_adds_changes_the_fingerprint_without_any_declaration(tmp_path):
    class Scaled(HashEncoder):  # adds an option that changes vectors and declares nothing else
        def __init__(self, *, scale: float = 1.0, **kwargs):
            self.scale = scale
            super().__init__(**kwargs)

    one, two = Scaled(cache_dir=tmp_path), Scaled(scale=2.0, cache_dir=tmp_path)
    assert one.fingerprint != two.fingerprint and one.cache.path != two.cache.path
    assert one.experiment() == {"family": "toy"} and two.experiment() == {"family": "toy", "scale": 2.0}
    # a runtime option (batch size) changes neither
    assert Scaled(batch_size=3, cache_dir=tmp_path).fingerprint == one.fingerprint


def test_experiment_names_are_filesystem_safe_and_readable(tmp_path):
    model = load_model("all-MiniLM-L6-v2", template="query: {instruction} {text}", cache_dir=tmp_path)
    name = model.mteb_model_meta.experiment_name
    assert name.startswith("template_query-instruction-text-") and " " not in name and "{" not in name
    assert experiment_label("none") == "none" and experiment_label(256) == 256
    assert experiment_label("a b") != experiment_label("a  b")  # different values, different labels
    other = load_model("all-MiniLM-L6-v2", template="query: {instruction}\n{text}", cache_dir=tmp_path)
    assert other.mteb_model_meta.experiment_name != name


@pytest.mark.registry
def test_a_duplicate_task_name_fails_at_import_naming_both():
    from bench.tasks.abstasks import AbsTaskInstructionSTS

    with pytest.raises(
        ConfigError,
        match=r"Duplicate task name 'IntentEmotion': .*Impostor and bench\.tasks\.intent_emotion\.IntentEmotion",
    ):

        class Impostor(AbsTaskInstructionSTS):
            metadata = tasks.IntentEmotion.metadata

    assert tasks.TASKS["IntentEmotion"] is tasks.IntentEmotion


def test_a_task_may_not_take_an_mteb_name_unless_it_is_mteb_task():
    from bench.tasks.abstasks import AbsTaskInstructionSTS

    with pytest.raises(ConfigError, match=r"named 'BIOSSES', which is MTEB's task"):

        class FakeBIOSSES(AbsTaskInstructionSTS):
            metadata = tasks.InstructSTSB.metadata.model_copy(update={"name": "BIOSSES"})

    assert "BIOSSES" not in tasks.TASKS and issubclass(tasks.TASKS["STS12"], type(mteb.get_task("STS12")))


@pytest.mark.registry
def test_a_duplicate_family_fails_naming_both():
    with pytest.raises(
        ConfigError, match=r"Duplicate model family 'sentence-transformers': .*Other and bench\.adapters"
    ):

        class Other(BaseEncoder):
            family = "sentence-transformers"

    with pytest.raises(ConfigError, match=r"Duplicate model family 'st'"):

        class Alias(BaseEncoder):
            family = "something-new"
            aliases = ("st",)

    assert "something-new" not in FAMILIES


def test_a_new_family_is_one_class_and_its_flags_reach_the_cli(tmp_path, capsys):
    from bench.adapters.registry import cli_flags, family_name

    class Echo(HashEncoder):
        family = "echo-test"
        cli_flags = {"dim": "vector size of the echo family"}

    assert family_name("echo-test") == "echo-test" and "dim" in cli_flags()
    from bench.cli.main import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--dim V" in capsys.readouterr().out
    del FAMILIES["echo-test"]


def test_packaged_minilm_is_filed_under_mtebs_name_and_revision(minilm_path, tmp_path):
    model = load_model("all-MiniLM-L6-v2", cache_dir=tmp_path)
    published = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    # (model, revision) is the key of MTEB's results repository: results/<org>__<model>/<revision>/<Task>.json
    assert (model.name, model.revision) == (published.name, published.revision)
    assert _path(model, tmp_path).parent.relative_to(tmp_path).as_posix() == (
        f"results/sentence-transformers__all-MiniLM-L6-v2/{published.revision}"
    )
    check = model.identity_check
    (minilm,) = [p for p in PUBLISHED if p.name == published.name]
    assert check["matches"] == published.name and check["sha256"] == minilm.files["model.safetensors"]
    assert check["method"] == "sha256 of every file that decides the vectors (10 files)"
    meta = model.mteb_model_meta
    assert (meta.n_parameters, meta.embed_dim, meta.max_tokens, meta.license, meta.release_date) == (
        published.n_parameters,
        published.embed_dim,
        published.max_tokens,
        published.license,
        published.release_date,
    )


def test_a_modified_local_copy_is_not_the_published_model(minilm_path, tmp_path):
    copy = tmp_path / "my-minilm"
    shutil.copytree(minilm_path, copy)
    with (copy / "model.safetensors").open("r+b") as f:  # one byte of the weights changed
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    assert published_match(str(copy)) is None
    model = load_model(str(copy), cache_dir=tmp_path)
    assert model.name == "local/my-minilm" and model.revision.startswith("local-")
    assert model.mteb_model_meta.n_parameters == safetensors_parameters(copy) == 22713216
    named = load_model(str(copy), model_name="me/my-minilm", model_revision="v2", cache_dir=tmp_path)
    assert (named.name, named.revision) == ("me/my-minilm", "v2")


@pytest.mark.slow
def test_results_carry_no_local_path_and_mteb_loads_them(minilm_path, tmp_path):
    from bench.cli.main import main

    out, cache = tmp_path / "out", tmp_path / "cache"
    model_dir = tmp_path / "models" / "copy-of-minilm"
    shutil.copytree(minilm_path, model_dir)
    code = main(
        [
            "run",
            "-q",
            "-m",
            f"st:{model_dir}",
            "--model-name",
            "me/minilm-copy",
            "--model-revision",
            "r1",
            "-t",
            "DemoInstructSTS",
            "--output-dir",
            str(out),
            "--cache-dir",
            str(cache),
            "--template",
            "none",
        ]
    )
    assert code == 0
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    for secret in (str(tmp_path).encode(), b"/models/", str(Path.home()).encode() + b"/"):
        assert secret not in written
    # the harness's task: filed beside MTEB's results folder, in MTEB's layout (bench/results/store.py)
    assert not (out / "results").exists()
    loaded = mteb.ResultCache(out / "instruct-bench").load_results(
        validate_and_filter=True, load_experiments="match_name"
    )
    found = {(m.model_name, m.model_revision, m.experiment_name) for m in loaded.model_results}
    assert found == {("me/minilm-copy", "r1", "template_none")}
    record = json.loads(next(out.rglob("run_records/DemoInstructSTS.json")).read_text())
    assert record["model"]["spec"] == "st:copy-of-minilm" and record["model"]["experiment"] == {"template": "none"}


def test_mteb_tasks_under_mteb_names_hold_mtebs_pairs(raw_dir, tmp_path):
    """Built from raw files, each MTEB-named STS task has exactly the pairs MTEB's metadata states."""
    from bench.dataset_builders.sts_senteval import build_sts_senteval

    build_sts_senteval(source_dir=raw_dir, out_dir=tmp_path)
    for name in ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R"):
        rows = (tmp_path / name / "test.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == mteb.get_task(name).metadata.n_samples["test"], name
    assert len((tmp_path / "SICK-R-SentEval" / "test.jsonl").read_text().splitlines()) == 4927
    first = json.loads((tmp_path / "STSBenchmark" / "test.jsonl").read_text().splitlines()[0])
    assert first["sentence1"] == "A girl is styling her hair."  # MTEB's cased text, not SentEval's lower-cased
    sick = tasks.get_tasks(["SICK-R-SentEval"], data_dir=tmp_path)[0]
    sick.load_data()
    assert len(sick.dataset["test"]) == 4927


def test_family_options_skip_internal_parameters():
    assert not {"name", "source", "experiment_defaults"} & set(family_options(HashEncoder))


# ---------------------------------------------------------------------------------------- content, not names
def _cls_pooled(minilm_path: str, folder: Path) -> Path:
    """A copy of MiniLM that pools the CLS token instead of the mean: another model, same files otherwise."""
    shutil.copytree(minilm_path, folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    pooling.write_text(json.dumps(config, indent=2))
    return folder


@pytest.mark.slow
def test_two_models_under_one_name_never_share_a_vector(minilm_path, tmp_path):
    """Two local models filed under one `--model-name test/m --model-revision r1` (mean vs CLS pooling):
    the second gets no cache hit and its own score, because the cache keys on content, not on the name."""
    from bench.cli.main import main

    mean = tmp_path / "mean"
    shutil.copytree(minilm_path, mean)
    cls = _cls_pooled(minilm_path, tmp_path / "cls")
    cache, scores, records = tmp_path / "cache", {}, {}
    for model in (mean, cls):
        out = tmp_path / f"out-{model.name}"
        assert (
            main(
                [
                    "run",
                    "-q",
                    "-m",
                    f"st:{model}",
                    "--model-name",
                    "test/m",
                    "--model-revision",
                    "r1",
                    "-t",
                    "DemoNYTClustering",
                    "--output-dir",
                    str(out),
                    "--cache-dir",
                    str(cache),
                ]
            )
            == 0
        )
        records[model.name] = json.loads(next(out.rglob("run_records/DemoNYTClustering.json")).read_text())
        scores[model.name] = json.loads(
            next(p for p in out.rglob("DemoNYTClustering.json") if p.parent.name != "run_records").read_text()
        )
    assert records["cls"]["encode"]["cache_hits"] == 0 and records["cls"]["encode"]["texts_encoded"] == 128
    assert records["mean"]["model"]["content"] != records["cls"]["model"]["content"]
    assert round(100 * scores["mean"]["scores"]["test"][0]["main_score"], 2) == 12.84  # the packaged model's own
    assert scores["cls"]["scores"]["test"][0]["main_score"] != scores["mean"]["scores"]["test"][0]["main_score"]
    assert len(list(cache.glob("*.sqlite"))) == 2
    assert published_match(str(cls)) is None  # a changed pooling config is not the published model


def test_a_copy_of_the_published_files_with_an_extra_loadable_file_is_not_published(minilm_path, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(minilm_path, copy)
    assert published_match(str(copy))["matches"] == "sentence-transformers/all-MiniLM-L6-v2"
    (copy / "onnx").mkdir()
    (copy / "onnx" / "model.onnx").write_bytes(b"other weight formats are not loaded")
    assert published_match(str(copy)) is not None
    (copy / "added_tokens.json").write_text('{"[NEW]": 30522}')  # a tokenizer would read this
    assert published_match(str(copy)) is None


def test_content_hash_reads_every_byte(minilm_path, tmp_path):
    """A change in the middle of a large file (not only its first and last MiB) changes the content."""
    from bench.adapters.identity import content_sha256

    copy = tmp_path / "copy"
    shutil.copytree(minilm_path, copy)
    before = content_sha256(copy)
    with (copy / "model.safetensors").open("r+b") as f:
        f.seek(40 << 20)
        byte = f.read(1)
        f.seek(40 << 20)
        f.write(bytes([byte[0] ^ 1]))
    assert content_sha256(copy) != before
    assert load_model(str(copy), cache_dir=tmp_path).revision != load_model(minilm_path, cache_dir=tmp_path).revision


def test_dtype_auto_is_named_by_what_it_resolves_to(tmp_path, monkeypatch):
    """`--dtype auto` on CPU is float32 (the default setting, the default experiment); on a bf16 GPU it is
    bfloat16 on cuda: another fingerprint, another cache file, another experiment."""
    import torch

    import bench.adapters.device

    st = {"template": "prefix"}  # the sentence-transformers family, whose default dtype is float32
    cpu = load_model("all-MiniLM-L6-v2", dtype="auto", device="cpu", cache_dir=tmp_path, **st)
    plain = load_model("all-MiniLM-L6-v2", device="cpu", cache_dir=tmp_path, **st)
    assert cpu.fingerprint == plain.fingerprint and cpu.fingerprint["dtype"] == "float32"
    assert cpu.mteb_model_meta.experiment_kwargs == st and cpu.settings()["dtype"] == "float32"
    cpu_cache, cpu_experiment = cpu.cache.path, cpu.mteb_model_meta.experiment_name
    monkeypatch.setattr(bench.adapters.device, "resolve_device", lambda device: "cuda")  # a GPU that does bf16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    gpu = load_model("all-MiniLM-L6-v2", dtype="auto", cache_dir=tmp_path, **st)
    assert (gpu.fingerprint["dtype"], gpu.fingerprint["device_kind"]) == ("bfloat16", "cuda")
    assert (
        gpu.experiment() == {**st, "device_kind": "cuda", "dtype": "bfloat16"} and gpu.settings()["dtype"] == "bfloat16"
    )
    assert gpu.cache.path != cpu_cache and gpu.mteb_model_meta.experiment_name != cpu_experiment
