"""The benchmark of the series: patched against unpatched framework, side by side (``nox -s bench``)."""
