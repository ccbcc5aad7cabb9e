"""Issue reproductions: the repro/ sources, running a script against a base, and what the data file verifies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.repro import SECTIONS, read_reproduction, reproduction_scripts
from scripts.validate.repro import ReproRun, format_runs, load_record, repro_body, run_reproduction

SCRIPT = "import sys\nprint('observed: x is 1')\nprint('expected: x is 2')\nsys.exit({code})\n"


def write_draft(directory: Path, slug: str, code: int = 1, skip: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    sections = "".join(f"## {name}\n{name} text for {slug}.\n\n" for name in SECTIONS if name != skip)
    (directory / f"{slug}.md").write_text(f"# Python: {slug} goes wrong\n\n{sections}")
    (directory / f"{slug}.py").write_text(SCRIPT.format(code=code))


def test_a_draft_has_its_title_sections_and_script(tmp_path: Path) -> None:
    write_draft(tmp_path, "close-race")
    repro = read_reproduction(tmp_path, "close-race")
    assert repro.title == "Python: close-race goes wrong"
    assert repro.sections["Additional Context"] == "Additional Context text for close-race."
    assert reproduction_scripts(tmp_path) == [tmp_path / "close-race.py"]
    assert reproduction_scripts(tmp_path / "absent") == []


@pytest.mark.parametrize(
    ("slug", "skip", "message"),
    [
        ("Bad_Slug", "", "use lowercase letters"),
        ("no-files", "", r"no-files\.md and no-files\.py missing"),
        ("short", "Regression", r"short\.md: no \(or an empty\) '## Regression' section"),
    ],
)
def test_a_bad_draft_is_a_one_line_error(tmp_path: Path, slug: str, skip: str, message: str) -> None:
    if slug == "short":
        write_draft(tmp_path, slug, skip=skip)
    with pytest.raises(RunguardError, match=message) as raised:
        read_reproduction(tmp_path, slug)
    assert "\n" not in str(raised.value)


def test_a_draft_without_its_title_line_is_an_error(tmp_path: Path) -> None:
    write_draft(tmp_path, "untitled")
    (tmp_path / "untitled.md").write_text("Some prose\n## Observed\nx\n")
    with pytest.raises(RunguardError, match=r"untitled\.md: the first line must be the title"):
        read_reproduction(tmp_path, "untitled")


@pytest.mark.parametrize(
    ("code", "variant", "ok"), [(1, "unpatched", True), (0, "patched", True), (0, "unpatched", False)]
)
def test_a_run_must_reproduce_unpatched_and_not_patched(tmp_path: Path, code: int, variant: str, ok: bool) -> None:
    write_draft(tmp_path, "bug", code=code)
    run = run_reproduction(sys.executable, tmp_path / "bug.py", "1.22.0", variant, tmp_path)
    assert (run.exit_code, run.ok) == (code, ok)
    assert (run.observed, run.expected) == ("observed: x is 1", "expected: x is 2")
    if not ok:
        assert run.problem() == "bug exited 0 on 1.22.0 unpatched, must reproduce (exit 1)"


def test_a_script_that_hangs_is_stopped_and_fails(tmp_path: Path) -> None:
    (tmp_path / "hangs.py").write_text("import time\ntime.sleep(60)\n")
    run = run_reproduction(sys.executable, tmp_path / "hangs.py", "1.22.0", "unpatched", tmp_path, timeout=0.5)
    assert run.exit_code is None
    assert not run.ok
    assert "hangs timed out on 1.22.0 unpatched" in run.problem()
    assert "MISMATCH" in format_runs([run])


def _record(tmp_path: Path, runs: list[ReproRun]) -> Path:
    path = tmp_path / "repro.json"
    produced = {"on": "Linux x86_64, Python 3.11.9, 2 CPUs"}
    path.write_text(json.dumps({"produced": produced, **repro_body(runs, "3.11.9")}))
    return path


def test_a_script_is_verified_only_as_it_is_on_every_base_and_variant(tmp_path: Path) -> None:
    write_draft(tmp_path, "bug")
    sha = read_reproduction(tmp_path, "bug").script_sha256()
    runs = [ReproRun("bug", base, variant, code, "o", "e", sha) for base in ("1.22.0", "1.23.0")
            for variant, code in (("unpatched", 1), ("patched", 0))]  # fmt: skip
    record = load_record(_record(tmp_path, runs))
    assert record is not None
    assert (record.python, record.system) == ("3.11.9", "Linux x86_64")
    assert len(record.verified("bug", sha, ["1.22.0", "1.23.0"])) == 4
    assert record.verified("bug", "another script", ["1.22.0", "1.23.0"]) == []
    assert record.verified("bug", sha, ["1.22.0", "1.24.0"]) == []  # a base it did not run on
    failed = load_record(_record(tmp_path, [*runs[:3], ReproRun("bug", "1.23.0", "patched", 1, "o", "e", sha)]))
    assert failed is not None
    assert failed.verified("bug", sha, ["1.22.0", "1.23.0"]) == []


def test_a_bad_record_is_an_error_and_a_missing_one_is_none(tmp_path: Path) -> None:
    assert load_record(tmp_path / "absent.json") is None
    (tmp_path / "repro.json").write_text('{"rows": []}')
    with pytest.raises(RunguardError, match="not a repro data file"):
        load_record(tmp_path / "repro.json")
