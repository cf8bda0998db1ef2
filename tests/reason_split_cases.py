"""Programs that split (`rsp_plugin.spark.rule_split`), and a run of a distributed `reason` in this process.

`split_run` does what `reason --engine spark --mode distributed` does, with no
Spark: the stream file read in pieces by the executors' reader, the rows
judged on the "driver" (`reason_parts.admit`), given to parts (`assign`), each
part's engine run (`run_part`), the parts' rows merged into lines (`Merge`).
Slices can be made as short as one time point (`length`): the hardest test of
the margin. `sliced_run` is the other way of time slices, with no Spark: byte
ranges of the file, each read and run by one task (`reason_slices.run_task`).

Generators: `KeyedGenerator` writes key-local LARS programs (every atom of a
rule has one term first: a variable, or a constant in a few rules) over every
operator but tuple windows (windows, @T heads and bodies, `not`, comparisons,
arithmetic, recursion, facts, constants in heads); `SliceableGenerator` is the
LARS differential generator (`lars_cases.ProgramGenerator`) without tuple
windows and `@T` over the whole past, so that most of its programs have a
bounded reach.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random
from pathlib import Path

from lars_cases import CONSTANTS, ProgramGenerator

from rsp_plugin.cli.command_line import main


def local(program, stream, *extra) -> tuple[int, str, str]:
    """`rsp-plugin reason PROGRAM --stream STREAM ...` with `--engine local`: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["reason", str(program), "--stream", str(stream), *map(str, extra)])
    return status, out.getvalue(), err.getvalue()


def split_run(program_path, stream, *, parts: int = 3, pieces: int = 3, first: int | None = None,
              last: int | None = None, changes: bool = False, split=None, length: int | None = None,
              max_gap: int | None = 1_000_000, max_line_bytes: int | None = None) -> tuple[str, str, object]:
    """(stdout, stderr, the split) of a distributed run done here: `pieces` file pieces, `parts` parts (or
    slices `length` time points long), `split` forced (default: `split_of` the program)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rsp_plugin.mtl.run import detect_language
    from rsp_plugin.spark.reason_parts import Merge, admit, assign, plan_job, run_part
    from rsp_plugin.spark.reason_rows import DATALOGMTL, declared_prefixes, read_piece, reading_for
    from rsp_plugin.spark.rule_split import split_of

    language = detect_language(program_path, stream)
    text = Path(program_path).read_text()
    if language == DATALOGMTL:
        from rsp_plugin.mtl import load_program
        from rsp_plugin.mtl.syntax import parse_mtl

        lowered = load_program(text, str(program_path))
        program, source = lowered.program, parse_mtl(text, str(program_path))
    else:
        from rsp_plugin.lars.syntax import parse_program

        program = source = parse_program(text, str(program_path))
        lowered = None
    reading = reading_for(stream, language, source, max_line_bytes)
    data = Path(stream).read_bytes()
    cuts = [0]
    for k in range(1, pieces):
        at = data.find(b"\n", len(data) * k // pieces)
        if at >= 0 and at + 1 > cuts[-1]:
            cuts.append(at + 1)
    cuts.append(len(data))
    batches = []
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            prefixes = dict(reading.prefixes)
            if reading.learns_prefixes:
                prefixes.update(declared_prefixes(stream, a))
            batches.extend(read_piece(reading, a, b, data.count(b"\n", 0, a), prefixes, name=str(stream)))
    table = pa.Table.from_batches(batches)
    narrow = table.select(["line", "first", "last", "predicate", "rejected"]).append_column(
        "arity", pc.list_value_length(table.column("args")).fill_null(0))
    admission = admit(language, narrow, terms=program.terms, lowered=lowered, first=first, last=last,
                      max_gap=max_gap, filename=str(stream))
    err = "".join(f"{record}\n" for record in admission.records)
    split = split if split is not None else split_of(program)
    if admission.span is None:
        return "", err, split
    job = plan_job(language, text, str(program_path), str(stream), program, split, admission.span, parts)
    if length and job.slices:
        start, end = admission.span
        job = dataclasses.replace(job, slices=tuple((a, min(a + length, end + 1))
                                                    for a in range(start, end + 1, length)))
    taken = table.filter(pc.is_null(table.column("rejected")))
    lines = np.asarray(taken.column("line").to_numpy())
    keep = np.ones(len(lines), dtype=bool)
    if admission.cut_line is not None:
        keep &= lines < admission.cut_line
    if admission.first is not None:
        keep &= np.asarray(taken.column("first").to_numpy()) >= admission.first
    if admission.dropped:
        keep &= ~np.isin(lines, np.array(admission.dropped))
    assigned = assign(job, taken.filter(pa.array(keep)))
    labels = np.asarray(assigned.column("part").to_numpy())
    outputs = [run_part(job, part, assigned.filter(pa.array(labels == part)).drop_columns(["part"]))
               for part in range(job.parts)]
    out = io.StringIO()
    try:
        Merge(job, out, changes).write(pa.concat_tables(outputs))
    except Exception as error:  # noqa: BLE001 - an engine's limit, as the command line says it
        err += f"rsp-plugin: {error}\n"
    return out.getvalue(), err, split


def sliced_run(program_path, stream, *, tasks: int = 3, first: int | None = None, last: int | None = None,
               changes: bool = False, max_gap: int | None = 1_000_000) -> str | None:
    """The stdout of a distributed run of a LARS program by time slices read straight from the file
    (`reason_slices`: `tasks` byte ranges, each task run here), or None if the driver's check finds the
    ranges do not read clean (the run then goes the general way, `split_run`'s)."""
    from rsp_plugin.lars.syntax import parse_program
    from rsp_plugin.spark.reason_rows import reading_for
    from rsp_plugin.spark.reason_slices import SliceJob, byte_cuts, declarations, run_task, verified
    from rsp_plugin.spark.rule_split import time_reach

    text = Path(program_path).read_text()
    program = parse_program(text, str(program_path))
    reach = time_reach(program)
    reading = reading_for(Path(stream).resolve(), "lars", program, None)
    size = Path(stream).stat().st_size
    job = SliceJob(reading, text, str(program_path), str(stream), reach.reach, first, last, max_gap, changes, True,
                   None, byte_cuts(str(stream), size, tasks),
                   declarations(str(stream), size, None) if reading.learns_prefixes else ())
    results = [run_task(job, k) for k in range(job.tasks)]
    if verified(job, [report for _, report in results]) is None:
        return None
    return "".join(text for text, _ in results)


# generators ------------------------------------------------------------------------------------------------------


class SliceableGenerator(ProgramGenerator):
    """`lars_cases.ProgramGenerator`, its windows all [RANGE n] and its @T within one."""

    def _extended(self, predicate, args, extensional, k, allow_at_var=True):
        rnd = self.random
        atom = f"{predicate}({','.join(args)})" if args else predicate
        if self.data_windows_only and not extensional:
            return atom, None
        kind = rnd.choices(["plain", "diamond", "box", "at"], [2, 3, 2 + 6 * self.box_bias, 2])[0]
        if kind == "plain":
            return atom, None
        window = f"[RANGE {rnd.choice([0, 1, 2, 3, 5])}]"
        if kind == "diamond":
            return f"{window} DIAMOND {atom}", None
        if kind == "box":
            return f"{window} BOX {atom}", None
        time = f"T{k}" if allow_at_var else str(rnd.randint(0, 6))
        return f"{window} @{time} {atom}", (time if allow_at_var else None)


class KeyedGenerator:
    """Key-local LARS programs: in every rule one term (X, or in a few rules a constant) is the first argument
    of every atom; layers of derived predicates, recursion inside a layer, `not` on lower ones."""

    KEYS = ["a", "b", "c", "d", "e"]
    DATA = {"d0": 1, "d1": 2, "d2": 2, "val": 2}

    def __init__(self, seed: int):
        self.random = rnd = random.Random(seed)
        self.layers = [{f"h{layer}{k}": rnd.choice([1, 2]) for k in range(rnd.randint(1, 2))}
                       for layer in range(rnd.randint(2, 3))]

    def program(self) -> str:
        rnd = self.random
        rules = []
        for layer, heads in enumerate(self.layers):
            for head, arity in heads.items():
                for _ in range(rnd.randint(1, 2)):
                    rules.append(self.rule(layer, head, arity))
        if rnd.random() < 0.4:  # a fact: holds in every part's engine, reported by its key's
            head, arity = rnd.choice(list(self.layers[0].items()))
            rules.append(f"{head}({','.join([rnd.choice(self.KEYS)] + ['z'] * (arity - 1))}) .")
        return "\n".join(rules) + "\n"

    def stream(self, length: int = 24) -> str:
        rnd = self.random
        lines = []
        for t in range(length):
            if rnd.random() < 0.15:
                continue
            for _ in range(rnd.randint(0, 6)):
                predicate = rnd.choice(list(self.DATA))
                key = rnd.choice(self.KEYS)
                if predicate == "val":
                    lines.append(f"{t} val({key},{rnd.randint(0, 5)})")
                elif self.DATA[predicate] == 1:
                    lines.append(f"{t} {predicate}({key})")
                else:
                    lines.append(f"{t} {predicate}({key},{rnd.choice(CONSTANTS)})")
            if rnd.random() < 0.6:  # long runs of one atom, so that BOX windows fill
                lines.append(f"{t} d0(a)")
        return "\n".join(lines) + "\n"

    def rule(self, layer: int, head: str, arity: int) -> str:
        rnd = self.random
        key = "X" if rnd.random() < 0.85 else rnd.choice(self.KEYS)
        options = [(p, a) for p, a in self.DATA.items()]
        for lower in self.layers[:layer]:
            options += list(lower.items())
        same = list(self.layers[layer].items())
        body, bound, times = [], ({key} if key == "X" else set()), []
        for k in range(rnd.randint(1, 3)):
            predicate, pred_arity = rnd.choice(options + (same if k > 0 and rnd.random() < 0.3 else []))
            args = [key] + [("N" if predicate == "val" else rnd.choice(["Y", "Y", "Z", "b"]))
                            for _ in range(pred_arity - 1)]
            atom = f"{predicate}({','.join(args)})"
            kind = rnd.choice(["plain", "plain", "diamond", "box", "at", "at_whole"])
            window = f"[RANGE {rnd.choice([0, 1, 2, 4])}]"
            if kind == "plain":
                body.append(atom)
            elif kind in ("diamond", "box"):
                body.append(f"{window} {kind.upper()} {atom}")
            else:
                time = f"T{k}"
                body.append(f"{window + ' ' if kind == 'at' else ''}@{time} {atom}")
                times.append(time)
                bound.add(time)
            bound |= {a for a in args if a[0].isupper()}
        numeric = sorted(v for v in bound if v == "N" or v.startswith("T"))
        if numeric and rnd.random() < 0.5:
            variable = rnd.choice(numeric)
            body.append(f"{variable} {rnd.choice(['<', '<=', '>', '>=', '!='])} {rnd.randint(1, 8)}")
        if layer > 0 and rnd.random() < 0.5:
            predicate, pred_arity = rnd.choice([p for lower in self.layers[:layer] for p in lower.items()]
                                               + [("d0", 1), ("d1", 2)])
            rest = sorted(v for v in bound if v in ("Y", "Z")) or ["b"]
            atom = f"{predicate}({','.join([key] + [rnd.choice(rest) for _ in range(pred_arity - 1)])})"
            window = rnd.choice(["", "[RANGE 2] DIAMOND ", "[RANGE 1] BOX "])
            body.append(f"not {window}{atom}")
        rest = sorted(v for v in bound if v in ("Y", "Z", "N")) or ["b"]
        head_text = f"{head}({','.join([key] + [rnd.choice(rest) for _ in range(arity - 1)])})"
        if times and rnd.random() < 0.3:
            head_text = f"@{rnd.choice(times)} {head_text}"
        return f"{head_text} :- {', '.join(body)} ."


def lars_stream(stream: dict[int, list[str]]) -> str:
    """A `lars_cases` stream ({t: atoms}) as `.stream` lines."""
    return "".join(f"{t} {atom}\n" for t in sorted(stream) for atom in stream[t])
