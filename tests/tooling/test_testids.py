"""Which tests a module defines, and which a new version of it adds."""

from __future__ import annotations

from scripts.evidence import junit_name
from scripts.testids import added_tests, defined_tests

MODULE = """
def test_a(): pass
async def test_b(): pass
def helper(): pass
class TestC:
    def test_d(self): pass
    def helper(self): pass
class Helper:
    def test_e(self): pass
"""


def test_functions_and_test_class_methods_are_named_as_pytest_does() -> None:
    assert defined_tests(MODULE) == ["test_a", "test_b", "TestC::test_d"]


def test_added_is_what_the_new_version_defines_and_the_old_did_not() -> None:
    after = MODULE + "\nasync def test_new(): pass\nclass TestF:\n    def test_g(self): pass\n"
    assert added_tests(MODULE, after) == ["test_new", "TestF::test_g"]
    assert added_tests(after, MODULE) == []


def test_node_ids_match_the_names_junit_gives_them() -> None:
    assert junit_name("tests/workflow/test_a.py::test_b") == "tests.workflow.test_a::test_b"
    assert junit_name("tests/workflow/test_a.py::TestC::test_d") == "tests.workflow.test_a.TestC::test_d"
