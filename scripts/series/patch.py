"""The one model of a patch file, parsed once: subject, body, trailers, file changes, added tests, upstream status."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from scripts.series.common import markdown_sections, sha256_of
from scripts.series.errors import RunguardError
from scripts.series.git import git_output, run_git
from scripts.series.locations import CORE_PACKAGE

# Where upstream has it may be a version or a description: "1.24.0", "main after python-1.23.0 (#10204)".
UPSTREAM_STATUS = re.compile(r"not forwarded|forwarded (?P<url>\S+)|applied upstream in (?P<where>\S.*)")
DIFF_HEADER = re.compile(r"^diff --git a/\S+ b/(?P<path>\S+)$")
HUNK_HEADER = re.compile(r"^@@ [^@]* @@ ?(?P<context>.*)$")
TOP_LEVEL_CLASS = re.compile(r"^class (?P<name>\w+)")
TEST_FUNCTION = re.compile(r"^(?P<indent>\s*)(?:async )?def (?P<name>test\w*)\(")
CORE_TESTS = CORE_PACKAGE / "tests"
CORE_SOURCE = CORE_PACKAGE / "agent_framework"
# Trailers for runguard's own bookkeeping: they stay out of what is sent upstream.
EXPLORE_TAG = re.compile(r"\s*\[explore: (?P<kind>[a-z]+) (?P<pattern>[^\]]+)\]")
RUNGUARD_TRAILERS = (
    "Depends-On", "Behaviour-Change", "Issue-Draft", "Submission", "Upstream-Status", "Upstream-Detect"
)  # fmt: skip
SUBMISSION_WAITS = re.compile(r"waits for (?P<slug>[\w-]+)\b.*")
PR_DIR = "pr"  # patches/pr/<stem>.md: the PR body's prose beyond the message, under ``## <heading>`` sections


@dataclass(frozen=True)
class Detector:
    """``Upstream-Detect: <path> <fixed string>``: upstream has the fix when ``path`` contains ``text``."""

    path: str
    text: str


@dataclass(frozen=True)
class FileChange:
    """One file a patch changes, with its added and deleted line counts; ``created`` when the patch adds it."""

    path: str
    added: int
    deleted: int
    created: bool

    @property
    def is_test(self) -> bool:
        """Whether it is a pytest file (``test_*.py``) under the core package's ``tests/``."""
        return is_test_file(self.path)


def is_test_file(path: str) -> bool:
    """Whether repo-relative ``path`` is a pytest file (``test_*.py``) under the core package's ``tests/``."""
    pure = PurePosixPath(path)
    return pure.is_relative_to(CORE_TESTS.as_posix()) and pure.name.startswith("test_") and pure.suffix == ".py"


@dataclass(frozen=True)
class Patch:
    """A ``git format-patch`` mbox of the series, with everything it says about itself."""

    path: Path
    subject: str
    trailers: tuple[tuple[str, str], ...]
    paragraphs: tuple[str, ...]  # the body without the trailers, paragraph by paragraph
    changes: tuple[FileChange, ...]
    test_functions: tuple[str, ...]  # every test function the diff adds: ``tests/x/test_y.py::[Class::]test_z``
    pr_sections: tuple[tuple[str, str], ...] = ()  # ``patches/pr/<stem>.md``: (heading, text) per ``## heading``

    @property
    def name(self) -> str:
        """The file name, as ``patches/series`` lists it."""
        return self.path.name

    @property
    def stem(self) -> str:
        """The file name without ``.patch``: the patch's folder in an export and its anchor in the patch guide."""
        return self.path.stem

    @property
    def number(self) -> int | None:
        """The number its file name starts with (``0006-x.patch``: 6), by which the docs call it "patch 6"."""
        digits = self.name.partition("-")[0]
        return int(digits) if digits.isdigit() else None

    def sha256(self) -> str:
        """The hex sha256 of the patch file."""
        return sha256_of(self.path)

    def values(self, key: str) -> list[str]:
        """The values of every trailer named ``key`` (case-insensitive)."""
        return [value for name, value in self.trailers if name.lower() == key.lower()]

    @property
    def upstream_status(self) -> str:
        """The ``Upstream-Status`` trailer value."""
        return self.values("Upstream-Status")[0]

    @property
    def upstream_state(self) -> tuple[str, str]:
        """The status as (state, detail): ("not forwarded", ""), ("forwarded", URL) or ("applied upstream", WHERE)."""
        match = UPSTREAM_STATUS.fullmatch(self.upstream_status)
        if match and match["url"]:
            return "forwarded", match["url"]
        if match and match["where"]:
            return "applied upstream", match["where"]
        return "not forwarded", ""

    @property
    def is_backport(self) -> bool:
        """Whether upstream has the change already: the patch is kept only for bases that lack it, never sent."""
        return self.upstream_state[0] == "applied upstream"

    @property
    def waits_for(self) -> str | None:
        """The issue draft whose decision the PR waits for (``Submission: waits for <slug> ...``), or None: send now.

        A patch without the trailer, or with ``Submission: now``, is sent now.
        """
        for value in self.values("Submission"):
            if value.strip().lower().startswith("now"):
                return None
            match = SUBMISSION_WAITS.fullmatch(value.strip())
            if match is None:
                raise RunguardError(f"{self.name}: 'Submission: {value}': expected 'now' or 'waits for <issue draft>'")
            return match["slug"]
        return None

    @property
    def depends_on(self) -> list[str]:
        """The ``Depends-On`` values: earlier patches (file name or subject) it needs, or ``none``."""
        return [value for value in self.values("Depends-On") if not value.lower().startswith("none")]

    @property
    def behaviour_changes(self) -> list[str]:
        """The ``Behaviour-Change`` trailers: every observable change, one line each, ready for a changelog.

        Without their ``[explore: KIND PATTERN]`` tags, which are for the schedule explorer (``explore_differences``).
        """
        return [EXPLORE_TAG.sub("", value).rstrip() for value in self.values("Behaviour-Change")]

    @property
    def explore_differences(self) -> list[tuple[str, str]]:
        """Each ``[explore: KIND PATTERN]`` tag of a ``Behaviour-Change`` trailer, as (KIND, PATTERN).

        It declares the difference the schedule explorer sees between the unpatched and the patched build: one of
        KIND (``end``, ``outputs``, ``errors``, ``status``, ``pending``, ``state``) whose text matches the glob PATTERN.
        """
        return [
            (match["kind"], match["pattern"].strip())
            for value in self.values("Behaviour-Change")
            for match in EXPLORE_TAG.finditer(value)
        ]

    @property
    def issue_drafts(self) -> list[str]:
        """The ``Issue-Draft`` slugs: ``repro/<slug>.md`` and ``.py`` describe an issue to file before the PR."""
        return self.values("Issue-Draft")

    @property
    def pr_file(self) -> Path:
        """Where the PR body's prose beyond the message lives: ``patches/pr/<stem>.md``."""
        return self.path.parent / PR_DIR / f"{self.stem}.md"

    def pr_section(self, heading: str) -> str:
        """The text under ``## heading`` in :attr:`pr_file`; a missing file or heading is an error."""
        text = dict(self.pr_sections).get(heading, "")
        if not text:
            where = self.pr_file.relative_to(self.path.parent.parent)
            problem = "needs a non-empty" if self.pr_sections else "does not exist; it needs a"
            raise RunguardError(f"{self.name}: {where} {problem} '## {heading}' section")
        return text

    @property
    def source_lines(self) -> tuple[int, int]:
        """Lines added and deleted under the core package's ``agent_framework/``."""
        return _line_counts(c for c in self.changes if PurePosixPath(c.path).is_relative_to(CORE_SOURCE.as_posix()))

    @property
    def test_lines(self) -> tuple[int, int]:
        """Lines added and deleted under the core package's ``tests/``."""
        return _line_counts(c for c in self.changes if PurePosixPath(c.path).is_relative_to(CORE_TESTS.as_posix()))

    @property
    def detectors(self) -> list[Detector]:
        """The ``Upstream-Detect`` trailers."""
        return [Detector(*value.split(" ", 1)) for value in self.values("Upstream-Detect")]

    @property
    def paths(self) -> set[str]:
        """The repo-relative paths of the files the patch changes."""
        return {change.path for change in self.changes}

    @property
    def added_tests(self) -> tuple[str, ...]:
        """The tests the patch adds, as pytest ids relative to the core package.

        A test file the patch creates is named whole (``tests/x/test_new.py``); a test function it adds to an
        existing file is named by node id (``tests/x/test_old.py::test_new_thing``).
        """
        created = {_core_relative(change.path) for change in self.changes if change.is_test and change.created}
        functions = [test for test in self.test_functions if test.split("::", 1)[0] not in created]
        return (*sorted(created), *functions)


def added_tests(patches: tuple[Patch, ...] | list[Patch]) -> list[str]:
    """The tests a run of ``patches`` adds, each once; a function id is left out when its whole file is named."""
    tests = list(dict.fromkeys(test for patch in patches for test in patch.added_tests))
    files = {test for test in tests if "::" not in test}
    return [test for test in tests if test.split("::", 1)[0] == test or test.split("::", 1)[0] not in files]


def _line_counts(changes: Iterable[FileChange]) -> tuple[int, int]:
    counted = list(changes)
    return sum(change.added for change in counted), sum(change.deleted for change in counted)


def read_pr_sections(path: Path) -> tuple[tuple[str, str], ...]:
    """The ``## heading`` sections of a markdown file, as (heading, stripped text); none when it does not exist."""
    if not path.is_file():
        return ()
    return tuple(markdown_sections(path.read_text()).items())


def read_patch(path: Path) -> Patch:
    """Parse ``path`` with ``git mailinfo``, ``git interpret-trailers --parse`` and ``git apply --numstat``."""
    with tempfile.TemporaryDirectory(prefix="runguard-patch-") as scratch:
        work = Path(scratch)
        headers = git_output("mailinfo", "msg", "diff", cwd=work, stdin=path.read_text())
        body = (work / "msg").read_text()
        diff = (work / "diff").read_text()
        trailer_lines = git_output("interpret-trailers", "--parse", cwd=work, stdin=body)
        changes = _file_changes(path, work)
    subject = next((line[len("Subject: ") :] for line in headers.splitlines() if line.startswith("Subject: ")), "")
    if not subject:
        raise RunguardError(f"{path.name}: no Subject header; is it a git format-patch mbox?")
    trailers = tuple(_split_trailer(line) for line in trailer_lines.splitlines() if line)
    paragraphs = tuple(part.strip() for part in body.strip().split("\n\n") if part.strip())
    patch = Patch(
        path, subject, trailers, paragraphs[:-1] if trailers else paragraphs, changes, _test_functions(diff),
        read_pr_sections(path.parent / PR_DIR / f"{path.stem}.md"),
    )  # fmt: skip
    _check_trailers(patch)
    return patch


def _split_trailer(line: str) -> tuple[str, str]:
    name, _, value = line.partition(":")
    return name.strip(), value.strip()


def _check_trailers(patch: Patch) -> None:
    statuses = patch.values("Upstream-Status")
    if len(statuses) != 1 or not UPSTREAM_STATUS.fullmatch(statuses[0]):
        raise RunguardError(
            f"{patch.name}: needs one 'Upstream-Status: not forwarded | forwarded <URL> |"
            " applied upstream in <VERSION>' trailer"
        )
    for value in patch.values("Upstream-Detect"):
        if len(value.split(" ", 1)) != 2:
            raise RunguardError(f"{patch.name}: 'Upstream-Detect: {value}' needs a path and a fixed string")


def _file_changes(path: Path, scratch: Path) -> tuple[FileChange, ...]:
    """The files ``path`` changes, from ``git apply --numstat --summary``.

    It runs outside any repository (the temporary directory may lie inside one, so git may not look above it):
    inside a repository, git would leave out the paths outside the current directory.
    """
    outside = {"GIT_CEILING_DIRECTORIES": str(scratch.parent)}
    listed = run_git("apply", "--numstat", "--summary", str(path.resolve()), cwd=scratch, env=outside, check=False)
    if listed.returncode != 0:  # git names the line of the file it read, which is the patch file itself
        reasons = [line.removeprefix("error: ") for line in listed.stderr.splitlines() if line.strip()]
        raise RunguardError(f"{path}: git cannot read it as a patch: {reasons[-1] if reasons else 'no diff'}")
    output = listed.stdout
    created = {line.split()[-1] for line in output.splitlines() if line.strip().startswith("create mode")}
    changes: list[FileChange] = []
    for line in output.splitlines():
        if "\t" in line:
            added, deleted, name = line.split("\t", 2)
            changes.append(
                FileChange(name, int(added.replace("-", "0")), int(deleted.replace("-", "0")), name in created)
            )
    return tuple(changes)


def _core_relative(path: str) -> str:
    return PurePosixPath(path).relative_to(CORE_PACKAGE.as_posix()).as_posix()


def _test_functions(diff: str) -> tuple[str, ...]:
    """Tests the diff adds to test files, as pytest collects them: ``file::test_x`` or ``file::TestC::test_y``.

    A test is a function named ``test*`` at module level or in a ``Test*`` class; a method's class is the top-level
    class the diff last showed (an added or context line) or, failing that, the one git names in the hunk header.
    A definition the diff also removes (a changed signature) is not a new test.
    """
    added: list[str] = []
    removed: list[str] = []
    test_file: str | None = None
    klass: str | None = None
    for line in diff.splitlines():
        header = DIFF_HEADER.match(line)
        if header:
            test_file = _core_relative(header["path"]) if is_test_file(header["path"]) else None
            continue
        hunk = HUNK_HEADER.match(line)
        if hunk:
            context = TOP_LEVEL_CLASS.match(hunk["context"])
            klass = context["name"] if context else None
            continue
        if test_file is None or line[:1] not in {"+", "-", " "} or line.startswith(("+++", "---")):
            continue
        text = line[1:]
        if text[:1].strip() and not line.startswith("-"):  # a top-level line: a class opens, anything else closes
            opened = TOP_LEVEL_CLASS.match(text)
            klass = opened["name"] if opened else None
        function = TEST_FUNCTION.match(text)
        if line.startswith(" ") or function is None or (function["indent"] and not (klass or "").startswith("Test")):
            continue
        test = f"{test_file}::{klass}::{function['name']}" if function["indent"] else f"{test_file}::{function['name']}"
        (removed if line.startswith("-") else added).append(test)
    return tuple(test for test in added if test not in removed)
