"""`LazyPattern`: a module's regular expression compiled at its first use, not at import.

Compiling a regular expression runs Python's own compiler (0.05-0.5 ms each); the modules a
short `rsp-plugin query` imports hold dozens it never uses (line formats it does not read,
messages for errors it does not make), ~5 ms of its start. A pattern such a run may not use is
made with `LazyPattern(...)` where it was `re.compile(...)`, and used the same way:

>>> NUMBER = LazyPattern(r"[0-9]+")
>>> NUMBER.fullmatch("42") is not None, NUMBER.sub("#", "a1b22"), NUMBER.pattern
(True, 'a#b#', '[0-9]+')
"""

from __future__ import annotations

import re

#: what a compiled pattern offers (`match`, `sub`, `pattern`, `groupindex`, ...)
_ATTRIBUTES = tuple(name for name in dir(re.Pattern) if not name.startswith("_"))


class LazyPattern:
    """`re.compile(pattern, flags)`, made when one of its attributes (`match`, `sub`, `pattern`,
    ...) is first asked for. The compiled pattern's attributes are then copied onto this object
    and it becomes a `CompiledPattern`: a later `x.match(...)` costs what it costs on the
    compiled pattern (no `__getattr__` left on the way).

    Only its attributes stand in for the compiled pattern: it is not a `re.Pattern` (give the
    `re` module's functions a compiled one)."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_source":  # (copy and the like ask before __init__ ran)
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        self.__class__ = CompiledPattern
        return getattr(self, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._source[0]!r}, {self._source[1]!r})"


class CompiledPattern:
    """A `LazyPattern` once used: the compiled pattern's attributes are its own."""

    __repr__ = LazyPattern.__repr__
