"""Judge each patch's tests: red on the prefix without the patch, by an assertion, and green with it.

A test is red for the right reason only when its call raised ``AssertionError`` (recorded by
:mod:`scripts.validate.pytest_plugin`): an import error, a missing fixture, a timeout or any other exception
means the test does not show the bug it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, cast

from scripts.series.common import TERMINAL_COLUMNS, aligned_rows, short_test_name, wrapped
from scripts.validate.junit import EXCEPTION, EXCEPTION_MESSAGE, JunitCase

ASSERTION = "AssertionError"
CELL_WIDTH = 100
NOT_RUN = JunitCase("not run", "missing from this run's junit report", {})


@dataclass(frozen=True)
class Verdict:
    """One half of a proof: whether it holds and what happened, in one line."""

    ok: bool
    detail: str


@dataclass(frozen=True)
class TestProof:
    """A test added by a patch, run on the prefix without the patch (red) and with it (green).

    ``skipped`` is the test's own reason when it skipped itself both times: it does not apply on this Python
    (a ``skipif`` on the version), which the tables show as such rather than as proven or failed.
    """

    test: str
    red: Verdict
    green: Verdict
    skipped: str = ""

    @property
    def ok(self) -> bool:
        """Red for the right reason, then green; or not applicable here by the test's own choice."""
        return bool(self.skipped) or (self.red.ok and self.green.ok)


@dataclass(frozen=True)
class PatchProof:
    """The red/green runs of one patch's tests on one base."""

    base: str
    patch: str
    tests: list[TestProof]

    @property
    def ok(self) -> bool:
        """Every added test proves the patch or does not apply; one at least proves it (no test proves nothing)."""
        return any(not test.skipped for test in self.tests) and all(test.ok for test in self.tests)


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _what_happened(case: JunitCase) -> str:
    if case.outcome == "failed" and EXCEPTION in case.properties:
        message = case.properties.get(EXCEPTION_MESSAGE, "")
        return f"{case.properties[EXCEPTION]}: {message}" if message else case.properties[EXCEPTION]
    return f"{case.outcome}: {_one_line(case.message)}" if case.message else case.outcome


def red_verdict(case: JunitCase) -> Verdict:
    """Red for the right reason: the test failed with an assertion; the detail is the assertion's first line."""
    if case.outcome == "failed" and case.properties.get(EXCEPTION) == ASSERTION:
        return Verdict(ok=True, detail=case.properties.get(EXCEPTION_MESSAGE) or "assert (no message)")
    if case.outcome == "passed":
        return Verdict(ok=False, detail="passes without the patch")
    return Verdict(ok=False, detail=f"not an assertion: {_what_happened(case)}")


def green_verdict(case: JunitCase) -> Verdict:
    """Green: the test passed with the patch."""
    return Verdict(ok=True, detail="passed") if case.outcome == "passed" else Verdict(False, _what_happened(case))


def prove_patch(base: str, patch: str, red: dict[str, JunitCase], green: dict[str, JunitCase]) -> PatchProof:
    """Pair each test of the red and the green report (a test missing from a report did not run)."""
    tests = sorted(red.keys() | green.keys())
    proofs = [
        TestProof(
            test,
            red_verdict(red.get(test, NOT_RUN)),
            green_verdict(green.get(test, NOT_RUN)),
            _skipped(red, green, test),
        )
        for test in tests
    ]
    return PatchProof(base, patch, proofs)


def _skipped(red: dict[str, JunitCase], green: dict[str, JunitCase], test: str) -> str:
    """The reason a test gave for skipping itself, when it did so without the patch and with it alike."""
    cases = (red.get(test, NOT_RUN), green.get(test, NOT_RUN))
    same = cases[0].outcome == cases[1].outcome == "skipped" and cases[0].message == cases[1].message
    return _one_line(cases[0].message) or "skipped" if same else ""


def _cell(verdict: Verdict) -> str:
    """A verdict as a table cell: failures marked, long details cut (the JSON evidence keeps them whole)."""
    text = ("" if verdict.ok else "FAIL: ") + verdict.detail
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 3] + "..."


def format_proofs(proofs: list[PatchProof]) -> str:
    """The session's report: a row per base and patch saying how many of its tests were proven.

    Below a row, a line per test that was not, or that skipped itself here, with why; the data file keeps every test.
    """
    rows: list[tuple[str, ...]] = [("base", "patch", "tests")]
    notes: list[list[str]] = [[]]
    for proof in proofs:
        proven, skipped = (
            sum(test.ok and not test.skipped for test in proof.tests),
            sum(bool(t.skipped) for t in proof.tests),
        )
        count = f"{proven}/{len(proof.tests)} proven" + (f", {skipped} skipped here" if skipped else "")
        verdict = "" if proof.ok else "FAIL: "
        rows.append(
            (proof.base, proof.patch, verdict + (count if proof.tests else "no test ran (the patch adds none)"))
        )
        notes.append(
            [
                line
                for test in proof.tests
                if test.skipped or not test.ok
                for line in wrapped(f"{short_test_name(test.test)}: {_note(test)}", TERMINAL_COLUMNS - 4, "    ")
            ]
        )
    return "\n".join(
        line
        for row, below in zip(aligned_rows(rows), notes, strict=True)
        for line in [*row, *("    " + n for n in below)]
    )


def _note(test: TestProof) -> str:
    """Why a test is listed under its patch: it skipped itself here, or which half failed and how."""
    if test.skipped:
        return f"skipped here: {test.skipped}"
    return f"red {_cell(test.red)}; green {_cell(test.green)}"


def evidence(proofs: list[PatchProof], python_version: str) -> dict[str, Any]:
    """One Python's part of ``docs/data/redgreen.json``: the proofs, each marked with the Python they ran on."""
    return {
        "pythons": [python_version],
        "bases": list(dict.fromkeys(proof.base for proof in proofs)),
        "ok": all(proof.ok for proof in proofs),
        "patches": [
            {
                "python": python_version,
                "base": proof.base,
                "patch": proof.patch,
                "ok": proof.ok,
                "tests": [{**asdict(test), "ok": test.ok} for test in proof.tests],
            }
            for proof in proofs
        ],
    }


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def merge_evidence(earlier: Mapping[str, Any], current: Mapping[str, Any], series: str) -> dict[str, Any]:
    """The base x Python matrix: ``current`` (one Python's evidence) with ``earlier``'s other Pythons.

    Earlier results are kept only when they were produced with the same series, and never for the Python that
    ``current`` ran on (the same ``X.Y``): every entry of the file then belongs to ``series``.
    """
    ran_on = _minor(current["pythons"][0])
    same_series = cast("Mapping[str, Any]", earlier.get("produced", {})).get("series") == series
    kept = [
        {"python": earlier.get("python", ""), **entry}  # files from before the matrix name their one Python on top
        for entry in cast("list[dict[str, Any]]", earlier.get("patches", []) if same_series else [])
    ]
    kept = [entry for entry in kept if entry["python"] and _minor(entry["python"]) != ran_on]
    patches = sorted([*kept, *current["patches"]], key=lambda entry: _minor(entry["python"]))
    return {
        "pythons": list(dict.fromkeys(entry["python"] for entry in patches)),
        "bases": list(dict.fromkeys(entry["base"] for entry in patches)),
        "ok": all(entry["ok"] for entry in patches),
        "patches": patches,
    }
