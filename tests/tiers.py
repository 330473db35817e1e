"""The test tiers, enforced: `pytest -m "not slow"` is the inner loop, so a test outside `slow` must not
load a real model or start a process group.

* A test that uses a fixture of SLOW_FIXTURES (the session's real runs) is marked `slow` at collection.
* While a test outside `slow` sets up and runs, loading a transformers model of more than
  REAL_MODEL_PARAMETERS parameters (MiniLM has 22.7M; the tests' models built from a config a few
  thousand) or calling `torch.distributed.init_process_group` fails it, naming the mark to add. The
  guard goes in once transformers (or torch.distributed) is imported, which collection does.

A pytest plugin (tests/conftest.py lists it in `pytest_plugins`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

SLOW_FIXTURES = frozenset({"demo_results", "smollm2_gguf", "smollm2_path"})
REAL_MODEL_PARAMETERS = 5_000_000

_running: list[pytest.Item] = []  # the test being set up or run, while it is
_installed: set[str] = set()


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def _fast_test() -> pytest.Item | None:
    """The running test when it is outside `slow`, else None."""
    item = _running[-1] if _running else None
    return item if item is not None and item.get_closest_marker("slow") is None else None


def _guard_model_loading() -> None:
    from transformers import PreTrainedModel

    original: Callable[..., Any] = PreTrainedModel.from_pretrained.__func__  # type: ignore[attr-defined]

    def from_pretrained(cls: type, *args: Any, **kwargs: Any) -> Any:
        model = original(cls, *args, **kwargs)
        item = _fast_test()
        if item is not None:
            size = sum(p.numel() for p in model.parameters())
            if size > REAL_MODEL_PARAMETERS:
                pytest.fail(
                    f"{item.nodeid} loads a real model ({size:,} parameters) outside the `slow` tier: mark it "
                    f"@pytest.mark.slow, or build a tiny model from a config (tests/tiers.py)",
                    pytrace=False,
                )
        return model

    PreTrainedModel.from_pretrained = classmethod(from_pretrained)  # type: ignore[method-assign, assignment]


def _guard_process_groups() -> None:
    import torch.distributed as dist

    original = dist.init_process_group

    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        item = _fast_test()
        if item is not None:
            pytest.fail(
                f"{item.nodeid} starts a process group outside the `slow` tier: mark it @pytest.mark.slow",
                pytrace=False,
            )
        return original(*args, **kwargs)

    dist.init_process_group = init_process_group


GUARDS = {"transformers": _guard_model_loading, "torch.distributed": _guard_process_groups}


def _install_guards() -> None:
    for module, install in GUARDS.items():
        if module not in _installed and module in sys.modules:
            install()
            _installed.add(module)


def _watching(item: pytest.Item) -> Iterator[None]:
    """The guards in place and `item` known to them while one phase of it runs (its set-up, then its call)."""
    _install_guards()
    _running.append(item)
    try:
        yield
    finally:
        _running.pop()


pytest_runtest_setup = pytest.hookimpl(hookwrapper=True)(_watching)
pytest_runtest_call = pytest.hookimpl(hookwrapper=True)(_watching)
