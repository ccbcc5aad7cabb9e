"""Schedule explorer: random operation sequences on the four run-able workflow objects, on a perturbing event loop.

Run by the ``stress`` nox session as ``python -m scripts.explore``; needs ``agent-framework-core`` installed.
``loop`` perturbs the event loop, ``subjects`` builds the instrumented workflows, ``operations`` generates and
executes operation sequences, ``invariants`` checks them, ``driver`` searches, shrinks and reports.
"""
