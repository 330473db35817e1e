"""Tasks and model families from the user's own code: installed plugins and `--include-path` folders.

Why: a built-in task is a file in `bench/tasks/` and a family a file in `bench/adapters/`, which a user's own
work should not have to be (lm-eval's `--include_path`, pytest's and MTEB's plugins). A plugin is a module
that defines task classes or `BaseEncoder` subclasses, exactly as a built-in file does: importing it
registers them, so the registries, `bench list`, `bench run` and the catalogues treat them alike.

* An installed distribution declares its modules as entry points in the groups `instruct_bench.tasks` and
  `instruct_bench.families` (each value a module; the entry point's name is only its label). Task modules
  are imported with the built-in tasks (`bench.tasks`), family modules when the families are discovered
  (`bench.adapters.registry.discover`).
* `--include-path DIR` (`bench run`, `bench list`, `bench results`) imports every `.py` file directly in
  DIR (not one starting with `_`) the same way, each as a module of its own, with both groups.

A plugin that fails to import is one `PluginError` naming the plugin and the cause (a name that clashes
with a built-in task or family is such a cause: the registries refuse it, naming both classes).

The cached catalogues (task facts, `bench run`'s flag table) are keyed by `fingerprint()`: every plugin
entry point with its distribution's name and version and the files of its top-level package, and every
file of the include paths, so adding, upgrading, editing or removing a plugin rebuilds them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from functools import cache, partial
from importlib import metadata
from pathlib import Path
from typing import Literal

from bench.core.errors import BenchError, ConfigError

Group = Literal["tasks", "families"]
GROUPS: dict[Group, str] = {"tasks": "instruct_bench.tasks", "families": "instruct_bench.families"}


class PluginError(ConfigError):
    """A plugin (an entry point or an `--include-path` file) that cannot be imported."""


_include_paths: list[Path] = []
_loaded: set[str] = set()  # entry points ("group:name=value") and include files already imported
_plugin_modules: dict[str, Path] = {}  # the module name each include file was imported as -> its folder


def set_include_paths(dirs: list[str] | list[Path]) -> None:
    """Use the folders of `--include-path` (in place of any set before), each checked to be a folder.

    Raises:
        ConfigError: a path that is not a folder.
    """
    folders = []
    for given in dirs:
        folder = Path(given).expanduser().resolve()
        if not folder.is_dir():
            what = "does not exist" if not folder.exists() else "is not a folder"
            raise ConfigError(
                f"--include-path {given} {what}; give a folder whose .py files define tasks or model families."
            )
        folders.append(folder)
    _include_paths[:] = dict.fromkeys(folders)


def include_paths() -> tuple[Path, ...]:
    return tuple(_include_paths)


def load(group: Group) -> None:
    """Import every plugin module of `group` and every include-path file not imported yet (each once).

    Raises:
        PluginError: a module that fails to import, naming it and the cause.
    """
    for ep in _entry_points(group):
        dist = f" of {ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
        fix = f"fix it or uninstall {ep.dist.name}" if ep.dist is not None else "fix it or uninstall it"
        label = f"plugin {ep.name!r} ({ep.group} entry point {ep.value}{dist})"
        _import_once(f"{ep.group}:{ep.name}={ep.value}", label, fix, ep.load)
    for path in include_files():
        fix = f"fix it, or move it out of the folder (or rename it _{path.name})"
        _import_once(str(path), f"--include-path file {path}", fix, partial(_import_file, path))


def _import_once(key: str, label: str, fix: str, importer: Callable[[], object]) -> None:
    """Run `importer` unless `key` was imported (or is being imported: a plugin that imports `bench.tasks`
    is not imported again from there); any error becomes one PluginError naming the plugin (`label`), the
    cause and `fix`, and the plugin is tried again on the next lookup (so it fails the same way)."""
    if key in _loaded:
        return
    _loaded.add(key)
    try:
        importer()
    except PluginError:  # another plugin's, imported from this one: it names itself
        _loaded.discard(key)
        raise
    except BenchError as e:  # a registry's refusal (a clashing name) already says what to fix
        _loaded.discard(key)
        raise PluginError(f"{label} cannot be loaded: {e}") from e
    except Exception as e:  # any error of the user's module is that plugin's cause
        _loaded.discard(key)
        raise PluginError(f"{label} cannot be imported: {type(e).__name__}: {e}; {fix}.") from e


def include_files() -> list[Path]:
    """The `.py` files the include paths hold (directly, not in subfolders; `_private.py` left out)."""
    return [path for folder in _include_paths for path in sorted(folder.glob("*.py")) if not path.name.startswith("_")]


def _module_name(path: Path) -> str:
    """A module name of its own for an include file: its stem, after a digest of its folder (two folders
    may each hold a `tasks.py`)."""
    return f"bench_include_{hashlib.sha256(str(path.parent).encode()).hexdigest()[:8]}_{path.stem}"


def _import_file(path: Path) -> None:
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does: a class's module is found by its name (pickling, dataclasses)
    _plugin_modules[name] = path.parent
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def _entry_points(group: Group) -> list[metadata.EntryPoint]:
    return _all_entry_points()[group]


@cache
def _all_entry_points() -> dict[Group, list[metadata.EntryPoint]]:
    """Each group's entry points, one per (name, value): a distribution seen twice on sys.path counts once.
    Read once per process, in one scan of the installed distributions (they do not change while a command
    runs)."""
    found = metadata.entry_points()
    out: dict[Group, list[metadata.EntryPoint]] = {}
    for group, name in GROUPS.items():
        unique = {(ep.name, ep.value): ep for ep in found.select(group=name)}
        out[group] = [unique[key] for key in sorted(unique)]
    return out


def is_plugin_module(module: str) -> bool:
    """Whether a class of `module` comes from a plugin (what `fingerprint` covers): a module of an entry point's
    top-level package, or an include file. A class a script or a test defines is neither."""
    folder = _plugin_modules.get(module)
    return folder in _include_paths if folder is not None else module.partition(".")[0] in _packages()


@cache
def _packages() -> frozenset[str]:
    """The top-level packages of every plugin entry point."""
    return frozenset({ep.value.partition(":")[0].partition(".")[0] for group in GROUPS for ep in _entry_points(group)})


def fingerprint() -> str:
    """sha256 of every plugin: each entry point (group, name, module, distribution and version) with the files
    of its top-level package, and every file of the include paths. Part of each catalogue's key.

    Empty when there are none, so a catalogue's key is what it was before plugins existed."""
    if not _include_paths and not _packages():
        return ""
    digest = hashlib.sha256(_installed().encode())
    for folder in _include_paths:
        digest.update(f"include {folder}\0".encode())
        _digest_tree(digest, folder)
    return digest.hexdigest()


@cache
def _installed() -> str:
    """The entry points' part of `fingerprint` (read once per process, as the entry points are)."""
    digest = hashlib.sha256(b"plugins\0")
    for group in GROUPS:
        for ep in _entry_points(group):
            dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "-"
            digest.update(f"{ep.group}\0{ep.name}\0{ep.value}\0{dist}\0".encode())
    for top in sorted(_packages()):
        digest.update(f"package {top}\0".encode())
        for root in _package_files(top):
            _digest_tree(digest, root)
    return digest.hexdigest()


def _package_files(top: str) -> list[Path]:
    """Where a top-level module's files are (its folders, or its one file), found without importing it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    return [Path(spec.origin)] if spec.origin and Path(spec.origin).is_file() else []


def _digest_tree(digest: hashlib._Hash, root: Path) -> None:
    """Python files by content, other files (data) by size and modification time: a changed dataset file
    rebuilds the catalogue without reading gigabytes each time."""
    paths = [root] if root.is_file() else sorted(root.rglob("*"))
    for path in paths:
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if path.suffix == ".py":
            content = path.read_bytes()
        else:
            stat = path.stat()
            content = f"{stat.st_size} {stat.st_mtime_ns}".encode()
        digest.update(path.as_posix().encode() + b"\0" + content + b"\0")
