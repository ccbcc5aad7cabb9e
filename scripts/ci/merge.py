"""Merging the ``docs/data`` files that the CI jobs uploaded into one set, for the site the last job builds.

Each job writes only what its session produced (``RUNGUARD_DATA`` points at an empty directory), so the jobs'
files of one name partition that file's rows: by base, Python or explorer shard. Merged, they replace the file
in ``docs/data``; a file no job produced stays as committed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from scripts.explore.shards import merge_shards
from scripts.series.errors import RunguardError

Document = dict[str, Any]

# The keys that identify a row in any data file (each file's rows carry some of them): a later job's row with the
# same identity replaces an earlier one's.
IDENTITY = (
    "target", "base", "python", "patch", "slug", "variant", "family", "benchmark", "kind", "run", "shard", "package",
)  # fmt: skip


def _identity(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(row.get(key, "")) for key in IDENTITY)


def _merge_values(name: str, key: str, values: list[Any]) -> Any:
    """Rows: one per identity; other lists: their union; flags: all true; texts that differ: joined; else equal."""
    if all(isinstance(value, list) for value in values):
        items = [item for value in values for item in value]
        if all(isinstance(item, dict) for item in items):
            return list({_identity(item): item for item in items}.values())
        return sorted({json.dumps(item): item for item in items}.values(), key=str)
    if all(isinstance(value, bool) for value in values):
        return all(values)
    distinct = sorted({json.dumps(value) for value in values})
    if len(distinct) == 1:
        return values[0]
    if all(isinstance(value, str) for value in values):
        return ", ".join(sorted(set(values)))
    raise RunguardError(f"{name}: the jobs disagree on {key!r} ({', '.join(distinct)}); cannot merge")


def merge_documents(name: str, documents: Sequence[Document]) -> Document:
    """One data file from the files of one name that several jobs wrote."""
    keys = list(dict.fromkeys(key for document in documents for key in document if key != "produced"))
    merged: Document = {"produced": _produced(documents)}
    for key in keys:
        merged[key] = _merge_values(name, key, [document[key] for document in documents if key in document])
    if name == "stress.json":
        merged["rows"] = merge_shards(merged["rows"])
    return merged


def _produced(documents: Sequence[Document]) -> dict[str, str]:
    stamps = sorted((document["produced"] for document in documents), key=lambda stamp: str(stamp["at"]))
    commands = sorted({str(stamp.get("command", "")) for stamp in stamps})
    return {**stamps[-1], "command": f"{'; '.join(commands)} (merged from {len(stamps)} CI jobs)"}


def merge_artifacts(artifacts: Path, into: Path) -> list[Path]:
    """Merge every ``*.json`` under ``artifacts`` (one directory per job) into ``into``; returns the files written.

    Everything is read and merged before anything is written: a bad file changes nothing.
    """
    found: dict[str, list[Document]] = {}
    for path in sorted(artifacts.rglob("*.json")):
        try:
            loaded: object = json.loads(path.read_text())
            if not isinstance(loaded, dict) or "produced" not in loaded:
                raise TypeError("no `produced` stamp")
        except (OSError, ValueError, TypeError) as error:
            raise RunguardError(f"{path}: not a data file ({error})") from None
        found.setdefault(path.name, []).append(cast("Document", loaded))
    if not found:
        raise RunguardError(f"{artifacts} holds no data file: no job uploaded results")
    merged = {name: merge_documents(name, documents) for name, documents in sorted(found.items())}
    into.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, document in merged.items():
        (into / name).write_text(json.dumps(document, indent=2) + "\n")
        written.append(into / name)
    return written
