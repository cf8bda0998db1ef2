"""`LazyModule`: a module imported at the first use of one of its names, not at its importer's import.

polars costs ~0.1-0.2 s of CPU to import; a short `rsp-plugin query` whose windows are
joined by dicts and merged by numpy never calls it. A module that may not need it holds
`pl = LazyModule("polars")` where it had `import polars as pl`, and uses it the same way:

>>> json = LazyModule("json")
>>> json.dumps([1]), isinstance(json.loads("{}"), dict)
('[1]', True)
>>> LazyModule("polars").holds([], "DataFrame")  # (not imported for this: a list is no DataFrame)
False
"""

from __future__ import annotations

import importlib
import sys


class LazyModule:
    """The module `name`, imported when one of its names is first read; each name read is then kept
    on this object (a later `pl.col` costs an attribute read, no `__getattr__` on the way)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") or attribute == "_name":  # (copy and the like ask before __init__ ran)
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)
        return value

    def holds(self, value, class_name: str) -> bool:
        """isinstance(value, module.class_name), without importing the module for it: a value of one of
        its classes exists only once the module was imported."""
        module = sys.modules.get(self._name)
        return module is not None and isinstance(value, getattr(module, class_name))

    def __repr__(self) -> str:
        return f"LazyModule({self._name!r})"
