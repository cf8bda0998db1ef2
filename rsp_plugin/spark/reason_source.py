"""The `rsp-reason` data source: a rule stream file as rows of `reason_rows.SCHEMA`, parsed in the executors.

    spark.read.format("rsp-reason").option("reading", reading_json).load(path)          # the whole file
    spark.readStream.format("rsp-reason").option("reading", ...).option("maxLinesPerTrigger", 50000).load(path)

The file is one stream file of `rsp-plugin reason --stream FILE`: `.stream`
atom lines, `.tnt` triples, or a DatalogMTL dataset; how it is read (the
program's reader, prefixes and `@tick`: `reason_rows.Reading`) comes as JSON in
the `reading` option. Pieces are cut at newlines (`numPartitions` tasks for a
large range) and each is read by `reason_rows.read_piece`; a piece of atom lines
is told the `@prefix` lines before it (the planner scans for them once, going
on where it stopped). Streaming offsets are `{"byte": b, "line": l}`: the file
up to byte b (line l) was read; only whole lines are read, so a file that grows
is tailed.
"""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from .reason_rows import SCHEMA, Reading, declared_prefixes, read_piece
from .source import _TARGET_PIECE_BYTES, _after_newline, _newlines, _scan_lines

NAME = "rsp-reason"


class ReasonPiece(InputPartition):
    """Bytes [start, end) of the file, its first line numbered `first_line` + 1, with the prefixes it knows."""

    def __init__(self, start: int, end: int, first_line: int, prefixes: dict):
        super().__init__(start)
        self.start, self.end, self.first_line, self.prefixes = start, end, first_line, prefixes


def reading_option(reading: Reading) -> str:
    return json.dumps({"path": reading.path, "language": reading.language, "kind": reading.kind,
                       "prefixes": list(reading.prefixes), "tick_ms": reading.tick_ms,
                       "max_line_bytes": reading.max_line_bytes})


def _reading(options) -> Reading:
    value = json.loads(dict(options)["reading"])
    return Reading(value["path"], value["language"], value["kind"], tuple(tuple(pair) for pair in value["prefixes"]),
                   value["tick_ms"], value["max_line_bytes"])


class ReasonDataSource(DataSource):
    """`format("rsp-reason")`: a rule stream file as rows (`reason_rows`)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SCHEMA

    def reader(self, schema) -> DataSourceReader:
        return _BatchReader(_reading(self.options), _partitions(self.options))

    def streamReader(self, schema) -> DataSourceStreamReader:
        options = {str(key).lower(): value for key, value in dict(self.options).items()}
        limit = options.get("maxlinespertrigger")
        return _StreamReader(_reading(self.options), _partitions(self.options), int(limit) if limit else None)


def _partitions(options) -> int:
    options = {str(key).lower(): value for key, value in dict(options).items()}
    return max(1, int(options.get("numpartitions", 2)))


class _Planner:
    """Cuts byte ranges into pieces and tells each the prefixes declared before it."""

    def __init__(self, reading: Reading, partitions: int):
        self.reading = reading
        self.partitions = partitions
        self._scanned: tuple[int, dict] | None = None

    def prefixes_at(self, byte: int) -> dict:
        known = dict(self.reading.prefixes)
        if not self.reading.learns_prefixes:
            return known
        since = self._scanned if self._scanned is not None and self._scanned[0] <= byte else None
        declared = declared_prefixes(self.reading.path, byte, self.reading.max_line_bytes, since=since)
        self._scanned = (byte, declared)
        known.update(declared)
        return known

    def pieces(self, begin: int, end: int, first_line: int) -> list[ReasonPiece]:
        path = self.reading.path
        if end <= begin:
            return []
        count = max(1, min(self.partitions, (end - begin) // _TARGET_PIECE_BYTES))
        pieces = []
        cut, line = begin, first_line
        with open(path, "rb") as handle:
            for k in range(1, count + 1):
                stop = end if k == count else _after_newline(handle, begin + (end - begin) * k // count, end)
                if stop > cut:
                    pieces.append(ReasonPiece(cut, stop, line, self.prefixes_at(cut)))
                    line += _newlines(handle, cut, stop)
                    cut = stop
        return pieces


class _BatchReader(DataSourceReader):
    def __init__(self, reading: Reading, partitions: int):
        self.reading = reading
        self.planner = _Planner(reading, partitions)

    def partitions(self) -> list[ReasonPiece]:
        size = Path(self.reading.path).stat().st_size
        return self.planner.pieces(0, size, 0) or [ReasonPiece(0, 0, 0, {})]

    def read(self, partition: ReasonPiece):
        if partition.end > partition.start:
            yield from read_piece(self.reading, partition.start, partition.end, partition.first_line,
                                  partition.prefixes)


class _StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """New whole lines of the file as micro-batches, at most `limit` lines each."""

    def __init__(self, reading: Reading, partitions: int, limit: int | None):
        self.reading = reading
        self.planner = _Planner(reading, partitions)
        self.limit = limit
        self._cap: int | None = None

    def initialOffset(self) -> dict:
        return {"byte": 0, "line": 0}

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        return ReadMaxRows(self.limit) if self.limit else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._cap = Path(self.reading.path).stat().st_size

    def latestOffset(self, start: dict, limit=None) -> dict:
        budget = getattr(limit, "max_rows", None)
        size = self._cap if self._cap is not None else Path(self.reading.path).stat().st_size
        if start["byte"] >= size:
            return dict(start)
        end, lines = _scan_lines(Path(self.reading.path), start["byte"], size, budget)
        if end == start["byte"] and self._cap is not None:
            end, lines = size, 1  # the last line, without its newline: a replay reads it (the file is complete)
        return {"byte": end, "line": start["line"] + lines}

    def partitions(self, start: dict, end: dict) -> list[ReasonPiece]:
        return self.planner.pieces(start["byte"], end["byte"], start["line"])

    def read(self, partition: ReasonPiece):
        if partition.end > partition.start:
            yield from read_piece(self.reading, partition.start, partition.end, partition.first_line,
                                  partition.prefixes)

    def commit(self, end: dict) -> None:
        pass


def register(spark) -> None:
    spark.dataSource.register(ReasonDataSource)
