"""Issue 30 ("Trust, round three"): every reader of outside data is bounded before it decodes, and a score
that is no number is never a result.

* a GGUF file whose arrays, strings, counts or tensors declare more than the file holds is one `error:`
  line naming it, from the header scan, before gguf's GGUFReader or transformers opens it;
* a NaN main score is an `error:` line naming the task, and no result file;
* a YAML config holding an integer Python will not read (or a date that does not exist) is one line;
* the builders' and GSTransform's JSON sources are bounded (size, nesting, integer digits);
* a parquet file is refused from its footer when it declares more than a data file holds, and while it
  is read when its dictionary-encoded values would expand past the cap.

Imports of what these tests check are inside each test, so that each fails on its own on code without it.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.cli.main import main
from bench.core.errors import DataError, ModelLoadError
from fake_openai import FakeOpenAI

DEEP = b"[" * 100_000 + b"]" * 100_000  # overflows the recursive parsers
LONG_INT = b'{"input": "a text", "label": ' + b"9" * 5_000 + b"}"  # past Python's 4,300 digits


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`bench` `argv` through the real CLI: (exit code, the one `error:` line), checked to be one line."""
    code = main(argv)
    stderr = capsys.readouterr().err
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert code == 2, stderr
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return code, errors[0]


# ---------------------------------------------------------------------------------------- GGUF
def _gguf(fields: list[bytes], *, n_fields: int | None = None, tensors: bytes = b"", n_tensors: int = 0) -> bytes:
    """A GGUF v3 file written by hand, padded to 170 bytes: header, `fields` (each from `_field`), tensor infos."""
    count = len(fields) if n_fields is None else n_fields
    data = struct.pack("<4sIQQ", b"GGUF", 3, n_tensors, count) + b"".join(fields) + tensors
    return data + b"\0" * max(0, 170 - len(data))


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _field(key: str, kind: int, payload: bytes) -> bytes:
    return _string(key) + struct.pack("<I", kind) + payload


def _big_endian_array() -> bytes:
    key = b"tokenizer.ggml.tokens"
    data = struct.pack(">4sIQQ", b"GGUF", 3, 0, 1) + struct.pack(">Q", len(key)) + key
    data += struct.pack(">IIQ", 9, 0, 2**40)
    return data + b"\0" * (170 - len(data))


ARCH = _field("general.architecture", 8, _string("llama"))
HOSTILE_GGUF = {
    # the file: 170 bytes declaring a 2^40-item array (GGUFReader ran 150 s at 2.5 GB and growing)
    "array-of-2^40-bytes": _gguf([ARCH, _field("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 0, 2**40))]),
    "array-of-2^40-strings": _gguf([ARCH, _field("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2**40))]),
    "string-of-2^40-bytes": _gguf([ARCH, _field("general.name", 8, struct.pack("<Q", 2**40))]),
    "2^40-fields": _gguf([ARCH], n_fields=2**40),
    "big-endian-array-of-2^40-bytes": _big_endian_array(),
    # a header that reads, but a tensor of 1024 x 1024 F32 (4 MiB) in a 170-byte file: a truncated download
    "tensor-data-past-the-end": _gguf(
        [ARCH], tensors=_string("w") + struct.pack("<IQQIQ", 2, 1024, 1024, 0, 0), n_tensors=1
    ),
}


class LoaderTouched(BaseException):
    """Raised by any GGUF loader the hostile file reaches: a BaseException, so no `except Exception` hides it."""


@pytest.mark.parametrize("name", HOSTILE_GGUF)
def test_a_gguf_declaring_more_than_it_holds_is_one_line_before_any_loader(name, tmp_path, monkeypatch, capsys):
    gguf = pytest.importorskip("gguf")
    import transformers

    def touched(*args: Any, **kwargs: Any) -> None:
        raise LoaderTouched(f"a loader opened the hostile {name} file")

    monkeypatch.setattr(gguf.GGUFReader, "__init__", touched)
    for auto in (transformers.AutoConfig, transformers.AutoTokenizer, transformers.AutoModelForCausalLM):
        monkeypatch.setattr(auto, "from_pretrained", touched)
    model = tmp_path / "hostile-170.gguf"
    model.write_bytes(HOSTILE_GGUF[name])
    out = tmp_path / "out"
    start = time.perf_counter()
    argv = ["run", "--model", f"inbedder:{model}", "--tasks", "DemoInstructSTS", "--output-dir", str(out)]
    _, error = _cli([*argv, "--cache-dir", str(tmp_path / "cache"), "-q"], capsys)
    assert time.perf_counter() - start < 30
    assert "hostile-170.gguf is not a readable GGUF file" in error and "Download it again" in error
    assert "past the end of the file (170 bytes)" in error, error
    assert not list(out.rglob("*.json")) if out.exists() else True


def test_a_real_gguf_reads_as_ggufs_reader_reads_it_in_either_byte_order_and_a_cut_one_is_refused(tmp_path):
    """The scan that refuses hostile files reads what gguf's own GGUFReader reads from files GGUFWriter
    wrote (long arrays stepped over), in both byte orders; cutting into the tensor data is refused."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    from bench.adapters.gguf_file import _GGUF_KEPT_ITEMS, _gguf_reader_fields, _scan_gguf

    for endian in (gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG):
        file = tmp_path / f"{endian.name}.gguf"
        writer = gguf.GGUFWriter(file, "llama", endianess=endian)
        writer.add_context_length(2048)
        writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_1))
        writer.add_array("tokenizer.ggml.tokens", [f"token{i}" for i in range(1000)])
        writer.add_array("tokenizer.ggml.scores", [float(i) for i in range(300)])
        writer.add_array("small", [1, 2, 3])
        writer.add_tensor("a", np.ones((4, 8), dtype=np.float32))
        writer.add_tensor("b", np.ones((3,), dtype=np.float16))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        fast, fast_tensors = _scan_gguf(file)
        full, full_tensors = _gguf_reader_fields(gguf, file)
        long = {k for k, v in full.items() if isinstance(v, list) and len(v) > _GGUF_KEPT_ITEMS}
        assert long == {"tokenizer.ggml.tokens", "tokenizer.ggml.scores"} and all(fast[k] is None for k in long)
        assert {k: v for k, v in fast.items() if k not in long} == {
            k: v for k, v in full.items() if k not in long and not k.startswith("GGUF.")
        }
        assert fast_tensors == full_tensors == [(32, 0), (3, 1)]
        cut = tmp_path / "cut.gguf"
        cut.write_bytes(file.read_bytes()[:-100])  # into tensor "a"'s data
        with pytest.raises(Exception, match=r"the tensor 'a': 128 bytes of data from byte .* past the end"):
            _scan_gguf(cut)


def test_a_damaged_gguf_is_a_model_load_error_naming_it(tmp_path):
    pytest.importorskip("gguf")
    from bench.adapters.gguf_file import gguf_check

    bad = tmp_path / "nested.gguf"
    nested = b"".join(struct.pack("<IQ", 9, 1) for _ in range(9)) + struct.pack("<IQ", 0, 1) + b"\0"
    bad.write_bytes(_gguf([_field("deep", 9, nested)]))
    with pytest.raises(ModelLoadError, match=r"nested\.gguf is not a readable GGUF file .*nests arrays more than 8"):
        gguf_check(bad)


# ---------------------------------------------------------------------------------------- NaN main score
def _result_files(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*.json"))}


def test_a_nan_main_score_is_one_error_line_and_no_result(tmp_path, monkeypatch, capsys):
    """An API that answers every text with one vector makes every cosine 1: Spearman's correlation is NaN.
    No result file or run record is written, and the result of an earlier run stays as it was."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    good, constant = FakeOpenAI(api_key=None).start(), FakeOpenAI(api_key=None).start()
    constant.spoil = lambda body, items: [item.update(embedding=[1.0] + [0.0] * 15) for item in items]
    out = tmp_path / "out"
    try:

        def run(server: FakeOpenAI) -> int:
            argv = ["run", "--model", "openai:fake", "--base-url", server.base_url, "--tasks", "DemoInstructSTS"]
            return main([*argv, "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache"), "-q", "--overwrite"])

        assert run(good) == 0
        capsys.readouterr()
        before = _result_files(out)
        assert any(name.endswith("DemoInstructSTS.json") and "run_records" not in name for name in before)
        code = run(constant)
        stderr = capsys.readouterr().err
        errors = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1 and "Traceback" not in stderr, stderr
        assert "DemoInstructSTS" in errors[0] and "nan" in errors[0] and "no result was written" in errors[0]
        assert _result_files(out) == before
    finally:
        good.close()
        constant.close()


def test_a_non_finite_main_score_is_refused_where_results_are_saved():
    from bench.core.errors import EncodingError
    from bench.results.store import refuse_undefined_main_score

    refuse_undefined_main_score("T", {"test": [{"main_score": 0.5, "hf_subset": "default"}]})
    for value in (float("nan"), float("inf"), None, "0.5"):
        with pytest.raises(EncodingError, match=r"^T: the main score came out"):
            refuse_undefined_main_score("T", {"test": [{"main_score": value, "hf_subset": "default"}]})


# ---------------------------------------------------------------------------------------- config files
CONFIGS = {
    "yaml-5000-digit-integer": ("c.yaml", "batch_size: " + "9" * 5_000 + "\n", "line 1: an integer of 5,000"),
    "yaml-5000-digit-hex-integer": ("c.yaml", "batch_size: 0x" + "f" * 5_000 + "\n", "line 1: an integer of"),
    "yaml-day-that-does-not-exist": ("c.yaml", "batch_size: 2001-02-30\n", "line 1: '2001-02-30' is not a date"),
    "json-5000-digit-integer": ("c.json", '{"batch_size": ' + "9" * 5_000 + "}", "more than 4,300 digits"),
}


@pytest.mark.parametrize("option", ["--model-config", "--instruction-variants"])
@pytest.mark.parametrize("case", CONFIGS)
def test_a_config_value_python_will_not_build_is_one_line(option, case, tmp_path, capsys):
    name, content, expected = CONFIGS[case]
    if option == "--instruction-variants":  # the same value, where a variants file holds values
        if name.endswith(".json"):
            content = content.replace('{"batch_size": ', '{"Task": [{"instruction": "x", "n": ')[:-1] + "}]}"
        content = content.replace("batch_size: ", "Task:\n  - instruction: x\n    n: ")
        expected = expected.replace("line 1", "line 3")
    (tmp_path / name).write_text(content, encoding="utf-8")
    argv = ["run", "--model", "openai:fake", "--base-url", "http://127.0.0.1:9/v1", option, str(tmp_path / name)]
    _, error = _cli([*argv, "--output-dir", str(tmp_path / "out"), "-q"], capsys)
    assert f"{option} {tmp_path / name}" in error and expected in error, error


# ---------------------------------------------------------------------------------------- builders' JSON
def test_clusterllm_lines_are_bounded_and_named():
    from bench.dataset_builders.clustering_sets import parse_cluster_llm

    good = b'{"task": "t", "input": "a sentence", "label": "x"}\n'
    with pytest.raises(DataError, match=r"small\.jsonl line 2: .*nest more than 64 levels"):
        parse_cluster_llm((good + DEEP + b"\n").decode(), "small.jsonl")
    with pytest.raises(DataError, match=r"small\.jsonl line 2: holds an integer of more than 4,300 digits"):
        parse_cluster_llm((good + LONG_INT + b"\n").decode(), "small.jsonl")
    text = '{"input": "a\u2028b", "label": "x"}\n'  # a line separator inside a string is text, not a line break
    assert parse_cluster_llm(text, "small.jsonl") == [{"text": "a\u2028b", "cluster": "x"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [(DEEP, "nest more than 64 levels"), (b'{"texts": ' + b"9" * 5_000 + b"}", "more than 4,300 digits")],
)
def test_goalex_and_nyt_sources_are_bounded(tmp_path, content, message):
    from bench.dataset_builders.clustering_sets import GOALEX_TAXONOMY, NYT_DIR, build_nyt, build_ratemyprof_standin

    for rel in (GOALEX_TAXONOMY["RateMyProfClustering"], f"{NYT_DIR}/topic/data.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(content)
    with pytest.raises(DataError, match=message):
        build_ratemyprof_standin(source_dir=tmp_path, out_dir=tmp_path / "out")
    with pytest.raises(DataError, match=message):
        build_nyt(source_dir=tmp_path, out_dir=tmp_path / "out")


def test_a_builder_source_past_the_size_cap_is_never_read_whole(tmp_path, monkeypatch):
    import bench.dataset_builders.clustering_sets as clustering_sets

    monkeypatch.setattr(clustering_sets, "MAX_SOURCE_BYTES", 1_000, raising=False)
    rel = clustering_sets.CLUSTER_LLM["FewRelClustering"]
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_bytes(b'{"task": "t", "input": "a sentence", "label": "x"}\n' * 100)
    with pytest.raises(DataError, match=r"small\.jsonl is larger than 1,000 bytes"):
        clustering_sets.build_few_rel(source_dir=tmp_path, out_dir=tmp_path / "out")


def _source(rel: str, data: bytes) -> Any:
    from bench.dataset_builders.common import SourceFile

    return SourceFile(rel_path=rel, data=data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"input": "a", "label": "x"}\n{oops\n', r"go\.jsonl line 2: malformed JSON"),
        (DEEP, r"go\.jsonl line 1: .*nest more than 64"),
        (LONG_INT, r"go\.jsonl line 1: holds an integer of more than 4,300 digits"),
        (b"[1, 2]\n", r"go\.jsonl:1: expected keys 'input' and 'label'"),
    ],
)
def test_go_emotion_lines_are_bounded_and_named(data, message):
    from bench.dataset_builders.label_derived import parse_go_emotion

    with pytest.raises(DataError, match=message):
        parse_go_emotion(_source("go.jsonl", data))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (DEEP, "nest more than 64 levels"),
        (b'{"t": {"instruction": ' + b"9" * 5_000 + b"}}", "more than 4,300 digits"),
        (b"[1]", "expected an object"),
    ],
)
def test_the_robustness_source_is_bounded(data, message):
    from bench.dataset_builders.llm_sets import _robustness_tasks

    with pytest.raises(DataError, match=message):
        _robustness_tasks(_source("instructions.json", data))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (DEEP, "nest more than 64 levels"),
        (b'{"format": "gstransform", "n": ' + b"9" * 5_000 + b"}", "more than 4,300 digits"),
        (b"[]", "is not a GSTransform config"),
    ],
)
def test_a_gstransform_config_is_bounded(tmp_path, data, message):
    from bench.adapters.gstransform import load_transforms

    (tmp_path / "t1").mkdir()
    (tmp_path / "t1" / "config.json").write_bytes(data)
    with pytest.raises(ModelLoadError, match=message):
        load_transforms(tmp_path)


# ---------------------------------------------------------------------------------------- parquet
STS_COLUMNS = ["sentence1", "sentence2", "score", "instruction"]


def _sts_parquet(path: Path, rows: int, *, dictionary: bool) -> Path:
    """`rows` copies of one STS row whose sentence is 2 KB: megabytes of table, kilobytes of file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = "A young boy is kicking a red ball across the park. " * 40
    table = pa.table({"sentence1": [text] * rows, "sentence2": [text] * rows, "score": [1.0] * rows})
    table = table.append_column("instruction", pa.array(["What color is the ball?"] * rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, use_dictionary=dictionary, compression="zstd")
    return path


def _never(what: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise LoaderTouched(f"{what} was called: a column was read")

    return call


def test_a_parquet_bomb_is_refused_from_its_metadata_before_any_column_is_read(tmp_path, monkeypatch, capsys):
    """Without dictionary encoding the footer declares what the columns expand to (6 MB in a file of a few
    KB): refused from the footer alone, through the real CLI, with every way of reading a column trapped."""
    import pyarrow.parquet as pq

    import bench.tasks.data as data

    path = _sts_parquet(tmp_path / "data" / "InstructSTSB" / "test.parquet", 1_500, dictionary=False)
    assert path.stat().st_size < 100_000 and pq.read_metadata(path).row_group(0).total_byte_size > 6_000_000
    monkeypatch.setattr(data, "MAX_PARQUET_BYTES", 2**20, raising=False)
    for name in ("read_table", "read_pandas"):
        monkeypatch.setattr(pq, name, _never(f"pq.{name}"))
    for name in ("read", "read_row_group", "read_row_groups", "iter_batches"):
        monkeypatch.setattr(pq.ParquetFile, name, _never(f"ParquetFile.{name}"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["run", "--model", "openai:fake", "--base-url", "http://127.0.0.1:9/v1", "--tasks", "InstructSTSB"]
    _, error = _cli([*argv, "--data-dir", str(tmp_path / "data"), "--output-dir", str(tmp_path / "out"), "-q"], capsys)
    assert f"{path}: its metadata declares 1,500 rows and" in error and "so it is not read" in error, error


def test_a_dictionary_encoded_parquet_bomb_is_refused_before_its_values_expand(tmp_path, monkeypatch):
    """pyarrow's default writer stores one copy of a repeated text and an index per row: the footer declares
    kilobytes. The expansion is counted from the dictionary's lengths, batch by batch, and refused."""
    import pyarrow.parquet as pq

    import bench.tasks.data as data

    path = _sts_parquet(tmp_path / "test.parquet", 20_000, dictionary=True)  # 80 MB of text once expanded
    assert pq.read_metadata(path).row_group(0).total_byte_size < 2**20
    monkeypatch.setattr(data, "MAX_PARQUET_BYTES", 2**20, raising=False)
    with pytest.raises(DataError, match=r"test\.parquet: its values expand to more than 1,048,576 bytes"):
        data.read_local_rows(path, STS_COLUMNS)


def test_a_parquet_within_the_caps_reads_every_row_as_before(tmp_path):
    import bench.tasks.data as data

    for dictionary in (True, False):
        path = _sts_parquet(tmp_path / f"{dictionary}.parquet", 300, dictionary=dictionary)
        rows = data.read_local_rows(path, STS_COLUMNS)
        assert len(rows) == 300 and rows[0]["score"] == 1.0 and rows[0]["sentence1"].startswith("A young boy")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_manifests_already_in_the_output_folder_are_read_within_bounds(tmp_path):
    """`bench build-data` reads the manifests already in `--out` to tell which it rewrote: a deep one, an
    integer Python will not read, or one that is not an object is passed over, never a traceback."""
    from bench.cli.commands.build_data import _manifests

    hostile = {"deep": b"[" * 100_000 + b"]" * 100_000, "digits": b'{"rows": ' + b"9" * 5_000 + b"}", "list": b"[1]"}
    for name, body in {**hostile, "good": b'{"outputs": {}}'}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_bytes(body)
    assert {task: manifest for task, (_, manifest) in _manifests(tmp_path).items()} == {"good": {"outputs": {}}}
