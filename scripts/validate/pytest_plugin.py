"""A pytest plugin (``-p scripts.validate.pytest_plugin``) that puts a failing test's exception into the junit report.

pytest's junit ``<failure>`` element carries only a message, which does not say reliably which exception was raised.
This plugin adds two properties to a test whose call phase raised: ``exception`` (the exception class name) and
``exception_message`` (the first line of ``str(exception)``, for an assertion the assertion's own message).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from scripts.validate.junit import EXCEPTION, EXCEPTION_MESSAGE


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Record the exception of a failed call phase as user properties, which the junit report writes out."""
    report = yield
    if call.when == "call" and call.excinfo is not None and report.failed:
        lines = str(call.excinfo.value).splitlines()
        item.user_properties.append((EXCEPTION, call.excinfo.type.__name__))
        item.user_properties.append((EXCEPTION_MESSAGE, lines[0] if lines else ""))
    return report
