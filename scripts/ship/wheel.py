"""A patched agent-framework-core wheel: a build copy with a local version, and the series manifest it carries.

The wheel's version is ``V+runguard.<series hash>``; its dist-info holds ``runguard-series.json`` with the base, every
patch's name, sha256 and upstream status, and the series hash, so an installed copy says exactly what it contains.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path
from typing import Any, cast

from scripts.series.errors import RunguardError
from scripts.series.listing import Series
from scripts.series.locations import CORE_PACKAGE

MANIFEST_NAME = "runguard-series.json"


def local_version(base: str, series: Series) -> str:
    """The PEP 440 version of a wheel of ``base`` with ``series`` applied."""
    return f"{base}+runguard.{series.short_digest()}"


def series_manifest(base: str, series: Series) -> dict[str, Any]:
    """What a wheel built from ``base`` and ``series`` contains, as the manifest records it."""
    return {
        "project": "agent-framework-core",
        "base": base,
        "version": local_version(base, series),
        "series_hash": series.digest(),
        "patches": [
            {"name": patch.name, "sha256": patch.sha256(), "upstream_status": patch.upstream_status}
            for patch in series.patches
        ],
    }


def stage_build_tree(patched_repo: Path, base: str, version: str, destination: Path) -> Path:
    """Copy the patched core package to ``destination`` and set its ``pyproject.toml`` version to ``version``.

    The cached checkout is never changed; only the copy is. Its version must be the static ``version = "<base>"``.
    """
    source = patched_repo / CORE_PACKAGE
    version_line = re.compile(rf'^version = "{re.escape(base)}"$', re.MULTILINE)
    text = (source / "pyproject.toml").read_text()
    if len(version_line.findall(text)) != 1:
        raise RunguardError(f'{source / "pyproject.toml"} has no single line version = "{base}" to set the version in')
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(source, destination)
    (destination / "pyproject.toml").write_text(version_line.sub(f'version = "{version}"', text))
    return destination


def only_wheel(directory: Path) -> Path:
    """The one ``.whl`` file in ``directory``."""
    wheels = sorted(directory.glob("*.whl"))
    if len(wheels) != 1:
        raise RunguardError(f"expected one wheel in {directory}, found {len(wheels)}")
    return wheels[0]


def add_manifest(unpacked: Path, manifest: dict[str, Any]) -> Path:
    """Write the manifest into the dist-info of the wheel ``wheel unpack`` left in ``unpacked``; return its root."""
    dist_infos = sorted(unpacked.glob("*/*.dist-info"))
    if len(dist_infos) != 1:
        raise RunguardError(f"expected one unpacked wheel with a .dist-info in {unpacked}, found {len(dist_infos)}")
    (dist_infos[0] / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    return dist_infos[0].parent


def wheel_manifest(wheel: Path) -> dict[str, Any]:
    """The manifest inside a runguard wheel's dist-info."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = [name for name in archive.namelist() if re.fullmatch(rf"[^/]+\.dist-info/{MANIFEST_NAME}", name)]
            if len(names) != 1:
                raise RunguardError(f"{wheel.name} has no {MANIFEST_NAME} in its dist-info; not a runguard wheel")
            return cast("dict[str, Any]", json.loads(archive.read(names[0])))
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        raise RunguardError(f"cannot read {wheel}: {error}") from error
