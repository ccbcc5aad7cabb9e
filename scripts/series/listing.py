"""Read ``patches/series`` (quilt format) and ``patches/bases``, rejecting inconsistent entries."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from scripts.series.errors import RunguardError


@dataclass(frozen=True)
class Series:
    """The patch files of a series, in apply order."""

    directory: Path
    patches: tuple[Path, ...]

    def digest(self) -> str:
        """A hash of the patch names and contents: it changes exactly when the series does."""
        sha = hashlib.sha256()
        for patch in self.patches:
            sha.update(patch.name.encode() + b"\0" + patch.read_bytes() + b"\0")
        return sha.hexdigest()

    def short_digest(self) -> str:
        """The first 12 hex digits of :meth:`digest`, as branch names and wheel versions show it."""
        return self.digest()[:12]


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
    """Read ``directory/series`` and check it against the ``*.patch`` files present."""
    names = read_list(directory / "series")
    missing = [name for name in names if not (directory / name).is_file()]
    if missing:
        raise RunguardError(f"series lists {missing[0]}, which does not exist in {directory}")
    unlisted = sorted(p.name for p in directory.glob("*.patch") if p.name not in names)
    if unlisted:
        raise RunguardError(f"{unlisted[0]} is in {directory} but not listed in the series")
    return Series(directory, tuple(directory / name for name in names))


def read_bases(directory: Path) -> list[str]:
    """The released versions listed in ``directory/bases``."""
    bases = read_list(directory / "bases")
    if not bases:
        raise RunguardError(f"{directory / 'bases'} lists no base version")
    return bases
