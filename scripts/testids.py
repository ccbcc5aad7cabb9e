"""The tests a test module defines, as pytest node ids: what a patch adds is the difference of two versions."""

from __future__ import annotations

import ast


def _test_functions(body: list[ast.stmt]) -> list[str]:
    functions = (node for node in body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
    return [function.name for function in functions if function.name.startswith("test")]


def defined_tests(source: str) -> list[str]:
    """Module-level test functions (``test_x``) and test methods of ``Test*`` classes (``TestX::test_y``)."""
    body = ast.parse(source).body
    names = _test_functions(body)
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names += [f"{node.name}::{name}" for name in _test_functions(node.body)]
    return names


def added_tests(before: str, after: str) -> list[str]:
    """The tests ``after`` defines that ``before`` does not, in ``after``'s order."""
    known = set(defined_tests(before))
    return [name for name in defined_tests(after) if name not in known]
