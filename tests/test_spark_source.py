"""The `rdf` data source: files read in Spark's executors into `(stream, s, p, o, ts, rejected)` rows.

What a file holds, what comes out: every format, every way to time an element,
dead letters at the right line (also when a large file is split into several
parse tasks), files that arrive and files that grow while a stream reads the
directory, and Spark's own text source parsed into the same rows.
"""

from __future__ import annotations

import os

import pytest

from rsp_plugin.io.formats import Rejected, read_tnt
from rsp_plugin.spark.source import SourceOptionError, SourceOptions
from rsp_plugin.core.terms import Dictionary

pytestmark = pytest.mark.spark

EX = "http://ex/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"


def in_order(items) -> list[tuple]:
    return sorted(items, key=lambda row: tuple("" if value is None else str(value) for value in row))


def rows(frame) -> list[tuple]:
    return in_order(tuple(row) for row in frame.select("stream", "s", "p", "o", "ts", "rejected").collect())


def test_each_format_and_each_way_to_time_an_element(spark, tmp_path):
    (tmp_path / "a.tnt").write_text(f'1500 <{EX}a> <{EX}p> "5"^^{INT} .\n'
                                    f"2004-08-08T06:05:00Z <{EX}a> <{EX}p> <{EX}b> .\n")
    (tmp_path / "b.nt").write_text(f'<{EX}c> <{EX}p> "x"@en .\n')
    (tmp_path / "c.ttl").write_text(f"@prefix ex: <{EX}> . ex:d ex:p ex:e .\n")
    (tmp_path / "d.trig").write_text(f"<{EX}g> {{ <{EX}f> <{EX}p> <{EX}h> . }}\n"
                                     f'<{EX}g> <http://www.w3.org/ns/prov#generatedAtTime> "700" .\n')
    (tmp_path / "e.nq").write_text(f"<{EX}i> <{EX}p> <{EX}j> <{EX}g2> .\n"
                                   f'<{EX}g2> <http://www.w3.org/ns/prov#generatedAtTime> "800" .\n')
    (tmp_path / "_partial.tnt").write_text("being written\n")
    plain = spark.read.format("rdf").option("stream", f"{EX}s").option("timestamp", "2500")
    assert rows(plain.load(str(tmp_path / "b.nt"))) == [(f"{EX}s", f"<{EX}c>", f"<{EX}p>", '"x"@en', 2500, None)]
    got = rows(spark.read.format("rdf").option("stream", f"{EX}s").load(str(tmp_path / "a.tnt")))
    assert got == [(f"{EX}s", f"<{EX}a>", f"<{EX}p>", f'"5"^^{INT}', 1500, None),
                   (f"{EX}s", f"<{EX}a>", f"<{EX}p>", f"<{EX}b>", 1091945100000, None)]
    for name, expected in [("d.trig", (f"<{EX}f>", 700)), ("e.nq", (f"<{EX}i>", 800))]:
        (row,) = rows(spark.read.format("rdf").option("stream", f"{EX}s").load(str(tmp_path / name)))
        assert (row[1], row[4]) == expected
    stamp = int((tmp_path / "c.ttl").stat().st_mtime * 1000)
    (row,) = rows(spark.read.format("rdf").option("stream", f"{EX}s").option("timestamp", "arrival")
                  .load(str(tmp_path / "c.ttl")))
    assert row[1:] == (f"<{EX}d>", f"<{EX}p>", f"<{EX}e>", stamp, None)


def test_file_name_timestamps_as_csrbench_names_its_files(spark, tmp_path):
    for second in (0, 1, 12):
        (tmp_path / f"data_{second:02d}.ttl").write_text(f"<{EX}o{second}> <{EX}p> <{EX}v> .\n")
    frame = (spark.read.format("rdf").option("stream", f"{EX}s").option("timestamp", "filename")
             .option("timestampScale", "1000").load(str(tmp_path)))
    assert [(row[1], row[4]) for row in rows(frame)] == [(f"<{EX}o0>", 0), (f"<{EX}o12>", 12000), (f"<{EX}o1>", 1000)]


def test_dead_letters_name_file_and_line_also_when_a_large_file_is_split(spark, tmp_path):
    path = tmp_path / "big.tnt"
    lines = []
    for number in range(9000):
        if number % 997 == 5:
            lines.append(f"{number} <{EX}s{number}> <{EX}p> .")
        elif number % 1499 == 7:
            lines.append(f"noon <{EX}s{number}> <{EX}p> <{EX}o> .")
        else:
            lines.append(f'{number} <{EX}sensor{number % 50}> <{EX}temperature> "{number % 97}"^^{INT} .')
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 3 * 256 * 1024
    frame = spark.read.format("rdf").option("stream", f"{EX}s").option("numPartitions", "3").load(str(path))
    assert frame.rdd.getNumPartitions() == 3
    local = list(read_tnt(lines, Dictionary(), tick_ms=1, filename=str(path)))
    expected_dead = sorted(str(r) for r in local if isinstance(r, Rejected))
    got = frame.collect()
    assert sorted(row.rejected for row in got if row.rejected) == expected_dead
    assert len(expected_dead) == 16
    assert sum(1 for row in got if row.rejected is None) == 9000 - 16


def test_a_stream_takes_new_files_and_new_lines_of_a_growing_file(spark, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    seen: list[tuple] = []

    def collect(batch, batch_id):
        seen.extend(tuple(row) for row in batch.select("s", "ts", "rejected").collect())

    growing = source / "a.tnt"
    growing.write_text(f"100 <{EX}a> <{EX}p> <{EX}o> .\n200 <{EX}b> <{EX}p> <{EX}o> .\n300 <{EX}c> <{EX}p>")
    query = (spark.readStream.format("rdf").option("stream", f"{EX}s").option("maxLinesPerTrigger", "1")
             .load(str(source)).writeStream.foreachBatch(collect).trigger(processingTime="100 milliseconds").start())
    try:
        query.processAllAvailable()
        assert seen == [(f"<{EX}a>", 100, None), (f"<{EX}b>", 200, None)], "one line per batch; no half line"
        with growing.open("a") as handle:
            handle.write(f" <{EX}o> .\n")
        (source / ".b.tnt.tmp").write_text(f"400 <{EX}d> <{EX}p> <{EX}o> .\nbroken\n")
        os.replace(source / ".b.tnt.tmp", source / "b.tnt")
        query.processAllAvailable()
    finally:
        query.stop()
    assert seen[2:] == [(f"<{EX}c>", 300, None), (f"<{EX}d>", 400, None),
                        (None, None, f"{source / 'b.tnt'}:2: expected a timestamp and a triple: TIMESTAMP <s> <p> <o> .")]


def test_sparks_own_text_source_gives_the_same_rows(spark, tmp_path):
    from rsp_plugin.spark.lines import tnt_lines

    source = tmp_path / "in"
    source.mkdir()
    (source / "a.tnt").write_text(f'5 <{EX}a> <{EX}p> "1"^^{INT} .\nbad line\n7 <{EX}b> <{EX}p> <{EX}c> .\n')
    ours = rows(spark.read.format("rdf").option("stream", f"{EX}s").load(str(source)))
    theirs = rows(tnt_lines(spark.read.text(str(source)), f"{EX}s", name=str(source / "a.tnt")))
    assert theirs == ours
    assert sum(1 for row in ours if row[5]) == 1
    streamed: list[tuple] = []
    query = (tnt_lines(spark.readStream.text(str(source)), f"{EX}s", name=str(source / "a.tnt"))
             .writeStream.foreachBatch(lambda batch, _: streamed.extend(map(tuple, batch.collect())))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    assert in_order(streamed) == ours


@pytest.mark.parametrize("options, message", [
    ({}, "the rdf source needs a path"),
    ({"path": "x", "format": "csv"}, "format 'csv': expected auto, tnt, nt, ttl, trig or nq"),
    ({"path": "x", "timestamp": "soon"}, "timestamp 'soon': expected inline, graph, filename, arrival or an integer"),
    ({"path": "x", "maxLinesPerTrigger": "0"}, "maxlinespertrigger: expected a positive integer, got '0'"),
])
def test_option_mistakes_are_said_in_one_line(options, message):
    with pytest.raises(SourceOptionError, match="^" + message.replace("(", r"\(")):
        SourceOptions.from_options(options)


def _rows_of_blocks(piece, stream="S"):
    from rsp_plugin.spark.source import read_piece

    rows = []
    for batch in read_piece(piece, stream):
        data = batch.to_pydict()
        assert set(data["stream"]) == {stream}
        rows += list(zip(data["s"], data["p"], data["o"], data["ts"], data["rejected"]))
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_the_block_reader_gives_the_per_line_readers_rows(tmp_path, seed):
    """Executors read line formats a block at a time; each piece gives the rows (terms, times, dead
    letters, in line order) that the per-line readers give it."""
    import random

    from rsp_plugin.spark.source import SourceOptions, _pieces, parse_piece

    draw = random.Random(seed)
    kinds = [
        "{t} <http://ex/s{n}> <http://ex/p> <http://ex/o{m}> .",
        '{t} <http://ex/s{n}> <http://ex/v> "{m}"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        '{t} <http://ex/s{n}> <http://ex/v> "0{m}"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        '{t} _:b{n} <http://ex/l> "a\\"b{m}"@en .',
        "{t}  <http://ex/s{n}>   <http://ex/p> <http://ex/o> . # spaced",
        "{t} <http://ex/s{n}> <http://ex/p> .",
        "not a triple {n}",
        "",
        "# a comment {n}",
        "{t} <http://ex/s{n}> <http://ex/p> <bad iri> .",
    ]
    lines = []
    for n in range(draw.randrange(50, 400)):
        kind = draw.choice(kinds) if draw.random() < 0.4 else kinds[0]
        lines.append(kind.format(t=n // 3 * 10, n=n, m=draw.randrange(9)))
    data = "\n".join(lines).encode() + (b"\n" if draw.random() < 0.5 else b"")
    if draw.random() < 0.3:
        place = draw.randrange(len(data))
        data = data[:place] + b"\xff\xfe" + data[place:]
    for suffix in (".tnt", ".nt"):
        path = tmp_path / f"s{seed}{suffix}"
        body = data if suffix == ".tnt" else b"\n".join(line.split(b" ", 1)[-1] for line in data.split(b"\n"))
        path.write_bytes(body)
        options = SourceOptions.from_options({"path": str(path), "numPartitions": "3"})
        size = path.stat().st_size
        for piece in _pieces(options, path, 0, size, 0):
            assert _rows_of_blocks(piece) == list(parse_piece(piece))


@pytest.mark.parametrize("seed", range(3))
def test_a_line_budget_ends_a_micro_batch_after_that_many_lines(tmp_path, seed):
    """`_scan_lines` (where a trigger's `maxLinesPerTrigger` ends) against counting byte by byte:
    any start, end and budget, lines across its 4 MB blocks."""
    import random

    from rsp_plugin.spark import source

    draw = random.Random(seed)
    path = tmp_path / "lines.tnt"
    text = b"".join(b"x" * draw.choice([0, 3, 70, 700_000]) + (b"\n" if draw.random() < 0.9 else b"")
                    for _ in range(40))
    path.write_bytes(text)

    def counted(begin: int, size: int, budget):
        lines, end = 0, begin
        for position in range(begin, size):
            if text[position] == 10:
                if budget is not None and lines >= budget:
                    break
                lines, end = lines + 1, position + 1
        return end, lines

    for _ in range(30):
        begin = draw.randrange(0, len(text) + 1)
        size = draw.randrange(begin, len(text) + 1)
        budget = draw.choice([None, 1, 2, 5, 17, 1000])
        assert source._scan_lines(path, begin, size, budget) == counted(begin, size, budget)


@pytest.mark.parametrize("budget", [None, 12_000])
def test_dead_letters_keep_their_lines_when_the_planner_counts_none(tmp_path, budget):
    """Reading all there is, the planner counts no lines (a pass over every byte while the executors
    wait): a piece counts the lines before it when it names a dead letter. A file that grows, read in
    micro-batches of pieces of three tasks, with and without a line budget: each dead letter named at
    the line the local reader names."""
    from rsp_plugin.spark.source import RDFStreamReader, read_piece

    path = tmp_path / "growing.tnt"
    lines = []
    for number in range(27_000):
        if number % 1_013 == 11:
            lines.append(f"soon <{EX}s{number}> <{EX}p> <{EX}o> .")
        else:
            lines.append(f'{number} <{EX}sensor{number % 50}> <{EX}temperature> "{number % 97}"^^{INT} .')
    options = {"path": str(path), "numPartitions": "3", "stream": f"{EX}s"}
    if budget is not None:
        options["maxLinesPerTrigger"] = str(budget)
    reader = RDFStreamReader(SourceOptions.from_options(options))
    offset, dead, triples, split = reader.initialOffset(), [], 0, False
    for part in range(3):
        with path.open("a") as handle:
            handle.write("\n".join(lines[part * 9_000:(part + 1) * 9_000]) + "\n")
        while True:
            end = reader.latestOffset(offset, reader.getDefaultReadLimit())
            if end == offset:
                break
            if budget is None:
                assert end["line"] is None, "nothing counted"
            pieces = reader.partitions(offset, end)
            split |= len(pieces) > 1
            for piece in pieces:
                for batch in read_piece(piece, f"{EX}s"):
                    rejected = batch.column("rejected").to_pylist()
                    dead += [text for text in rejected if text is not None]
                    triples += rejected.count(None)
            offset = end
    assert split
    expected = [str(r) for r in read_tnt(lines, Dictionary(), tick_ms=1, filename=str(path)) if isinstance(r, Rejected)]
    assert dead == expected and len(expected) == 27
    assert triples == 27_000 - 27
