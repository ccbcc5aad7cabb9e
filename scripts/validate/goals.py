"""The goals the measurements are held to, in one place: the sessions that measure and the site that shows them."""

from __future__ import annotations

BENCH_RATIO_GOAL = 1.01  # patched / unpatched time of every benchmark workload, at most
BENCH_PAIRS = 11  # interleaved pairs per workload in a full benchmark run; fewer make a quick run
VALIDATION_SECONDS = {"warm": 60, "cold": 150}  # `python3 run.py` on a 2-core machine, at most
