"""What a model is in MTEB's ModelMeta terms: parameters, embedding dimension, max tokens, license,
languages, release date, model card.

`model_facts` gives them from MTEB's registry for known models, else from the files themselves, read
without loading a weight: a sentence-transformers folder's configs, model card and safetensors headers;
a GGUF file's header (context length, license, languages, parameter count: `gguf_facts`, over
`bench/adapters/gguf_file.py`). What a file does not say stays None: a license only when it is one of
MTEB's `Licenses` (or a URL), languages only when every one maps surely to MTEB's "eng-Latn" form.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

from bench.adapters.gguf_file import gguf_header, is_gguf
from bench.adapters.identity import HUB_URL, is_local, mteb_meta
from bench.core.bounded import MAX_SOURCE_BYTES, load_json_bounded, read_at_most
from bench.core.errors import ModelLoadError

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


def gguf_facts(file: Path) -> dict[str, Any]:
    """ModelMeta fields from a GGUF file's header and tensor table (no weight is read): `n_parameters`
    (`general.parameter_count`, else the tensors' element counts), `max_tokens` (`<arch>.context_length`),
    `license` and `languages` (`general.license[.link]`, `general.languages`) where MTEB can file them.

    Known before loading, so model_meta.json has them even when every vector came from the cache. No
    `embed_dim`: the hidden size (`<arch>.embedding_length`) is not the vector size of a readout that
    re-encodes, so the encoder sets it from its vectors.
    """
    header = gguf_header(file)
    if not header:
        return {}
    card = header["card"]
    facts: dict[str, Any] = {
        **header["facts"],
        "license": mteb_license(card["license"], card["license_link"]),
        "languages": mteb_languages(card["languages"]),
    }
    return {k: v for k, v in facts.items() if v is not None}


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


def mteb_languages(codes: object) -> list[str] | None:
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


def mteb_license(name: object, link: object = None) -> str | None:
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
