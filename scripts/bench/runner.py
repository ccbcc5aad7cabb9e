"""``python -m scripts.bench``: the series' cost, patched / unpatched, measured side by side on each base.

A time ratio is the median over the interleaved pairs of patched / unpatched CPU time of the workload's
process (other processes on the machine do not count against it); the wall-time ratio is printed beside
it. Prints one line per workload and base, writes ``docs/data/bench.json`` (not after a ``--quick`` run,
so a smoke check never replaces the published numbers) and ends with ``worst ratio R``, the largest
median time ratio.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from scripts.apply.copies import prepare_base
from scripts.bench.measure import Workload, growth, memory_points, ratio_summary, timed_pairs
from scripts.bench.venvs import FrameworkPair, framework_venvs
from scripts.series.datafiles import write_data, written
from scripts.series.errors import ArgumentParser, entry_point
from scripts.series.listing import current_bases
from scripts.validate.goals import BENCH_PAIRS, BENCH_RATIO_GOAL

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
    parser.add_argument("--quick", action="store_true", help="small sizes and 2 pairs: a smoke check")
    parser.add_argument("--repetitions", type=int, help=f"interleaved pairs per workload (default {REPETITIONS})")
    parser.add_argument("--scratch", type=Path, required=True, help="where the framework venvs are built")
    return parser


def _bench_base(pair: FrameworkPair, options: argparse.Namespace, version: str) -> list[dict[str, Any]]:
    """Measure one base, the timed workloads in interleaved pairs, then memory; print and return a row for each."""

    def size(workload: Workload) -> int:
        return workload.quick_size if options.quick else workload.size

    def title(workload: Workload) -> str:
        return workload.title.format(size=size(workload))

    repetitions = options.repetitions or (QUICK_REPETITIONS if options.quick else REPETITIONS)
    seconds = timed_pairs(pair, TIMED, size, repetitions)
    rows: list[dict[str, Any]] = []
    for workload in TIMED:
        unpatched, patched = seconds[workload.name]
        cpu = ratio_summary([each["cpu"] for each in unpatched], [each["cpu"] for each in patched])
        wall = ratio_summary([each["wall"] for each in unpatched], [each["wall"] for each in patched])
        rows.append({
            "base": version, "benchmark": title(workload), "kind": "time", "ratio": cpu.median,
            "spread": cpu.q3 - cpu.q1, "cpu_ratio": vars(cpu), "wall_ratio": vars(wall), "pairs": repetitions,
            "unpatched_seconds": unpatched, "patched_seconds": patched,
        })  # fmt: skip
        print(
            f"{version}  {title(workload):<54} ratio {cpu.median:.3f}  IQR {cpu.q1:.3f}-{cpu.q3:.3f}  "
            f"min-max {cpu.low:.3f}-{cpu.high:.3f}  (wall {wall.median:.3f}, IQR {wall.q1:.3f}-{wall.q3:.3f})"
        )
    for workload in MEMORY:
        points = memory_points(pair, workload.name, size(workload))
        before, after = (growth(variant) for variant in points)
        rows.append({
            "base": version, "benchmark": title(workload), "kind": "memory", "flat": after.flat,
            "ratio": points[1][-1][2] / points[0][-1][2],  # peak after the last run, patched / unpatched
            "unpatched": {"points": points[0], "bytes_per_run": before.per_run(), "flat": before.flat},
            "patched": {"points": points[1], "bytes_per_run": after.per_run(), "flat": after.flat},
        })  # fmt: skip
        print(
            f"{version}  {title(workload):<54} growth B/run: unpatched peak {before.per_run()['peak']:+.1f} "
            f"held {before.per_run()['current']:+.1f}, patched peak {after.per_run()['peak']:+.1f} "
            f"held {after.per_run()['current']:+.1f}: {'flat' if after.flat else 'NOT FLAT'}"
        )
    return rows


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; failures print one ``runguard: error:`` line and return non-zero."""
    options = _parser().parse_args(argv)
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    for version in current_bases(options.base):
        base, patched = prepare_base(version)
        rows += _bench_base(framework_venvs(options.scratch / "venvs", version, base, patched.path), options, version)
    worst = max(row["ratio"] for row in rows if row["kind"] == "time")
    flat = all(row["flat"] for row in rows if row["kind"] == "memory")
    verdict = "meets" if worst <= BENCH_RATIO_GOAL else "MISSES"
    summary = f"Worst time ratio {worst:.3f}: {verdict} the goal (at most {BENCH_RATIO_GOAL}); memory " + (
        "flat on every base." if flat else "NOT flat: see the memory rows."
    )
    body = {
        "summary": summary, "rows": rows, "worst_ratio": worst, "memory_flat": flat,
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }  # fmt: skip
    given = [f"--base {options.base}"] if options.base else []
    if options.repetitions:
        given.append(f"--repetitions {options.repetitions}")
    command = "python3 run.py -s bench" + (f" -- {' '.join(given)}" if given else "")
    if not options.quick:
        print(f"results written to {written(write_data('bench', command, body))}")
    print(f"worst ratio {worst:.3f}")
    return 0
