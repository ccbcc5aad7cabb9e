"""``python -m scripts.bench``: the series' cost, patched / unpatched, measured side by side on each base and Python.

A time ratio is the median over the interleaved pairs of patched / unpatched CPU time of the workload's
process (other processes on the machine do not count against it); the wall-time ratio is printed beside
it. Runs on the running Python, the ones named by ``--python``, or every one found (``--all-pythons`` or
``RUNGUARD_ALL_PYTHONS``). Prints one line per Python, base and workload, merges its rows into
``docs/data/bench.json`` (replacing the rows of the (base, Python) pairs it measured; not after a ``--quick``
run, so a smoke check never replaces the published numbers) and ends with the summary: how many rows are
within their goals (``scripts/validate/goals.py``) and the worst ratio.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from scripts.apply.copies import prepare_base
from scripts.bench.measure import Workload, growth, memory_points, ratio_summary, timed_pairs
from scripts.bench.venvs import FrameworkPair, framework_venvs
from scripts.series.datafiles import read_rows, write_data, written
from scripts.series.errors import ArgumentParser, entry_point
from scripts.series.listing import current_bases, current_series
from scripts.series.locations import results_dir
from scripts.sources.pythons import Interpreter, all_pythons_asked, discover, python_list
from scripts.validate import bench_rows
from scripts.validate.goals import BENCH_PAIRS

TIMED = (
    Workload("chain", "graph chain, {size:,} supersteps", 2_000, 200),
    Workload("fan_out", "fan-out, 100 executors x {size} supersteps, state writes", 20, 5),
    Workload("response_stream", "ResponseStream, {size:,} updates, cleanup hooks", 200_000, 20_000),
    Workload("functional_runs", "{size:,} sequential FunctionalWorkflow runs", 2_000, 200),
    Workload("graph_runs", "{size:,} sequential graph runs", 1_000, 100),
    Workload("agent_stream", "agent chat stream, {size:,} updates, a JSON chunk each", 10_000, 1_000),
)
MEMORY = (
    Workload("graph_memory", "memory, {size:,} sequential graph runs", 10_000, 1_000),
    Workload("functional_memory", "memory, {size:,} sequential FunctionalWorkflow runs", 10_000, 1_000),
)
REPETITIONS = BENCH_PAIRS
QUICK_REPETITIONS = 2


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="nox -s bench --", description=__doc__)
    parser.add_argument("--base", help="measure on this released version only (default: every base)")
    parser.add_argument(
        "--python", action="append", default=[], metavar="X.Y[,X.Y]",
        help="measure on this Python (repeatable, or a comma list; default: the running one)",
    )  # fmt: skip
    parser.add_argument(
        "--all-pythons", action="store_true", help="measure on every CPython 3.10+ found (also RUNGUARD_ALL_PYTHONS=1)"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes and 2 pairs: a smoke check")
    parser.add_argument("--repetitions", type=int, help=f"interleaved pairs per workload (default {REPETITIONS})")
    parser.add_argument("--scratch", type=Path, required=True, help="where the framework venvs are built")
    return parser


def _bench_base(
    pair: FrameworkPair, options: argparse.Namespace, version: str, interpreter: Interpreter
) -> list[dict[str, Any]]:
    """Measure one base on one Python, the timed workloads in interleaved pairs, then memory; print and return rows."""

    def size(workload: Workload) -> int:
        return workload.quick_size if options.quick else workload.size

    def title(workload: Workload) -> str:
        return workload.title.format(size=size(workload))

    repetitions = options.repetitions or (QUICK_REPETITIONS if options.quick else REPETITIONS)
    seconds = timed_pairs(pair, TIMED, size, repetitions)
    rows: list[dict[str, Any]] = []
    python = interpreter.minor
    measured = {
        "python": python, "python_version": interpreter.version, "base": version,
        "series": current_series().short_digest(),
    }  # fmt: skip
    for workload in TIMED:
        unpatched, patched = seconds[workload.name]
        cpu = ratio_summary([each["cpu"] for each in unpatched], [each["cpu"] for each in patched])
        wall = ratio_summary([each["wall"] for each in unpatched], [each["wall"] for each in patched])
        rows.append({
            **measured, "workload": workload.name, "benchmark": title(workload), "kind": "time", "ratio": cpu.median,
            "spread": cpu.q3 - cpu.q1, "cpu_ratio": vars(cpu), "wall_ratio": vars(wall), "pairs": repetitions,
            "unpatched_seconds": unpatched, "patched_seconds": patched,
        })  # fmt: skip
        print(
            f"{python}  {version}  {title(workload):<54} ratio {cpu.median:.3f}  IQR {cpu.q1:.3f}-{cpu.q3:.3f}  "
            f"min-max {cpu.low:.3f}-{cpu.high:.3f}  (wall {wall.median:.3f}, IQR {wall.q1:.3f}-{wall.q3:.3f})"
        )
    for workload in MEMORY:
        points = memory_points(pair, workload.name, size(workload))
        before, after = (growth(variant) for variant in points)
        rows.append({
            **measured, "workload": workload.name, "benchmark": title(workload), "kind": bench_rows.MEMORY,
            "flat": after.flat,
            "ratio": points[1][-1][2] / points[0][-1][2],  # peak after the last run, patched / unpatched
            "unpatched": {"points": points[0], "bytes_per_run": before.per_run(), "flat": before.flat},
            "patched": {"points": points[1], "bytes_per_run": after.per_run(), "flat": after.flat},
        })  # fmt: skip
        print(
            f"{python}  {version}  {title(workload):<54} growth B/run: unpatched peak {before.per_run()['peak']:+.1f} "
            f"held {before.per_run()['current']:+.1f}, patched peak {after.per_run()['peak']:+.1f} "
            f"held {after.per_run()['current']:+.1f}: {'flat' if after.flat else 'NOT FLAT'}"
        )
    return rows


def _command(options: argparse.Namespace) -> str:
    """The command that reproduces this run (``--record`` aside)."""
    given = [f"--base {options.base}"] if options.base else []
    given += [f"--python {minor}" for minor in python_list(options.python)]
    if options.all_pythons:
        given.append("--all-pythons")
    if options.repetitions:
        given.append(f"--repetitions {options.repetitions}")
    return "python3 run.py -s bench" + (f" -- {' '.join(given)}" if given else "")


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; failures print one ``runguard: error:`` line and return non-zero."""
    options = _parser().parse_args(argv)
    interpreters = discover().chosen(python_list(options.python), options.all_pythons or all_pythons_asked())
    bases = current_bases(options.base)
    target = results_dir() / "bench.json"
    earlier = read_rows(target, "bench") if target.is_file() and not options.quick else []
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    for interpreter in interpreters:
        for version in bases:
            base, patched = prepare_base(version)
            venvs = framework_venvs(options.scratch / "venvs", version, base, patched.path, str(interpreter.path))
            rows += _bench_base(venvs, options, version, interpreter)
    if not options.quick:
        every = bench_rows.merge(earlier, rows)
        body = {
            "summary": bench_rows.summary(every), "rows": every,
            "memory_flat": all(row["flat"] for row in every if row["kind"] == bench_rows.MEMORY),
            "load_average": {"before": load_before, "after": os.getloadavg()},
        }  # fmt: skip
        print(f"results written to {written(write_data('bench', _command(options), body))}")
        print(f"bench.json, every Python and base recorded: {body['summary']}")
    print(f"this run: {bench_rows.summary(rows)}")
    return 0
