"""Read-only checks that prove the series, one module per check.

``redgreen`` judges each patch's tests on the series ``prefixes``; ``junit`` reads pytest's reports and
``pytest_plugin`` records each failure's exception in them; ``differential`` compares upstream's tests and pyright
before and after the series; ``results_cache`` keeps pyright's errors and the red/green runs by content;
``applicability`` tabulates the outcomes per base; ``timing`` measures the validation itself; ``repro`` runs the
issue reproductions and reads their record; ``gate`` restates upstream's mypy and bandit settings and compares
their findings; ``size`` counts the lines each patch adds under ``agent_framework/``.
"""
