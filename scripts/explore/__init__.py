"""Schedule explorer: random operation sequences on the four run-able workflow objects, on a perturbing event loop.

Run by the ``stress`` nox session as ``python -m scripts.explore``; needs ``agent-framework-core`` installed.
``loop`` perturbs the event loop, ``subjects`` builds the instrumented workflows, ``operations`` generates and
executes operation sequences, ``invariants`` checks them, ``driver`` searches (a process per family), shrinks and
reports; ``shards`` splits a run by seed range and keeps the data file, combining a run's shards into one row.
"""
