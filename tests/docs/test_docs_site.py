"""Build the documentation site as `python3 run.py -s docs` does and check what a reader gets.

Needs mkdocs and the environment the docs session sets (``RUNGUARD_MERMAID_JS``, ``PYTHONPATH``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import cast

from mkdocs.utils.meta import get_data
from mkdocs.utils.yaml import yaml_load  # pyright: ignore[reportUnknownVariableType] (its IO argument)

from scripts.series.listing import current_series
from scripts.series.locations import REPO_ROOT

DOCS = REPO_ROOT / "docs"
# Every known member of the bug class (issues 3, 4 and 12, and those found while hunting): (family, member).
MEMBERS = (
    {("graph", member) for member in ("1", "2", "3", "4", "4b", "5", "6", "7", "8", "9", "10")}
    | {("functional", member) for member in ("1", "2", "3", "4", "5")}
    | {("stream", member) for member in ("1", "2")}
)
# (tag, attribute) pairs that make a browser fetch something; <a href> is a link, not an asset.
ASSET_ATTRIBUTES = {
    ("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("source", "src"),
    ("source", "srcset"), ("iframe", "src"), ("video", "src"), ("audio", "src"), ("object", "data"),
    ("image", "href"), ("use", "href"),
}  # fmt: skip
REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_REMOTE = re.compile(r"url\(\s*['\"]?\s*(https?:)?//|@import\s+['\"]?(https?:)?//", re.IGNORECASE)


def _nav_pages(items: object) -> Iterator[str]:
    """The markdown files of an mkdocs nav, at any depth."""
    if isinstance(items, str):
        yield items
    elif isinstance(items, list):
        for item in cast("list[object]", items):
            yield from _nav_pages(item)
    elif isinstance(items, dict):
        for value in cast("dict[str, object]", items).values():
            yield from _nav_pages(value)


def _nav() -> list[str]:
    return list(_nav_pages(yaml_load((REPO_ROOT / "mkdocs.yml").read_text())["nav"]))


def _html(page: str) -> str:
    return str(Path(page).with_suffix(".html"))


def _member_pages() -> dict[tuple[str, str], str]:
    """``(family, member)`` from each member page's front matter, mapped to its path under docs/."""
    pages: dict[tuple[str, str], str] = {}
    for path in sorted((DOCS / "members").glob("*.md")):
        meta = get_data(path.read_text())[1]
        if "family" in meta:
            pages[str(meta["family"]), str(meta["member"])] = str(path.relative_to(DOCS))
    return pages


def test_every_nav_page_exists_and_is_built(site: Path) -> None:
    pages = _nav()
    assert pages
    for page in pages:
        assert (DOCS / page).is_file(), f"nav lists {page}, which does not exist"
        assert (site / _html(page)).is_file(), f"{page} was not built"


def test_every_patch_in_the_series_has_a_guide_entry(site: Path) -> None:
    guide = (site / "patches.html").read_text()
    for patch in current_series().patches:
        assert f'id="{patch.stem}"' in guide, f"the patch guide has no entry for {patch.name}"


def test_every_exported_pr_has_a_section_in_the_review_record(site: Path) -> None:
    record = (site / "validation" / "reviews.html").read_text()
    for patch in current_series().exportable:
        assert f'id="review-{patch.stem}"' in record, f"the review record has no section for {patch.name}"


def test_every_member_of_the_bug_class_has_a_page_in_the_nav() -> None:
    pages = _member_pages()
    assert set(pages) >= MEMBERS, f"no page for {sorted(MEMBERS - set(pages))}"
    nav = set(_nav())
    assert set(pages.values()) <= nav, f"member pages missing from the nav: {set(pages.values()) - nav}"


def test_every_regression_test_of_the_series_is_named_on_a_member_page() -> None:
    text = "\n".join((DOCS / page).read_text() for page in _member_pages().values())
    for patch in current_series().patches:
        for test in patch.test_functions:
            assert test in text, f"{test} ({patch.name}) is on no member page"


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if (tag, name) in ASSET_ATTRIBUTES and value and REMOTE.match(value):
                self.remote.append(f"<{tag} {name}={value}>")
            if name == "style" and value and CSS_REMOTE.search(value):
                self.remote.append(f"<{tag} style={value}>")


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assets = _Assets()
        assets.feed(text)
        assert not assets.remote, f"{page.relative_to(site)} loads {assets.remote}"
        assert not CSS_REMOTE.search(text), f"{page.relative_to(site)} has a remote url() or @import"
    for stylesheet in site.rglob("*.css"):
        assert not CSS_REMOTE.search(stylesheet.read_text()), f"{stylesheet.relative_to(site)} loads a remote asset"


def test_diagram_pages_serve_mermaid_from_the_site(site: Path) -> None:
    diagram_pages = [page for page in site.rglob("*.html") if 'class="runguard-diagram"' in page.read_text()]
    assert len(diagram_pages) >= len(MEMBERS)
    assert (site / "javascripts" / "mermaid.min.js").stat().st_size > 100_000
    for page in diagram_pages:
        assert re.search(r'<script src="(\.\./)*javascripts/mermaid\.min\.js"', page.read_text()), page


def test_every_data_page_shows_a_table_or_says_how_to_produce_it(site: Path) -> None:
    for page in sorted((DOCS / "validation").glob("*.md")):
        marker = re.search(r"^<!-- data: (\w+) -->$", page.read_text(), re.MULTILINE)
        if marker:
            built = (site / _html(str(page.relative_to(DOCS)))).read_text()
            produced = "<table>" in built and "Produced <strong>" in built
            assert produced or f"python3 run.py -s {marker[1]}" in built, page.name


def test_every_scenario_test_named_on_a_member_page_exists() -> None:
    text = "\n".join((DOCS / page).read_text() for page in _member_pages().values())
    named = set(re.findall(r"(tests/scenarios/\w+\.py)::(\w+)", text))
    assert named
    for path, name in sorted(named):
        assert re.search(rf"def {name}\(", (REPO_ROOT / path).read_text()), f"{path}::{name} does not exist"
