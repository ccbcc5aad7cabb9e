"""The wheel `nox -s wheel` built is what this venv runs: its version, its manifest, its files.

Runs under the wheel session only, which installs the wheel into a fresh venv and names it in ``RUNGUARD_WHEEL``.
"""

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import agent_framework
import pytest

from scripts.ship.wheel import MANIFEST_NAME, wheel_manifest

WHEEL = os.environ.get("RUNGUARD_WHEEL", "")
pytestmark = pytest.mark.skipif(not WHEEL, reason="runs under `nox -s wheel`, which sets RUNGUARD_WHEEL")


def test_installed_version_is_the_wheels() -> None:
    manifest = wheel_manifest(Path(WHEEL))
    assert importlib.metadata.version("agent-framework-core") == manifest["version"]
    assert manifest["version"].startswith(f"{os.environ['RUNGUARD_BASE']}+runguard.")


def test_installed_manifest_is_readable_through_importlib() -> None:
    text = importlib.metadata.distribution("agent-framework-core").read_text(MANIFEST_NAME)
    assert text is not None
    assert json.loads(text) == wheel_manifest(Path(WHEEL))


def test_framework_is_imported_from_this_venv() -> None:
    location = agent_framework.__file__
    assert location is not None
    assert Path(location).is_relative_to(Path(sys.prefix))
