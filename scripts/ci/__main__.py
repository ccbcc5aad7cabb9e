"""``python -m scripts.ci matrix`` (the job matrix from ``nox -l --json``) and ``python -m scripts.ci merge``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.ci.matrix import (
    STRESS_SCHEDULES,
    STRESS_SHARDS,
    build_matrix,
    github_matrix,
    list_sessions,
    nox_sessions,
)
from scripts.ci.merge import merge_artifacts
from scripts.series.errors import ArgumentParser, RunguardError, entry_point
from scripts.series.listing import current_bases
from scripts.series.locations import docs_data_dir


def _matrix(options: argparse.Namespace) -> None:
    try:
        listing = options.sessions.read_text() if options.sessions else list_sessions()
    except OSError as error:
        raise RunguardError(f"cannot read the session list: {error}") from None
    cells = build_matrix(nox_sessions(listing), current_bases(), options.shards, options.schedules)
    line = github_matrix(cells)
    if options.github_output:
        with options.github_output.open("a") as output:
            output.write(f"matrix={line}\n")
    print(line if not options.github_output else f"{len(cells)} jobs: {', '.join(cell.id for cell in cells)}")


def _merge(options: argparse.Namespace) -> None:
    for path in merge_artifacts(options.artifacts, options.into or docs_data_dir()):
        print(f"merged {path}")


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="python -m scripts.ci", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    matrix = commands.add_parser("matrix", help="print the job matrix (JSON) for the sessions nox lists")
    matrix.add_argument("--sessions", type=Path, help="the output of `nox -l --json` (default: run it)")
    matrix.add_argument("--shards", type=int, default=STRESS_SHARDS, help="jobs the explorer's seeds are split over")
    matrix.add_argument("--schedules", type=int, default=STRESS_SCHEDULES, help="explorer schedules per family")
    matrix.add_argument("--github-output", type=Path, help="append `matrix=<json>` to this file ($GITHUB_OUTPUT)")
    matrix.set_defaults(run=_matrix)
    merge = commands.add_parser("merge", help="merge the jobs' docs/data files into docs/data")
    merge.add_argument("artifacts", type=Path, help="a directory with one directory of data files per job")
    merge.add_argument("--into", type=Path, help="where the merged files go (default: docs/data)")
    merge.set_defaults(run=_merge)
    return parser


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Run one command; bad input prints one ``runguard: error:`` line and writes nothing."""
    options = _parser().parse_args(argv)
    options.run(options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
