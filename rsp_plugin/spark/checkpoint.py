"""The driver's state saved with each committed micro-batch, so that a restarted job goes on where it stopped.

Spark's checkpoint keeps the sources' offsets and which batches committed; the
continuous-query engine (windows, materialization, annotations, the R2S
memory of ISTREAM / DSTREAM) lives in the driver and is saved here, under
`<checkpoint>/rsp-state/`, one file per committed batch, written whole and
renamed into place (a crash leaves the previous one intact). Distributed mode
keeps its driver's state in `rsp-distributed/`, partitioned mode (whose keys'
engines are in Spark's state store) its counts and outputs' ends in
`rsp-partitioned/`. The two latest
are kept. A run's first state is saved before its first batch (`save_start`:
`state--1.json`, batch -1): it says where the outputs began, so that a run
killed after writing its first batch's reports and before saving that batch is
cut back there on restart (the batch is run again), as a run killed inside a
later batch is cut back to where the batch before it ended.

The files are plain, versioned data (`rsp_plugin.runtime.state`: a JSON object graph
authenticated with HMAC-SHA256), never pickles: whoever can write to the
checkpoint directory, without the key, cannot make the driver read anything
they wrote. The key is the user's (`key_file`: `--checkpoint-key FILE`, or
$RSP_PLUGIN_CHECKPOINT_KEY) or else `<checkpoint>/rsp-plugin.key`, made at the
first write with mode 0600. A file that is torn falls back to the one before; a
file that is foreign, does not authenticate, or is of another state format
stops the restart with a message that says which (a checkpoint of rsp-plugin
0.1.0, `state-N.pickle`, is named as such and never loaded).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..runtime.state import StateError, checkpoint_key, dumps, loads

_STATE = re.compile(r"state-(\d+|-1)\.json\Z")
_OLD_STATE = re.compile(r"state-(\d+)\.pickle\Z")
KEEP = 2
#: the batch id of the state saved before the first batch (`state--1.json`, batch -1)
START = -1

__all__ = ["KEEP", "StateError", "StateStore", "dumps", "loads"]


class StateStore:
    """Driver states by batch id in a directory: save after a batch, load the latest on restart."""

    def __init__(self, checkpoint: str | os.PathLike, key_file: str | os.PathLike | None = None,
                 folder: str = "rsp-state"):
        self.root = Path(checkpoint)
        #: `folder`: one per mode's state (driver mode `rsp-state`, distributed `rsp-distributed`,
        #: partitioned `rsp-partitioned`), so that no mode reads another's
        self.directory = self.root / folder
        self.key_file = key_file
        self._key: bytes | None = None

    def key(self, *, create: bool) -> bytes | None:
        """The key the states are authenticated with (made at the first write when none is given)."""
        if self._key is None:
            self._key = checkpoint_key(self.root, self.key_file, create=create)
        return self._key

    def __repr__(self) -> str:
        return f"<StateStore {self.directory}>"

    def save_start(self, state) -> None:
        """A new run's state before its first batch: where its outputs begin (a restart cuts them back there)."""
        self.save(START, state)

    def save(self, batch_id: int, state) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        data = dumps(state, key=self.key(create=True))
        final = self.directory / f"state-{batch_id}.json"
        partial = self.directory / f".state-{batch_id}.json.tmp"
        with partial.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, final)
        for old in self._saved()[:-KEEP]:
            old[1].unlink(missing_ok=True)

    def load(self):
        """The latest saved state, or None on a first run; `StateError` if the directory holds a
        state this version must not or cannot read (say which, never guess)."""
        key = self.key(create=False)  # (a key file given is checked now, not at the first write)
        saved = self._saved()
        if not saved:
            old = self._saved(_OLD_STATE)
            if old:
                loads(old[-1][1].read_bytes(), key=None, source=str(old[-1][1]))  # raises, naming both versions
            return None
        problem = None
        for _, path in reversed(saved):
            try:
                return loads(path.read_bytes(), key=key, source=str(path))
            except StateError as error:
                if not _torn(path):
                    raise
                problem = problem or error  # a torn file (a crash while writing): the one before
        raise problem

    def _saved(self, pattern=_STATE) -> list[tuple[int, Path]]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.iterdir():
            match = pattern.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)


def _torn(path: Path) -> bool:
    """A file cut short (its header says more bytes than there are), not one that was changed."""
    import json

    with path.open("rb") as handle:
        first = handle.readline()
        size = path.stat().st_size - len(first)
    try:
        header = json.loads(first)
    except ValueError:
        return not first.endswith(b"\n")
    return isinstance(header, dict) and isinstance(header.get("bytes"), int) and size < header["bytes"]
