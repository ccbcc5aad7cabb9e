"""The benchmark of the series: patched against unpatched framework, side by side (``nox -s bench``).

``venvs`` makes the two framework venvs, ``workloads`` runs inside them, ``measure`` times the pairs and
summarizes them (ratios, memory growth), ``runner`` is ``python -m scripts.bench``.
"""
