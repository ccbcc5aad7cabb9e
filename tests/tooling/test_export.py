"""PR material per patch: title, body in upstream's current template, mbox without runguard's trailers, range-diff;
issue drafts from repro/; backports never exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_series
from scripts.series.repro import read_reproduction
from scripts.ship.checklist import Check, Item, render_before_sending, render_checklist
from scripts.ship.evidence import new_test_check
from scripts.ship.export import check_sources, export_series, submitter
from scripts.validate.repro import ReproRecord, ReproRun
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder, git
from tests.tooling.test_repro import write_draft

FIRST = ["changed 1", *RUNNER_LINES[1:]]
SECOND = [*FIRST[:19], "changed 20", *FIRST[20:]]
THIRD = [*SECOND[:25], "changed 26", *SECOND[26:]]
APPLIED = "Upstream-Status: applied upstream in main after python-1.23.0 (#10204)"
FIRST_TRAILERS = (
    "Fixes: #9473\nRefs: #7859\nIssue-Draft: run-leak\n"
    "Behaviour-Change: run() waits for a dropped run\nBehaviour-Change: a WARNING names a stuck run\n"
    "Upstream-Status: not forwarded"
)
WAITING_TRAILERS = FIRST_TRAILERS.replace("Upstream-Status", "Submission: waits for run-leak\nUpstream-Status")
FIRST_BODY = "What broke and why.\n\nWhat changes, first part.\n\nWhat changes, last part."
PR_TEXT = "## Impact\nCallers no longer lose writes.\n\n## Review focus\nThe handover in run().\n"
BASES = ["9.9.9"]


def pr_file(patches: Path, stem: str, text: str = PR_TEXT) -> None:
    (patches / "pr").mkdir(exist_ok=True)
    (patches / "pr" / f"{stem}.md").write_text(text)


def make_series(series: SeriesBuilder, patches: Path) -> None:
    series.add("first", FIRST, FIRST_TRAILERS, body=FIRST_BODY)
    series.add("backport", SECOND, f"Refs: #10164\n{APPLIED}")
    series.add("third", THIRD, "Depends-On: 0001-first.patch (the handover)\nUpstream-Status: not forwarded")
    pr_file(patches, "0001-first")
    pr_file(patches, "0003-third", "## Impact\nSome.\n\n## Review focus\n- a\n- b\n")
    write_draft(patches.parent / "repro", "run-leak")


def _body(out: Path, stem: str) -> str:
    return (out / stem / "body.md").read_text()


def export(
    framework: Path, patches: Path, out: Path, record: ReproRecord | None = None, author: str | None = None
) -> list[dict[str, str]]:
    checks = {"0001-first.patch": [Check(Item.UNIT_TESTS, "3 new tests pass", True)]}
    return export_series(read_series(patches), out, checks, framework, bases=BASES, record=record, author=author)


@pytest.fixture
def exported(framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path) -> Path:
    """The synthetic series exported once into ``tmp_path/export``."""
    make_series(series, patches)
    export(framework, patches, tmp_path / "export")
    return tmp_path / "export"


def test_a_pr_body_follows_upstreams_current_template(exported: Path) -> None:
    first = exported / "0001-first"
    assert (first / "title.txt").read_text() == "Python: first\n"
    body = _body(exported, "0001-first")
    headings = [line for line in body.splitlines() if line.startswith("### ")]
    assert headings == [
        "### Motivation & Context", "### Description & Review Guide", "### Behaviour changes", "### Depends on",
        "### Related Issue", "### AI Assistance", "### Contribution Checklist",
    ]  # fmt: skip
    motivation = body.split("### Motivation & Context")[1].split("### Description")[0]
    major = body.split("**What are the major changes?** ")[1].split("- **What is the impact")[0]
    assert "What broke and why." in motivation
    assert "What broke and why." not in major  # the problem once, as the motivation
    assert "What changes, first part." in major  # the whole change, not the last paragraph
    assert "What changes, last part." in major
    assert "- **What is the impact of these changes?** Callers no longer lose writes." in body
    assert "- **What do you want reviewers to focus on?** The handover in run()." in body
    assert "- **What do you want reviewers to focus on?**\n\n  - a\n  - b" in (third := _body(exported, "0003-third"))
    assert "- run() waits for a dropped run\n- a WARNING names a stuck run" in body
    assert "None: this PR applies on its own" in body
    assert "Fixes #9473\n\nRelated: #7859" in body
    assert "`issues/run-leak.md` (Python: run-leak goes wrong)" in body
    assert "- [ ] No material AI assistance was used.\n- [x] This is an AI-assisted contribution." in body
    assert "Verified by running: the 1 checks marked passed in the checklist below." in body
    assert "What changes, first part.\n\n  What changes, last part." in body  # later paragraphs indented
    assert "- [x] All unit tests pass, and I have added new tests where possible.\n  - passed: 3 new tests pass" in body
    assert "- [ ] This PR links to an issue marked ready-for-implementation by a maintainer." in body
    assert "### Behaviour changes\n\nNone." in third
    assert "send them first:\n\n- `0001-first`: Python: first" in third
    assert "No linked issue" in third


def test_the_mbox_keeps_fixes_and_refs_and_drops_runguards_trailers(exported: Path, framework: Path) -> None:
    git(framework, "am", "--quiet", str(exported / "0001-first" / "0001-first.patch"))
    message = git(framework, "log", "-1", "--format=%B")
    assert message.endswith("What changes, last part.\n\nFixes: #9473\nRefs: #7859")
    for own in ("Issue-Draft", "Behaviour-Change", "Upstream-Status", "Depends-On"):
        assert own not in message
    git(framework, "am", "--quiet", str(exported / "0003-third" / "0003-third.patch"), "--3way")
    assert git(framework, "log", "-1", "--format=%B").endswith("Why it changes.")


def test_the_mbox_is_authored_by_the_submitter_when_given(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    make_series(series, patches)
    export(framework, patches, tmp_path / "export", author="Ada Lovelace <ada@example.org>")
    git(framework, "am", "--quiet", str(tmp_path / "export" / "0001-first" / "0001-first.patch"))
    assert git(framework, "log", "-1", "--format=%an <%ae>").strip() == "Ada Lovelace <ada@example.org>"
    assert "The mboxes are signed by Ada Lovelace <ada@example.org>." in (tmp_path / "export" / "index.md").read_text()


def test_the_index_says_when_the_mboxes_keep_the_placeholder_author(exported: Path) -> None:
    assert "export again with `-- --author 'Name <email>'`" in (exported / "index.md").read_text()


@pytest.mark.parametrize("given", ["Ada", "Ada <ada>", "<ada@example.org>"])
def test_an_author_that_is_not_a_name_and_an_email_is_one_line(given: str, tmp_path: Path) -> None:
    with pytest.raises(RunguardError, match=r"^--author: .* is not 'Name <email>'$"):
        submitter(tmp_path, given)


def test_the_submitter_defaults_to_gits_user_and_else_to_the_series_author(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet")
    git(tmp_path, "config", "user.name", "")  # a global identity must not leak into this test
    assert submitter(tmp_path, None) is None
    git(tmp_path, "config", "user.name", "Ada Lovelace")
    git(tmp_path, "config", "user.email", "ada@example.org")
    assert submitter(tmp_path, None) == "Ada Lovelace <ada@example.org>"


def test_a_backport_is_never_exported_and_the_index_says_so(exported: Path) -> None:
    rows = json.loads((exported / "series.json").read_text())["patches"]
    assert not (exported / "0002-backport").exists()
    assert rows[1]["what to do"].startswith("backport: never sent; drop it when the base has it")
    assert rows[1]["exported"] == "no (backport)"
    assert rows[2]["depends on"] == "0001-first.patch"
    assert rows[0]["issue drafts"] == "run-leak"
    index = (exported / "index.md").read_text()
    assert "| 0002-backport.patch |" in index
    assert "backport: never sent" in index


def test_an_issue_draft_is_written_in_the_bug_template_and_says_when_unverified(exported: Path, patches: Path) -> None:
    draft = (exported / "issues" / "run-leak.md").read_text()
    headings = [line for line in draft.splitlines() if line.startswith(("# ", "### "))]
    assert headings == [
        "# Python: run-leak goes wrong", "### Observed Behavior", "### Expected Behavior", "### Steps to Reproduce",
        "### Minimal Reproduction", "### Error Messages and Stack Traces", "### Package Versions",
        "### Python Version", "### Operating System", "### Regression", "### Additional Context",
    ]  # fmt: skip
    script = (patches.parent / "repro" / "run-leak.py").read_text()
    assert f"```python\n{script}```" in draft
    assert "agent-framework-core: 9.9.9" in draft
    assert "**Not verified:**" in draft
    assert "Additional Context text for run-leak." in draft


def test_a_verified_draft_shows_what_the_script_printed(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    make_series(series, patches)
    sha = read_reproduction(patches.parent / "repro", "run-leak").script_sha256()
    runs = (
        ReproRun("run-leak", "9.9.9", "unpatched", 1, "observed: lost", "expected: kept", sha),
        ReproRun("run-leak", "9.9.9", "patched", 0, "observed: kept", "expected: kept", sha),
    )
    export(framework, patches, tmp_path / "export", ReproRecord("3.12.3", "Linux x86_64", runs))
    draft = (tmp_path / "export" / "issues" / "run-leak.md").read_text()
    assert "```text\nobserved: lost\nexpected: kept\n```" in draft
    assert "Not verified" not in draft
    assert "### Python Version\n\nPython 3.12.3" in draft


@pytest.mark.parametrize(
    "case",
    [
        ("no-pr-file", r"0003-third\.patch: patches/pr/0003-third\.md does not exist; it needs a '## Impact' section"),
        ("no-focus", r"0003-third\.patch: patches/pr/0003-third\.md needs a non-empty '## Review focus' section"),
        ("no-repro", r"issue draft run-leak: run-leak\.md and run-leak\.py missing"),
        ("bad-status", r"0004-fourth\.patch"),
        ("bad-dependency", r"0004-fourth\.patch: 'Depends-On: Python: nothing' names no earlier patch"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path, case: tuple[str, str]
) -> None:
    breakage, message = case
    make_series(series, patches)
    out = tmp_path / "export"
    export(framework, patches, out)
    before = {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}
    fourth = [*THIRD[:28], "changed 29", *THIRD[29:]]
    if breakage == "no-pr-file":
        (patches / "pr" / "0003-third.md").unlink()
    elif breakage == "no-focus":
        pr_file(patches, "0003-third", "## Impact\nSome.\n")
    elif breakage == "no-repro":
        (patches.parent / "repro" / "run-leak.md").unlink()
        (patches.parent / "repro" / "run-leak.py").unlink()
    elif breakage == "bad-status":
        series.add("fourth", fourth, "Upstream-Status: sent somewhere")
    else:
        series.add("fourth", fourth, "Depends-On: Python: nothing\nUpstream-Status: not forwarded")
        pr_file(patches, "0004-fourth")
    with pytest.raises(RunguardError, match=message):
        check_sources(read_series(patches))
    with pytest.raises(RunguardError, match=message) as raised:
        export(framework, patches, out)
    assert "\n" not in str(raised.value)
    assert {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()} == before


def test_dependencies_are_named_by_file_or_subject_or_none(series: SeriesBuilder, patches: Path) -> None:
    series.add("first", FIRST)
    series.add("second", SECOND, "Depends-On: Python: first\nUpstream-Status: not forwarded")
    series.add("third", THIRD, "Depends-On: none (applies on its own)\nUpstream-Status: not forwarded")
    parsed = read_series(patches)
    assert [patch.name for patch in parsed.dependencies(parsed.patches[1])] == ["0001-first.patch"]
    assert parsed.dependencies(parsed.patches[2]) == []


def test_changed_patch_gets_a_range_diff_until_the_series_changes_again(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    make_series(series, patches)
    out = tmp_path / "export"
    export(framework, patches, out)
    third = patches / "0003-third.patch"
    third.write_text(third.read_text().replace("Why it changes.", "Why it changes, reworded."))
    for _ in range(2):  # exporting the same series again still compares it with the previous one
        rows = export(framework, patches, out)
        assert [row["since last export"] for row in rows] == ["unchanged", "unchanged", "changed"]
        range_diff = (out / "0003-third" / "range-diff.txt").read_text()
        assert "-    Why it changes." in range_diff
        assert "+    Why it changes, reworded." in range_diff
        assert not (out / "0001-first" / "range-diff.txt").exists()


CHECKS = [
    Check(Item.BUILDS, "wheel", True),
    Check(Item.BUILDS, "sdist (`python3 run.py -s wheel`)", None),
    Check(Item.UNIT_TESTS, "new tests", True),
    Check(Item.LINKED_ISSUE, "Fixes", False),
]


def test_item_is_ticked_only_when_every_check_ran_and_passed() -> None:
    text = render_checklist(CHECKS)
    assert "- [ ] The core wheel and source distribution build successfully.\n  - passed: wheel\n" in text
    assert "- [x] All unit tests pass, and I have added new tests where possible.\n  - passed: new tests\n" in text
    assert "  - FAILED: Fixes" in text
    assert text.endswith("- [ ] This is not a breaking change.")


def test_the_pr_body_names_no_check_that_was_not_run_the_submitters_list_does() -> None:
    body, todo = render_checklist(CHECKS), render_before_sending(CHECKS)
    assert "sdist" not in body and "run.py" not in body and "not run" not in body
    assert "- [ ] The core wheel and source distribution build successfully.\n  - not run: sdist" in todo
    assert "  - FAILED: Fixes" in todo
    assert "- [ ] This is not a breaking change.\n  - not run: not checked by a tool" in todo
    assert "All unit tests pass" not in todo


def test_a_patch_is_credited_only_with_the_tests_its_own_diff_adds(series: SeriesBuilder, patches: Path) -> None:
    module = "python/packages/core/tests/workflow/test_guard.py"
    series.add("guard", FIRST, files={module: ["def test_one():", "    pass", "def test_two():", "    pass"]})
    series.add(
        "later",
        SECOND,
        files={module: ["def test_one():", "    pass", "def test_two():", "    pass", "def test_three():", "    pass"]},
    )
    first, _ = read_series(patches).patches
    outcomes = {f"tests.workflow.test_guard::test_{name}": "passed" for name in ("one", "two", "three")}

    check = new_test_check("1.23.0", first, outcomes)

    assert check.passed is True
    assert check.text.startswith("the 2 tests this patch adds pass")


def test_the_index_opens_with_the_submission_plan(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    series.add("first", FIRST, WAITING_TRAILERS)
    series.add("second", SECOND)
    series.add("third", THIRD, "Depends-On: 0001-first.patch\nSubmission: waits for run-leak (its decision)\n"
               "Upstream-Status: not forwarded")  # fmt: skip
    for stem in ("0001-first", "0002-second", "0003-third"):
        pr_file(patches, stem)
    write_draft(patches.parent / "repro", "run-leak")

    rows = export(framework, patches, tmp_path / "export")

    index = (tmp_path / "export" / "index.md").read_text()
    assert index.startswith(
        "# Submission plan\n\nSend in this order, each a PR of its own once a maintainer has marked its issue"
        " ready-for-implementation (CONTRIBUTING asks for that): post the issue draft first, where its header says;"
        " the draft names the choice the PR makes, and the PR changes before it is opened if the answer is"
        " another:\n\n1. `0002-second.patch`"
    )
    assert "- issue `run-leak`: `0001-first.patch` (Python: first), `0003-third.patch` (Python: third)" in index
    assert [row["what to do"] for row in rows] == [
        "wait: send once the maintainers decided on issue run-leak",
        "send now as a new PR (step 1 of the plan)",
        "wait: send once the maintainers decided on issue run-leak",
    ]
    assert "Submission" not in (tmp_path / "export" / "0002-second" / "0002-second.patch").read_text()


@pytest.mark.parametrize(
    ("third", "message"),
    [
        ("Submission: later", r"0002-third\.patch: 'Submission: later': expected 'now' or 'waits for <issue draft>'"),
        ("Submission: now", r"0002-third\.patch: sent now, but it depends on 0001-first\.patch, which waits for issue"),
        ("Submission: waits for no-such-draft", r"issue draft no-such-draft"),
    ],
)
def test_a_bad_submission_plan_is_one_line(series: SeriesBuilder, patches: Path, third: str, message: str) -> None:
    series.add("first", FIRST, WAITING_TRAILERS)
    series.add("third", THIRD, f"Depends-On: 0001-first.patch\n{third}\nUpstream-Status: not forwarded")
    for stem in ("0001-first", "0002-third"):
        pr_file(patches, stem)
    write_draft(patches.parent / "repro", "run-leak")

    with pytest.raises(RunguardError, match=message) as raised:
        check_sources(read_series(patches))
    assert "\n" not in str(raised.value)
