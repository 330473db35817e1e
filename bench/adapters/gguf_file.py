"""What a GGUF file's header says, read without loading a weight and without trusting a length it declares.

A GGUF file's quantization (`general.file_type`, the tensor types) has no ModelMeta field (extra="forbid"):
it is part of the identity check (`gguf_check`, `Identity.check["gguf"]`), which the run record keeps; it
and the model the file derives from are `gguf_record_facts` (for the run record's `model.facts`, which
the leaderboard shows: ModelMeta has no field for either). The ModelMeta facts a header gives (context
length, parameter count, license, languages) are mapped to MTEB's values by
`bench/adapters/model_card.py` `gguf_facts`, from the raw values `gguf_header` keeps. A GGUF file's hidden
size is not its embedding dimension when a readout re-encodes, so the encoder sets `embed_dim` from its
vectors.

The header is read by `_scan_gguf`, a cursor that checks every count and length against the bytes left
(`_GGUFScan`), not by gguf's GGUFReader (see `_scan_gguf` for why).
"""

from __future__ import annotations

import re
import struct
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict

from bench.core.bounded import brief, brief_line
from bench.core.errors import ModelLoadError


def is_gguf(path: Path) -> bool:
    return path.suffix.lower() == ".gguf" and path.is_file()


def gguf_record_facts(file: str | Path) -> dict[str, Any]:
    """What the leaderboard shows of a GGUF file that ModelMeta (extra="forbid") has no field for, for the
    run record's `model.facts`: `quantisation` (`general.file_type` by llama.cpp's name, e.g. "Q4_1") and
    `base_model` (`general.base_model.0.*`: the hub id of its `repo_url`, else "organization/name" or its
    name; else `general.basename`), with `base_model_url` when the header gives one. {} for a file that is
    not GGUF (or without the gguf package); keys the header lacks are left out."""
    path = Path(file).expanduser()
    if not is_gguf(path):
        return {}
    header = gguf_header(path)
    return dict(header["record"]) if header else {}


def gguf_check(model_path: str | Path) -> dict[str, Any] | None:
    """{"gguf": quantization} of a GGUF file (the run record's `model.identity_check`), else None:
    `file_type` (general.file_type by llama.cpp's name, e.g. Q4_1), `quantization_version`, and the
    number of tensors of each type (a Q4_1 file keeps some tensors in F32 or Q8_0)."""
    path = Path(model_path).expanduser()
    if not is_gguf(path):
        return None
    header = gguf_header(path)
    return {"gguf": dict(header["quantization"])} if header else None


class GGUFHeader(TypedDict):
    """What one read of a GGUF header keeps (`gguf_header`)."""

    facts: dict[str, int]  # `n_parameters` and `max_tokens`, those the header gives
    card: dict[str, Any]  # `license`, `license_link`, `languages` as written: model_card maps them to MTEB's values
    quantization: dict[str, Any]  # `gguf_check`
    record: dict[str, str]  # `gguf_record_facts`


_gguf_lock = threading.Lock()
_gguf_headers: dict[tuple[object, ...], GGUFHeader] = {}  # parsing a header takes seconds (tokenizer arrays)


def gguf_header(file: Path) -> GGUFHeader | None:
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


def _read_gguf(gguf: ModuleType, file: Path) -> GGUFHeader:
    fields, tensors = _scan_gguf(file, gguf.GGML_QUANT_SIZES)
    value = fields.get
    arch = value("general.architecture")
    context = value(f"{arch}.context_length") if isinstance(arch, str) else None
    count = value("general.parameter_count")
    facts = {
        "n_parameters": int(count) if isinstance(count, int) and count > 0 else sum(n for n, _ in tensors),
        "max_tokens": int(context) if isinstance(context, int) and context > 0 else None,
    }
    card = {
        "license": value("general.license"),
        "license_link": value("general.license.link"),
        "languages": value("general.languages"),
    }
    file_type = _file_type_name(gguf, value("general.file_type"))
    quantization = {
        "file_type": file_type,
        "quantization_version": value("general.quantization_version"),
        "tensor_types": dict(sorted(Counter(_tensor_type_name(gguf, t) for _, t in tensors).items())),
    }
    record = {"quantisation": file_type, **_base_model(value)}
    return {
        "facts": {k: v for k, v in facts.items() if v is not None},
        "card": card,
        "quantization": quantization,
        "record": {k: v for k, v in record.items() if v},
    }


def _base_model(value: Callable[[str], object]) -> dict[str, str | None]:
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
    scan: _GGUFScan,
    tensors: list[tuple[str, int, int, int]],
    alignment: object,
    quant_sizes: dict[Any, tuple[int, int]],
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


def _gguf_reader_fields(gguf: ModuleType, file: Path) -> tuple[dict[str, Any], list[tuple[int, int]]]:
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


def _tensor_type_name(gguf: ModuleType, ggml_type: int) -> str:
    try:
        return gguf.GGMLQuantizationType(ggml_type).name
    except ValueError:
        return str(ggml_type)


def _file_type_name(gguf: ModuleType, file_type: object) -> str | None:
    """llama.cpp's name of a `general.file_type` (3 -> "Q4_1", 0 -> "F32"); the number itself if unknown."""
    if not isinstance(file_type, int):
        return None
    try:
        name = gguf.LlamaFileType(file_type).name
    except ValueError:
        return str(file_type)
    return re.sub(r"^(MOSTLY|ALL)_", "", name)


def split_gguf(path: str) -> tuple[str, str | None]:
    """(folder, gguf file name) for a `.gguf` path, else (path, None): transformers loads GGUF as
    `from_pretrained(folder, gguf_file=name)`."""
    p = Path(path).expanduser()
    if p.suffix.lower() == ".gguf":
        return str(p.parent), p.name
    return path, None
