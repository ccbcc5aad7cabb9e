"""The rest of upstream's gate, restated: mypy in its relaxed test configuration and bandit with its settings.

Both compare two runs on the same files (before and after a patch or the series) by findings without line
numbers, so only what the change adds counts. Settings restated from upstream's ``python/pyproject.toml`` (root
``[tool.mypy]``, run from ``python/`` with ``--explicit-package-bases --namespace-packages``) and the core
package's ``[tool.bandit]``; the versions are pinned in ``pins.txt``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, cast

from scripts.series.errors import RunguardError
from scripts.series.patch import CORE_SOURCE, is_test_file
from scripts.validate.results_cache import tree

MYPY_CONFIG = """\
[mypy]
plugins = pydantic.mypy
python_version = 3.10
ignore_missing_imports = True
check_untyped_defs = True
disallow_untyped_defs = False
disallow_incomplete_defs = False
disallow_untyped_decorators = False
no_implicit_optional = True
warn_return_any = False
warn_unused_ignores = False
show_error_codes = True

[mypy-numpy,numpy.*]
follow_imports = skip
follow_imports_for_stubs = True
"""
BANDIT_CONFIG = """\
[tool.bandit]
targets = ["agent_framework"]
exclude_dirs = ["tests"]
"""
WORKSPACE = "python"  # upstream runs mypy from its Python workspace root
MYPY_ERROR = re.compile(r"^(?P<file>[^:\n]+):\d+:(?:\d+:)? error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$")


def write_configs(directory: Path) -> tuple[Path, Path]:
    """Write the restated mypy and bandit configurations into ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    mypy, bandit = directory / "mypy.ini", directory / "bandit.toml"
    mypy.write_text(MYPY_CONFIG)
    bandit.write_text(BANDIT_CONFIG)
    return mypy, bandit


def gated_tests(paths: Iterable[str]) -> list[str]:
    """The test files among repo-relative ``paths`` (what mypy checks), sorted."""
    return sorted(path for path in paths if is_test_file(path))


def gated_sources(paths: Iterable[str]) -> list[str]:
    """The Python source files under ``agent_framework/`` among repo-relative ``paths`` (what bandit checks)."""
    return sorted(
        path for path in paths if path.endswith(".py") and PurePosixPath(path).is_relative_to(CORE_SOURCE.as_posix())
    )


def present(repo: Path, paths: list[str]) -> list[str]:
    """The ``paths`` that exist in ``repo`` (a file the change creates is absent before it)."""
    return [path for path in paths if (repo / path).is_file()]


def mypy_arguments(config: Path, cache: Path, tests: list[str]) -> list[str]:
    """Mypy's arguments as upstream passes them, for repo-relative test paths, to run from ``python/``."""
    relative = [str(PurePosixPath(path).relative_to(WORKSPACE)) for path in tests]
    return [
        "--config-file", str(config), "--cache-dir", str(cache), "--explicit-package-bases", "--namespace-packages",
        "--no-color-output", "--no-error-summary", "--no-pretty", *relative,
    ]  # fmt: skip


def mypy_key(repo: Path, tests: list[str], environment: str) -> tuple[str, ...]:
    """What mypy's findings on ``tests`` in ``repo`` depend on, by content.

    The checkout's tree (the tests, the core package installed from it, upstream's settings), the restated
    configuration, the files checked and the environment: the Python and the installed distributions, so mypy's
    version and pydantic's (its plugin), as pinned in ``pins.txt``.
    """
    return (tree(repo), MYPY_CONFIG, environment, *tests)


def mypy_findings(output: str) -> Counter[str]:
    """Mypy's errors keyed by file, code and message (no line numbers, which a change shifts)."""
    found: Counter[str] = Counter()
    for line in output.splitlines():
        match = MYPY_ERROR.match(line.strip())
        if match:
            found[f"{match['file']}: {match['code'] or 'error'}: {match['message']}"] += 1
    return found


def bandit_arguments(config: Path, sources: list[str]) -> list[str]:
    """Bandit's arguments for repo-relative source paths, to run from the repo root, reporting JSON."""
    return ["-c", str(config), "--format", "json", "--quiet", *sources]


def bandit_findings(report: str) -> Counter[str]:
    """Bandit's findings keyed by file, test id, severity and text (no line numbers)."""
    start = report.find("{")
    try:
        data = cast("dict[str, Any]", json.loads(report[start:])) if start >= 0 else {}
    except ValueError as error:
        raise RunguardError(f"bandit's report is not JSON: {error}") from error
    if start < 0 or "results" not in data:
        raise RunguardError(f"bandit printed no report: {report.strip()[:200]!r}")
    found: Counter[str] = Counter()
    for item in cast("list[dict[str, Any]]", data["results"]):
        found[f"{item['filename']}: {item['test_id']} ({item['issue_severity']}): {item['issue_text']}"] += 1
    return found
