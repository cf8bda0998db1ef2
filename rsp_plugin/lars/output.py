"""The output: the derived facts that hold now, each until its horizon, and what changed.

A fact derived at t with horizon h holds on [t, h] (DESIGN.md: the output at t
is the atoms derived by rules that hold at t). A consumer that keeps the
snapshot pays for changes only: `started` when a fact begins to hold, `stopped`
at the first time point after its horizon, unless a later derivation moved it.

Facts are kept per predicate (`until[predicate][args]`) and the horizon
buckets are flat lists `[predicate, args, predicate, args, ...]`: expiring a
fact touches the argument tuple the views just touched, and nothing else.
"""

from __future__ import annotations

from collections import deque
from itertools import chain, compress, repeat
from operator import eq, itemgetter

from ..core.time import NEVER_EXPIRES

Fact = tuple[int, tuple[int, ...]]


class Output:
    __slots__ = ("until", "_stopping")

    def __init__(self) -> None:
        self.until: dict[int, dict[tuple, int]] = {}
        self._stopping: dict[int, list] = {}

    def __len__(self) -> int:
        return sum(len(table) for table in self.until.values())

    def table(self, predicate: int) -> dict[tuple, int]:
        found = self.until.get(predicate)
        if found is None:
            found = self.until[predicate] = {}
        return found

    def hold(self, predicate: int, table: dict[tuple, int], args: tuple, horizon: int, started: list) -> None:
        """`predicate(args)` holds until `horizon` (`table` is `self.table(predicate)`)."""
        old = table.get(args)
        if old is not None and horizon <= old:
            return
        table[args] = horizon
        if old is None:
            started.append((predicate, args))
        if horizon < NEVER_EXPIRES:
            bucket = self._stopping.get(horizon)
            if bucket is None:
                self._stopping[horizon] = [predicate, args]
            else:
                bucket.append(predicate)
                bucket.append(args)

    def hold_all(self, predicate: int, table: dict[tuple, int], out: list, started: list) -> None:
        """`hold` of each (args, horizon) of `out` in turn (a rule's derivations), inline; when
        they share one horizon (the usual), with whole-batch dict and list operations."""
        stopping = self._stopping
        horizons = set(map(_second, out))
        if len(horizons) == 1:
            (horizon,) = horizons
            derived = dict(out)
            if not table or table.keys().isdisjoint(derived.keys()):  # all new (the usual)
                table.update(derived)
                started += zip(repeat(predicate), derived)
                if horizon < NEVER_EXPIRES:
                    bucket = stopping.get(horizon)
                    if bucket is None:
                        stopping[horizon] = bucket = []
                    bucket += chain.from_iterable(zip(repeat(predicate), derived))
                return
            before = table.get
            changed = [args for args in derived if before(args, _BEFORE_ALL) < horizon]
            if not changed:
                return
            fresh = [args for args in changed if args not in table] if table else changed
            table.update(dict.fromkeys(changed, horizon))
            started += zip(repeat(predicate), fresh)
            if horizon < NEVER_EXPIRES:
                bucket = stopping.get(horizon)
                if bucket is None:
                    stopping[horizon] = bucket = []
                bucket += chain.from_iterable(zip(repeat(predicate), changed))
            return
        get = table.get
        start = started.append
        changed = []  # (args, horizon) in order: the stop buckets take them per horizon afterwards
        change = changed.append
        for pair in out:
            args, horizon = pair
            old = get(args)
            if old is None:
                start((predicate, args))
            elif horizon <= old:
                continue
            table[args] = horizon
            change(pair)
        if len(horizons) > 4:  # many horizons (`@T` heads): one bucket at a time
            for args, horizon in changed:
                if horizon < NEVER_EXPIRES:
                    bucket = stopping.get(horizon)
                    if bucket is None:
                        stopping[horizon] = [predicate, args]
                    else:
                        bucket.append(predicate)
                        bucket.append(args)
            return
        for horizon in horizons:
            if horizon < NEVER_EXPIRES:
                chosen = [args for args, end in changed if end == horizon]
                if chosen:
                    bucket = stopping.get(horizon)
                    if bucket is None:
                        stopping[horizon] = bucket = []
                    bucket += chain.from_iterable(zip(repeat(predicate), chosen))

    def stopped_at(self, now: int) -> list[Fact]:
        """The facts whose horizon was now - 1 and that no later derivation extended."""
        due = self._stopping.pop(now - 1, None)
        if not due:
            return []
        expired = now - 1
        until = self.until
        predicates = due[0::2]
        if predicates.count(predicates[0]) == len(predicates):  # one predicate: its facts at once
            predicate = predicates[0]
            table = until[predicate]
            candidates = due[1::2]
            # (the others got a later horizon)
            gone = list(compress(candidates, map(eq, map(table.get, candidates), repeat(expired))))
            if len(gone) > 1:
                gone = list(dict.fromkeys(gone))
            deque(map(table.__delitem__, gone), 0)
            return list(zip(repeat(predicate), gone))
        stopped = []
        for k in range(0, len(due), 2):  # one lookup per fact: most of them do stop
            predicate, args = due[k], due[k + 1]
            table = until[predicate]
            last = table.pop(args, None)
            if last == expired:
                stopped.append((predicate, args))
            elif last is not None:
                table[args] = last
        return stopped

    def facts(self) -> list[Fact]:
        return [(predicate, args) for predicate, table in self.until.items() for args in table]

    def horizon(self, fact: Fact) -> int | None:
        table = self.until.get(fact[0])
        return None if table is None else table.get(fact[1])


_second = itemgetter(1)
#: below every horizon (time points are within +-NEVER_EXPIRES)
_BEFORE_ALL = -(1 << 64)
