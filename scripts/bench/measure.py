"""Run the workloads in the two framework venvs, side by side, and summarize the pairs.

Each build has a worker process (``python -I workloads.py``) that runs one workload per request.
Timed workloads run in interleaved pairs, one request to each worker, the order alternating from
one pair to the next (unpatched first, then patched first), so that drift and bursts of load hit
both builds alike. Every repetition starts a fresh pair of workers: how a process happens to lay out
its memory lasts as long as the process, and would otherwise favour one build in every pair. Each
memory workload runs in a fresh pair of workers.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from scripts.bench.venvs import FrameworkPair
from scripts.series.errors import RunguardError

WORKLOADS_SCRIPT = Path(__file__).with_name("workloads.py")
# Memory is flat when it grows by less than this per run, plus a fixed allowance for dict resizes and
# caches filling up. A leak of one small object per run (a weakref, a token, a list slot) costs more.
FLAT_BYTES_PER_RUN = 4
ALLOWANCE_BYTES = 16 * 1024


@dataclass(frozen=True)
class Workload:
    """A workload of ``workloads.py`` at the size of a full and of a ``--quick`` run."""

    name: str
    title: str  # a format string of ``size``
    size: int
    quick_size: int


@dataclass(frozen=True)
class RatioSummary:
    """Distribution of the per-pair ratios patched / unpatched."""

    median: float
    q1: float
    q3: float
    low: float
    high: float


@dataclass(frozen=True)
class Growth:
    """How traced memory grows, in bytes, over ``runs`` runs between the first and the last checkpoint."""

    runs: int
    current: int
    peak: int

    @property
    def flat(self) -> bool:
        """Whether neither the memory held after a run nor the peak during a run grows with the run count."""
        return max(self.current, self.peak) < FLAT_BYTES_PER_RUN * self.runs + ALLOWANCE_BYTES

    def per_run(self) -> dict[str, float]:
        """Growth of current and peak traced memory in bytes per run."""
        return {"current": self.current / self.runs, "peak": self.peak / self.runs}


class _Worker:
    """A process serving workload requests in one framework venv."""

    def __init__(self, python: Path, errors: IO[str]) -> None:
        self._python = python
        self._errors = errors
        self._process = subprocess.Popen(
            [str(python), "-I", str(WORKLOADS_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            bufsize=1,
        )

    def send(self, workload: str, size: int) -> None:
        """Ask the worker to run ``workload`` at ``size``."""
        assert self._process.stdin is not None  # noqa: S101 (a pipe)
        self._process.stdin.write(f"{workload} {size}\n")

    def receive(self) -> dict[str, Any]:
        """The answer to the request sent last; a worker that died raises with its last line of stderr."""
        assert self._process.stdout is not None  # noqa: S101 (a pipe)
        answer = self._process.stdout.readline()
        if not answer:
            self._process.wait()
            self._errors.seek(0)
            detail = (self._errors.read().strip().splitlines() or ["no output"])[-1]
            raise RunguardError(f"a workload failed in {self._python}: {detail}")
        return cast("dict[str, Any]", json.loads(answer))

    def ask(self, workload: str, size: int) -> dict[str, Any]:
        """Run ``workload`` at ``size`` in the worker and return its answer."""
        self.send(workload, size)
        return self.receive()

    def close(self) -> None:
        """End the worker (EOF on its stdin) and wait for it."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


@contextmanager
def _workers(pair: FrameworkPair) -> Generator[tuple[_Worker, _Worker], None, None]:
    """An unpatched and a patched worker, ended on the way out."""
    with tempfile.TemporaryFile("w+") as unpatched_errors, tempfile.TemporaryFile("w+") as patched_errors:
        unpatched, patched = _Worker(pair.unpatched, unpatched_errors), _Worker(pair.patched, patched_errors)
        try:
            yield unpatched, patched
        finally:
            unpatched.close()
            patched.close()


def timed_pairs(
    pair: FrameworkPair, workloads: Sequence[Workload], sizes: Callable[[Workload], int], repetitions: int
) -> dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]]:
    """CPU and wall seconds per workload, (unpatched, patched), from ``repetitions`` interleaved pairs."""
    seconds: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]] = {
        workload.name: ([], []) for workload in workloads
    }
    for repetition in range(repetitions):
        order = (0, 1) if repetition % 2 == 0 else (1, 0)
        with _workers(pair) as workers:
            for workload in workloads:
                for variant in order:
                    seconds[workload.name][variant].append(workers[variant].ask(workload.name, sizes(workload)))
    return seconds


def memory_points(pair: FrameworkPair, workload: str, runs: int) -> tuple[list[list[int]], list[list[int]]]:
    """Traced memory checkpoints (runs, current, peak) of both builds, in fresh workers running at once."""
    with _workers(pair) as workers:
        for worker in workers:
            worker.send(workload, runs)
        unpatched, patched = (cast("list[list[int]]", worker.receive()["memory"]) for worker in workers)
    return unpatched, patched


def ratio_summary(unpatched: Sequence[float], patched: Sequence[float]) -> RatioSummary:
    """Median, quartiles and range of the per-pair ratios patched / unpatched."""
    ratios = [after / before for before, after in zip(unpatched, patched, strict=True)]
    if len(ratios) == 1:
        return RatioSummary(*ratios * 5)
    q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return RatioSummary(median, q1, q3, min(ratios), max(ratios))


def growth(points: Sequence[Sequence[int]]) -> Growth:
    """How much current and peak traced memory grow from the first to the last checkpoint."""
    (first_runs, first_current, first_peak), (last_runs, last_current, last_peak) = points[0], points[-1]
    return Growth(last_runs - first_runs, last_current - first_current, last_peak - first_peak)
