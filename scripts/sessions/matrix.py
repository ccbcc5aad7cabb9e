"""The Python matrix: the sessions that run framework code are parametrized by every CPython found (3.10+).

``nox -s tests`` runs ``tests-3.10`` ... ``tests-3.13``; ``nox -p 3.12`` or ``-- --python 3.12`` narrows that. The
default run (``python3 run.py``) runs them on the running interpreter only; ``python3 run.py --all-pythons`` (which
sets ``RUNGUARD_ALL_PYTHONS``) on every one. A version that is missing is reported once and its cells skipped; in
CI (``CI`` set, as CI services do and ``.ci/run`` does) a missing 3.10-3.13 fails the run before any session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from typing import Protocol

import nox

from scripts.series.common import REPORTED_ELSEWHERE
from scripts.series.errors import RunguardError, error_line
from scripts.series.locations import cache_dir
from scripts.sources.pythons import (
    Discovery,
    all_pythons_asked,
    discover,
    link_directory,
    python_list,
    running_version,
)


class SessionDeclaration(Protocol):
    """What the matrix reads of a declared nox session (``nox.registry.get()``'s values)."""

    @property
    def python(self) -> object:
        """The session's Python: a list when it is parametrized."""
        ...

    @property
    def default(self) -> bool:
        """Whether ``nox`` alone runs it."""
        ...


def in_ci() -> bool:
    """Whether this is a CI run, by the ``CI`` convention of CI services (and nox's own)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def requested_pythons(argv: Sequence[str]) -> list[str] | None:
    """The ``X.Y`` of every ``-- --python X.Y`` (or ``--python=X.Y``, or a comma list) in nox's command line, if any."""
    posargs = list(argv[list(argv).index("--") + 1 :]) if "--" in argv else []
    values: list[str] = []
    for index, word in enumerate(posargs):
        if word.startswith("--python="):
            values.append(word.partition("=")[2])
        elif word == "--python":
            values.append(posargs[index + 1] if index + 1 < len(posargs) else "")
    return python_list(values) if values else None


def check(discovery: Discovery, requested: Sequence[str] | None, ci: bool) -> list[str]:
    """The lines to report about the matrix; raises a RunguardError when it cannot run as asked."""
    for minor in requested or ():
        discovery.interpreter(minor)  # unknown, malformed or not found here: the one-line error
    missing = discovery.missing()
    if missing and ci:
        raise RunguardError(
            "CI needs every Python from 3.10 to 3.13: " + "; ".join(map(discovery.why_missing, missing))
        )
    return [f"runguard: {discovery.why_missing(minor)}: its sessions are skipped" for minor in missing]


def session_pythons(argv: Sequence[str] = tuple(sys.argv)) -> list[str]:
    """Discover the matrix, report what is missing once, and put the chosen interpreters first on ``PATH``.

    Bad input (an unknown ``--python``, a missing Python in CI) prints one ``runguard: error:`` line and exits
    before any session runs or anything is written.
    """
    discovery = discover()
    try:
        notes = check(discovery, requested_pythons(argv), in_ci())
    except RunguardError as error:
        print(error_line(error), file=sys.stderr)  # noqa: T201 (the one line is the interface)
        raise SystemExit(2) from None
    if not os.environ.get(REPORTED_ELSEWHERE):  # the other process of run.py's main job prints them
        for note in notes:
            print(note, file=sys.stderr)  # noqa: T201
    links = link_directory(discovery, cache_dir() / "pythons")
    os.environ["PATH"] = f"{links}{os.pathsep}{os.environ.get('PATH', '')}"
    return discovery.versions()


def default_sessions(declared: Mapping[str, SessionDeclaration]) -> list[str]:
    """The sessions declared ``default=True``; the parametrized ones on the running Python unless all are asked for."""
    every = all_pythons_asked()
    running = running_version()
    return [
        name if every or not isinstance(declaration.python, list) else f"{name}-{running}"
        for name, declaration in declared.items()
        if declaration.default
    ]


def cell(function: Callable[[nox.Session], None]) -> Callable[[nox.Session], None]:
    """A session of the matrix: skipped when ``-- --python X.Y`` names other Pythons than its own."""

    @wraps(function)
    def narrowed(session: nox.Session) -> None:
        requested = requested_pythons(["--", *session.posargs])
        if requested is not None and session.python not in requested:
            session.skip(f"-- --python {','.join(requested)} leaves out Python {session.python}")
        function(session)

    return narrowed
