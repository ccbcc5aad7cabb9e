"""mkdocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

- A line ``<!-- data: NAME -->`` becomes the tables of ``docs/data/NAME.json`` (see :mod:`scripts.site.tables`).
- A line ``<!-- patch: FILE.patch -->`` becomes the heading and facts of that patch's guide entry.
- A line ``<!-- review: FILE.patch -->`` becomes the heading of that PR's section in the review record.
- The pinned mermaid bundle named by ``RUNGUARD_MERMAID_JS`` is served from the site itself.

Run it through ``python3 run.py -s docs``, which sets ``RUNGUARD_MERMAID_JS`` and the import path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from scripts.series.errors import RunguardError
from scripts.series.listing import current_series
from scripts.series.locations import docs_data_dir
from scripts.site.guide import render_entry, render_review_heading
from scripts.site.tables import render_dataset

MARKER = re.compile(r"^<!-- (?P<kind>data|patch|review): (?P<name>\S+) -->$", re.MULTILINE)
MERMAID_ENV = "RUNGUARD_MERMAID_JS"
MERMAID_URI = "javascripts/mermaid.min.js"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the mermaid bundle to the site."""
    bundle = os.environ.get(MERMAID_ENV, "")
    if not Path(bundle).is_file():
        raise PluginError(f"{MERMAID_ENV} must name mermaid.min.js; build with `python3 run.py -s docs`")
    files.append(File.generated(config, MERMAID_URI, abs_src_path=bundle))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Replace the data and patch markers of a page (the series is read only for a page that has some)."""
    if not MARKER.search(markdown):
        return markdown
    try:
        return _expand_markers(markdown)
    except RunguardError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from error


def _expand_markers(markdown: str) -> str:
    series = current_series()
    placed = {patch.name: (position, patch) for position, patch in enumerate(series.patches, start=1)}

    def expand(marker: re.Match[str]) -> str:
        name = marker["name"]
        if marker["kind"] == "data":
            return render_dataset(name, docs_data_dir(), series.short_digest())
        if name not in placed:
            raise RunguardError(f"{name} is not in the series")
        position, patch = placed[name]
        return render_entry(patch, position) if marker["kind"] == "patch" else render_review_heading(patch, position)

    return MARKER.sub(expand, markdown)
