"""The grammars whose LALR tables are shipped, and `python -m rsp_plugin.query.grammar_tables`, which
writes them again after a grammar changes (`core/parser_tables.py` loads them; a test says when they are stale).
"""

from __future__ import annotations

from ..core.parser_tables import ShippedGrammar


def shipped_grammars() -> tuple[ShippedGrammar, ...]:
    """Every grammar whose tables are shipped (each declared by the module that parses with it)."""
    from ..lars.syntax import GRAMMAR as lars
    from .checker import GRAMMAR as sparql
    from .syntax import GRAMMAR as query

    return lars, query, sparql


if __name__ == "__main__":  # every grammar's tables written again
    for shipped in shipped_grammars():
        shipped.write()
        print(f"wrote {shipped.tables}")
