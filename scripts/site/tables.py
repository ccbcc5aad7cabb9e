"""Render the data files in ``docs/data`` as markdown: a stamp line, then a table (or a note that it is missing).

The shapes are described for the sessions that write them in ``docs/validation/data-formats.md``. Keys not
named here are ignored, so producers may add fields freely.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from scripts.series.common import markdown_table, short_test_name
from scripts.series.errors import RunguardError
from scripts.validate.bench_rows import MEMORY, goal, summary, within_goal
from scripts.validate.goals import BENCH_PAIRS

Row = Mapping[str, Any]


class DataError(RunguardError):
    """A data file exists but does not have the shape the site renders."""


@dataclass(frozen=True)
class Column:
    """A table column: the row key it shows and its header; optional columns appear only when some row has them."""

    key: str
    header: str
    required: bool = True


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _rows(data: Mapping[str, Any], name: str) -> list[Row]:
    return _objects(data, "rows", f"{name}.json")


def _require(row: Row, keys: Sequence[str], where: str) -> None:
    missing = [key for key in keys if key not in row]
    if missing:
        raise DataError(f"{where} has no {', '.join(repr(key) for key in missing)}")


def flat_table(*columns: Column) -> Callable[[Mapping[str, Any], str], list[str]]:
    """A renderer that shows one table row per data row."""

    def render(data: Mapping[str, Any], name: str) -> list[str]:
        rows = _rows(data, name)
        for number, row in enumerate(rows):
            _require(row, [column.key for column in columns if column.required], f"{name}.json rows[{number}]")
        shown = [column for column in columns if column.required or any(column.key in row for row in rows)]
        body = [[_cell(row.get(column.key)) for column in shown] for row in rows]
        return markdown_table([column.header for column in shown], body)

    return render


def applicability_matrix(data: Mapping[str, Any], name: str) -> list[str]:
    """One row per patch in series order, one column per target; details of unusual outcomes below."""
    patches = cast("list[Row]", data.get("patches", []))
    rows = _rows(data, name)
    for number, row in enumerate(rows):
        _require(row, ["target", "patch", "outcome"], f"{name}.json rows[{number}]")
    for number, patch in enumerate(patches):
        _require(patch, ["name", "upstream_status"], f"{name}.json patches[{number}]")
    targets = list(dict.fromkeys(str(row["target"]) for row in rows))
    cells = {(str(row["target"]), str(row["patch"])): row for row in rows}
    body = [
        [f"`{patch['name']}`", _cell(patch["upstream_status"])]
        + [
            _cell(cells[target, patch["name"]]["outcome"]) if (target, patch["name"]) in cells else "-"
            for target in targets
        ]
        for patch in patches
    ]
    notes = [f"- {row['target']}, `{row['patch']}`: {_cell(row['detail'])}" for row in rows if row.get("detail")]
    return markdown_table(["patch", "upstream status", *targets], body) + (["", *notes] if notes else [])


def _objects(data: Mapping[str, Any], key: str, where: str) -> list[Row]:
    items = data.get(key)
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in cast("list[object]", items)):
        raise DataError(f"{where}: {key!r} must be a list of objects")
    return cast("list[Row]", items)


def _verdict(verdict: object) -> str:
    """A red or green verdict, ``{"ok": bool, "detail": str}``; one that did not hold is marked FAIL."""
    outcome: Row = cast("Row", verdict) if isinstance(verdict, dict) else {}
    return ("" if outcome.get("ok") else "**FAIL:** ") + _cell(outcome.get("detail", verdict))


NO_TEST: Row = {"test": "", "red": {"ok": False, "detail": "-"}, "green": {"ok": False, "detail": "-"}}


def _python_of(entry: Row, data: Mapping[str, Any]) -> str:
    """The Python an entry ran on (files from before the matrix name their one Python at the top)."""
    return str(entry.get("python", data.get("python", "?")))


def redgreen_table(data: Mapping[str, Any], name: str) -> list[str]:
    """The base x Python matrix of proven tests, then one row per base, patch and test (one column for the Pythons,
    so that the table fits the page)."""
    entries = _objects(data, "patches", f"{name}.json")
    pythons = list(dict.fromkeys(_python_of(entry, data) for entry in entries))
    rows: dict[tuple[str, str, str], dict[str, Row]] = {}
    for number, proof in enumerate(entries):
        where = f"{name}.json patches[{number}]"
        _require(proof, ["base", "patch"], where)
        tests = _objects(proof, "tests", where)
        for index, test in enumerate(tests):
            _require(test, ["test", "red", "green"], f"{where}.tests[{index}]")
        for test in tests or [NO_TEST]:
            rows.setdefault((str(proof["base"]), str(proof["patch"]), str(test["test"])), {})[_python_of(proof, data)] = test
    bases = list(dict.fromkeys(base for base, _, _ in rows))
    matrix = [
        [_cell(base)]
        + [_proven([tests[python] for (b, _, _), tests in rows.items() if b == base and python in tests]) for python in pythons]
        for base in bases
    ]
    details = [
        [_cell(base), f"`{patch}`", f"`{short_test_name(test)}`" if test else "-", _cell(_reason(tests))]
        + [_outcomes(tests, pythons)]
        for (base, patch, test), tests in rows.items()
    ]
    summary = ["**Every test failed without its patch and passed with it, on every Python.**", ""] if data.get("ok") is True else []
    return [
        *summary,
        *markdown_table(["base", *(f"Python {python}" for python in pythons)], matrix),
        "",
        *markdown_table(["base", "patch", "test", "without the patch (red)", "on each Python"], details),
    ]


def _ok(test: Row) -> bool:
    if test.get("skipped"):
        return False
    return all(isinstance(test.get(color), dict) and cast("Row", test[color]).get("ok") for color in ("red", "green"))


def _proven(tests: list[Row]) -> str:
    """A matrix cell: how many of a base's tests were proven on one Python (and skipped themselves there)."""
    proven, skipped = sum(map(_ok, tests)), sum(bool(test.get("skipped")) for test in tests)
    cell = f"{proven}/{len(tests)} proven" + (f", {skipped} skipped (not for this Python)" if skipped else "")
    return cell if proven + skipped == len(tests) else f"**FAIL:** {cell}"


def _reason(tests: Mapping[str, Row]) -> str:
    """Why a test is red without its patch (the first Python's assertion; another Python's differing one is a FAIL)."""
    return str(cast("Row", next(iter(tests.values()))["red"]).get("detail", ""))


def _outcomes(tests: Mapping[str, Row], pythons: Sequence[str]) -> str:
    """A test on every Python: ``proven`` when it was on each one, else each Python's outcome."""
    outcomes = {python: _outcome(tests.get(python)) for python in pythons}
    if set(outcomes.values()) == {"proven"}:
        return "proven" if len(pythons) == 1 else "proven on every Python"
    return "; ".join(f"{python}: {outcome}" for python, outcome in outcomes.items())


def _outcome(test: Row | None) -> str:
    """A test on one Python: proven (red, then green), or which half failed and how."""
    if test is None:
        return "not run"
    if test is NO_TEST:
        return "**FAIL:** no test ran"
    if test.get("skipped"):
        return f"skipped: {_cell(test['skipped'])}"
    if _ok(test):
        return "proven"
    failed = [(color, test[color]) for color in ("red", "green") if not cast("Row", test[color]).get("ok")]
    return "; ".join(f"{color} {_verdict(verdict)}" for color, verdict in failed)


_bench_rows = flat_table(
    Column("python", "Python"),
    Column("base", "base"),
    Column("workload", "workload"),
    Column("benchmark", "measures"),
    Column("ratio", "patched / unpatched"),
    Column("spread", "spread (IQR)", required=False),
    Column("goal", "goal"),
    Column("verdict", "verdict"),
)


def bench_tables(data: Mapping[str, Any], name: str) -> list[str]:
    """How many rows are within their goals and the worst ratio, how many pairs it took, then one row per measurement.

    A row is one workload on one Python and base; its goal and verdict come from :mod:`scripts.validate.bench_rows`.
    """
    rows = _rows(data, name)
    for number, row in enumerate(rows):
        _require(row, ["base", "python", "workload", "ratio"], f"{name}.json rows[{number}]")
    try:
        marked = [
            {**row, "goal": _goal_cell(goal(row)), "verdict": "within goal" if within_goal(row) else "**misses**"}
            for row in rows
        ]
        lines = [summary(rows)] if rows else []
    except RunguardError as error:
        raise DataError(f"{name}.json: {error}") from None
    pairs = {row.get("pairs") for row in rows if row.get("kind") != MEMORY}
    if pairs and all(isinstance(count, int) and count < BENCH_PAIRS for count in pairs):
        counts = ", ".join(str(count) for count in sorted(cast("set[int]", pairs)))
        lines.append(f"Measured with {counts} interleaved pair(s) per workload, fewer than a full run's {BENCH_PAIRS}.")
    return [*lines, "", *_bench_rows({**data, "rows": marked}, name)] if lines else _bench_rows(data, name)


def _goal_cell(most: float | None) -> str:
    """A time row's goal, ``at most G``; a memory row's, flat growth."""
    return "flat memory" if most is None else f"at most {most}"


_stress_runs = flat_table(
    Column("base", "base"),
    Column("python", "Python", required=False),
    Column("variant", "series"),
    Column("family", "scenario family"),
    Column("schedules", "schedules"),
    Column("violating_schedules", "violating schedules"),
    Column("regressions", "regressions (differential)", required=False),
    Column("seconds", "seconds", required=False),
    Column("date", "date", required=False),
)


def stress_tables(data: Mapping[str, Any], name: str) -> list[str]:
    """The explorer's runs, then for each run that found violations how many schedules each member took."""
    rows = _rows(data, name)
    found = [
        [_cell(row["base"]), _cell(row.get("python")), _cell(row["variant"]), _cell(row["family"])]
        + [_cell(member), _cell(schedules)]
        for row in rows
        for member, schedules in sorted(cast("Row", row.get("members_found_after", {})).items())
    ]
    headers = ["base", "Python", "series", "scenario family", "member", "found after (schedules)"]
    return _stress_runs(data, name) + (["", *markdown_table(headers, found)] if found else [])


_package_runs = flat_table(
    Column("package", "package"),
    Column("version", "version"),
    Column("base", "base"),
    Column("python", "Python"),
    Column("tests_from", "tests from"),
    Column("tests", "tests run"),
    Column("passed_before", "passed before"),
    Column("passed_after", "passed after"),
    Column("failed_both", "failed in both"),
    Column("regression_count", "regressions"),
    Column("flaky_count", "flaky", required=False),
)


def downstream_tables(data: Mapping[str, Any], name: str) -> list[str]:
    """Crater's report: the regressions first, then one row per package, base and Python, then what did not install."""
    rows = _rows(data, name)
    for number, row in enumerate(rows):
        _require(row, ["package", "version", "base", "python", "installed"], f"{name}.json rows[{number}]")
    ran = [row for row in rows if row["installed"]]
    regressions = [
        [f"`{row['package']}`", _cell(row["base"]), _cell(row["python"]), f"`{short_test_name(str(test))}`"]
        for row in ran
        for test in cast("list[object]", row.get("regressions", []))
    ]
    lines = (
        ["**Regressions** (passed before the series, fail after it, also when rerun alone):", ""]
        + markdown_table(["package", "base", "Python", "test"], regressions)
        if regressions
        else ["**No regressions:** no test that passed before the series fails after it.", ""]
    )
    counted = [
        {**row, "regression_count": len(row.get("regressions", [])), "flaky_count": len(row.get("flaky", []))}
        for row in ran
    ]
    lines += ["", *_package_runs({"rows": counted}, name)]
    flaky = [
        [f"`{row['package']}`", _cell(row["base"]), _cell(row["python"]), f"`{short_test_name(str(test))}`"]
        for row in ran
        for test in cast("list[object]", row.get("flaky", []))
    ]
    if flaky:
        heading = "**Flaky** (failed after the series in the suite, passed when rerun alone):"
        lines += ["", heading, "", *markdown_table(["package", "base", "Python", "test"], flaky)]
    missing = [[f"`{row['package']}`", _cell(row["version"]), _cell(row["base"]), _cell(row["python"]),
                _cell(row.get("reason", ""))] for row in rows if not row["installed"]]  # fmt: skip
    if missing:
        lines += ["", "**Not installed:**", "", *markdown_table(["package", "version", "base", "Python", "why"], missing)]
    return lines


RENDERERS: dict[str, Callable[[Mapping[str, Any], str], list[str]]] = {
    "downstream": downstream_tables,
    "applicability": applicability_matrix,
    "redgreen": redgreen_table,
    "stress": stress_tables,
    "bench": bench_tables,
    "repro": flat_table(
        Column("slug", "reproduction"),
        Column("base", "base"),
        Column("variant", "package"),
        Column("exit_code", "exit"),
        Column("ok", "as it must"),
        Column("observed", "printed"),
    ),
    "validation-timing": flat_table(
        Column("run", "run"),
        Column("seconds", "seconds"),
        Column("goal_seconds", "goal (seconds)"),
        Column("meets_goal", "meets the goal"),
        Column("load_before", "load average before (1 min)", required=False),
    ),
}


# The data files whose renderer says itself what their stored summary says (from the rows, against the goals).
OWN_SUMMARY = {"bench"}


# The session that writes a data file, where its name differs from the file's.
SESSION_OF = {"validation-timing": "timing"}


def _session(name: str) -> str:
    return SESSION_OF.get(name, name)


def _produced(data: Mapping[str, Any], name: str) -> Row:
    """The ``produced`` stamp every data file carries."""
    produced = data.get("produced")
    if not isinstance(produced, dict):
        raise DataError(f"{name}.json: 'produced' must be an object")
    stamp = cast("Row", produced)
    _require(stamp, ["at", "on"], f"{name}.json 'produced'")
    return stamp


def _stamp(stamp: Row, name: str, series: str) -> list[str]:
    facts = [f"Produced **{stamp['at']}** on {stamp['on']}"]
    labels = (("command", "by"), ("runguard", "from runguard"), ("series", "with series"))
    facts += [f"{label} `{stamp[key]}`" for key, label in labels if key in stamp]
    lines = [", ".join(facts) + "."]
    if stamp.get("series") not in (None, series):
        lines += [
            "",
            '!!! warning "Produced with an older series"',
            f"    The series is now `{series}`. Run `python3 run.py -s {_session(name)} -- --record` again to refresh these"
            " results.",
        ]
    return lines


def render_dataset(name: str, data_dir: Path, series: str) -> str:
    """The markdown for ``data_dir/<name>.json``; ``series`` is the current series hash (12 hex digits)."""
    if name not in RENDERERS:
        raise DataError(f"no renderer for data file {name!r}; known: {', '.join(RENDERERS)}")
    path = data_dir / f"{name}.json"
    if not path.is_file():
        return "\n".join([
            '!!! note "Not yet produced"',
            f"    `docs/data/{name}.json` does not exist yet. Run `python3 run.py -s {_session(name)} -- --record` to",
            "    produce it;",
            "    the site renders it at its next build.",
        ])  # fmt: skip
    try:
        data = json.loads(path.read_text())
    except ValueError as error:
        raise DataError(f"{path}: not valid JSON ({error})") from error
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object")
    body = cast("dict[str, Any]", data)
    summary = [str(body["summary"]), ""] if isinstance(body.get("summary"), str) and name not in OWN_SUMMARY else []
    lines = [*_stamp(_produced(body, name), name, series), "", *summary, *RENDERERS[name](body, name)]
    return "\n".join(lines)
