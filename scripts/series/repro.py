"""An issue reproduction: ``repro/<slug>.py`` (runs as-is against the released package) and ``repro/<slug>.md``.

The markdown is the issue draft's prose in upstream's bug template: a ``# Python: <title>`` line, then the
sections in :data:`SECTIONS`. The export adds the script, the package and Python versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.series.common import markdown_sections, sha256_of
from scripts.series.errors import RunguardError

SECTIONS = ("Observed", "Expected", "Steps to Reproduce", "Error Messages", "Regression", "Additional Context")
SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Reproduction:
    """One issue draft's sources: the title, the prose sections and the script."""

    slug: str
    title: str
    sections: dict[str, str]
    script: Path

    def script_sha256(self) -> str:
        """The hex sha256 of the script: a verification counts only for the script it ran."""
        return sha256_of(self.script)


def reproduction_scripts(directory: Path) -> list[Path]:
    """Every ``<slug>.py`` in ``directory``, sorted; none when it does not exist."""
    return sorted(directory.glob("*.py")) if directory.is_dir() else []


def read_reproduction(directory: Path, slug: str) -> Reproduction:
    """Read ``directory/<slug>.md`` and check it has its title, every section and its script."""
    if not SLUG.fullmatch(slug):
        raise RunguardError(f"issue draft slug {slug!r}: use lowercase letters, digits and '-'")
    markdown, script = directory / f"{slug}.md", directory / f"{slug}.py"
    missing = [path.name for path in (markdown, script) if not path.is_file()]
    if missing:
        raise RunguardError(f"issue draft {slug}: {' and '.join(missing)} missing in {directory}")
    text = markdown.read_text()
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if not first.startswith("# Python: "):
        raise RunguardError(f"{markdown.name}: the first line must be the title, '# Python: ...'")
    sections = markdown_sections(text)
    absent = [name for name in SECTIONS if not sections.get(name)]
    if absent:
        raise RunguardError(f"{markdown.name}: no (or an empty) '## {absent[0]}' section")
    return Reproduction(slug, first.removeprefix("# "), sections, script)
