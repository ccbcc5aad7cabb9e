"""Splitting an exploration into shards by seed range, merging the shards' rows back into one row, the data file.

Shard ``K/N`` of a run of ``schedules`` schedules from ``first_seed`` runs the K-th of N contiguous seed ranges of
(almost) equal size: the shards are disjoint and together run exactly the unsharded run's schedules, which are
determined by ``(family, seed)`` alone. Standard library only: the merge runs where no framework is installed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from scripts.series.datafiles import Row, produced_stamp, replace_rows
from scripts.series.datafiles import read_rows as read_data_rows
from scripts.series.errors import RunguardError


@dataclass(frozen=True)
class Shard:
    """The ``index``-th (from 1) of ``count`` shards of a run."""

    index: int
    count: int

    def seeds(self, first_seed: int, schedules: int) -> range:
        """The seeds this shard runs out of ``schedules`` seeds from ``first_seed``."""
        return range(
            first_seed + (self.index - 1) * schedules // self.count, first_seed + self.index * schedules // self.count
        )

    def __str__(self) -> str:
        """``K/N``."""
        return f"{self.index}/{self.count}"


WHOLE = Shard(1, 1)


def parse_shard(spec: str) -> Shard:
    """``K/N`` with ``1 <= K <= N``."""
    match = re.fullmatch(r"(\d+)/(\d+)", spec.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise RunguardError(f"shard {spec!r}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return Shard(int(match[1]), int(match[2]))


def row_key(row: Row) -> tuple[str, ...]:
    """What identifies a row of stress.json: base, variant, family and, when recorded, the Python."""
    return (row["base"], row["variant"], row["family"], str(row.get("python", "")))


def _combine(key: tuple[str, ...], shards: list[Row]) -> Row:
    """One row from the rows of all N shards of one run."""
    label = "/".join(key)
    count = int(str(shards[0]["shard"]).split("/")[1])
    indexes = sorted(int(str(row["shard"]).split("/")[0]) for row in shards)
    if indexes != list(range(1, count + 1)) or {str(row["shard"]).split("/")[1] for row in shards} != {str(count)}:
        raise RunguardError(f"{label}: shards {sorted(str(r['shard']) for r in shards)} are not all of 1..{count}")
    if len({row["series"] for row in shards}) != 1:
        raise RunguardError(f"{label}: the shards were run with different series")
    ranges = sorted((row["seed_range"] for row in shards if row["seed_range"]), key=lambda seeds: seeds[0])
    for before, after in pairwise(ranges):
        if after[0] != before[1] + 1:
            raise RunguardError(f"{label}: shard seed ranges {before} and {after} are not adjacent")
    first = ranges[0][0] if ranges else 0
    found: dict[str, int] = {}
    for row in shards:
        offset = row["seed_range"][0] - first if row["seed_range"] else 0
        for member, after in row.get("members_found_after", {}).items():
            found[member] = min(found.get(member, after + offset), after + offset)
    return {
        **shards[0],
        "shard": "",
        "schedules": sum(row["schedules"] for row in shards),
        "violating_schedules": sum(row["violating_schedules"] for row in shards),
        "regressions": sum(row.get("regressions", 0) for row in shards),
        "unexplained": sum(row.get("unexplained", 0) for row in shards),
        "seconds": round(sum(row.get("seconds", 0.0) for row in shards), 1),
        "cpu_seconds": round(sum(row.get("cpu_seconds", 0.0) for row in shards), 1),
        "seed_range": [first, ranges[-1][1]] if ranges else [],
        "date": max(str(row.get("date", "")) for row in shards),
        "members_found_after": dict(sorted(found.items())),
        "examples": [example for row in shards for example in row.get("examples", [])],
    }


def fails(row: Row) -> bool:
    """Whether a run of the patched series failed.

    Differential: on a regression, or on a violation that is not an open member's the unpatched build shows too.
    The patched build explored alone: on any violation.
    """
    if row["variant"] != "patched":
        return False
    if row.get("differential"):
        return bool(row.get("regressions") or row.get("unexplained"))
    return bool(row["violating_schedules"])


def merge_shards(rows: Iterable[Row]) -> list[Row]:
    """Rows with every sharded run's shards combined into one row (an incomplete run is an error)."""
    whole: dict[tuple[str, ...], Row] = {}
    sharded: dict[tuple[str, ...], dict[str, Row]] = {}
    for row in rows:
        if row.get("shard"):
            sharded.setdefault(row_key(row), {})[str(row["shard"])] = row
        else:
            whole[row_key(row)] = row
    for key, shards in sharded.items():
        whole[key] = _combine(key, list(shards.values()))
    return [whole[key] for key in sorted(whole)]


def read_rows(path: Path) -> list[Row]:
    """The rows of a stress data file (an error names a file that is missing or not one)."""
    return read_data_rows(path, "stress")


def write_rows(path: Path, rows: Iterable[Row], command: str) -> None:
    """Merge ``rows`` into the data file at ``path``, one row per run (or shard of a run), and stamp it.

    A row replaces the file's row of the same run and shard; a whole run's row also replaces that run's shards.
    """
    new = list(rows)
    earlier = read_rows(path) if path.is_file() else []
    merged = replace_rows(earlier, (row for row in new if not row.get("shard")), row_key)
    records: dict[tuple[str, ...], Row] = {}
    for row in [*merged, *(row for row in new if row.get("shard"))]:
        records[(*row_key(row), str(row.get("shard", "")))] = row
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"produced": produced_stamp(command), "rows": [records[key] for key in sorted(records)]}
    path.write_text(json.dumps(document, indent=2) + "\n")
