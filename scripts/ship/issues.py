"""Issue drafts in upstream's bug template, from ``repro/<slug>.md`` and ``repro/<slug>.py``.

The prose comes from the markdown; the export adds the script verbatim, what it printed when the ``repro``
session ran it, the package and Python versions, and says so plainly when that session has not verified it.
"""

from __future__ import annotations

from scripts.series.repro import Reproduction
from scripts.validate.repro import ReproRecord

REPRO_COMMAND = "python3 run.py -s repro"


def _reproduction(repro: Reproduction, bases: list[str], record: ReproRecord | None) -> list[str]:
    runs = record.verified(repro.slug, repro.script_sha256(), bases) if record else []
    lines = [
        f"Runs as-is against the released package (`pip install agent-framework-core=={bases[-1]}`), stdlib only"
        " otherwise; it exits 1 when the bug reproduces and 0 when the behaviour is as expected.",
        "",
        "```python",
        repro.script.read_text().rstrip("\n"),
        "```",
        "",
    ]
    unpatched = [run for run in runs if run.variant == "unpatched"]
    if not unpatched:
        return [
            *lines,
            f"> **Not verified:** the `repro` session has not run this script on every base ({', '.join(bases)}),"
            f" or it did not reproduce there. Run `{REPRO_COMMAND}` before filing.",
        ]
    shown = next((run for run in unpatched if run.base == bases[-1]), unpatched[0])  # the base the install names
    return [
        *lines,
        f"Output with agent-framework-core {shown.base}:",
        "",
        "```text",
        shown.observed,
        shown.expected,
        "```",
        "",
        f"Checked: the script exits 1 with agent-framework-core {' and '.join(r.base for r in unpatched)} as"
        " released, and 0 with the proposed fix applied.",
    ]


def issue_draft(repro: Reproduction, bases: list[str], record: ReproRecord | None) -> str:
    """The issue draft: title line, then the sections of upstream's bug template in its order."""
    sections = repro.sections
    python = f"Python {record.python}" if record else f"not recorded (run `{REPRO_COMMAND}`)"
    parts = [
        f"# {repro.title}",
        "### Observed Behavior", sections["Observed"],
        "### Expected Behavior", sections["Expected"],
        "### Steps to Reproduce", sections["Steps to Reproduce"],
        "### Minimal Reproduction", "\n".join(_reproduction(repro, bases, record)),
        "### Error Messages and Stack Traces", sections["Error Messages"],
        "### Package Versions", f"agent-framework-core: {', '.join(bases)}",
        "### Python Version", python,
        "### Operating System", record.system if record else "not recorded",
        "### Regression", sections["Regression"],
        "### Additional Context", sections["Additional Context"],
    ]  # fmt: skip
    return "\n\n".join(parts) + "\n"
