"""The CI job matrix built from ``nox -l --json``, and the merge of the jobs' data files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.ci.__main__ import main as ci_main
from scripts.ci.matrix import CI_SESSIONS, Cell, build_matrix, list_sessions, nox_sessions
from scripts.ci.merge import merge_artifacts
from scripts.series.errors import RunguardError
from scripts.series.listing import current_bases
from scripts.sessions.dependents import pythons as pythons_of_downstream
from tests.tooling.helpers import REPO_ROOT


def _every_session_nox_has() -> set[str]:
    """Every session name in ``nox -l`` (default or not, each Python of a parametrized one)."""
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(REPO_ROOT / "noxfile.py"), "-l"],
        capture_output=True, text=True, check=True, cwd=REPO_ROOT,
    )  # fmt: skip
    return set(re.findall(r"^[*-] (\S+)", listed.stdout, flags=re.MULTILINE))


def test_the_matrix_names_only_sessions_that_exist() -> None:
    cells = build_matrix(nox_sessions(list_sessions()), current_bases())
    existing = _every_session_nox_has()
    assert {cell.session for cell in cells} <= existing
    assert {re.sub(r"-\d+\.\d+$", "", cell.session) for cell in cells} == set(CI_SESSIONS)
    assert {cell.base for cell in cells} == set(current_bases())
    assert len({cell.id for cell in cells}) == len(cells)


def _entry(session: str, python: str | None = None) -> dict[str, Any]:
    name = f"{session}-{python}" if python else session
    return {"session": name, "name": session, "description": "", "python": python, "tags": [], "call_spec": {}}


def test_sessions_parametrized_by_python_give_one_cell_per_python_and_base() -> None:
    listing = [_entry("tests", version) for version in ("3.10", "3.13")] + [_entry("lint"), _entry("docs")]
    listing += [_entry("stress", "3.12")]
    cells = build_matrix(listing, ["1.0", "2.0"], shards=2, schedules=10)
    assert [(cell.id, cell.session, cell.python, cell.args) for cell in cells] == [
        ("tests-3.10-1.0", "tests-3.10", "3.10", "--base 1.0"),
        ("tests-3.10-2.0", "tests-3.10", "3.10", "--base 2.0"),
        ("tests-3.13-1.0", "tests-3.13", "3.13", "--base 1.0"),
        ("tests-3.13-2.0", "tests-3.13", "3.13", "--base 2.0"),
        ("lint-1.0", "lint", "", "--base 1.0"),
        ("lint-2.0", "lint", "", "--base 2.0"),
        ("stress-3.12-1.0-1of2", "stress-3.12", "3.12", "--base 1.0 --schedules 10 --shard 1/2 --record"),
        ("stress-3.12-1.0-2of2", "stress-3.12", "3.12", "--base 1.0 --schedules 10 --shard 2/2 --record"),
        ("stress-3.12-2.0-1of2", "stress-3.12", "3.12", "--base 2.0 --schedules 10 --shard 1/2 --record"),
        ("stress-3.12-2.0-2of2", "stress-3.12", "3.12", "--base 2.0 --schedules 10 --shard 2/2 --record"),
    ]


@pytest.mark.parametrize(
    ("listing", "message"),
    [
        ("[]", "runguard: error: the matrix is empty: bases "),
        (json.dumps([_entry("docs")]), "runguard: error: the matrix is empty: bases "),
        ("nox > error", "runguard: error: not the output of `nox -l --json`: "),
        ('{"session": "tests"}', "runguard: error: not the output of `nox -l --json`: not a list of sessions"),
    ],
)
def test_an_empty_matrix_or_a_bad_listing_is_one_line_and_writes_nothing(
    listing: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions, output = tmp_path / "sessions.json", tmp_path / "github-output"
    sessions.write_text(listing)
    output.write_text("before=1\n")
    assert ci_main(["matrix", "--sessions", str(sessions), "--github-output", str(output)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert output.read_text() == "before=1\n"


def test_the_matrix_goes_to_the_github_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions, output = tmp_path / "sessions.json", tmp_path / "github-output"
    sessions.write_text(json.dumps([_entry("lint")]))
    assert ci_main(["matrix", "--sessions", str(sessions), "--github-output", str(output)]) == 0
    name, _, value = output.read_text().partition("=")
    assert name == "matrix" and value.endswith("\n") and value.count("\n") == 1
    assert [cell["id"] for cell in json.loads(value)["include"]] == [f"lint-{base}" for base in current_bases()]
    assert capsys.readouterr().out.startswith(f"{len(current_bases())} jobs: lint-")


STAMP = {"at": "2026-11-30T00:00:00+00:00", "on": "Linux", "command": "python3 run.py -s redgreen"}


def _stress_row(base: str, shard: str, seeds: list[int], found: dict[str, int]) -> dict[str, Any]:
    return {"base": base, "variant": "patched", "family": "graph", "series": "abc", "schedules": len(range(*seeds)),
            "violating_schedules": len(found), "seconds": 1.0, "seed_range": [seeds[0], seeds[1] - 1],
            "date": "2026-11-30", "members_found_after": found, "examples": [], "shard": shard}  # fmt: skip


def _job(artifacts: Path, job: str, name: str, document: dict[str, Any]) -> None:
    (artifacts / job).mkdir(parents=True)
    (artifacts / job / name).write_text(json.dumps({"produced": STAMP, **document}))


def test_the_jobs_files_merge_into_one_per_name(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    for base in ("1.0", "2.0"):
        entry: dict[str, Any] = {"base": base, "patch": "0001.patch", "ok": True, "tests": []}
        _job(artifacts, f"data-redgreen-{base}", "redgreen.json", {"python": "3.11", "bases": [base], "ok": True,
                                                                  "patches": [entry]})  # fmt: skip
    _job(artifacts, "data-stress-1of2", "stress.json", {"rows": [_stress_row("1.0", "1/2", [0, 5], {})]})
    _job(artifacts, "data-stress-2of2", "stress.json", {"rows": [_stress_row("1.0", "2/2", [5, 10], {"G1": 2})]})
    into = tmp_path / "data"
    written = merge_artifacts(artifacts, into)
    assert [path.name for path in written] == ["redgreen.json", "stress.json"]
    redgreen = json.loads((into / "redgreen.json").read_text())
    assert redgreen["bases"] == ["1.0", "2.0"] and redgreen["ok"] is True and redgreen["python"] == "3.11"
    assert [entry["base"] for entry in redgreen["patches"]] == ["1.0", "2.0"]
    assert redgreen["produced"]["command"] == "python3 run.py -s redgreen (merged from 2 CI jobs)"
    [stress] = json.loads((into / "stress.json").read_text())["rows"]
    assert (stress["schedules"], stress["seed_range"], stress["shard"]) == (10, [0, 9], "")
    assert stress["members_found_after"] == {"G1": 7}


def test_a_bad_artifact_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    artifacts, into = tmp_path / "artifacts", tmp_path / "data"
    _job(artifacts, "data-stress-1of2", "stress.json", {"rows": [_stress_row("1.0", "1/2", [0, 5], {})]})
    (artifacts / "data-broken").mkdir()
    (artifacts / "data-broken" / "redgreen.json").write_text("{")
    with pytest.raises(RunguardError, match=r"redgreen.json: not a data file"):
        merge_artifacts(artifacts, into)
    (artifacts / "data-broken" / "redgreen.json").unlink()
    with pytest.raises(RunguardError, match=r"1.0/patched/graph/: shards \['1/2'\] are not all of 1..2"):
        merge_artifacts(artifacts, into)
    assert not into.exists()


def test_the_workflow_builds_its_matrix_with_the_generator_and_reads_only_its_fields() -> None:
    workflow = (REPO_ROOT / ".github" / "workflows" / "validate.yml").read_text()
    assert "python -m scripts.ci matrix --github-output" in workflow
    assert "matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}" in workflow
    assert "python3 -m scripts.ci merge artifacts" in workflow
    assert set(re.findall(r"(?<![.\w])matrix\.(\w+)", workflow)) <= set(Cell.__dataclass_fields__)


def test_repro_rows_of_each_script_survive_the_merge(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    for base in ("1.0", "2.0"):
        rows = [{"slug": slug, "base": base, "variant": variant, "exit_code": code, "ok": True}
                for slug in ("a", "b") for variant, code in (("unpatched", 1), ("patched", 0))]  # fmt: skip
        _job(artifacts, f"data-repro-{base}", "repro.json", {"python": "3.11", "rows": rows})
    merge_artifacts(artifacts, tmp_path / "data")
    merged = json.loads((tmp_path / "data" / "repro.json").read_text())["rows"]
    assert len(merged) == 8


def test_the_readme_states_the_matrix_of_every_ci_python() -> None:
    """The README's job count is the matrix with CPython 3.10 to 3.13, as in CI (whatever this machine has)."""
    every_python = ["3.10", "3.11", "3.12", "3.13"]
    # The downstream session runs on the Pythons its packages are tested on, the others on every Python.
    pythons = {"downstream": pythons_of_downstream(every_python)}
    listed = {(entry["name"], entry["python"] is not None) for entry in nox_sessions(list_sessions())}
    listing = [
        _entry(name, python)
        for name, per_python in sorted(listed)
        for python in (pythons.get(name, every_python) if per_python else (None,))
    ]
    cells = build_matrix(listing, current_bases())
    stated = re.search(r"the matrix is (\d+) jobs", (REPO_ROOT / "README.md").read_text())
    assert stated is not None
    assert int(stated[1]) == len(cells)
