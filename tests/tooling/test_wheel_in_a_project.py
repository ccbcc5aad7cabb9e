"""The patched wheel in a project that depends on the ``agent-framework`` meta-package, as README shows it.

The meta-package pins ``agent-framework-core[all]==V``; the patched wheel's local version ``V+runguard.<hash>``
satisfies that pin. A local package index serves a stand-in meta-package and an unpatched core ``V``; pip and uv
must pick the patched wheel instead, the way each README recipe asks, without the network.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts.series.common import venv_python
from scripts.series.listing import current_bases, current_series
from scripts.ship.wheel import local_version
from tests.tooling.index_server import Index, serve_index

BASE = current_bases()[0]
PATCHED = local_version(BASE, current_series())


def make_wheel(name: str, version: str, requires: tuple[str, ...] = (), extras: tuple[str, ...] = ()) -> bytes:
    """A pure-Python wheel with only metadata (and a module for the core), with a valid RECORD."""
    dist = f"{name.replace('-', '_')}-{version}"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Provides-Extra: {extra}" for extra in extras] + [f"Requires-Dist: {req}" for req in requires]
    files = {
        f"{dist}.dist-info/METADATA": "\n".join(metadata) + "\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if name == "agent-framework-core":
        files["agent_framework/__init__.py"] = f'__version__ = "{version}"\n'
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return buffer.getvalue()


def wheel_name(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


@dataclass
class Project:
    """A project directory with the patched wheel in ``wheels/``, next to a running index and a clean env."""

    root: Path
    wheel: Path
    index: Index
    env: dict[str, str]

    @property
    def index_url(self) -> str:
        return f"{self.index.url}/pep503/"


CLEAN_ENV = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
             "UV_NO_CONFIG": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Generator[Project, None, None]:
    core, meta = "agent-framework-core", "agent-framework"
    projects = {
        meta: {wheel_name(meta, BASE): make_wheel(meta, BASE, (f"{core}[all]=={BASE}",))},
        core: {wheel_name(core, BASE): make_wheel(core, BASE, extras=("all",))},
    }
    wheel = tmp_path / "app" / "wheels" / wheel_name(core, PATCHED)
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(make_wheel(core, PATCHED, extras=("all",)))
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "UV_"))}
    env.update(CLEAN_ENV, UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    with serve_index(Index([], projects)) as index:
        yield Project(wheel.parent.parent, wheel, index, env)


def pip_install(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """``pip install ARGS`` in the project, into an empty environment (a dry run with a report), from the index."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-cache-dir", "--quiet",
               "--index-url", project.index_url, "--report", "report.json", *args]  # fmt: skip
    return subprocess.run(command, check=False, cwd=project.root, env=project.env, capture_output=True, text=True)


def pip_resolves(project: Project, *args: str) -> dict[str, str]:
    """What ``pip install ARGS`` in the project installs: name to version."""
    installed = pip_install(project, *args)
    assert installed.returncode == 0, installed.stderr
    report = project.root / "report.json"
    installs = json.loads(report.read_text())["install"]
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in installs}


EXPECTED = {"agent-framework": BASE, "agent-framework-core": PATCHED}


def test_pip_with_the_wheel_file_next_to_the_meta_package(project: Project) -> None:
    assert pip_resolves(project, f"agent-framework=={BASE}", f"./wheels/{project.wheel.name}") == EXPECTED
    assert wheel_name("agent-framework-core", BASE) not in project.index.served


def test_pip_with_a_requirements_file(project: Project) -> None:
    lines = [f"agent-framework=={BASE}", f"agent-framework-core @ {project.wheel.as_uri()}"]
    (project.root / "requirements.txt").write_text("\n".join(lines) + "\n")
    assert pip_resolves(project, "-r", "requirements.txt") == EXPECTED


def test_pip_with_a_constraints_file_and_find_links(project: Project) -> None:
    (project.root / "requirements.txt").write_text(f"agent-framework=={BASE}\n")
    (project.root / "constraints.txt").write_text(f"agent-framework-core=={PATCHED}\n")
    args = ("-r", "requirements.txt", "-c", "constraints.txt", "--find-links", "wheels")
    assert pip_resolves(project, *args) == EXPECTED


def test_a_wheel_of_another_base_does_not_satisfy_the_pin(project: Project) -> None:
    other = project.wheel.with_name(wheel_name("agent-framework-core", f"0.0.1+runguard.{PATCHED.split('.')[-1]}"))
    other.write_bytes(make_wheel("agent-framework-core", other.name.split("-")[1], extras=("all",)))
    refused = pip_install(project, f"agent-framework=={BASE}", f"./wheels/{other.name}")
    assert refused.returncode != 0
    assert "agent-framework-core 0.0.1+runguard" in refused.stderr
    assert f"agent-framework=={BASE} because these package versions have conflicting dependencies" in refused.stderr


def test_uv_project_with_tool_uv_sources(project: Project) -> None:
    uv = shutil.which("uv")
    assert uv, "uv is installed in the tests session"
    (project.root / "pyproject.toml").write_text(
        f"""[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["agent-framework=={BASE}", "agent-framework-core"]

[tool.uv]
package = false

[tool.uv.sources]
agent-framework-core = {{ path = "wheels/{project.wheel.name}" }}
"""
    )
    sync = [uv, "sync", "--quiet", "--python", sys.executable, "--default-index", project.index_url]
    subprocess.run(sync, check=True, cwd=project.root, env=project.env)
    versions = "import importlib.metadata as m; print(m.version('agent-framework'), m.version('agent-framework-core'))"
    python = str(venv_python(project.root / ".venv"))
    shown = subprocess.run([python, "-c", versions], check=True, capture_output=True, text=True).stdout.split()
    assert shown == [BASE, PATCHED]
    assert f'version = "{PATCHED}"' in (project.root / "uv.lock").read_text()
