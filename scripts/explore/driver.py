"""Search schedules, shrink violating ones, attribute them to known bug members and record the results.

Schedule ``seed`` of a family is fully determined by ``(family, seed)``: the seed draws the operation sequence
and seeds the perturbing loop. A violating sequence is shrunk by deleting operations while the same kind of
violation still occurs under the same seed, and printed with a one-line replay command.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import platform
import random
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from opentelemetry import metrics

from scripts.explore.invariants import Violation
from scripts.explore.loop import PerturbingLoop
from scripts.explore.operations import Op, Session, format_ops, generate
from scripts.explore.subjects import build_subject

MIN_OPS, MAX_OPS = 3, 14
SHRINK_BUDGET = 150  # schedule runs spent shrinking one violation
SHUTDOWN_TIMEOUT = 30.0

GRAPH, AGENT = frozenset({"graph", "agent", "subworkflow"}), frozenset({"agent"})
CONTINUED = frozenset({"graph", "subworkflow"})  # families that answer requests with responses= runs
FUNCTIONAL = frozenset({"functional", "functional-agent", "functional-buffered", "functional-awaitable"})
BUFFERED, AWAITABLE = frozenset({"functional-buffered"}), frozenset({"functional-awaitable"})
EVERY = GRAPH | FUNCTIONAL

# (member, families it shows in, violation kind, text the detail contains)
MEMBERS: tuple[tuple[str, frozenset[str], str, str], ...] = (
    ("G1 late discard wipes the successor's staged write", GRAPH, "lost-write", ""),
    ("G2 a dropped run's staged write is committed by the successor", GRAPH, "leaked-write", ""),
    ("G3 a dropped run's executor runs beside the successor", GRAPH, "overlap", ""),
    ("G3 a dropped run's executor sees the successor's tools", GRAPH, "foreign-tools", ""),
    ("G4 a closed run's queued events reach the next run", GRAPH, "foreign-event", ""),
    ("G4 a closed run's fan-in buffer is joined by the next run", GRAPH, "mixed-fan-in", ""),
    ("G4 a closed run's messages block the next run", GRAPH, "exception", "in-flight executor"),
    ("G5 status stays IN_PROGRESS after close/cancel/drop", GRAPH, "status", ""),
    ("G5 WorkflowAgent refuses the next turn", AGENT, "guard-leaked", "invalid state to restart"),
    ("G6 cancel_pending_requests() ignores the run guard", CONTINUED, "cancel-pending-admitted", ""),
    ("G7 WorkflowAgent close() returns while the run executes", AGENT, "live-after-end", "after close() returned"),
    ("G9 an abandoned responses= run loses the answer", CONTINUED, "exception", "No pending requests"),
    ("G9 an answer is delivered twice", CONTINUED, "answered-twice", ""),
    ("S1 a buffered stream's close() during another task's read fails", BUFFERED, "exception",
     "generator is already running"),
    ("S1 a buffered stream's close() during a read returns while the run executes", BUFFERED, "live-after-end",
     "close() during a pull"),
    ("S1 a buffered stream's close() during a read releases the guard while the run executes", BUFFERED, "overlap",
     ""),
    ("S2 a from_awaitable() stream closed before its first read leaves its awaitable unawaited", AWAITABLE,
     "never-awaited", ""),
    ("S2 a resolved, unread from_awaitable() stream keeps the run guard after close()", AWAITABLE, "guard-leaked",
     "closed after 0 pulls"),
    ("F1 ResponseStream.close() during another task's pull", EVERY, "exception", "generator is already running"),
    ("F1 close() during a pull returns while the run executes", EVERY, "live-after-end", "close() during a pull"),
    ("F1 close() during a pull releases the guard while the run executes", FUNCTIONAL, "overlap", ""),
    ("F2 a late predecessor releases its successor's guard", FUNCTIONAL, "admitted-while-live", ""),
    ("F3 closing a FunctionalWorkflowAgent stream leaves the workflow running", frozenset({"functional-agent"}),
     "guard-leaked", ""),
    ("F4 a cancelled or unstarted dropped FunctionalWorkflow run keeps the guard", FUNCTIONAL - {"functional-agent"},
     "guard-leaked", ""),
)  # fmt: skip


def member_of(family: str, violation: Violation) -> str:
    """The known bug member a violation shows, or ``other <kind>``."""
    for member, families, kind, text in MEMBERS:
        if family in families and violation.kind == kind and text in violation.detail:
            return member
    return f"other {violation.kind}"


def schedule_ops(family: str, seed: int) -> list[Op]:
    """The operation sequence schedule ``seed`` of ``family`` runs."""
    rng = random.Random(f"{family}/{seed}")  # noqa: S311 (reproducible schedules, not cryptography)
    return generate(rng, family, rng.randint(MIN_OPS, MAX_OPS))


def run_schedule(family: str, seed: int, ops: list[Op]) -> list[Violation]:
    """Run ``ops`` on a fresh object of ``family`` on a loop perturbed by ``seed``; return the violations."""
    loop = PerturbingLoop(seed)
    subject = build_subject(family)
    loop_errors: list[Violation] = []

    def on_error(_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        detail = f"{context.get('message')}" + (f": {type(error).__name__}: {error}" if error else "")
        loop_errors.append(Violation("loop-error", detail))

    loop.set_exception_handler(on_error)
    session = Session(subject, family, loop.quiesce)
    try:
        loop.run_until_complete(session.execute(ops))
    except BaseException as error:  # a stray CancelledError, or anything else, is a finding
        subject.probe.violate("exception", f"the caller got {type(error).__name__}: {error}")
    finally:
        try:
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), SHUTDOWN_TIMEOUT))
        except BaseException as error:
            subject.probe.violate("hang", f"finalizing async generators: {type(error).__name__}: {error}")
        loop.close()
        asyncio.set_event_loop(None)
    return subject.probe.violations + loop_errors


def shrink(family: str, seed: int, ops: list[Op], kind: str) -> list[Op]:
    """Delete operations (halves, then smaller chunks, then single ones) while a ``kind`` violation remains."""
    budget = SHRINK_BUDGET
    chunk = len(ops) // 2
    while chunk >= 1 and budget > 0:
        start = 1  # keep the first start
        while start < len(ops) and budget > 0:
            candidate = ops[:start] + ops[start + chunk :]
            budget -= 1
            if any(found.kind == kind for found in run_schedule(family, seed, candidate)):
                ops = candidate
            else:
                start += chunk
        chunk //= 2
    return ops


@dataclass
class FamilyResult:
    """What exploring one family found: the JSON record of one base x variant x family x Python."""

    base: str
    variant: str
    family: str
    series: str
    python: str = field(default_factory=platform.python_version)
    schedules: int = 0
    violating_schedules: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the exploring process's CPU time: what the run costs on a machine of its own
    seed_range: list[int] = field(default_factory=list[int])
    date: str = ""
    members_found_after: dict[str, int] = field(default_factory=dict[str, int])
    examples: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    shard: str = ""  # "K/N" for one shard of a run, "" for a whole run


@dataclass
class Explorer:
    """Runs schedules of one family and reports each new kind of violation once, shrunk, with its replay line."""

    result: FamilyResult
    replay: Callable[[int, list[Op]], str]
    max_examples: int = 5

    def explore(self, seeds: range) -> FamilyResult:
        """Run the schedules of ``seeds``."""
        family = self.result.family
        began, began_cpu = time.monotonic(), time.process_time()
        self.result.seed_range = [seeds.start, seeds.stop - 1] if seeds else []
        for index, seed in enumerate(seeds, start=1):
            ops = schedule_ops(family, seed)
            violations = run_schedule(family, seed, ops)
            self.result.schedules = index
            if violations:
                self.result.violating_schedules += 1
                self._record(seed, ops, violations, index)
        self.result.seconds = round(time.monotonic() - began, 1)
        self.result.cpu_seconds = round(time.process_time() - began_cpu, 1)
        self.result.date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        return self.result

    def _record(self, seed: int, ops: list[Op], violations: list[Violation], index: int) -> None:
        family = self.result.family
        new = [v for v in violations if member_of(family, v) not in self.result.members_found_after]
        for violation in violations:
            self.result.members_found_after.setdefault(member_of(family, violation), index)
        if not new or len(self.result.examples) >= self.max_examples:
            return
        first = new[0]
        shrunk = shrink(family, seed, ops, first.kind)
        example = {
            "member": member_of(family, first),
            "seed": str(seed),
            "violation": str(first),
            "ops": format_ops(shrunk),
            "replay": self.replay(seed, shrunk),
        }
        self.result.examples.append(example)
        print(f"VIOLATION [{family}] seed {seed} (schedule {index}): {first}")
        print(f"  member:   {example['member']}")
        print(f"  sequence: {format_ops(ops)}")
        print(f"  shrunk:   {example['ops']}")
        print(f"  replay:   {example['replay']}")


def replay(family: str, seed: int, ops: list[Op] | None) -> list[Violation]:
    """Run one schedule again (its generated sequence, or ``ops``) and print what it violates."""
    ops = ops if ops is not None else schedule_ops(family, seed)
    violations = run_schedule(family, seed, ops)
    print(f"[{family}] seed {seed}: {format_ops(ops)}")
    for violation in violations:
        print(f"  {member_of(family, violation)}: {violation}")
    print(f"  {len(violations)} violation(s)")
    return violations


# Measured (10,000 schedules, one base): agent and graph take about twice as long as the functional families, and
# subworkflow (the graph run as a child of a parent run) longer still; the slowest start first so that the processes
# finish together.
SLOWEST_FIRST = (
    "subworkflow",
    "agent",
    "graph",
    "functional-agent",
    "functional",
    "functional-buffered",
    "functional-awaitable",
)


@dataclass(frozen=True)
class FamilyJob:
    """One family's part of an exploration: what a worker process needs to explore it on its own."""

    family: str
    base: str
    variant: str
    series: str
    seeds: range
    shard: str
    replay_command: str


def explore_family(job: FamilyJob) -> FamilyResult:
    """Explore one family (in a worker process or in this one, after :func:`quiet`) and print its summary line."""

    def replay_line(seed: int, ops: list[Op]) -> str:
        return f"{job.replay_command} --family {job.family} --replay {seed} --ops {format_ops(ops)}"

    result = FamilyResult(job.base, job.variant, job.family, job.series, shard=job.shard)
    Explorer(result, replay_line).explore(job.seeds)
    found = "; ".join(f"{member} after {n}" for member, n in sorted(result.members_found_after.items()))
    shard = f" (shard {job.shard})" if job.shard else ""
    print(
        f"{job.base} {job.variant} {job.family}{shard}: {result.schedules} schedules, "
        f"{result.violating_schedules} violating, {result.seconds}s ({result.cpu_seconds}s CPU)"
        + (f"; {found}" if found else ""),
        flush=True,
    )
    return result


def explore_families(jobs: list[FamilyJob], processes: int) -> list[FamilyResult]:
    """Explore each job's family: in this process, or each in a fresh process, ``processes`` of them at a time."""
    workers = min(processes, len(jobs))
    if workers <= 1:
        quiet()
        return [explore_family(job) for job in jobs]
    slowest_first = sorted(jobs, key=lambda job: SLOWEST_FIRST.index(job.family))
    context = multiprocessing.get_context("spawn")  # fresh interpreters: no state of this one's event loops
    with context.Pool(workers, initializer=quiet, maxtasksperchild=1) as pool:
        results = dict(zip(slowest_first, pool.map(explore_family, slowest_first, chunksize=1), strict=True))
    return [results[job] for job in jobs]


def quiet() -> None:
    """Silence the framework's experimental-feature warnings and make collection deterministic enough."""
    warnings.filterwarnings("ignore", message=r".*experimental.*")
    # A from_awaitable() stream dropped unread leaves its coroutine unawaited: the caller's doing, not a finding.
    warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
    logging.disable(logging.CRITICAL)  # the framework logs what the checks report anyway
    # Without an SDK, OpenTelemetry's API keeps every meter and instrument the framework asks for (a set per
    # FunctionTool), so the heap, and with it every gc.collect() above, would grow with the schedules run.
    metrics.set_meter_provider(metrics.NoOpMeterProvider())
    gc.collect()
    gc.freeze()  # objects alive now (the framework) are never scanned again: collections stay cheap
