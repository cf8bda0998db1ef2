"""The driver's state saved with each committed micro-batch, so that a restarted job goes on where it stopped.

Spark's checkpoint keeps the sources' offsets and which batches committed; the
continuous-query engine (windows, materialization, annotations, the R2S
memory of ISTREAM / DSTREAM) lives in the driver and is saved here, under
`<checkpoint>/rsp-state/`, one file per committed batch, written whole and
renamed into place (a crash leaves the previous one intact). The two latest
are kept. The engine pickles whole (a query as its text, its plans made again on load).
"""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

_STATE = re.compile(r"state-(\d+)\.pickle\Z")
KEEP = 2


def dumps(state) -> bytes:
    """Pickle a driver state (an RSPEngine inside) so that `loads` gives it back."""
    return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


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
