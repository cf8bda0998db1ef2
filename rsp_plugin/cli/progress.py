"""A progress line on stderr for replays that take a while: rows, rows set aside, results, rate.

Nothing is shown during the first `after` seconds (a short run prints nothing);
then one line every `every` seconds, redrawn in place on a terminal and written
as plain lines elsewhere (a log), with a bar when the total is known. A record
set aside is printed through `note`, which clears the line first.

The clock is passed in (`clock=time.monotonic`), so a test can drive it:

>>> import io
>>> err, now = io.StringIO(), [0.0]
>>> progress = Progress(err, clock=lambda: now[0], total_rows=200)
>>> progress.update(rows=50, set_aside=1, results=3)      # within the first seconds: silent
>>> now[0] = 4.0; progress.update(rows=100, set_aside=1, results=7)
>>> progress.finish()
>>> print(err.getvalue().strip())
rsp-plugin: 100 rows, 1 set aside, 7 results, 25 rows/s  [############............]  50%
rsp-plugin: 100 rows, 1 set aside, 7 results in 4.0 s, 25 rows/s
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class Progress:
    def __init__(self, err: TextIO | None = None, *, clock: Callable[[], float] = time.monotonic,
                 total_rows: int | Callable[[], int | None] | None = None, after: float = 3.0,
                 every: float | None = None, width: int = 24):
        self.err = err or sys.stderr
        self.clock = clock
        self.start = clock()
        self._total = total_rows
        self.after = after
        self.tty = bool(getattr(self.err, "isatty", lambda: False)())
        self.every = every if every is not None else (0.5 if self.tty else 5.0)
        self.width = width
        self.shown_at: float | None = None
        self.shown = False
        self.drawn = False
        self.state = (0, 0, 0)

    def total(self) -> int | None:
        if callable(self._total):
            self._total = self._total()
        return self._total

    def update(self, *, rows: int, set_aside: int, results: int) -> None:
        self.state = (rows, set_aside, results)
        now = self.clock()
        if now - self.start < self.after:
            return
        if self.shown_at is not None and now - self.shown_at < self.every:
            return
        self.shown_at = now
        self.shown = True
        line = self._line(now)
        total = self.total()
        if total:
            done = min(1.0, rows / total)
            filled = int(done * self.width)
            line += f"  [{'#' * filled}{'.' * (self.width - filled)}] {done:4.0%}"
        self._draw(line)

    def _line(self, now: float, final: bool = False) -> str:
        rows, set_aside, results = self.state
        elapsed = max(now - self.start, 1e-9)
        took = f" in {elapsed:.1f} s" if final else ""
        return (f"rsp-plugin: {rows:,} rows, {set_aside:,} set aside, {results:,} results{took}, "
                f"{rows / elapsed:,.0f} rows/s")

    def _draw(self, line: str) -> None:
        if self.tty:
            self.err.write("\r" + line + "\x1b[K")
            self.drawn = True
        else:
            self.err.write(line + "\n")
        self.err.flush()

    def note(self, text: str) -> None:
        """A line of its own (a record set aside), under the progress line."""
        if self.drawn:
            self.err.write("\r\x1b[K")
            self.drawn = False
        self.err.write(text + "\n")
        if self.tty and self.shown_at is not None:
            self.shown_at = None  # redraw at the next update

    def finish(self) -> None:
        """The last line, if any was shown."""
        if not self.shown:
            return
        now = self.clock()
        if self.drawn:
            self.err.write("\r\x1b[K")
            self.drawn = False
        self.err.write(self._line(now, final=True) + "\n")
        self.err.flush()


class Quiet:
    """`-q`: records set aside are still printed; no progress line."""

    def __init__(self, err: TextIO | None = None):
        self.err = err or sys.stderr

    def update(self, **_) -> None:
        pass

    def note(self, text: str) -> None:
        self.err.write(text + "\n")

    def finish(self) -> None:
        pass


__all__ = ["Progress", "Quiet"]
