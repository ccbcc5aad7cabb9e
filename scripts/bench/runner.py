"""``python -m scripts.bench``: the series' cost, patched / unpatched, measured side by side on each base.

Prints one line per workload and base, writes ``docs/data/bench.json`` (a ``--quick`` run writes into
the scratch directory instead, so a smoke check never replaces the published numbers) and ends with
``worst ratio R``, the largest median time ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scripts.bench.measure import Workload, growth, memory_points, ratio_summary, timed_pairs
from scripts.bench.venvs import FrameworkPair, framework_venvs
from scripts.cli import prepare_base
from scripts.errors import RunguardError
from scripts.locations import REPO_ROOT, patches_dir
from scripts.series import read_bases, read_series

TIMED = (
    Workload("chain", "graph chain, {size:,} supersteps", 2_000, 200),
    Workload("fan_out", "fan-out, 100 executors x {size} supersteps, state writes", 20, 5),
    Workload("response_stream", "ResponseStream, {size:,} updates, cleanup hooks", 200_000, 20_000),
    Workload("functional_runs", "{size:,} sequential FunctionalWorkflow runs", 2_000, 200),
    Workload("graph_runs", "{size:,} sequential graph runs", 1_000, 100),
)
MEMORY = (
    Workload("graph_memory", "memory, {size:,} sequential graph runs", 10_000, 1_000),
    Workload("functional_memory", "memory, {size:,} sequential FunctionalWorkflow runs", 10_000, 1_000),
)
REPETITIONS = 15
QUICK_REPETITIONS = 2
PUBLISHED = REPO_ROOT / "docs" / "data" / "bench.json"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nox -s bench --", description=__doc__)
    parser.add_argument("--base", help="measure on this released version only (default: every base)")
    parser.add_argument("--quick", action="store_true", help="small sizes and 2 pairs: a smoke check")
    parser.add_argument("--repetitions", type=int, help=f"interleaved pairs per workload (default {REPETITIONS})")
    parser.add_argument("--scratch", type=Path, required=True, help="where the venvs and quick results go")
    return parser


def _bench_base(pair: FrameworkPair, options: argparse.Namespace, label: str) -> dict[str, Any]:
    """Measure one base: the timed workloads in interleaved pairs, then memory; print a line for each."""

    def size(workload: Workload) -> int:
        return workload.quick_size if options.quick else workload.size

    def title(workload: Workload) -> str:
        return workload.title.format(size=size(workload))

    repetitions = options.repetitions or (QUICK_REPETITIONS if options.quick else REPETITIONS)
    seconds = timed_pairs(pair, TIMED, size, repetitions)
    timed: dict[str, Any] = {}
    for workload in TIMED:
        unpatched, patched = seconds[workload.name]
        ratio = ratio_summary([each["cpu"] for each in unpatched], [each["cpu"] for each in patched])
        wall = ratio_summary([each["wall"] for each in unpatched], [each["wall"] for each in patched])
        timed[workload.name] = {
            "title": title(workload), "size": size(workload), "ratio": vars(ratio), "wall_ratio": vars(wall),
            "unpatched_seconds": unpatched, "patched_seconds": patched,
        }  # fmt: skip
        print(
            f"{label}  {title(workload):<54} ratio {ratio.median:.3f}  "
            f"IQR {ratio.q1:.3f}-{ratio.q3:.3f}  min-max {ratio.low:.3f}-{ratio.high:.3f}  (wall {wall.median:.3f})"
        )
    memory: dict[str, Any] = {}
    for workload in MEMORY:
        points = memory_points(pair, workload.name, size(workload))
        growths = [growth(variant) for variant in points]
        memory[workload.name] = {
            "title": title(workload), "runs": size(workload), "flat": growths[1].flat,
            **{
                variant: {"points": each_points, "bytes_per_run": each.per_run(), "flat": each.flat}
                for variant, each_points, each in zip(("unpatched", "patched"), points, growths, strict=True)
            },
        }  # fmt: skip
        before, after = (each.per_run() for each in growths)
        print(
            f"{label}  {title(workload):<54} B/run unpatched: peak {before['peak']:+.1f} held {before['current']:+.1f}"
            f"  patched: peak {after['peak']:+.1f} held {after['current']:+.1f}"
            f"  {'flat' if growths[1].flat else 'NOT FLAT'}"
        )
    return {"repetitions": repetitions, "timed": timed, "memory": memory}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; failures print one ``runguard: error:`` line and return non-zero."""
    options = _parser().parse_args(argv)
    try:
        series = read_series(patches_dir())
        versions = [options.base] if options.base else read_bases(patches_dir())
        results: dict[str, Any] = {}
        for version in versions:
            base, patched = prepare_base(version)
            pair = framework_venvs(options.scratch / "venvs", version, base, patched.path)
            results[version] = _bench_base(pair, options, version)
    except RunguardError as error:
        print(f"runguard: error: {error}", file=sys.stderr)
        return 1
    worst = max(entry["ratio"]["median"] for result in results.values() for entry in result["timed"].values())
    report = {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": options.quick,
        "series": series.digest(),
        "patches": [patch.name for patch in series.patches],
        "python": platform.python_version(),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(), "load_average": os.getloadavg()},
        "bases": results,
        "worst_ratio": worst,
        "memory_flat": all(entry["flat"] for result in results.values() for entry in result["memory"].values()),
    }
    output = options.scratch / "bench-quick.json" if options.quick else PUBLISHED
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results written to {output}")
    print(f"worst ratio {worst:.3f}")
    return 0
