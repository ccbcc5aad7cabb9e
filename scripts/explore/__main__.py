"""``python -m scripts.explore``: explore schedules of the installed agent-framework-core, replay one, merge shards."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path

from scripts.explore.differential import declared_differences, serve_stdin
from scripts.explore.driver import FamilyJob, explore_families, quiet, replay, replay_both
from scripts.explore.operations import parse_ops
from scripts.explore.shards import WHOLE, fails, merge_shards, parse_shard, read_rows, write_rows
from scripts.explore.subjects import FAMILIES
from scripts.series.errors import ArgumentParser, RunguardError, entry_point
from scripts.series.listing import current_series


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="python -m scripts.explore", description=__doc__)
    parser.add_argument("--family", choices=FAMILIES, action="append", help="explore this family (repeatable)")
    parser.add_argument("--schedules", type=int, default=150, help="schedules per family")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first schedule")
    parser.add_argument("--shard", type=parse_shard, default=WHOLE, metavar="K/N", help="run the K-th of N seed ranges")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="worker processes (one per family)")
    parser.add_argument("--replay", type=int, metavar="SEED", help="run schedule SEED of one --family again")
    parser.add_argument("--ops", help="with --replay: run this (shrunk) sequence instead of the generated one")
    parser.add_argument("--base", default="installed", help="label of the installed base, for the report")
    parser.add_argument("--variant", choices=("patched", "unpatched"), default="patched")
    parser.add_argument("--series", default="", help="hash of the series the base was patched with")
    parser.add_argument("--json", type=Path, action="append", help="merge the results into this JSON file (repeatable)")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="FILE", help="combine these files' shards into --json")
    parser.add_argument("--replay-command", default="python -m scripts.explore", help="prefix of replay lines")
    parser.add_argument(
        "--differential", nargs=2, type=Path, metavar=("UNPATCHED", "PATCHED"),
        help="run every schedule on both builds (the Pythons of their venvs) and compare: fail on a regression",
    )  # fmt: skip
    parser.add_argument("--worker", action="store_true", help="serve schedule requests on stdin (differential mode)")
    return parser


def _merge(files: list[Path], targets: list[Path]) -> int:
    """Combine the shards of the runs in ``files`` into one row per run, written into each target."""
    if not targets:
        raise RunguardError("--merge needs --json FILE to write the merged rows to")
    rows = merge_shards(row for path in files for row in read_rows(path))
    for target in targets:
        write_rows(target, rows, f"python -m scripts.explore --merge {' '.join(path.name for path in files)}")
    print(f"merged {len(files)} file(s) into {len(rows)} row(s)")
    return 0


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Explore (exit 1 on a violation of the patched series), replay one schedule (exit 1 if it violates) or merge."""
    options = _parser().parse_args(argv)
    families: list[str] = options.family or list(FAMILIES)
    targets: list[Path] = options.json or []
    if options.merge:
        return _merge(options.merge, targets)
    if options.worker:
        quiet()
        return serve_stdin()
    if options.schedules < 1 or options.processes < 1:
        raise RunguardError("--schedules and --processes must be at least 1")
    builds: tuple[Path, Path] | None = tuple(options.differential) if options.differential else None
    declared = declared_differences(current_series().patches) if builds else []
    if options.replay is not None:
        if len(families) != 1:
            raise RunguardError("--replay needs exactly one --family")
        if builds is not None:
            return 1 if replay_both(builds, declared, families[0], options.replay, options.ops) else 0
        quiet()
        ops = parse_ops(options.ops) if options.ops else None
        return 1 if replay(families[0], options.replay, ops) else 0
    shard = "" if options.shard == WHOLE else str(options.shard)
    seeds = options.shard.seeds(options.first_seed, options.schedules)
    jobs = [
        FamilyJob(
            family, options.base, options.variant, options.series, seeds, shard, options.replay_command, builds,
            tuple(declared),
        )
        for family in families
    ]  # fmt: skip
    results = explore_families(jobs, options.processes)
    for target in targets:
        write_rows(target, [asdict(result) for result in results], options.replay_command)
    return 1 if any(fails(asdict(result)) for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
