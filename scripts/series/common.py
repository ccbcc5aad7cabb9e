"""Small helpers every layer shares: tables, markdown sections, short test names, file hashes, a venv's interpreter."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table's lines; cells are used as they are (escape ``|`` before)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def aligned_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Plain-text rows with every column but the last padded to its widest cell; trailing spaces dropped."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)] if rows else []
    return [
        ("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])).rstrip()
        for row in rows
    ]


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
