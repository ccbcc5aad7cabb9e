"""Search schedules, shrink violating ones, attribute them to known bug members and record the results.

Schedule ``seed`` of a family is fully determined by ``(family, seed)``: the seed draws the operation sequence
and seeds the perturbing loop. A violating sequence is shrunk by deleting operations while a violation of the same
member (of the same kind, where no member explains it) still occurs under the same seed, and printed with a one-line
replay command.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import logging
import multiprocessing
import platform
import random
import re
import sys
import time
import warnings
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, cast

from opentelemetry import metrics

from scripts.explore.differential import Declared, Pair, Verdict, confirmed, diverged, judge, request, steered
from scripts.explore.differential import Outcome as Compared
from scripts.explore.invariants import Violation
from scripts.explore.loop import PerturbingLoop
from scripts.explore.operations import Op, Session, format_ops, generate, parse_ops
from scripts.explore.subjects import build_subject
from scripts.series.errors import RunguardError

MIN_OPS, MAX_OPS = 3, 14
FINALIZING = "the loop's aclose() of a collected async generator"  # what a loop error says of asyncio's finalizer
SHRINK_BUDGET = 150  # schedule runs spent shrinking one violation
SHUTDOWN_TIMEOUT = 30.0

GRAPH, AGENT = frozenset({"graph", "agent", "subworkflow", "checkpointed"}), frozenset({"agent"})
CONTINUED = frozenset({"graph", "subworkflow", "checkpointed"})  # families that answer requests with responses= runs
FUNCTIONAL = frozenset({"functional", "functional-agent", "functional-buffered", "functional-awaitable"})
BUFFERED, AWAITABLE = frozenset({"functional-buffered"}), frozenset({"functional-awaitable"})
CHAT = frozenset({"chat"})
EVERY = GRAPH | FUNCTIONAL


@dataclass(frozen=True)
class Member:
    """A known bug member: the violation ``kind`` it shows in ``families``, its detail matching the regex ``shows``.

    ``open``: the series leaves it open (docs/members), so the patched build may show it where the unpatched build
    does too; a member the series fixes must not show on the patched build at all.
    """

    name: str
    families: frozenset[str]
    kind: str
    shows: str = ""
    open: bool = False

    def matches(self, family: str, violation: Violation) -> bool:
        """Whether ``violation``, found in ``family``, is this member's."""
        shown = re.search(self.shows, violation.detail) is not None
        return family in self.families and violation.kind == self.kind and shown


# The first member that matches names a violation: a narrower one comes before a broader one of the same kind.
MEMBERS = (
    Member("G1 late discard wipes the successor's staged write", GRAPH, "lost-write"),
    Member("G2 a run's staged write is committed by the successor after the run's loop was closed by hand", GRAPH,
           "leaked-write", "it was lost with its event loop", open=True),
    Member("G2 a dropped run's staged write is committed by the successor", GRAPH, "leaked-write"),
    Member("G3 a dropped run's executor runs beside the successor", GRAPH, "overlap"),
    # Its teardown never runs (L1), so the next run, on a new loop, delivers what it queued: with its own tools.
    Member("L1 what a run dropped with its hand-closed event loop queued is executed by the next run", GRAPH,
           "foreign-tools", "was dropped with its event loop", open=True),
    # The loop's aclose() tasks of a run's nested generators race: one finds its generator running, or one makes
    # its generator yield (its teardown failed: "ignored GeneratorExit"), and closing that generator again raises
    # StopAsyncIteration, which the generator around it turns into "raised StopAsyncIteration", or, where it
    # closes the inner one itself (3.13), leaves as it is.
    Member("G11 a dropped run freed by the cycle collector is closed several times at once", GRAPH, "loop-error",
           r"asynchronous generator is already running|" + re.escape(FINALIZING) + r"\): (RuntimeError: async "
           r"generator (raised StopAsyncIteration|ignored GeneratorExit)|StopAsyncIteration: )$", open=True),
    Member("G3 a dropped run's executor sees the successor's tools", GRAPH, "foreign-tools"),
    Member("L1 what a run dropped with its hand-closed event loop queued is executed by the next run", GRAPH,
           "foreign-event", "was dropped with its event loop", open=True),
    Member("G4 a closed run's queued events reach the next run", GRAPH, "foreign-event"),
    Member("G10 (not covered) a fresh run joins the fan-in a completed run left beside its pending requests", GRAPH,
           "mixed-fan-in", "the earlier ones had completed", open=True),
    Member("G4b a closed run's fan-in buffer is joined by the next run (kept by PR 3, as on the release)", GRAPH,
           "mixed-fan-in", open=True),
    Member("G4 what a stopped run's completed supersteps queued blocks the next message= run (kept by PR 3)", GRAPH,
           "exception", "in-flight executor", open=True),
    Member("L1 a run whose event loop was closed by hand keeps its status", GRAPH, "status",
           "dropped with its event loop", open=True),
    Member("G5 status stays IN_PROGRESS after a run stopped between supersteps with work left (as on the release)",
           GRAPH, "status", "abandoned in progress", open=True),
    Member("G5 status stays IN_PROGRESS after close/cancel/drop", GRAPH, "status"),
    Member("L1 a run whose event loop was closed by hand keeps the run guard", EVERY, "guard-leaked",
           "with its event loop", open=True),
    Member("L1 a sub-workflow whose parent's event loop was closed by hand keeps the sub-workflow's run guard",
           frozenset({"subworkflow"}), "exception", "raised WorkflowException: Workflow is already running", open=True),
    Member("G5 WorkflowAgent refuses the next turn after a turn stopped between supersteps with work left (kept by "
           "PR 3, as on the release)", AGENT, "guard-leaked", "was stopped between supersteps$", open=True),
    Member("G5 WorkflowAgent refuses the next turn", AGENT, "guard-leaked", "invalid state to restart"),
    Member("G6 cancel_pending_requests() ignores the run guard", CONTINUED, "cancel-pending-admitted"),
    Member("G7 WorkflowAgent close() returns while the run executes", AGENT, "live-after-end",
           r"after close\(\) returned"),
    Member("G9 an abandoned responses= run loses the answer", CONTINUED, "exception", "No pending requests"),
    Member("G9 an answer is delivered twice", CONTINUED, "answered-twice"),
    Member("S1 a buffered stream's close() during another task's read fails (as on the release)", BUFFERED,
           "exception", "generator is already running", open=True),
    Member("S1 a buffered stream's close() during a read returns while the run executes (as on the release)", BUFFERED,
           "live-after-end", r"close\(\) during a pull", open=True),
    Member("S1 a buffered stream's close() during a read releases the guard while the run executes", BUFFERED,
           "overlap"),
    Member("S2 a from_awaitable() stream closed before its first read leaves its awaitable unawaited", AWAITABLE,
           "never-awaited", open=True),
    Member("S2 a resolved, unread from_awaitable() stream keeps the run guard after close()", AWAITABLE,
           "guard-leaked", "closed (during a pull )?after 0 pulls", open=True),
    Member("S2 close() of an unread chat stream waits for the model call", CHAT, "hang",
           r"^close\(\) of r\d+ (during a pull )?did not finish", open=True),
    Member("S2 a read that starts while close() reads an unread chat stream is refused", CHAT, "exception",
           r"^pulling r\d+ raised RuntimeError: anext\(\): asynchronous generator is already running", open=True),
    Member("F1 ResponseStream.close() during another task's pull fails (as on the release)", EVERY, "exception",
           "generator is already running", open=True),
    Member("F1 close() during a pull returns while the run executes (as on the release)", EVERY, "live-after-end",
           r"close\(\) during a pull", open=True),
    Member("F1 close() during a pull releases the guard while the run executes", FUNCTIONAL, "overlap"),
    Member("F2 a late predecessor releases its successor's guard", FUNCTIONAL, "admitted-while-live"),
    Member("F3 closing a FunctionalWorkflowAgent stream leaves the workflow running", frozenset({"functional-agent"}),
           "guard-leaked"),
    Member("F4 a cancelled or unstarted dropped FunctionalWorkflow run keeps the guard",
           FUNCTIONAL - {"functional-agent"}, "guard-leaked"),
)  # fmt: skip


def known_member(family: str, violation: Violation) -> Member | None:
    """The known bug member a violation shows, if any."""
    return next((member for member in MEMBERS if member.matches(family, violation)), None)


def member_of(family: str, violation: Violation) -> str:
    """The name of the known bug member a violation shows, or ``other <kind>``."""
    member = known_member(family, violation)
    return member.name if member is not None else f"other {violation.kind}"


def open_and_shared(
    family: str,
    violation: Violation,
    unpatched: Iterable[Violation],
    patched: Iterable[Violation] = (),
    *,
    diverging: bool = False,
) -> bool:
    """Whether a violation of the patched build is an open member's that the unpatched build shows there too.

    The unpatched build shows it there when it violates the invariant the same way, or when it violated it first in
    a way the patched build does not (a member ``patched``, that build's violations, does not show: a leaked guard
    refused a run on the release, though another run's refusal, an open member, shows on both): the series fixed
    what went wrong on the release, and the schedule went on into a member the series leaves open, which the
    release shows wherever it gets that far. Likewise when the caller took another path at a difference the series
    declares (``diverging``: a run the release refuses is admitted, say), and that path led into an open member.
    Such a violation is reported; any other violation of the patched build fails the run (one only it shows is a
    regression, one of a fixed member or of no known member is a failure of the series).
    """
    member = known_member(family, violation)
    if member is None or not member.open:
        return False
    fixed = {member_of(family, found) for found in unpatched} - {member_of(family, found) for found in patched}
    return diverging or bool(fixed) or any(found.kind == violation.kind for found in unpatched)


def shared_open(
    family: str, unpatched: Compared, patched: Compared, declared: list[Declared]
) -> Callable[[Violation], bool]:
    """:func:`open_and_shared` for the patched build's violations of one schedule both builds ran."""
    diverging = diverged(unpatched, patched, declared)
    return partial(
        open_and_shared, family, unpatched=unpatched.violations, patched=patched.violations, diverging=diverging
    )


def judged(
    family: str,
    unpatched: Compared,
    patched: Compared,
    declared: list[Declared],
    shared: Callable[[Violation], bool] | None = None,
) -> Verdict:
    """:func:`judge`, with the patched build's violations of open members both builds show left to the report.

    ``shared``: :func:`shared_open` of this schedule, where the caller has it already.
    """
    shared = shared or shared_open(family, unpatched, patched, declared)
    shown = [violation for violation in patched.violations if not shared(violation)]
    steering = steered(family, patched)
    return judge(unpatched, replace(patched, violations=tuple(shown)), declared, steering=steering)


def schedule_ops(family: str, seed: int) -> list[Op]:
    """The operation sequence schedule ``seed`` of ``family`` runs."""
    rng = random.Random(f"{family}/{seed}")  # noqa: S311 (reproducible schedules, not cryptography)
    return generate(rng, family, rng.randint(MIN_OPS, MAX_OPS))


@dataclass
class Outcome:
    """What one schedule did: the invariant violations found, and what the caller observed (JSON)."""

    violations: list[Violation]
    observation: dict[str, Any]


async def _generator() -> AsyncGenerator[None]:
    yield


def aclose_type() -> type[object]:
    """The type of what an async generator's ``aclose()`` returns, closed unawaited (3.13 warns of one left open)."""
    closing = _generator().aclose()
    closing.close()
    return type(closing)


# What asyncio's async-generator finalizer runs as a task for a generator collected unfinished: its aclose().
ACLOSE = aclose_type()


def loop_error(context: Mapping[str, Any]) -> Violation:
    """What the event loop reported to its exception handler, as a violation.

    A failed task that asyncio's async-generator finalizer started (the ``aclose()`` of a generator collected before
    it finished) is named so: the same error raised in a task of the framework's is another matter.
    """
    error, task = context.get("exception"), context.get("future")
    finalizing = isinstance(task, asyncio.Task) and isinstance(cast("asyncio.Task[Any]", task).get_coro(), ACLOSE)
    detail = f"{context.get('message')}" + (f" ({FINALIZING})" if finalizing else "")
    return Violation("loop-error", detail + (f": {type(error).__name__}: {error}" if error else ""))


def observe_schedule(family: str, seed: int, ops: list[Op], loop_seed: int | None = None) -> Outcome:
    """Run ``ops`` on a fresh object of ``family`` on loops perturbed by ``loop_seed`` (default: ``seed``).

    At each ``newloop`` the caller closes its loop by hand, without ``shutdown_asyncgens()``, and goes on in a new one
    (perturbed by the next seed); the last loop is shut down properly.
    """
    subject = build_subject(family)
    loop_errors: list[Violation] = []

    def on_error(_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        loop_errors.append(loop_error(context))

    first = seed if loop_seed is None else loop_seed
    session: Session | None = None
    rest: list[Op] | None = ops
    for generation in itertools.count():
        loop = PerturbingLoop(first + generation)
        loop.set_exception_handler(on_error)
        if session is None:
            session = Session(subject, family, loop.quiesce)
        session.quiesce = loop.quiesce
        try:
            rest = loop.run_until_complete(session.execute(rest or []))
        except BaseException as error:  # a stray CancelledError, or anything else, is a finding
            subject.probe.violate("exception", f"the caller got {type(error).__name__}: {error}")
            rest = None
        if rest is not None:  # closed by hand: what it still held (tasks, generators) is the caller's doing
            loop.set_exception_handler(lambda _loop, _context: None)
            loop.close()
            subject.probe.abandon()  # what still executed dies with the loop, after its last turn
            continue
        try:
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), SHUTDOWN_TIMEOUT))
        except BaseException as error:
            subject.probe.violate("hang", f"finalizing async generators: {type(error).__name__}: {error}")
        loop.close()
        asyncio.set_event_loop(None)
        break
    observation = session.observation() if session is not None else {}
    return Outcome(subject.probe.violations + loop_errors, observation)


def run_schedule(family: str, seed: int, ops: list[Op]) -> list[Violation]:
    """Run ``ops`` on a fresh object of ``family`` on a loop perturbed by ``seed``; return the violations."""
    return observe_schedule(family, seed, ops).violations


def shrink_while(ops: list[Op], holds: Callable[[list[Op]], bool]) -> list[Op]:
    """Delete operations (halves, then smaller chunks, then single ones) while ``holds`` of what is left."""
    budget = SHRINK_BUDGET
    chunk = len(ops) // 2
    while chunk >= 1 and budget > 0:
        start = 1  # keep the first start
        while start < len(ops) and budget > 0:
            candidate = ops[:start] + ops[start + chunk :]
            budget -= 1
            if holds(candidate):
                ops = candidate
            else:
                start += chunk
        chunk //= 2
    return ops


def same_member(family: str, violation: Violation, found: Iterable[Violation]) -> bool:
    """Whether ``found`` has a violation of ``violation``'s member (of its kind, where no member explains it)."""
    return member_of(family, violation) in {member_of(family, other) for other in found}


def shrink(family: str, seed: int, ops: list[Op], violation: Violation) -> list[Op]:
    """The shortest sequence ``shrink_while`` finds that still shows ``violation``'s member under ``seed``."""
    return shrink_while(ops, lambda candidate: same_member(family, violation, run_schedule(family, seed, candidate)))


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
    differential: bool = False  # each schedule also ran on the unpatched build, and the outcomes were compared
    regressions: int = 0  # schedules (fixed ones included) whose patched outcome is a regression
    # Differential: violating schedules of the patched build whose violations are not all open members' that the
    # unpatched build shows there too (those are reported, the rest fail the run; see ``open_and_shared``).
    unexplained: int = 0
    fixed_schedules: int = 0  # the fixed regression schedules run before the random ones


@dataclass(frozen=True)
class Finding:
    """A violating or regressing schedule: its seed, its place in the run (0: a fixed one), what, and its sequence."""

    seed: int
    index: int
    what: str
    ops: list[Op]
    shrunk: list[Op]


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
                self._record(seed, ops, violations, index, lambda _: False)
        self.result.seconds = round(time.monotonic() - began, 1)
        self.result.cpu_seconds = round(time.process_time() - began_cpu, 1)
        self.result.date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        return self.result

    def _record(
        self, seed: int, ops: list[Op], violations: list[Violation], index: int, shared: Callable[[Violation], bool]
    ) -> None:
        """Note the members a violating schedule shows; report a new one, shrunk (``shared``: :func:`shared_open`).

        A new member that fails the run is always reported; open ones both builds show, up to ``max_examples``.
        """
        family = self.result.family
        new = [v for v in violations if member_of(family, v) not in self.result.members_found_after]
        for violation in violations:
            self.result.members_found_after.setdefault(member_of(family, violation), index)
        failing = [violation for violation in new if not shared(violation)]
        if not failing and (not new or len(self.result.examples) >= self.max_examples):
            return
        first = (failing or new)[0]
        shrunk = self._shrink(seed, ops, first)
        title = "VIOLATION" if failing else "OPEN MEMBER (both builds)"
        self._report(title, member_of(family, first), Finding(seed, index, str(first), ops, shrunk))

    def _shrink(self, seed: int, ops: list[Op], violation: Violation) -> list[Op]:
        return shrink(self.result.family, seed, ops, violation)

    def _report(self, title: str, member: str, finding: Finding) -> None:
        """Keep a shrunk finding as an example and print it with its replay line."""
        example = {
            "member": member,
            "seed": str(finding.seed),
            "violation": finding.what,
            "ops": format_ops(finding.shrunk),
            "replay": self.replay(finding.seed, finding.shrunk),
        }
        self.result.examples.append(example)
        print(f"{title} [{self.result.family}] seed {finding.seed} (schedule {finding.index}): {finding.what}")
        print(f"  member:   {member}")
        print(f"  sequence: {format_ops(finding.ops)}")
        print(f"  shrunk:   {example['ops']}")
        print(f"  replay:   {example['replay']}")


FIXED_SCHEDULES = Path(__file__).with_name("fixed-schedules.json")


def fixed_schedules(family: str) -> list[tuple[int, list[Op]]]:
    """The fixed regression schedules of ``family`` (seed, sequence), which differential runs try first."""
    entries: list[dict[str, Any]] = json.loads(FIXED_SCHEDULES.read_text())["schedules"]
    return [(int(entry["seed"]), parse_ops(entry["ops"])) for entry in entries if entry["family"] == family]


@dataclass
class DifferentialExplorer(Explorer):
    """Runs each schedule on both builds (a worker each) and reports each kind of regression once, shrunk."""

    pair: Pair | None = None
    declared: list[Declared] = field(default_factory=list[Declared])
    batch: int = 40  # schedules per request batch: the workers run them while the parent waits

    @property
    def workers(self) -> Pair:
        """The two builds' workers."""
        if self.pair is None:
            raise RunguardError("differential exploration needs both builds' workers")
        return self.pair

    def explore(self, seeds: range) -> FamilyResult:
        """Run the family's fixed regression schedules, then the schedules of ``seeds``, on both builds."""
        family = self.result.family
        began, began_cpu = time.monotonic(), time.process_time()
        self.result.differential = True
        self.result.seed_range = [seeds.start, seeds.stop - 1] if seeds else []
        fixed = fixed_schedules(family) if self.result.shard[:2] in ("", "1/") else []  # once per run: shard 1
        self.result.fixed_schedules = len(fixed)
        self._judge([request(family, seed, format_ops(ops)) for seed, ops in fixed], 0)
        for start in range(0, len(seeds), self.batch):
            chunk = seeds[start : start + self.batch]
            self._judge([request(family, seed) for seed in chunk], start + 1)
        self.result.seconds = round(time.monotonic() - began, 1)
        self.result.cpu_seconds = round(time.process_time() - began_cpu, 1)  # the parent's: the workers do the work
        self.result.date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        return self.result

    def _judge(self, requests: list[dict[str, Any]], first_index: int) -> None:
        """Compare both builds' outcomes of ``requests``; ``first_index`` 0 marks the fixed schedules."""
        family = self.result.family
        judging = partial(judged, family, declared=self.declared)
        for offset, (asked, (unpatched, patched)) in enumerate(zip(requests, self.workers.run(requests), strict=True)):
            seed, ops, index = asked["seed"], parse_ops(patched.ops), first_index + offset if first_index else 0
            if first_index:
                self.result.schedules = index
            shared = shared_open(family, unpatched, patched, self.declared)
            if patched.violations:
                self.result.violating_schedules += 1
                if not all(map(shared, patched.violations)):
                    self.result.unexplained += 1
                self._record(seed, ops, list(patched.violations), index, shared)
            verdict = judging(unpatched, patched, shared=shared)
            if verdict.regressions and confirmed(self.workers, family, seed, patched, judging):
                self.result.regressions += 1
                self._regressed(seed, ops, verdict, index)

    def _regressed(self, seed: int, ops: list[Op], verdict: Verdict, index: int) -> None:
        member = f"REGRESSION {verdict.kind}"
        self.result.members_found_after.setdefault(member, index)
        if any(example["member"] == member for example in self.result.examples):
            return  # each kind of regression is reported once, however many violations were reported before it
        family = self.result.family

        def still(candidate: list[Op]) -> bool:
            [(unpatched, patched)] = self.workers.run([request(family, seed, format_ops(candidate))])
            return judged(family, unpatched, patched, self.declared).kind == verdict.kind

        shrunk = shrink_while(ops, still)
        [(unpatched, patched)] = self.workers.run([request(family, seed, format_ops(shrunk))])
        finding = "; ".join(judged(family, unpatched, patched, self.declared).regressions)
        finding = finding or "; ".join(verdict.regressions)
        self._report("REGRESSION", member, Finding(seed, index, finding, ops, shrunk))

    def _shrink(self, seed: int, ops: list[Op], violation: Violation) -> list[Op]:
        family = self.result.family

        def still(candidate: list[Op]) -> bool:
            [(_, patched)] = self.workers.run([request(family, seed, format_ops(candidate))])
            return same_member(family, violation, patched.violations)

        return shrink_while(ops, still)


def replay(family: str, seed: int, ops: list[Op] | None) -> list[Violation]:
    """Run one schedule again (its generated sequence, or ``ops``) and print what it violates."""
    ops = ops if ops is not None else schedule_ops(family, seed)
    violations = run_schedule(family, seed, ops)
    print(f"[{family}] seed {seed}: {format_ops(ops)}")
    for violation in violations:
        print(f"  {member_of(family, violation)}: {violation}")
    print(f"  {len(violations)} violation(s)")
    return violations


def replay_both(builds: tuple[Path, Path], declared: list[Declared], family: str, seed: int, ops: str | None) -> bool:
    """Run one schedule on both builds; print each build's violations and the regressions.

    True if it fails: a regression, or a violation of the patched build that is not an open member both builds show.
    """
    pair = Pair.start(*builds)
    try:
        [(unpatched, patched)] = pair.run([request(family, seed, ops)])
    finally:
        pair.close()
    print(f"[{family}] seed {seed}: {patched.ops}")
    shared = shared_open(family, unpatched, patched, declared)
    for label, outcome in (("unpatched", unpatched), ("patched", patched)):
        for violation in outcome.violations:
            both = label == "patched" and shared(violation)
            print(f"  {label}: {member_of(family, violation)}{' (open, both builds)' if both else ''}: {violation}")
    regressions = judged(family, unpatched, patched, declared, shared).regressions
    for regression in regressions:
        print(f"  REGRESSION {regression}")
    print(f"  {len(patched.violations)} violation(s) of the patched build, {len(regressions)} regression(s)")
    return bool(regressions) or not all(map(shared, patched.violations))


# Measured (10,000 schedules, one base): agent and graph take about twice as long as the functional families, and
# subworkflow (the graph run as a child of a parent run) longer still; the slowest start first so that the processes
# finish together.
SLOWEST_FIRST = (
    "subworkflow",
    "checkpointed",
    "agent",
    "graph",
    "chat",
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
    builds: tuple[Path, Path] | None = None  # differential: the unpatched and the patched build's Pythons
    declared: tuple[Declared, ...] = ()


def explore_family(job: FamilyJob) -> FamilyResult:
    """Explore one family (in a worker process or in this one, after :func:`quiet`) and print its summary line."""

    def replay_line(seed: int, ops: list[Op]) -> str:
        return f"{job.replay_command} --family {job.family} --replay {seed} --ops {format_ops(ops)}"

    result = FamilyResult(job.base, job.variant, job.family, job.series, shard=job.shard)
    if job.builds is None:
        Explorer(result, replay_line).explore(job.seeds)
    else:
        pair = Pair.start(*job.builds)
        try:
            DifferentialExplorer(result, replay_line, pair=pair, declared=list(job.declared)).explore(job.seeds)
        finally:
            pair.close()
    found = "; ".join(f"{member} after {n}" for member, n in sorted(result.members_found_after.items()))
    shard = f" (shard {job.shard})" if job.shard else ""
    regressing = f" ({result.unexplained} failing), {result.regressions} regressing"
    regressing += f" ({result.fixed_schedules} fixed first)"
    compared = regressing if result.differential else ""
    print(
        f"{job.base} {job.variant} {job.family}{shard}: {result.schedules} schedules, "
        f"{result.violating_schedules} violating{compared}, {result.seconds}s ({result.cpu_seconds}s CPU)"
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
    # A coroutine of an event loop the caller closed by hand fails when it is collected later: the caller's doing.
    sys.unraisablehook = lambda _: None
    # Without an SDK, OpenTelemetry's API keeps every meter and instrument the framework asks for (a set per
    # FunctionTool), so the heap, and with it every gc.collect() above, would grow with the schedules run.
    metrics.set_meter_provider(metrics.NoOpMeterProvider())
    gc.collect()
    gc.freeze()  # objects alive now (the framework) are never scanned again: collections stay cheap
