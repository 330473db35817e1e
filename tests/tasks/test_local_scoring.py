"""A plain run's scoring thread (bench.core.parallel.LocalWorker) and the thread pools of a k-means fit.

Scores equal a run in line, a job's failure is raised where the task gathers, the backlog stays bounded,
Ctrl-C does not wait for a job, no thread or queued job outlives its task, and every fit runs with one
OpenMP and one BLAS thread, also when two fits overlap.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from bench.core import parallel
from bench.tasks import metrics
from bench.tasks.abstasks import instruction_robustness
from bench.tasks.demo import DemoNYTClustering
from bench.tasks.robustness_clustering import FewRelClustering
from helpers import scores_of
from toy_encoders import ScaledHashEncoder

ROOT = Path(__file__).resolve().parents[2]


class Boom(RuntimeError):
    pass


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "bench-scoring"]


def _wait_for_no_thread() -> None:
    """The scoring thread ends once no job is queued (fails after 5 s)."""
    _wait_until(lambda: not _threads())


def _wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def _pools(api: str) -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == api}


@pytest.fixture
def recorded_fits(monkeypatch):
    """Every k-means fit records the thread it ran on and the thread pools it saw."""
    seen: list[dict] = []

    class Recording(metrics.MiniBatchKMeans):
        def fit_predict(self, X, *args, **kwargs):
            seen.append({"thread": threading.current_thread().name, "blas": _pools("blas"), "omp": _pools("openmp")})
            return super().fit_predict(X, *args, **kwargs)

    monkeypatch.setattr(metrics, "MiniBatchKMeans", Recording)
    return seen


# --------------------------------------------------------------------------------- scores and failures
@pytest.mark.slow
def test_scores_equal_in_line_and_on_the_scoring_thread(fewrel_six_dir, recorded_fits):
    """Real FewRel texts x 30 instructions, and the two aspects of the demo NYT corpus."""
    tasks = (lambda: FewRelClustering(data_dir=fewrel_six_dir), DemoNYTClustering)
    in_line, threaded = [], []
    parallel.set_executor(parallel.InLine())
    try:
        in_line = [scores_of(ScaledHashEncoder(use_cache=False), make()) for make in tasks]
    finally:
        parallel.set_executor(None)
    assert {fit["thread"] for fit in recorded_fits} == {"MainThread"}
    del recorded_fits[:]
    threaded = [scores_of(ScaledHashEncoder(use_cache=False), make()) for make in tasks]
    assert "bench-scoring" in {fit["thread"] for fit in recorded_fits}  # the thread did take jobs
    assert len(recorded_fits) == 30 + 2
    for a, b in zip(in_line, threaded, strict=True):
        a.pop("evaluation_time", None), b.pop("evaluation_time", None)
        assert a == b  # exactly, every V-measure and gap
    _wait_for_no_thread()


def test_a_failing_job_raises_its_own_exception_where_the_task_gathers(fewrel_six_dir, monkeypatch):
    calls = []

    def fail_on_the_fourth(emb, labels, *, seed):
        calls.append(threading.current_thread().name)
        if len(calls) == 4:
            raise Boom("k-means failed")
        return [0] * len(labels)  # one cluster: a valid assignment

    # each view's k-means (the task scores the assignments it returns; bench/tasks/metrics.py)
    monkeypatch.setattr(instruction_robustness, "cluster_assignment", fail_on_the_fourth)
    with pytest.raises(Boom, match="k-means failed"):
        scores_of(ScaledHashEncoder(use_cache=False), FewRelClustering(data_dir=fewrel_six_dir))
    _wait_for_no_thread()

    future = parallel.submit(_raise, Boom("direct"))  # not raised by submit
    with pytest.raises(Boom, match="direct"):
        parallel.gather([parallel.submit(_value, 1), future])


def _raise(error: BaseException) -> None:
    raise error


def _value(x: int) -> int:
    return x


def _slow(x: Any, started: threading.Event, release: threading.Event) -> tuple[Any, str]:
    """`x` (or `x()`), once released, and the thread it ran on."""
    started.set()
    release.wait(10)
    return (x() if callable(x) else x), threading.current_thread().name


def test_the_backlog_bound_holds_and_the_caller_waits_for_room():
    """While the scoring thread is busy, never more than BACKLOG jobs wait; then `submit` waits."""
    worker = parallel.LocalWorker(backlog=2)
    started, release = threading.Event(), threading.Event()
    futures = [worker.submit(_slow, 0, started, release)]
    assert started.wait(30)
    futures += [worker.submit(_value, 1), worker.submit(_value, 2)]
    assert len(worker.queued) == 2
    blocked = threading.Thread(target=lambda: futures.append(worker.submit(_value, 3)))
    blocked.start()
    blocked.join(0.3)
    assert blocked.is_alive() and len(worker.queued) == 2  # the third waits for room, it does not queue
    release.set()
    blocked.join(30)
    assert worker.gather(futures) == [(0, "bench-scoring"), 1, 2, 3]  # in order of submission
    _wait_for_no_thread()


def test_the_scoring_thread_keeps_the_process_priority():
    """A lowered priority starved the thread on a shared CPU, and the caller waited on it (module docstring)."""
    import os

    if not hasattr(os, "getpriority"):
        pytest.skip("no thread priorities here")

    def niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    started, release = threading.Event(), threading.Event()
    worker = parallel.LocalWorker()
    future = worker.submit(_slow, niceness, started, release)
    assert started.wait(30)  # taken by the thread, not left for gather to run here
    release.set()
    ((job, name),) = worker.gather([future])
    assert name == "bench-scoring" and job == niceness()


def test_a_failed_task_leaves_no_queued_job_and_no_thread(fewrel_six_dir, monkeypatch):
    """The encoder fails at the 4th view while the first is still being clustered: the 2nd and 3rd
    never run, and the thread ends with the job it had."""
    started, release = threading.Event(), threading.Event()
    ran = []

    def blocked(emb, labels, *, seed):
        ran.append(threading.current_thread().name)
        if threading.current_thread().name == "bench-scoring":
            started.set()
            release.wait(10)
        return [0] * len(labels)

    class FailsAtTheFourthView(ScaledHashEncoder):
        def _encode_group(self, inputs, batch_size):
            if len(self.groups) == 1:
                assert started.wait(30)  # the thread holds view 1 before views 2 and 3 come
            if len(self.groups) == 3:
                raise Boom("the encoder failed")
            return super()._encode_group(inputs, batch_size)

    monkeypatch.setattr(instruction_robustness, "cluster_assignment", blocked)
    with pytest.raises(Boom, match="the encoder failed"):
        scores_of(FailsAtTheFourthView(use_cache=False), FewRelClustering(data_dir=fewrel_six_dir))
    release.set()
    _wait_for_no_thread()
    assert ran == ["bench-scoring"]  # views 2 and 3 were queued, and dropped
    assert not parallel._LOCAL.queued


def test_ctrl_c_while_gathering_does_not_wait_for_the_job(tmp_path):
    script = textwrap.dedent(
        """
        import sys, time
        from bench.core import parallel
        future = parallel.submit(time.sleep, 60)
        print("gathering", flush=True)
        parallel.gather([future])
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "gathering\n"
    time.sleep(0.2)
    tick = time.monotonic()
    proc.send_signal(2)  # SIGINT, as Ctrl-C
    try:
        _, err = proc.communicate(timeout=50)
    finally:
        proc.kill()
    assert time.monotonic() - tick < 30  # the job sleeps 60 s: Ctrl-C did not wait for it
    assert proc.returncode != 0 and "KeyboardInterrupt" in err


# --------------------------------------------------------------------------------- thread pools
def test_a_fit_on_the_scoring_thread_has_one_blas_and_one_openmp_thread(recorded_fits):
    rng = np.random.default_rng(0)
    emb, labels = rng.normal(size=(200, 16)).astype(np.float32), [i % 4 for i in range(200)]
    before = _pools("blas")
    if before == {1}:
        pytest.skip("one BLAS thread already: nothing to limit")
    (v_measure,) = parallel.gather([parallel.submit(_cluster, emb, labels)])
    assert recorded_fits == [{"thread": "bench-scoring", "blas": {1}, "omp": {1}}]
    assert _pools("blas") == before  # given back after the fit
    assert v_measure == metrics.cluster_v_measure(emb, labels, seed=42)  # the same score in line


def _cluster(emb: np.ndarray, labels: list[int]) -> float:
    return metrics.cluster_v_measure(emb, labels, seed=42)
