"""The downstream packages' comparison: frozen sets, per-test outcomes before and after, reruns, rows, the page."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any, cast

import nox
import pytest

from scripts.ci.merge import merge_artifacts
from scripts.series.errors import RunguardError
from scripts.series.listing import current_bases
from scripts.sessions.dependents import SuiteSource
from scripts.site.tables import render_dataset
from scripts.sources.pypi import unpack_sdist
from scripts.validate.downstream import (
    PACKAGES,
    Downstream,
    PackageRun,
    chosen,
    downstream_pythons,
    frozen_set,
    merge_rows,
    not_installed,
)
from scripts.validate.junit import node_id

SERIES = "0123456789ab"
STAMP = {"at": "2026-12-01T12:00:00+00:00", "on": "Linux x86_64", "series": SERIES}
ONE = (Downstream("pkg-a", "python/packages/a", tests_in_sdist=True),)


def _constraints(directory: Path, base: str, *lines: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"constraints-{base}.txt").write_text("\n".join(["# a frozen set", *lines]) + "\n")
    return directory


def test_a_frozen_set_pins_the_core_to_its_base_and_every_package(tmp_path: Path) -> None:
    directory = _constraints(tmp_path, "1.0", "agent-framework-core==1.0", "Pkg-A==2.0b1  # the one of 1.0's week")
    frozen = frozen_set("1.0", ONE, directory)
    assert frozen.version(ONE[0]) == "2.0b1"
    assert frozen.path == directory / "constraints-1.0.txt"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (None, r"no frozen set for base 1.0: write .*constraints-1.0.txt"),
        (("agent-framework-core==1.0",), r"constraints-1.0.txt pins no release of pkg-a$"),
        (("agent-framework-core==0.9", "pkg-a==2.0"), r"must pin agent-framework-core==1.0$"),
        (
            ("agent-framework-core==1.0", "pkg-a>=2.0"),
            r"constraints-1.0.txt:3: expected NAME==VERSION, found 'pkg-a>=2.0'",
        ),
    ],
)
def test_a_bad_frozen_set_is_one_error_naming_it(tmp_path: Path, lines: tuple[str, ...] | None, message: str) -> None:
    if lines is not None:
        _constraints(tmp_path, "1.0", *lines)
    with pytest.raises(RunguardError, match=message):
        frozen_set("1.0", ONE, tmp_path)


def test_every_base_has_a_frozen_set_with_every_package() -> None:
    for base in current_bases(""):
        frozen = frozen_set(base)
        assert {package.name for package in PACKAGES} <= set(frozen.versions)


def test_ag_ui_runs_on_two_pythons_and_every_package_on_311() -> None:
    assert downstream_pythons() == ["3.11", "3.13"]
    assert all("3.11" in package.pythons for package in PACKAGES)
    assert [package.name for package in PACKAGES if package.tests_in_sdist] == ["agent-framework-ag-ui"]


BEFORE = {"t::ok": "passed", "t::skew": "error", "t::broken": "passed", "t::flaky": "passed", "t::gone": "passed"}
AFTER = {"t::ok": "passed", "t::skew": "error", "t::broken": "failed", "t::flaky": "failed", "t::new": "failed"}


def _run(alone: dict[str, str]) -> PackageRun:
    return PackageRun("1.0", "3.11", "pkg-a", "2.0", "sdist", BEFORE, AFTER, alone)


def test_failures_in_both_runs_cancel_out_and_a_rerun_alone_tells_regressions_from_flaky_tests() -> None:
    run = _run({"t::broken": "failed", "t::flaky": "passed"})
    assert run.suspects == ["t::broken", "t::flaky", "t::gone"], "t::gone's module no longer collects"
    assert run.regressions == ["t::broken", "t::gone"]
    assert run.flaky == ["t::flaky"]
    row = run.row()
    assert (row["tests"], row["passed_before"], row["passed_after"], row["failed_both"]) == (5, 4, 1, 1)
    assert (row["regressions"], row["flaky"], row["installed"]) == (["t::broken", "t::gone"], ["t::flaky"], True)
    report = run.report()
    assert report[0].endswith("5 tests, 4 passed before the series, 1 after, 1 failed in both")
    assert report[1].endswith("REGRESSION passed before, fails after, also alone: t::broken")
    assert report[2].endswith("REGRESSION passed before, fails after, also alone: t::gone")
    assert report[3].endswith("flaky: failed after in the suite, passed alone: t::flaky")


def test_a_suspect_that_was_not_rerun_is_not_taken_for_flaky() -> None:
    assert _run({}).regressions == ["t::broken", "t::flaky", "t::gone"]


def test_the_rows_of_packages_not_run_again_are_kept_while_the_series_is_the_same() -> None:
    old = [
        _run({}).row(),
        not_installed("1.0", "3.13", "pkg-b", "1.0", "no wheel for 3.13"),
        {**_run({}).row(), "base": "2.0"},
    ]
    earlier = {"produced": STAMP, "rows": old}
    again = PackageRun("1.0", "3.11", "pkg-a", "2.0", "sdist", BEFORE, BEFORE).row()
    body = merge_rows(earlier, [again], SERIES)
    rows = [(row["base"], row["python"], row["package"], len(row.get("regressions", []))) for row in body["rows"]]
    assert rows == [("2.0", "3.11", "pkg-a", 3), ("1.0", "3.11", "pkg-a", 0), ("1.0", "3.13", "pkg-b", 0)]
    assert body["regressions"] == 3
    assert body["summary"] == "3 package runs, 3 regression(s), 1 package(s) not installed."
    assert merge_rows(earlier, [again], "another12345")["rows"] == [again]


def test_a_junit_key_becomes_the_pytest_id_of_its_file_class_and_test(tmp_path: Path) -> None:
    (tmp_path / "tests" / "ag_ui").mkdir(parents=True)
    (tmp_path / "tests" / "ag_ui" / "test_x.py").write_text("")
    assert node_id("tests.ag_ui.test_x::test_y[a.b]", tmp_path) == "tests/ag_ui/test_x.py::test_y[a.b]"
    assert node_id("tests.ag_ui.test_x.TestA.TestB::test_y", tmp_path) == "tests/ag_ui/test_x.py::TestA::TestB::test_y"
    assert node_id("elsewhere.test_z::test_y", tmp_path) == "elsewhere.test_z::test_y"
    assert node_id("::tests.ag_ui.test_x", tmp_path) == "tests/ag_ui/test_x.py", "a module that did not collect"


def _render(tmp_path: Path, rows: list[dict[str, Any]]) -> str:
    (tmp_path / "downstream.json").write_text(json.dumps({"produced": STAMP, "rows": rows}))
    return render_dataset("downstream", tmp_path, SERIES)


def test_the_page_shows_regressions_first_then_every_run_then_what_did_not_install(tmp_path: Path) -> None:
    missing = not_installed("1.0", "3.13", "pkg-b", "1.0", "no wheel | for 3.13")
    text = _render(tmp_path, [_run({"t::broken": "failed", "t::flaky": "passed"}).row(), missing])
    lines = text.splitlines()
    regressions = lines.index("| package | base | Python | test |")
    assert lines[regressions + 2] == "| `pkg-a` | 1.0 | 3.11 | `t::broken` |"
    assert lines[regressions + 3] == "| `pkg-a` | 1.0 | 3.11 | `t::gone` |"
    assert "| pkg-a | 2.0 | 1.0 | 3.11 | sdist | 5 | 4 | 1 | 1 | 2 | 1 |" in lines
    assert lines[-1] == "| `pkg-b` | 1.0 | 1.0 | 3.13 | no wheel \\| for 3.13 |"
    flaky = lines.index("**Flaky** (failed after the series in the suite, passed when rerun alone):")
    assert lines[flaky + 4] == "| `pkg-a` | 1.0 | 3.11 | `t::flaky` |"


def test_the_page_says_when_nothing_regressed(tmp_path: Path) -> None:
    text = _render(tmp_path, [PackageRun("1.0", "3.11", "pkg-a", "2.0", "sdist", BEFORE, BEFORE).row()])
    assert "**No regressions:**" in text
    assert "Not installed" not in text


def test_each_packages_rows_survive_the_ci_merge(tmp_path: Path) -> None:
    for job, package in (("data-downstream-a", "pkg-a"), ("data-downstream-b", "pkg-b")):
        (tmp_path / "artifacts" / job).mkdir(parents=True)
        row = PackageRun("1.0", "3.11", package, "2.0", "sdist", BEFORE, BEFORE).row()
        (tmp_path / "artifacts" / job / "downstream.json").write_text(json.dumps({"produced": STAMP, "rows": [row]}))
    merge_artifacts(tmp_path / "artifacts", tmp_path / "data")
    merged = json.loads((tmp_path / "data" / "downstream.json").read_text())
    assert [row["package"] for row in merged["rows"]] == ["pkg-a", "pkg-b"]


def test_an_sdist_unpacks_to_its_top_directory(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b"[project]\n"
        info = tarfile.TarInfo("pkg_a-2.0/pyproject.toml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (tmp_path / "pkg_a-2.0.tar.gz").write_bytes(buffer.getvalue())
    top = unpack_sdist(tmp_path / "pkg_a-2.0.tar.gz", tmp_path / "unpacked")
    assert top == tmp_path / "unpacked" / "pkg_a-2.0"
    assert (top / "pyproject.toml").read_text() == "[project]\n"
    (tmp_path / "broken.tar.gz").write_bytes(b"not a tarball")
    with pytest.raises(RunguardError, match=r"cannot unpack .*broken.tar.gz"):
        unpack_sdist(tmp_path / "broken.tar.gz", tmp_path / "elsewhere")


def test_packages_are_chosen_by_name_and_an_unknown_one_is_an_error_naming_the_known_ones() -> None:
    assert chosen([]) == list(PACKAGES)
    assert [package.name for package in chosen(["agent-framework-lab"])] == ["agent-framework-lab"]
    with pytest.raises(
        RunguardError, match=r"^no downstream package agent-framework-x; known: agent-framework-ag-ui, "
    ):
        chosen(["agent-framework-x", "agent-framework-lab"])


class _Scratch:
    """The part of a nox session a test root needs: its temporary directory."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp

    def create_tmp(self) -> str:
        return str(self.tmp)


def _write_tree(root: Path, *files: str) -> Path:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    return root


def test_a_checkouts_tests_sit_at_the_packages_place_beside_links_to_the_checkouts_rest(tmp_path: Path) -> None:
    checkout = _write_tree(
        tmp_path / "checkout", ".git/HEAD", "declarative-agents/a.yaml", "python/samples/s.py",
        "python/packages/x/pyproject.toml", "python/packages/x/tests/test_a.py",
        "python/packages/x/agent_framework_x/m.py", "python/packages/core/pyproject.toml",
    )  # fmt: skip
    session = cast("nox.Session", _Scratch(tmp_path / "scratch"))
    root = SuiteSource(checkout, Path("python/packages/x"), "checkout 0123").test_root(session, "tests-x", ("tests",))
    top = tmp_path / "scratch" / "tests-x"
    assert root == top / "python/packages/x"
    assert sorted(path.name for path in root.iterdir()) == ["pyproject.toml", "tests"], "no source beside the tests"
    assert (top / "declarative-agents").resolve() == checkout / "declarative-agents"
    assert (top / "python/samples/s.py").read_text() == "python/samples/s.py"
    assert not (top / ".git").exists()
    assert sorted(path.name for path in (top / "python/packages").iterdir()) == ["x"]


def test_an_sdists_tests_are_copied_without_its_source(tmp_path: Path) -> None:
    sdist = _write_tree(tmp_path / "pkg_x-1.0", "pyproject.toml", "tests/x/test_a.py", "agent_framework_x/m.py")
    session = cast("nox.Session", _Scratch(tmp_path / "scratch"))
    root = SuiteSource(sdist, Path(), "sdist").test_root(session, "tests-x", ("tests",))
    assert root == tmp_path / "scratch" / "tests-x"
    assert sorted(path.name for path in root.iterdir()) == ["pyproject.toml", "tests"]
