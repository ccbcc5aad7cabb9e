"""Patch metadata from the mbox itself: subject, body, trailers, upstream status, detectors and changed files."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scripts.series.errors import RunguardError
from scripts.series.git import git_output, run_git

# Where upstream has it may be a version or a description: "1.24.0", "main after python-1.23.0 (#10204)".
UPSTREAM_STATUS = re.compile(r"not forwarded|forwarded (?P<url>\S+)|applied upstream in (?P<where>\S.*)")


@dataclass(frozen=True)
class Detector:
    """``Upstream-Detect: <path> <fixed string>``: upstream has the fix when ``path`` contains ``text``."""

    path: str
    text: str


@dataclass(frozen=True)
class PatchInfo:
    """What a patch says about itself."""

    path: Path
    subject: str
    trailers: tuple[tuple[str, str], ...]
    paragraphs: tuple[str, ...] = ()  # the body without the trailers, paragraph by paragraph

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
    def detectors(self) -> list[Detector]:
        """The ``Upstream-Detect`` trailers."""
        return [Detector(*value.split(" ", 1)) for value in self.values("Upstream-Detect")]


def read_patch_info(patch: Path) -> PatchInfo:
    """Parse ``patch`` with ``git mailinfo`` and ``git interpret-trailers --parse``; check its trailers."""
    with tempfile.TemporaryDirectory(prefix="runguard-mailinfo-") as scratch:
        work = Path(scratch)
        headers = git_output("mailinfo", "msg", "diff", cwd=work, stdin=patch.read_text())
        body = (work / "msg").read_text()
        trailer_lines = git_output("interpret-trailers", "--parse", cwd=work, stdin=body)
    subject = next((line[len("Subject: ") :] for line in headers.splitlines() if line.startswith("Subject: ")), "")
    if not subject:
        raise RunguardError(f"{patch.name}: no Subject header; is it a git format-patch mbox?")
    trailers = tuple(_split_trailer(line) for line in trailer_lines.splitlines() if line)
    paragraphs = tuple(part.strip() for part in body.strip().split("\n\n") if part.strip())
    info = PatchInfo(patch, subject, trailers, paragraphs[:-1] if trailers else paragraphs)
    _check_trailers(info)
    return info


def _split_trailer(line: str) -> tuple[str, str]:
    name, _, value = line.partition(":")
    return name.strip(), value.strip()


def _check_trailers(info: PatchInfo) -> None:
    statuses = info.values("Upstream-Status")
    if len(statuses) != 1 or not UPSTREAM_STATUS.fullmatch(statuses[0]):
        raise RunguardError(
            f"{info.path.name}: needs one 'Upstream-Status: not forwarded | forwarded <URL> |"
            " applied upstream in <VERSION>' trailer"
        )
    for value in info.values("Upstream-Detect"):
        if len(value.split(" ", 1)) != 2:
            raise RunguardError(f"{info.path.name}: 'Upstream-Detect: {value}' needs a path and a fixed string")


@dataclass(frozen=True)
class FileChange:
    """One file a patch changes, with its added and deleted line counts; ``created`` when the patch adds it."""

    path: str
    added: int
    deleted: int
    created: bool


def file_changes(patch: Path) -> list[FileChange]:
    """The files ``patch`` changes, from ``git apply --numstat`` and ``--summary``.

    They run outside any repository (the temporary directory may lie inside one, so git may not look above it):
    inside a repository, git would leave out the paths outside the current directory.
    """
    with tempfile.TemporaryDirectory(prefix="runguard-numstat-") as scratch:
        outside = {"GIT_CEILING_DIRECTORIES": str(Path(scratch).parent)}
        numstat, summary = (
            run_git("apply", option, str(patch.resolve()), cwd=Path(scratch), env=outside).stdout
            for option in ("--numstat", "--summary")
        )
    created = {line.split()[-1] for line in summary.splitlines() if line.strip().startswith("create mode")}
    changes: list[FileChange] = []
    for line in numstat.splitlines():
        added, deleted, path = line.split("\t", 2)
        changes.append(FileChange(path, int(added.replace("-", "0")), int(deleted.replace("-", "0")), path in created))
    return changes
