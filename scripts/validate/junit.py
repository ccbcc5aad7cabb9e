"""pytest's junit reports: each case's outcome, message and recorded properties, and which added test it is.

:mod:`scripts.validate.pytest_plugin` records the exception of a failing call as the properties named here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast
from xml.etree import ElementTree

# The junit properties that scripts.validate.pytest_plugin records for a test whose call raised.
EXCEPTION = "exception"
EXCEPTION_MESSAGE = "exception_message"


@dataclass(frozen=True)
class JunitCase:
    """One test case of a junit report: its outcome, the outcome element's message and the test's properties."""

    outcome: str
    message: str
    properties: dict[str, str]


def junit_cases(junit_xml: Path) -> dict[str, JunitCase]:
    """Map ``module.Class::test`` to its case (outcome passed, failed, error or skipped) in a pytest junit report."""
    cases: dict[str, JunitCase] = {}
    for case in ElementTree.parse(junit_xml).iter("testcase"):  # noqa: S314 (pytest's own report)
        found = next((case.find(kind) for kind in ("error", "failure", "skipped") if case.find(kind) is not None), None)
        outcome = "passed" if found is None else found.tag.replace("failure", "failed")
        message = "" if found is None else found.get("message", "")
        properties = {item.get("name", ""): item.get("value", "") for item in case.iter("property")}
        cases[f"{case.get('classname')}::{case.get('name')}"] = JunitCase(outcome, message, properties)
    return cases


def outcomes(cases: dict[str, JunitCase]) -> dict[str, str]:
    """Map ``module.Class::test`` to its outcome: passed, failed, error or skipped."""
    return {test: case.outcome for test, case in cases.items()}


def junit_outcomes(junit_xml: Path) -> dict[str, str]:
    """Map ``module.Class::test`` to passed, failed, error or skipped from a pytest junit XML report."""
    return outcomes(junit_cases(junit_xml))


def read_report(junit_xml: Path) -> dict[str, JunitCase]:
    """The cases of a junit report; a missing or unreadable report (pytest died) yields none."""
    try:
        return junit_cases(junit_xml)
    except (OSError, SyntaxError):  # ElementTree.ParseError is a SyntaxError
        return {}


def cases_to_json(runs: list[dict[str, JunitCase]]) -> list[dict[str, dict[str, object]]]:
    """Reports' cases as JSON, to keep them (see :mod:`scripts.validate.results_cache`)."""
    return [{test: asdict(case) for test, case in run.items()} for run in runs]


def cases_from_json(kept: object) -> list[dict[str, JunitCase]] | None:
    """Reports' cases from :func:`cases_to_json`; None when ``kept`` is not such a list."""
    if not isinstance(kept, list):
        return None
    try:
        return [{test: JunitCase(**case) for test, case in run.items()} for run in cast("list[dict[str, Any]]", kept)]
    except (AttributeError, TypeError):
        return None


def selects(test_id: str, junit_key: str) -> bool:
    """Whether the pytest id ``test_id`` (``tests/x/test_y.py[::Class]::name``) ran as ``junit_key``.

    A junit key is ``tests.x.test_y[.Class]::name[params]``, as pytest reports it from the core package.
    """
    path, _, function = test_id.partition("::")
    module = path.removesuffix(".py").replace("/", ".")
    wanted = f"{module}.{function.replace('::', '.')}" if function else module
    classname, _, name = junit_key.partition("::")
    qualified = f"{classname}.{name.split('[', 1)[0]}"
    return qualified == wanted or qualified.startswith(f"{wanted}.")


def node_id(junit_key: str, root: Path) -> str:
    """The pytest id (``tests/x/test_y.py::Class::name[params]``) of the case reported as ``junit_key`` from ``root``.

    pytest reports ``tests.x.test_y.Class`` as the class name: its longest prefix that names a file under ``root`` is
    the module, the rest the classes. A module that failed to collect is reported with an empty class name and the
    module as the name: its id is the file. A key whose module is not under ``root`` is returned as it is.
    """
    classname, _, name = junit_key.partition("::")
    dotted, tail = (classname, [name]) if classname else (name, [])
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if (root / module).is_file():
            return "::".join([module, *parts[cut:], *tail])
    return junit_key
