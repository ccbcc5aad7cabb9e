"""Command line: ``python -m scripts apply (--base V | --checkout PATH)`` and ``python -m scripts manifest WHEEL``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from scripts.apply.copies import apply_to_checkout, default_branch_name, prepare_base
from scripts.apply.engine import SeriesConflict
from scripts.apply.report import format_table, version_against_bases
from scripts.apply.signals import interruptible
from scripts.series.errors import ArgumentParser, RunguardError, error_line
from scripts.series.listing import current_bases, current_series
from scripts.series.locations import patches_dir
from scripts.ship.wheel import series_manifest, wheel_manifest
from scripts.sources.checkout import core_version, open_checkout


def _apply(arguments: argparse.Namespace) -> None:
    if not arguments.base and not arguments.checkout:
        raise RunguardError("apply needs --base VERSION or --checkout PATH")
    if arguments.base and arguments.branch:
        raise RunguardError("--branch only goes with --checkout")
    if arguments.base:
        with _conflicts_reported(f"agent-framework-core {arguments.base}"):
            base, patched = prepare_base(arguments.base)
        print(f"base checkout:    {base}")
        print(f"patched checkout: {patched.path}")
        return
    checkout = open_checkout(Path(arguments.checkout))
    series = current_series()
    branch = arguments.branch or default_branch_name(series)
    target = f"{checkout.root}, {version_against_bases(core_version(checkout.root, checkout.head), current_bases())}"
    with _conflicts_reported(target):
        results = apply_to_checkout(checkout, series, branch)
    print(format_table(target, results))
    print(f"created branch {branch} in {checkout.root}; your branch, index, working tree and stash are unchanged")


@contextmanager
def _conflicts_reported(target: str) -> Generator[None, None, None]:
    """On a conflict, print every patch's outcome on ``target`` (in the series and on its own), then the error."""
    try:
        yield
    except SeriesConflict as conflict:
        print(format_table(target, conflict.results, conflict.alone))
        raise RunguardError(f"{conflict}; nothing was changed") from None


def _manifest(arguments: argparse.Namespace) -> None:
    manifest = wheel_manifest(Path(arguments.wheel))
    print(json.dumps(manifest, indent=2))
    if manifest != series_manifest(str(manifest.get("base")), current_series()):
        raise RunguardError(f"{arguments.wheel} was built from another series than the one in {patches_dir()}")
    print(f"the manifest matches the series in {patches_dir()}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m scripts``."""
    parser = ArgumentParser(prog="runguard", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    apply = commands.add_parser("apply", help="apply the patch series to a released base or to your checkout")
    target = apply.add_mutually_exclusive_group()  # one of them: checked after an unknown flag is
    target.add_argument("--base", metavar="VERSION", help="a released agent-framework-core version")
    target.add_argument("--checkout", metavar="PATH", help="a git clone of microsoft/agent-framework")
    apply.add_argument("--branch", help="name of the branch to create (--checkout only)")
    apply.set_defaults(run=_apply)
    manifest = commands.add_parser("manifest", help="print a runguard wheel's series manifest and check it")
    manifest.add_argument("wheel", metavar="WHEEL", help="a wheel built by `nox -s wheel`")
    manifest.set_defaults(run=_manifest)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; failures print one ``runguard: error:`` line and return non-zero."""
    try:
        arguments = build_parser().parse_args(argv)
        with interruptible():  # SIGTERM, like Ctrl-C, unwinds through the clean-up of whatever was under way
            arguments.run(arguments)
    except RunguardError as error:
        print(error_line(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(error_line("interrupted; nothing was changed"), file=sys.stderr)
        return 130
    return 0
