"""Differential mode: every schedule runs on the unpatched and on the patched build, and the outcomes are compared.

Each build runs in a child process of its own venv (``python -m scripts.explore --worker``), which reads schedule
requests as JSON lines and answers each with the invariant violations and what the caller observed. The parent
compares the two (``judge``): a difference in what the caller observed must be one a ``Behaviour-Change`` trailer of
the series declares with an ``[explore: KIND PATTERN]`` tag, or be explained by an invariant violation of the
unpatched build (the series fixes it, so what follows it may change); an invariant the patched build violates and
the unpatched one does not is never declared away. Anything else is a **regression**. A candidate is confirmed on
other interleavings first: it is no regression if the unpatched build, perturbed by another seed, gives an outcome
the patched one matches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import IO, Any

from scripts.explore.invariants import Violation
from scripts.series.errors import RunguardError
from scripts.series.patch import Patch

Observation = dict[str, Any]
KINDS = ("end", "outputs", "errors", "status", "pending", "state")
ALTERNATIVES = 4  # other interleavings a candidate regression is tried on before it counts
# What an invariant violation of the unpatched build explains: the observations the series may change by fixing it.
EXPLAINS: dict[str, frozenset[str]] = {
    "status": frozenset({"status"}),
    "lost-write": frozenset({"state"}),
    "leaked-write": frozenset({"state"}),
    "answered-twice": frozenset({"state", "outputs", "pending"}),
    "foreign-event": frozenset({"outputs"}),
    "mixed-fan-in": frozenset({"outputs", "state"}),
    "cancel-pending-admitted": frozenset({"pending", "errors"}),
}
EVERYTHING = frozenset(KINDS)  # what any other violation (an exception, a hang, overlapping runs) explains
# A WorkflowAgent picks what a turn does by the workflow's status (it refuses the turn while the status says
# IN_PROGRESS): in its family a status the series no longer leaves stuck changes every later turn's path.
STATUS_STEERS = frozenset({"agent"})
STEERED = {**EXPLAINS, "status": EVERYTHING}
# A declared difference in what a call raised, or in how a run ended (refused instead of admitted, say), changes the
# caller's path from there on: it explains every other difference too. Other declared differences explain themselves.
DIVERGING = frozenset({"errors", "end"})


@dataclass(frozen=True)
class Difference:
    """How the patched build's observation differs from the unpatched one's: ``text`` is ``WHAT: BEFORE -> AFTER``."""

    kind: str
    text: str

    def __str__(self) -> str:
        """``KIND WHAT: BEFORE -> AFTER``, as reports print it."""
        return f"{self.kind} {self.text}"


@dataclass(frozen=True)
class Declared:
    """A difference a patch declares: of ``kind``, its text matching the glob ``pattern``."""

    kind: str
    pattern: str
    patch: str

    def matches(self, difference: Difference) -> bool:
        """Whether ``difference`` is the one declared."""
        return difference.kind == self.kind and fnmatchcase(difference.text, self.pattern)


def declared_differences(patches: Iterable[Patch]) -> list[Declared]:
    """Every ``[explore: KIND PATTERN]`` tag of the series' ``Behaviour-Change`` trailers (a bad KIND is an error)."""
    declared: list[Declared] = []
    for patch in patches:
        for kind, pattern in patch.explore_differences:
            if kind not in KINDS:
                raise RunguardError(f"{patch.name}: [explore: {kind} ...]: the kind must be one of {', '.join(KINDS)}")
            declared.append(Declared(kind, pattern, patch.name))
    return declared


def _ending(end: str) -> str:
    return end.split(" ", 1)[0]  # "closed after 3 pulls" -> "closed": how many pulls it took depends on the timing


def _visible_state(state: list[str] | None) -> list[str] | None:
    return None if state is None else [key for key in state if not key.startswith("_")]  # not the framework's own


def differences(before: Observation, after: Observation) -> list[Difference]:
    """How ``after`` (patched) differs from ``before`` (unpatched), field by field and run by run."""
    found: list[Difference] = []

    def compare(kind: str, what: str, old: object, new: object) -> None:
        if old != new:
            found.append(Difference(kind, f"{what}: {old} -> {new}"))

    old_runs = {run["name"]: run for run in before.get("runs", [])}
    new_runs = {run["name"]: run for run in after.get("runs", [])}
    for name in sorted(old_runs.keys() | new_runs.keys(), key=lambda run: int(run[1:])):
        old, new = old_runs.get(name, {}), new_runs.get(name, {})
        compare("end", name, _ending(old.get("end", "absent")), _ending(new.get("end", "absent")))
        compare("outputs", name, old.get("outputs", []), new.get("outputs", []))
        compare("errors", name, old.get("errors", []), new.get("errors", []))
    compare("errors", "caller", before.get("errors", []), after.get("errors", []))
    compare("status", "workflow", before.get("status"), after.get("status"))
    compare("pending", "requests", before.get("pending"), after.get("pending"))
    compare("state", "committed", _visible_state(before.get("state")), _visible_state(after.get("state")))
    return found


@dataclass(frozen=True)
class Outcome:
    """One build's answer for one schedule."""

    ops: str
    violations: tuple[Violation, ...]
    observation: Observation

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Outcome:
        """The outcome a worker wrote."""
        violations = tuple(Violation(kind, detail) for kind, detail in record["violations"])
        return cls(record["ops"], violations, record["observation"])


@dataclass
class Verdict:
    """What comparing the two builds' outcomes of one schedule found."""

    regressions: list[str] = field(default_factory=list[str])
    undeclared: list[Difference] = field(default_factory=list[Difference])

    @property
    def kind(self) -> str:
        """The first regression's kind (``violation KIND`` or ``difference KIND``): what shrinking keeps."""
        return " ".join(self.regressions[0].split(" ", 2)[:2]) if self.regressions else ""


def _declared_ones(found: list[Difference], declared: list[Declared]) -> list[Difference]:
    return [difference for difference in found if any(item.matches(difference) for item in declared)]


def _diverging(matched: list[Difference]) -> bool:
    return any(difference.kind in DIVERGING for difference in matched)


def diverged(unpatched: Outcome, patched: Outcome, declared: list[Declared]) -> bool:
    """Whether the caller took another path at a declared point: a declared difference of a ``DIVERGING`` kind."""
    return _diverging(_declared_ones(differences(unpatched.observation, patched.observation), declared))


def steered(family: str, patched: Outcome) -> bool:
    """Whether the status steers what follows in ``family`` and the patched build left none stuck (STATUS_STEERS)."""
    return family in STATUS_STEERS and all(violation.kind != "status" for violation in patched.violations)


def judge(unpatched: Outcome, patched: Outcome, declared: list[Declared], *, steering: bool = False) -> Verdict:
    """The regressions in ``patched`` against ``unpatched``: patched-only violations, then undeclared differences.

    ``steering``: a stuck status of the unpatched build explains every difference (see :func:`steered`).
    """
    verdict = Verdict()
    before = {violation.kind for violation in unpatched.violations}
    for violation in patched.violations:
        if violation.kind not in before:
            verdict.regressions.append(f"violation {violation.kind} (patched only): {violation.detail}")
    explaining = STEERED if steering else EXPLAINS
    explained = frozenset[str]().union(*(explaining.get(kind, EVERYTHING) for kind in before))
    found = differences(unpatched.observation, patched.observation)
    matched = _declared_ones(found, declared)
    if _diverging(matched):
        explained = EVERYTHING  # what follows the other path may differ
    for difference in found:
        if difference.kind not in explained and difference not in matched:
            verdict.undeclared.append(difference)
            verdict.regressions.append(f"difference {difference.kind} (undeclared): {difference.text}")
    return verdict


class Build:
    """One build's worker: a child process of that build's Python that runs schedules on request."""

    def __init__(self, label: str, python: Path) -> None:
        """Start the worker (``python -m scripts.explore --worker`` from this repository)."""
        self.label = label
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(root)}
        try:
            self._process = subprocess.Popen(
                [str(python), "-m", "scripts.explore", "--worker"],
                cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
        except OSError as error:
            raise RunguardError(f"the {label} build's Python {python} cannot run: {error}") from None

    def send(self, requests: list[dict[str, Any]]) -> None:
        """Hand the worker a batch of schedule requests."""
        stdin = self._pipe(self._process.stdin)
        stdin.writelines(json.dumps(request) + "\n" for request in requests)
        stdin.flush()

    def receive(self, count: int) -> list[Outcome]:
        """The outcomes of the last ``count`` requests, in order."""
        stdout = self._pipe(self._process.stdout)
        outcomes: list[Outcome] = []
        for _ in range(count):
            line = stdout.readline()
            if not line:
                raise RunguardError(f"the {self.label} build's worker stopped (exit {self._process.wait()}); see above")
            outcomes.append(Outcome.from_json(json.loads(line)))
        return outcomes

    def _pipe(self, pipe: IO[str] | None) -> IO[str]:
        if pipe is None:  # never: both are pipes
            raise RunguardError(f"the {self.label} build's worker has no pipe")
        return pipe

    def close(self) -> None:
        """End the worker."""
        self._pipe(self._process.stdin).close()
        self._process.wait()


@dataclass
class Pair:
    """The unpatched and the patched build's workers, run side by side on the same requests."""

    unpatched: Build
    patched: Build

    @classmethod
    def start(cls, unpatched: Path, patched: Path) -> Pair:
        """Start both workers."""
        return cls(Build("unpatched", unpatched), Build("patched", patched))

    def run(self, requests: list[dict[str, Any]]) -> list[tuple[Outcome, Outcome]]:
        """Both builds' outcomes of each request (both workers run at once)."""
        self.unpatched.send(requests)
        self.patched.send(requests)
        return list(zip(self.unpatched.receive(len(requests)), self.patched.receive(len(requests)), strict=True))

    def close(self) -> None:
        """End both workers."""
        self.unpatched.close()
        self.patched.close()


def request(family: str, seed: int, ops: str | None = None, loop_seed: int | None = None) -> dict[str, Any]:
    """A worker request: schedule ``seed`` of ``family`` (its generated sequence, or ``ops``)."""
    return {"family": family, "seed": seed, "ops": ops, "loop_seed": loop_seed}


def alternative_seeds(seed: int) -> list[int]:
    """The loop seeds of the other interleavings a candidate regression of schedule ``seed`` is tried on."""
    return [seed * 7919 + index for index in range(1, ALTERNATIVES + 1)]


def confirmed(
    pair: Pair, family: str, seed: int, patched: Outcome, judging: Callable[[Outcome, Outcome], Verdict]
) -> bool:
    """Whether the patched outcome differs from the unpatched build's on every other interleaving tried too.

    ``judging(unpatched, patched)`` compares two outcomes (:func:`judge`, with the declared differences).
    """
    others = pair.run([request(family, seed, patched.ops, loop_seed) for loop_seed in alternative_seeds(seed)])
    return all(judging(unpatched, patched).regressions for unpatched, _ in others)


def serve(lines: Iterator[str], out: IO[str]) -> None:
    """The worker loop: answer each request line with one outcome line."""
    from scripts.explore.driver import observe_schedule, schedule_ops  # noqa: PLC0415 (the framework, in the child)
    from scripts.explore.operations import format_ops, parse_ops  # noqa: PLC0415

    for line in lines:
        asked = json.loads(line)
        family, seed = asked["family"], asked["seed"]
        ops = parse_ops(asked["ops"]) if asked["ops"] is not None else schedule_ops(family, seed)
        outcome = observe_schedule(family, seed, ops, asked["loop_seed"])
        record = {
            "ops": format_ops(ops),
            "violations": [[violation.kind, violation.detail] for violation in outcome.violations],
            "observation": outcome.observation,
        }
        out.write(json.dumps(record) + "\n")
        out.flush()


def serve_stdin() -> int:
    """``--worker``: serve requests from stdin until it closes; anything else printed goes to stderr."""
    with os.fdopen(os.dup(sys.stdout.fileno()), "w") as out:
        sys.stdout = sys.stderr
        serve(iter(sys.stdin.readline, ""), out)
    return 0
