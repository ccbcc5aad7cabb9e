"""Small helpers every layer shares: tables, markdown sections, test names, file hashes, venvs, uv, side by side."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from scripts.series.errors import RunguardError

Item = TypeVar("Item")
Result = TypeVar("Result")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table's lines; cells are used as they are (escape ``|`` before)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


TERMINAL_COLUMNS = 120  # the width every report the sessions print keeps to
# Set for a nox process whose one-time reports (the apply tables, a missing Python) another process prints: run.py's
# main job runs two side by side.
REPORTED_ELSEWHERE = "RUNGUARD_REPORTED_ELSEWHERE"
# A directory for the JSON reports (nox's --report) of the main job's nox processes, one file each, when set.
NOX_REPORTS = "RUNGUARD_NOX_REPORTS"


def aligned_table(rows: Sequence[Sequence[str]], width: int = TERMINAL_COLUMNS) -> list[str]:
    """Plain-text rows with every column but the last padded to its widest cell; trailing spaces dropped.

    A last cell that would end past ``width`` is wrapped onto lines of its own, indented to where it starts.
    """
    return [line for row in aligned_rows(rows, width) for line in row]


def aligned_rows(rows: Sequence[Sequence[str]], width: int = TERMINAL_COLUMNS) -> list[list[str]]:
    """The lines of :func:`aligned_table`, grouped by row."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)] if rows else []
    start = sum(widths) + 2 * len(widths)
    grouped: list[list[str]] = []
    for row in rows:
        cells = [cell.ljust(column) for cell, column in zip(row, widths, strict=False)]
        last = wrapped(row[-1], width - start) if start < width - 20 else [row[-1]]
        grouped.append(["  ".join([*cells, last[0]]).rstrip(), *(" " * start + more for more in last[1:])])
    return grouped


def wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters (a longer word stays whole), each but the first indented."""
    lines = textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return lines or [""]


SECTION_HEADING = re.compile(r"^## (?P<heading>.+?)[ \t]*$", re.MULTILINE)


def markdown_sections(text: str) -> dict[str, str]:
    """The ``## heading`` sections of a markdown text: heading to stripped text (text before the first is left out)."""
    parts = SECTION_HEADING.split(text)
    return {heading: body.strip() for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def short_test_name(test: str) -> str:
    """``tests.workflow.test_x::test_y`` or ``tests/workflow/test_x.py::test_y`` as ``test_x::test_y``."""
    module, _, function = test.partition("::")
    if not function:
        return module
    return f"{re.split(r'[./]', module.removesuffix('.py'))[-1]}::{function}"


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def venv_python(venv: Path) -> Path:
    """The interpreter of the virtual environment at ``venv``."""
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def uv_program() -> str:
    """The uv next to the running interpreter (run.py's tools venv, which runs nox), else the one on PATH."""
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        raise RunguardError("uv is not installed; run this through `python3 run.py`, which installs it")
    return found


def side_by_side(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """``function`` of each item, in order, called in threads as many at once as there are CPUs.

    For calls that wait on a process of their own (a checker, a script): the processes then share the cores.
    """
    with ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 1) or 1) as pool:
        return list(pool.map(function, items))
