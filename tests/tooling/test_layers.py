"""The tooling's layers: a module imports only from its own layer and the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.tooling.helpers import REPO_ROOT

SCRIPTS = REPO_ROOT / "scripts"
# Lowest first; packages of one rank do not import each other. The explorer and the benchmark, then the nox sessions
# and CI's matrix and merge (which merges the explorer's shards); the command line (scripts/cli.py) on top.
RANKS = {
    "series": 0, "sources": 1, "apply": 2, "validate": 3, "ship": 4, "site": 5, "explore": 6, "bench": 6, "sessions": 7,
    "ci": 7,
}  # fmt: skip
TOP = 8


def _layer(module: Path) -> str:
    relative = module.relative_to(SCRIPTS)
    return relative.parts[0] if len(relative.parts) > 1 else "top"


def _imported_layers(module: Path) -> set[str]:
    layers: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "scripts" and len(parts) > 1 and parts[1] in RANKS:
                layers.add(parts[1])
    return layers


MODULES = sorted(SCRIPTS.rglob("*.py"))


def test_every_package_has_a_layer() -> None:
    packages = {path.parent.name for path in SCRIPTS.glob("*/__init__.py")}
    assert packages == set(RANKS)


@pytest.mark.parametrize("module", MODULES, ids=lambda path: str(path.relative_to(SCRIPTS)))
def test_a_module_imports_only_its_own_and_lower_layers(module: Path) -> None:
    own = _layer(module)
    rank = RANKS.get(own, TOP)
    for layer in _imported_layers(module) - {own}:
        assert RANKS[layer] < rank, f"{module.relative_to(REPO_ROOT)} ({own}) imports the {layer} layer"
