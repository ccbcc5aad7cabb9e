"""Every mermaid diagram of the built site, parsed by the pinned mermaid's own parser (in node, no browser).

A diagram mermaid cannot parse is drawn in a browser as mermaid's "Syntax error in text" picture; this finds it
while the site is built (``python3 run.py -s docs``), where the browser check (``-s browser``) finds it later.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import cast

from scripts.series.errors import RunguardError

DIAGRAM_CLASS = "runguard-diagram"
PARSER = Path(__file__).with_name("mermaid_parse.js")
UNEXPECTED = re.compile(r"\bgot '(?P<token>[^']*)'")


@dataclass(frozen=True)
class Diagram:
    """One diagram: the page it is on (relative to the site), its number on that page (from 1) and its source."""

    page: str
    number: int
    source: str


class _DiagramSources(HTMLParser):
    """Collects the text of each diagram container (``<div class="runguard-diagram">``) of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.sources: list[str] = []
        self._depth = 0  # nesting depth inside the current container, 0 outside one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth:
            self._depth += 1
        elif DIAGRAM_CLASS in (dict(attrs).get("class") or "").split():
            self._depth = 1
            self.sources.append("")

    def handle_endtag(self, tag: str) -> None:
        self._depth = max(self._depth - 1, 0)

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.sources[-1] += data

    def handle_entityref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&#{name};"))


def site_diagrams(site: Path) -> list[Diagram]:
    """Every diagram of every page of ``site``, in page order."""
    diagrams: list[Diagram] = []
    for page in sorted(site.rglob("*.html")):
        found = _DiagramSources()
        found.feed(page.read_text())
        name = page.relative_to(site).as_posix()
        diagrams += [Diagram(name, number, source) for number, source in enumerate(found.sources, 1)]
    return diagrams


def parse_errors(diagrams: Sequence[Diagram], bundle: Path, node: Sequence[str]) -> dict[Diagram, str]:
    """Mermaid's parse error for each diagram of ``diagrams`` that does not parse, by ``bundle`` (mermaid.min.js).

    ``node`` is the command that runs node, e.g. ``["node"]``; all diagrams are parsed in one node process.
    """
    command = [*node, str(PARSER), str(bundle)]
    sources = json.dumps([diagram.source for diagram in diagrams])
    done = subprocess.run(command, input=sources, capture_output=True, text=True, check=False)
    try:
        errors: object = json.loads(done.stdout) if done.returncode == 0 else None
    except json.JSONDecodeError:
        errors = None
    if not isinstance(errors, list) or len(cast("list[object]", errors)) != len(diagrams):
        raise RunguardError(f"the mermaid parser did not run (exit code {done.returncode}): {done.stderr[-300:]}")
    found = cast("list[object]", errors)
    return {diagram: str(error) for diagram, error in zip(diagrams, found, strict=True) if error}


def describe(diagram: Diagram, error: str) -> str:
    """One line: the page, the diagram's number, where mermaid stopped and at what (not the tokens it expected)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    near = next((line for line in lines if line.startswith("...")), None)
    unexpected = UNEXPECTED.search(error)
    parts = [
        lines[0].rstrip(":") if lines else "does not parse",
        *([f"near {near!r}"] if near else []),
        *([f"unexpected {unexpected['token']}"] if unexpected else []),
    ]
    return f"{diagram.page}, diagram {diagram.number}: {', '.join(parts)}"
