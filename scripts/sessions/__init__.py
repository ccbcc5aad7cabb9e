"""The nox sessions, one function each, grouped by the layer they drive; ``noxfile.py`` declares them.

``glue`` is what every session shares (options, the error boundary, installs, the one pytest helper, patched
bases); ``matrix`` parametrizes the sessions that run framework code by Python; ``applying`` applies the series,
``validation`` proves it (with ``gate``: mypy and bandit; ``reproducing``: the issue reproductions), ``shipping``
ships it, ``site`` builds the docs.
"""
