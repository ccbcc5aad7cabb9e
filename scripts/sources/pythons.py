"""The interpreters the framework is validated on: every CPython from 3.10 to the newest one the machine has.

Candidates come from where users keep them, in this order: the interpreter running this code,
``$(pyenv root)/versions/3.N.*/bin/python``, uv's managed installs (``uv python dir``), then ``python3.N`` on
``PATH`` (last: on a pyenv machine ``PATH`` holds shims, which work only for ``pyenv global`` versions; uv's own
search stops at the first shim that fails). The first untried candidate of each ``X.Y`` not yet found is run
(``-I -c`` printing implementation and version, with a timeout); one that fails (a shim exits 127) or is not
CPython >= 3.10 is skipped and the next one of that ``X.Y`` is tried. Standard library only: the noxfile imports
it before any venv exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from scripts.series.errors import RunguardError

ALL_PYTHONS = "RUNGUARD_ALL_PYTHONS"  # set (not "0"): every Python found, not only the running one
OLDEST = (3, 10)
REQUIRED = ("3.10", "3.11", "3.12", "3.13")  # what upstream tests on; CI must have every one
PROBE = "import platform; print(platform.python_implementation(), platform.python_version())"
PROBE_TIMEOUT = 20.0
MINOR = re.compile(r"^3\.(\d+)$")
NAMED = re.compile(r"^python3\.(\d+)$")
UV_INSTALL = re.compile(r"^cpython-3\.(\d+)\.\d+-")  # uv's managed installs: cpython-3.12.1-linux-x86_64-gnu
PYENV_VERSION = re.compile(r"^3\.(\d+)\.\d+$")  # CPython builds; pypy-, miniconda- and virtualenv entries differ


@dataclass(frozen=True)
class Interpreter:
    """A working CPython: its full version, where it is and which source found it."""

    version: str
    path: Path
    source: str

    @property
    def minor(self) -> str:
        """``X.Y``, the name of its matrix cell."""
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class Candidate:
    """A path that may be an interpreter, the source that named it and the ``X.Y`` it claims to be."""

    path: Path
    source: str
    claims: str


@dataclass
class Discovery:
    """What discovery found: the interpreter of each ``X.Y`` and why other candidates were skipped."""

    found: dict[str, Interpreter] = field(default_factory=dict[str, Interpreter])
    skipped: list[str] = field(default_factory=list[str])

    def versions(self) -> list[str]:
        """The ``X.Y`` found, oldest first."""
        return sorted(self.found, key=lambda minor: tuple(int(part) for part in minor.split(".")))

    def missing(self, wanted: tuple[str, ...] = REQUIRED) -> list[str]:
        """The wanted ``X.Y`` not found."""
        return [minor for minor in wanted if minor not in self.found]

    def why_missing(self, minor: str) -> str:
        """One line: where ``minor`` was looked for, and the broken candidates that claimed to be it."""
        broken = [reason for reason in self.skipped if f"python{minor}" in reason or f"/{minor}." in reason]
        return f"Python {minor} not found on PATH, by uv or under pyenv's versions" + (
            f" ({'; '.join(broken)})" if broken else ""
        )

    def interpreter(self, minor: str) -> Interpreter:
        """The interpreter of ``X.Y``; a malformed, unsupported or missing version is a one-line error."""
        if not MINOR.match(minor) or (3, int(minor.split(".")[1])) < OLDEST:
            raise RunguardError(
                f"unknown Python {minor!r}: give X.Y, 3.10 or newer (found: {', '.join(self.versions())})"
            )
        if minor not in self.found:
            raise RunguardError(self.why_missing(minor))
        return self.found[minor]

    def chosen(self, requested: Sequence[str], every: bool) -> list[Interpreter]:
        """The interpreters a run measures: ``requested`` (``X.Y``), else every one found if ``every``, else this one.

        A bad requested version is the one-line error of :meth:`interpreter`, raised before any is returned.
        """
        if requested:
            return [self.interpreter(minor) for minor in requested]
        return [self.found[minor] for minor in self.versions()] if every else [self.interpreter(running_version())]


def all_pythons_asked() -> bool:
    """Whether every Python is asked for (``python3 run.py --all-pythons`` sets ``RUNGUARD_ALL_PYTHONS``)."""
    return os.environ.get(ALL_PYTHONS, "") not in ("", "0")


def python_list(values: Iterable[str]) -> list[str]:
    """The ``X.Y`` named by ``--python`` values, each one version or a comma list, in order and each once."""
    return list(dict.fromkeys(minor.strip() for value in values for minor in value.split(",")))


def running_version() -> str:
    """``X.Y`` of the interpreter running this code (the one that ran ``run.py``)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _supported(minor: int) -> bool:
    return (3, minor) >= OLDEST


def _path_candidates() -> Iterator[Candidate]:
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            paths = sorted(Path(directory or ".").iterdir())
        except OSError:
            continue
        for path in paths:
            named = NAMED.match(path.name)
            if named and _supported(int(named.group(1))):
                yield Candidate(path, "PATH", f"3.{named.group(1)}")


def _uv_candidates() -> Iterator[Candidate]:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    try:
        answer = subprocess.run(
            [uv, "python", "dir"], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    managed = Path(answer.stdout.strip()) if answer.returncode == 0 and answer.stdout.strip() else None
    for directory in sorted(managed.glob("cpython-3.*")) if managed and managed.is_dir() else []:
        match = UV_INSTALL.match(directory.name)
        if match and _supported(int(match.group(1))):
            yield Candidate(directory / "bin" / "python3", "uv", f"3.{match.group(1)}")


def pyenv_root() -> Path | None:
    """``$(pyenv root)``: from ``pyenv root``, else ``$PYENV_ROOT``, else ``~/.pyenv`` when it exists."""
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            answer = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False)
            if answer.returncode == 0 and answer.stdout.strip():
                return Path(answer.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    return root if root.is_dir() else None


def _pyenv_candidates() -> Iterator[Candidate]:
    root = pyenv_root()
    versions = sorted((root / "versions").iterdir()) if root and (root / "versions").is_dir() else []
    for directory in versions:
        match = PYENV_VERSION.match(directory.name)
        if match and _supported(int(match.group(1))):
            yield Candidate(directory / "bin" / "python", "pyenv", f"3.{match.group(1)}")


def candidates() -> list[Candidate]:
    """Every candidate, in the order they are preferred; the same file named twice is kept once."""
    running = Candidate(Path(sys.executable).resolve(), "running", running_version())
    listed = [running, *_pyenv_candidates(), *_uv_candidates(), *_path_candidates()]
    seen: set[Path] = set()
    unique: list[Candidate] = []
    for candidate in listed:
        if candidate.path not in seen:
            seen.add(candidate.path)
            unique.append(candidate)
    return unique


def probe(candidate: Candidate) -> Interpreter | str:
    """Run the candidate once: the interpreter, or why it is skipped (one line)."""
    try:
        answer = subprocess.run(
            [str(candidate.path), "-I", "-c", PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{candidate.path} ({candidate.source}) does not run: {type(error).__name__}"
    words = answer.stdout.split()
    if answer.returncode != 0 or len(words) != 2:
        return f"{candidate.path} ({candidate.source}) is broken: exit {answer.returncode}"
    implementation, version = words
    parts = version.split(".")
    if implementation != "CPython" or not parts[1].isdigit() or not _supported(int(parts[1])):
        return f"{candidate.path} ({candidate.source}) is {implementation} {version}, not CPython 3.10 or newer"
    return Interpreter(version, candidate.path.resolve(), candidate.source)


def discover(listed: list[Candidate] | None = None) -> Discovery:
    """Probe the candidates (only those whose ``X.Y`` no earlier working one has) and pick one per ``X.Y``."""
    listed = candidates() if listed is None else listed
    discovery = Discovery()
    pending = listed
    while pending:
        wanted: dict[str, Candidate] = {}
        for candidate in pending:  # the first untried candidate of every X.Y still open, probed side by side
            if candidate.claims not in discovery.found:
                wanted.setdefault(candidate.claims, candidate)
        batch = list(wanted.values())
        if not batch:
            break
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(probe, batch))
        for result in results:
            if isinstance(result, str):
                discovery.skipped.append(result)
            else:
                discovery.found.setdefault(result.minor, result)
        pending = [candidate for candidate in pending if candidate not in batch]
    return discovery


def link_directory(discovery: Discovery, directory: Path) -> Path:
    """A directory of ``pythonX.Y`` links to the found interpreters, to put first on ``PATH`` for nox and uv.

    nox resolves a session's ``X.Y`` by searching ``PATH`` (and uv's and pyenv's interpreters); a pyenv shim that
    exits 127 makes it give up. With these links first it finds the interpreter discovery chose.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for minor, interpreter in discovery.found.items():
        link = directory / f"python{minor}"
        if link.is_symlink() and link.readlink() == interpreter.path:
            continue
        scratch = directory / f".python{minor}.{os.getpid()}"
        scratch.unlink(missing_ok=True)
        scratch.symlink_to(interpreter.path)
        scratch.replace(link)
    return directory
