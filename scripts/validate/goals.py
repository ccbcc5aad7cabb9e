"""The goals the measurements are held to, in one place: the sessions that measure and the site that shows them."""

from __future__ import annotations

# Patched / unpatched CPU time of each timed benchmark workload, at most, on every Python and base. A tight
# ResponseStream loop does nothing but pull, so the series' fixed cost per pull is its largest share there; in an agent
# chat stream, where applications pay a pull, it must not show. Sequential short runs pay the series' fixed cost per
# run; graph supersteps (chain, fan-out), which the series changes little, are held to the same 2 %.
BENCH_RATIO_GOALS = {
    "response_stream": 1.05,
    "agent_stream": 1.01,
    "functional_runs": 1.02,
    "graph_runs": 1.02,
    "chain": 1.02,
    "fan_out": 1.02,
}
BENCH_PAIRS = 11  # interleaved pairs per workload in a full benchmark run; fewer make a quick run
VALIDATION_SECONDS = {"warm": 60, "cold": 150}  # `python3 run.py` on a 2-core machine, at most
