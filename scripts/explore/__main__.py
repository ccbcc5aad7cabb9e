"""``python -m scripts.explore``: explore schedules of the installed agent-framework-core, or replay one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.explore.driver import Explorer, FamilyResult, quiet, replay, write_results
from scripts.explore.operations import Op, format_ops, parse_ops
from scripts.explore.subjects import FAMILIES
from scripts.series.errors import entry_point


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts.explore", description=__doc__)
    parser.add_argument("--family", choices=FAMILIES, action="append", help="explore this family (repeatable)")
    parser.add_argument("--schedules", type=int, default=150, help="schedules per family")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first schedule")
    parser.add_argument("--replay", type=int, metavar="SEED", help="run schedule SEED of one --family again")
    parser.add_argument("--ops", help="with --replay: run this (shrunk) sequence instead of the generated one")
    parser.add_argument("--base", default="installed", help="label of the installed base, for the report")
    parser.add_argument("--variant", choices=("patched", "unpatched"), default="patched")
    parser.add_argument("--series", default="", help="hash of the series the base was patched with")
    parser.add_argument("--json", type=Path, action="append", help="merge the results into this JSON file (repeatable)")
    parser.add_argument("--replay-command", default="python -m scripts.explore", help="prefix of replay lines")
    return parser


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Explore (exit 1 on a violation of the patched series) or replay one schedule (exit 1 if it violates)."""
    options = _parser().parse_args(argv)
    families: list[str] = options.family or list(FAMILIES)
    quiet()
    if options.replay is not None:
        if len(families) != 1:
            print("--replay needs exactly one --family", file=sys.stderr)
            return 2
        ops = parse_ops(options.ops) if options.ops else None
        return 1 if replay(families[0], options.replay, ops) else 0
    results: list[FamilyResult] = []
    for family in families:

        def replay_line(seed: int, ops: list[Op], family: str = family) -> str:
            return f"{options.replay_command} --family {family} --replay {seed} --ops {format_ops(ops)}"

        result = FamilyResult(options.base, options.variant, family, options.series)
        Explorer(result, replay_line).explore(options.first_seed, options.schedules)
        results.append(result)
        found = "; ".join(f"{member} after {n}" for member, n in sorted(result.members_found_after.items()))
        print(
            f"{options.base} {options.variant} {family}: {result.schedules} schedules, "
            f"{result.violating_schedules} violating, {result.seconds}s" + (f"; {found}" if found else "")
        )
    paths: list[Path] = options.json or []
    for path in paths:
        write_results(path, results, options.replay_command)
    clean = all(result.violating_schedules == 0 for result in results)
    return 0 if clean or options.variant == "unpatched" else 1


if __name__ == "__main__":
    sys.exit(main())
