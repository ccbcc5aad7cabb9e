"""Read-only checks that prove the series: ``redgreen`` judges each patch's tests on the series ``prefixes``,
``junit`` reads pytest's reports, ``pytest_plugin`` records each failure's exception, ``differential`` compares
upstream's tests and pyright before and after the series (``pyright_cache`` keeps pyright's results),
``applicability`` tabulates outcomes per base, ``timing`` measures the validation itself.
"""
