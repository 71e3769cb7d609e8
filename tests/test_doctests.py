"""Every example in the package's docstrings is true: doctest over each module (a module's own test may run it too)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import wrkreport

MODULES = sorted(m.name for m in pkgutil.walk_packages(wrkreport.__path__, "wrkreport.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert (
        result.failed == 0
    ), f"{result.failed} of {result.attempted} docstring examples of {name} failed (run: python3 -m pytest --doctest-modules {module.__file__})"


def test_the_examples_are_found():
    assert len(MODULES) > 50
    assert sum(doctest.testmod(importlib.import_module(n)).attempted for n in ("wrkreport.charts.changes", "wrkreport.core.setups")) >= 3
