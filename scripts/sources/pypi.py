"""Fetch sdists (agent-framework-core's and its downstream packages') from the package index into a verified cache."""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, cast

from scripts.series.common import sha256_of
from scripts.series.errors import RunguardError
from scripts.series.locations import cache_dir, package_index_url

PROJECT = "agent-framework-core"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
TIMEOUT_SECONDS = 60


def sdist_filename(version: str, project: str = PROJECT) -> str:
    """The sdist file name of ``project`` ``version``."""
    return f"{project.replace('-', '_')}-{version}.tar.gz"


def fetch_sdist(version: str, project: str = PROJECT) -> Path:
    """Return the cached sdist of ``project`` ``version``, downloading (or re-downloading a corrupt copy) as needed."""
    sdists = cache_dir() / "sdists"
    record = sdists / "by-version" / f"{project}-{version}.sha256"
    if record.is_file():
        cached = sdists / "sha256" / f"{record.read_text().strip()}.tar.gz"
        if cached.is_file() and sha256_of(cached) == cached.name.removesuffix(".tar.gz"):
            return cached
    url, digest = _lookup(version, project)
    target = sdists / "sha256" / f"{digest}.tar.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    _download(url, digest, target)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(digest + "\n")
    return target


def _lookup(version: str, project: str) -> tuple[str, str]:
    """The download URL and recorded sha256 of the sdist, from the index's PEP 691 JSON page."""
    page = f"{package_index_url()}/{project}/"
    try:
        request = urllib.request.Request(page, headers={"Accept": SIMPLE_JSON})
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            listing = cast("dict[str, Any]", json.load(response))
    except urllib.error.HTTPError as error:
        raise RunguardError(f"{project} is not on the package index {page} (HTTP {error.code})") from error
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise RunguardError(f"cannot read the package index {page}: {error}") from error
    name = sdist_filename(version, project)
    for entry in cast("list[dict[str, Any]]", listing.get("files", [])):
        if entry.get("filename") == name:
            return urllib.parse.urljoin(page, str(entry["url"])), str(entry["hashes"]["sha256"])
    raise RunguardError(f"{project} {version} is not on PyPI (no {name} on {page})")


def _download(url: str, digest: str, target: Path) -> None:
    """Download ``url`` next to ``target``, check its sha256, then move it into place atomically."""
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            out.write(response.read())
        actual = sha256_of(Path(partial))
        if actual != digest:
            raise RunguardError(f"{url} has sha256 {actual}, but the index records {digest}")
        Path(partial).replace(target)
    except (urllib.error.URLError, OSError) as error:
        raise RunguardError(f"cannot download {url}: {error}") from error
    finally:
        Path(partial).unlink(missing_ok=True)


def unpack_sdist(sdist: Path, destination: Path) -> Path:
    """Unpack ``sdist`` into ``destination``; return its top directory (``<name>-<version>``)."""
    try:
        with tarfile.open(sdist) as archive:
            archive.extractall(destination, filter="data")
    except (tarfile.TarError, OSError) as error:
        raise RunguardError(f"cannot unpack {sdist}: {error}") from error
    tops = [path for path in destination.iterdir() if path.is_dir()]
    if len(tops) != 1:
        raise RunguardError(f"{sdist.name} does not hold one top directory")
    return tops[0]
