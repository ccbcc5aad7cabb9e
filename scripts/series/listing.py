"""Read ``patches/series`` (quilt format) and ``patches/bases``, rejecting inconsistent entries."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from scripts.series.errors import RunguardError
from scripts.series.locations import patches_dir
from scripts.series.patch import Patch, read_patch


@dataclass(frozen=True)
class Series:
    """The patches of a series, in apply order, each parsed once."""

    directory: Path
    patches: tuple[Patch, ...]

    def digest(self) -> str:
        """A hash of the patch names and contents: it changes exactly when the series does."""
        sha = hashlib.sha256()
        for patch in self.patches:
            sha.update(patch.name.encode() + b"\0" + patch.path.read_bytes() + b"\0")
        return sha.hexdigest()

    def short_digest(self) -> str:
        """The first 12 hex digits of :meth:`digest`, as branch names and wheel versions show it."""
        return self.digest()[:12]

    @property
    def repro_dir(self) -> Path:
        """Where the issue reproductions live: ``repro/`` beside the series directory."""
        return self.directory.parent / "repro"

    @property
    def exportable(self) -> tuple[Patch, ...]:
        """The patches sent upstream as PRs: every one but the backports."""
        return tuple(patch for patch in self.patches if not patch.is_backport)

    def dependencies(self, patch: Patch) -> list[Patch]:
        """The earlier patches ``patch``'s ``Depends-On`` trailers name, by file name or by subject."""
        earlier = self.patches[: self.patches.index(patch)]
        found: list[Patch] = []
        for value in patch.depends_on:
            first = value.split()[0]
            match = next(
                (one for one in earlier if one.name == first or one.subject in {value, f"Python: {value}"}), None
            )
            if match is None:
                raise RunguardError(
                    f"{patch.name}: 'Depends-On: {value}' names no earlier patch of the series (file name or subject)"
                )
            found.append(match)
        return found

    def get(self, name: str) -> Patch | None:
        """The patch named ``name`` (its file name), or None."""
        return next((patch for patch in self.patches if patch.name == name), None)


def read_list(path: Path) -> list[str]:
    """Return the entries of a one-entry-per-line file with ``#`` comments; duplicates are an error."""
    if not path.is_file():
        raise RunguardError(f"{path} does not exist")
    entries: list[str] = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if len(line.split()) != 1:
            raise RunguardError(f"{path}:{number}: expected one name per line, got {line!r}")
        if line in entries:
            raise RunguardError(f"{path}:{number}: duplicate entry {line!r}")
        entries.append(line)
    return entries


def read_series(directory: Path) -> Series:
    """Read ``directory/series``, check it against the ``*.patch`` files present and parse every patch."""
    names = read_list(directory / "series")
    missing = [name for name in names if not (directory / name).is_file()]
    unlisted = sorted(p.name for p in directory.glob("*.patch") if p.name not in names)
    problems = [f"series lists {', '.join(missing)}, which {_do(missing)} not exist in {directory}"] if missing else []
    if unlisted:
        problems.append(f"{', '.join(unlisted)} {_be(unlisted)} in {directory} but not listed in the series")
    if problems:
        raise RunguardError("; ".join(problems))
    return Series(directory, tuple(read_patch(directory / name) for name in names))


def _do(names: list[str]) -> str:
    return "does" if len(names) == 1 else "do"


def _be(names: list[str]) -> str:
    return "is" if len(names) == 1 else "are"


def read_bases(directory: Path) -> list[str]:
    """The released versions listed in ``directory/bases``."""
    bases = read_list(directory / "bases")
    if not bases:
        raise RunguardError(f"{directory / 'bases'} lists no base version")
    return bases


def current_series() -> Series:
    """The series in the patches directory (``RUNGUARD_PATCHES``, else ``patches/``)."""
    return read_series(patches_dir())


def current_bases(base: str | None = None) -> list[str]:
    """``[base]`` when one is given, else every base listed in the patches directory."""
    return [base] if base else read_bases(patches_dir())
