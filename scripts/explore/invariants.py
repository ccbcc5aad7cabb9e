"""The run-ownership invariant: what the instrumented handlers record, and the checks made on it.

Every handler (graph executor, functional workflow body) reports to a ``Probe``: which run it belongs to,
the state keys it stages, whether it finished, and the runtime tools it saw. The operations report what
the caller observed (admissions, refusals, events, status). A check that fails adds a ``Violation``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

LIVE, DONE, ABORTED = "live", "done", "aborted"
LOST = "lost with its event loop"  # still executing when its caller closed the loop by hand
IN_PROGRESS = frozenset({"IN_PROGRESS", "IN_PROGRESS_PENDING_REQUESTS"})
SETTLED_AFTER_COMPLETION = frozenset({"IDLE", "IDLE_WITH_PENDING_REQUESTS"})


@dataclass(frozen=True)
class Violation:
    """One broken invariant: ``kind`` names the invariant, ``detail`` says how it broke."""

    kind: str
    detail: str

    def __str__(self) -> str:
        """The form used in reports and in ``--ops``."""
        return f"{self.kind}: {self.detail}"


@dataclass
class Invocation:
    """One handler invocation: its run, where it ran, the state keys it staged and how it ended."""

    run: str
    where: str
    keys: list[str] = field(default_factory=list[str])
    outcome: str = LIVE


def run_of(tagged: str) -> str:
    """The run a tagged value (``"r3:done"``, ``"r3"``, ``"r3?"``, ``"r3!"``) belongs to."""
    return tagged.split(":", 1)[0].rstrip("?!")


def tool_name(run: str) -> str:
    """The name of the runtime tool passed to ``run``."""
    return f"tool_{run}"


@dataclass
class Probe:
    """What the handlers of one workflow did, shared by every run of it, plus the violations found so far."""

    invocations: list[Invocation] = field(default_factory=list[Invocation])
    gates: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    violations: list[Violation] = field(default_factory=list[Violation])
    exclusive: bool = True  # one run at a time (a workflow); a chat client serves its calls side by side
    completed: set[str] = field(default_factory=set[str])  # runs the caller read to their end
    leaving: list[Invocation] = field(default_factory=list[Invocation])  # executing when the caller left its loop
    forgetting: set[str] = field(default_factory=set[str])  # the runs the caller forgets as it leaves its loop
    forgotten: set[str] = field(default_factory=set[str])  # runs of event loops the caller closed by hand

    def violate(self, kind: str, detail: str) -> None:
        """Record a broken invariant (once)."""
        violation = Violation(kind, detail)
        if violation not in self.violations:
            self.violations.append(violation)

    def gate(self, run: str) -> asyncio.Event:
        """The I/O gate the handlers of ``run`` wait on.

        A run of a loop the caller closed by hand has its gate open: nothing can open it any more, and a handler of
        it that starts on a later loop (work the run queued, delivered by a successor) does its I/O on that loop, as
        a real handler would, instead of hanging on an event no caller holds.
        """
        gate = self.gates.setdefault(run, asyncio.Event())
        if run in self.forgotten:
            gate.set()
        return gate

    def live(self, run: str | None = None) -> list[Invocation]:
        """Invocations still executing, of ``run`` or of any run."""
        return [inv for inv in self.invocations if inv.outcome == LIVE and run in (None, inv.run)]

    @contextmanager
    def invoked(self, run: str, where: str, tools: Iterable[str] | None = None) -> Generator[Invocation, None, None]:
        """Record a handler invocation of ``run`` for the duration of the block."""
        invocation = self._enter(run, where, tools)
        try:
            yield invocation
        except BaseException:
            if invocation.outcome == LIVE:  # not one lost with its loop, which the collector closes later
                invocation.outcome = ABORTED
            raise
        invocation.outcome = DONE

    def finished_every_handler(self, run: str) -> bool:
        """Whether every handler of ``run`` finished: stopped, ``run`` was stopped at a superstep boundary."""
        return all(inv.outcome == DONE for inv in self.invocations if inv.run == run)

    def leave(self, runs: Iterable[str]) -> None:
        """The caller leaves its event loop and forgets ``runs``: what executes now dies with the loop.

        It does even if the loop's last turns abort it: a stream dropped as the caller leaves may have its finalizer
        start the run's teardown in those turns (its handlers get CancelledError); the closed loop never finishes it,
        so their staged writes stay behind.
        """
        self.leaving = self.live()
        self.forgetting = set(runs)

    def abandon(self) -> None:
        """Every invocation still executing dies with the event loop its caller closes by hand, and so does its I/O.

        So does one that executed when the caller left the loop and was aborted since (``leave``). The gates are
        forgotten, as a closed loop forgets its sockets and timers: what waits on them is garbage then.
        """
        for invocation in self.leaving + self.live():
            if invocation.outcome != DONE:
                invocation.outcome = LOST
        self.leaving = []
        self.gates.clear()
        self.forgotten |= self.forgetting

    def _gone(self, run: str) -> str:
        """What a violation's detail says of ``run`` if the caller forgot it with a loop it closed by hand."""
        return f" ({run} was dropped with its event loop)" if run in self.forgotten else ""

    def _enter(self, run: str, where: str, tools: Iterable[str] | None) -> Invocation:
        """A handler of ``run`` starts: no handler of another run may still be executing (where runs exclude)."""
        for other in self.live() if self.exclusive else []:
            if other.run != run:
                self.violate("overlap", f"{where} of {run} started while {other.where} of {other.run} still runs")
        seen = sorted(tools or ())
        if seen not in ([], [tool_name(run)]):
            self.violate("foreign-tools", f"{where} of {run} sees runtime tools {seen}{self._gone(run)}")
        invocation = Invocation(run, where)
        self.invocations.append(invocation)
        return invocation

    def stage(self, invocation: Invocation, key: str) -> None:
        """The invocation stages a state write under ``key``."""
        invocation.keys.append(key)

    def joined(self, where: str, runs: Iterable[str]) -> None:
        """A fan-in delivered messages of ``runs``: they must all come from one run.

        The detail says when every earlier run among them had been read to its end (and so left its messages there
        beside its pending requests) rather than closed, dropped or abandoned.
        """
        distinct = sorted(set(runs), key=lambda run: int(run[1:]))
        if len(distinct) > 1:
            finished = "; the earlier ones had completed" if self.completed >= set(distinct[:-1]) else ""
            self.violate("mixed-fan-in", f"{where} joined messages of runs {distinct}{finished}")

    def check_state(self, visible: Mapping[str, object], completed_runs: Iterable[str]) -> None:
        """No leaked write (a visible key was staged by a finished invocation), no lost one (completed runs')."""
        staged = {key: inv for inv in self.invocations for key in inv.keys}
        for key in visible:
            owner = staged.get(key)
            if owner is not None and owner.outcome != DONE:
                lost = f" (it was {LOST})" if owner.outcome == LOST else ""
                self.violate(
                    "leaked-write", f"{key} is committed, but {owner.where} of {owner.run} did not finish{lost}"
                )
        for run in completed_runs:
            for inv in self.invocations:
                lost = [key for key in inv.keys if inv.run == run and key not in visible]
                if lost:
                    self.violate("lost-write", f"{run} completed, but its writes {lost} are not in the state")
        askers = [str(asker) for key, asker in visible.items() if key.startswith("answer:")]
        twice = sorted({asker for asker in askers if askers.count(asker) > 1})
        if twice:
            self.violate("answered-twice", f"the request of {', '.join(twice)} was answered more than once")

    def check_events(self, run: str, tags: Iterable[str]) -> None:
        """Every output the caller of ``run`` received belongs to ``run``."""
        for tag in tags:
            if run_of(tag) != run:
                self.violate("foreign-event", f"the stream of {run} delivered {tag!r}{self._gone(run_of(tag))}")

    def check_ended(self, run: str, how: str) -> None:
        """After ``how`` returned, no handler of ``run`` may still execute."""
        for inv in self.live(run):
            self.violate("live-after-end", f"{inv.where} of {run} still runs after {how} returned")

    def check_status(self, run: str, status: str, *, completed: bool, started: bool) -> None:
        """The workflow status once ``run`` is over: settled after completion, CANCELLED or settled after abandonment.

        A run stopped between supersteps with nothing left to run is settled (IDLE); one with work left keeps its
        status, as on the release (G5, open).
        """
        if completed and status not in SETTLED_AFTER_COMPLETION:
            self.violate("status", f"status is {status} after {run} completed")
        elif not completed and started and status != "CANCELLED" and status not in SETTLED_AFTER_COMPLETION:
            self.violate("status", f"status is {status} after {run} was abandoned in progress")
        elif status in IN_PROGRESS:
            self.violate("status", f"status is {status} after {run} ended")
