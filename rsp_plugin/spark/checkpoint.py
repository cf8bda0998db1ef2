"""The driver's state saved with each committed micro-batch, so that a restarted job goes on where it stopped.

Spark's checkpoint keeps the sources' offsets and which batches committed; the
continuous-query engine (windows, materialization, annotations, the R2S
memory of ISTREAM / DSTREAM) lives in the driver and is saved here, under
`<checkpoint>/rsp-state/`, one file per committed batch, written whole and
renamed into place (a crash leaves the previous one intact). The two latest
are kept.

The engine pickles whole, with one exception handled here: rdflib's SPARQL
algebra nodes (`CompValue`, an OrderedDict whose `__init__` needs a name)
pickle but do not unpickle by default; the pickler here rebuilds them.
"""

from __future__ import annotations

import io
import os
import pickle
import re
from collections import OrderedDict
from pathlib import Path

_STATE = re.compile(r"state-(\d+)\.pickle\Z")
KEEP = 2


def _new_comp_value(cls):
    value = cls.__new__(cls)
    OrderedDict.__init__(value)
    return value


def _set_attributes(value, attributes):
    value.__dict__.update(attributes)


class _EnginePickler(pickle.Pickler):
    """A pickler that also rebuilds rdflib's algebra nodes (CompValue and its subclasses, e.g. Expr).

    The node is made empty first and filled after (items, then attributes), so
    that cycles through it (an expression's context) pickle like any other.
    """

    def reducer_override(self, obj):
        if _COMP_VALUE is not None and isinstance(obj, _COMP_VALUE):
            items = [(key, dict.__getitem__(obj, key)) for key in list(dict.keys(obj))]
            return _new_comp_value, (type(obj),), dict(obj.__dict__), None, iter(items), _set_attributes
        return NotImplemented


try:
    from rdflib.plugins.sparql.parserutils import CompValue as _COMP_VALUE
except ImportError:  # pragma: no cover - rdflib is a dependency
    _COMP_VALUE = None


def dumps(state) -> bytes:
    """Pickle a driver state (an RSPEngine inside) so that `loads` gives it back."""
    buffer = io.BytesIO()
    _EnginePickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return buffer.getvalue()


def loads(data: bytes):
    return pickle.loads(data)


class StateStore:
    """Driver states by batch id in a directory: save after a batch, load the latest on restart."""

    def __init__(self, checkpoint: str | os.PathLike):
        self.directory = Path(checkpoint) / "rsp-state"

    def __repr__(self) -> str:
        return f"<StateStore {self.directory}>"

    def save(self, batch_id: int, state) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        data = dumps(state)
        final = self.directory / f"state-{batch_id}.pickle"
        partial = self.directory / f".state-{batch_id}.pickle.tmp"
        with partial.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, final)
        for old in self._saved()[:-KEEP]:
            old[1].unlink(missing_ok=True)

    def load(self):
        """The latest saved state, or None on a first run."""
        for _, path in reversed(self._saved()):
            try:
                return loads(path.read_bytes())
            except (EOFError, pickle.UnpicklingError):  # a torn file: fall back to the one before
                continue
        return None

    def _saved(self) -> list[tuple[int, Path]]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.iterdir():
            match = _STATE.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)
