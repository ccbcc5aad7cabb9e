"""runguard's tooling, in layers; a module imports only from its own layer and the layers listed before it.

- :mod:`scripts.series`: the series and bases files, the patch model, errors, git plumbing, shared helpers.
- :mod:`scripts.sources`: PyPI sdists, materialized bases, user checkouts, the cache.
- :mod:`scripts.apply`: the engine that applies the series to a cached copy or a checkout, and its report.
- :mod:`scripts.validate`: the checks that prove the series (red/green, upstream differential, pytest, timing).
- :mod:`scripts.ship`: the patched wheel and the PR export.
- :mod:`scripts.site`: the documentation site's hooks, data tables and browser check.
- :mod:`scripts.explore` and :mod:`scripts.bench`: the schedule explorer and the benchmark, run as ``python -m``.
- :mod:`scripts.sessions`: the nox sessions, one function each; :mod:`scripts.ci`: the CI job matrix and the merge
  of the jobs' results, ``python -m scripts.ci``; :mod:`scripts.cli`: ``python -m scripts``.
"""
