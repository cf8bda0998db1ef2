"""The public API's docstring examples run as tests (pyoxigraph's test_doc.py)."""

import doctest
import importlib
import pkgutil

import pytest

import rsp_plugin

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(rsp_plugin.__path__, "rsp_plugin.") if "spark" not in info.name
    and not info.name.endswith("__main__")  # (importing it runs the command line)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
