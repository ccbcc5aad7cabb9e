"""Check the built site in headless chromium: every mermaid diagram renders as SVG, none as a syntax error,
and no text is drawn wider than its box (a note or an actor), which the reader would see cut off.

Usage: ``python -m scripts.site.browser_check SITE_DIR [--screenshots DIR]``. Needs Debian's chromium
(``apt-get install -y chromium``). The browser may not resolve any host name, so a page that needed a CDN would
fail here. Prints one line per diagram page and a closing ``N passed, N failed`` line.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from scripts.series.errors import ArgumentParser, RunguardError, entry_point

DIAGRAM_CLASS = "runguard-diagram"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # chromium refuses to start as root otherwise
    "--disable-gpu",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: no host name resolves
    "--virtual-time-budget=15000",  # let the page's scripts finish before the DOM is read
    "--window-size=1280,1800",
)


class _RenderedDiagrams(HTMLParser):
    """Counts diagram containers, those mermaid processed, the SVG drawings in them and mermaid's error drawings.

    ``message`` is mermaid's error and ``overflow`` the texts cut off by their box, as ``diagrams.js`` left them.
    """

    def __init__(self) -> None:
        super().__init__()
        self.containers = 0
        self.processed = 0
        self.drawings = 0
        self.errors = 0
        self.message = ""
        self.overflow = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "body":
            self.message = attributes.get("data-diagram-error") or ""
            self.overflow = attributes.get("data-diagram-overflow") or ""
        if DIAGRAM_CLASS in (attributes.get("class") or "").split():
            self.containers += 1
            self.processed += attributes.get("data-processed") == "true"
        if tag == "svg" and (attributes.get("id") or "").startswith("mermaid-"):
            role = attributes.get("aria-roledescription")
            self.errors += role == "error"
            self.drawings += role != "error"


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RunguardError("chromium not found; install it with `apt-get update && apt-get install -y chromium`")
    return found


def check_page(chromium: str, page: Path, screenshot: Path | None) -> str:
    """An empty string when every diagram of ``page`` rendered, else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="runguard-chromium-") as profile:
        flags = [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        url = page.resolve().as_uri()
        dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, check=False)
        if screenshot is not None:
            subprocess.run([chromium, *flags, f"--screenshot={screenshot}", url], capture_output=True, check=False)
    found = _RenderedDiagrams()
    found.feed(dom.stdout)
    if dom.returncode != 0 or not found.containers:
        return f"chromium exit code {dom.returncode}, {found.containers} diagram(s) in the DOM"
    if found.errors or "Syntax error" in dom.stdout:
        return f"{found.errors} mermaid error drawing(s): {' '.join(found.message.split())}"
    if found.processed != found.containers or found.drawings != found.containers:
        return f"{found.drawings} SVG drawing(s) for {found.containers} diagram(s), {found.processed} processed"
    if found.overflow:
        return f"text wider than its box, cut off: {found.overflow}"
    return ""


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Check every page of the site that has a diagram; non-zero exit when one did not render."""
    parser = ArgumentParser(prog="python -m scripts.site.browser_check", description=__doc__)
    parser.add_argument("site", type=Path, help="the built site directory")
    parser.add_argument("--screenshots", type=Path, help="save a PNG of each diagram page here")
    arguments = parser.parse_args(argv)
    chromium = _chromium()
    pages = sorted(page for page in arguments.site.rglob("*.html") if DIAGRAM_CLASS in page.read_text())
    if arguments.screenshots:
        arguments.screenshots.mkdir(parents=True, exist_ok=True)
    failed = 0
    for page in pages:
        name = page.relative_to(arguments.site)
        shot = (
            arguments.screenshots / f"{name.with_suffix('').as_posix().replace('/', '-')}.png"
            if arguments.screenshots
            else None
        )
        problem = check_page(chromium, page, shot)
        failed += bool(problem)
        print(f"{'FAIL' if problem else 'ok'}  {name}{': ' + problem if problem else ''}")
    print(f"{len(pages) - failed} passed, {failed} failed")
    return 1 if failed or not pages else 0


if __name__ == "__main__":
    sys.exit(main())
