"""Who reads the reports: Server-Sent Events and WebSocket readers, and webhook observers.

Every reader has a queue bounded in reports (`queue`) and in bytes of JSON
(`queue_bytes`); the reports are the engine's bytes, made once and shared. A
reader that falls that far behind is cut off (SSE, WebSocket): it reconnects and
asks for what it missed (`Last-Event-ID`, `?after=`) from the query's history. A
webhook observer POSTs each report as JSON to its URL, in order, retrying a
failed POST (`webhook_attempts`, doubling waits from `webhook_backoff` s); a
report that still fails is counted as failed, and when its queue is full the
oldest waiting report is dropped and counted: a dead endpoint never holds the
engine up.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import dataclass, field

from .settings import ServiceSettings


class Reader:
    """One SSE / WebSocket connection's queue of (seq, report JSON), bounded in reports and bytes."""

    def __init__(self, queries: set[str] | None, bound: int, bound_bytes: int):
        self.queries = queries  # None: every query
        self.queue: asyncio.Queue = asyncio.Queue()
        self.bound, self.bound_bytes = bound, bound_bytes
        self.waiting_bytes = 0
        self.cut = False

    def offer(self, name: str, seq: int, data: bytes) -> None:
        if self.cut or (self.queries is not None and name not in self.queries):
            return
        waiting = self.queue.qsize()
        if waiting and (waiting >= self.bound or self.waiting_bytes + len(data) > self.bound_bytes):
            self.cut = True  # too far behind (one report is always taken, however large)
            while not self.queue.empty():
                self.queue.get_nowait()
            self.waiting_bytes = 0
            self.queue.put_nowait(None)  # wakes the writer, which closes the connection
            return
        self.waiting_bytes += len(data)
        self.queue.put_nowait((seq, data))

    async def next(self) -> tuple[int, bytes] | None:
        """The next report, or None once the reader is cut off."""
        item = await self.queue.get()
        if item is not None:
            self.waiting_bytes -= len(item[1])
        return item


@dataclass
class Observer:
    id: str
    query: str
    url: str
    delivered: int = 0
    failed: int = 0
    dropped: int = 0
    attempts: int = 0
    last_error: str | None = None
    queue: deque = field(default_factory=deque, repr=False)
    waiting_bytes: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    task: asyncio.Task | None = field(default=None, repr=False)

    async def next_report(self) -> bytes:
        """The oldest report waiting (its JSON), once there is one."""
        while not self.queue:
            self.ready.clear()
            await self.ready.wait()
        data = self.queue.popleft()
        self.waiting_bytes -= len(data)
        return data

    def info(self) -> dict:
        return {"id": self.id, "query": self.query, "url": self.url, "delivered": self.delivered,
                "failed": self.failed, "dropped": self.dropped, "attempts": self.attempts,
                "waiting": len(self.queue), "last_error": self.last_error}


class Observers:
    """The readers and webhook observers of one service; `offer` is the engine's listener."""

    def __init__(self, settings: ServiceSettings):
        self.settings = settings
        self.readers: set[Reader] = set()
        self.webhooks: dict[str, Observer] = {}
        self._ids = itertools.count(1)
        self._client = None

    def offer(self, name: str, seq: int, data: bytes) -> None:
        for reader in list(self.readers):
            reader.offer(name, seq, data)
        for observer in self.webhooks.values():
            if observer.query != name:
                continue
            observer.queue.append(data)
            observer.waiting_bytes += len(data)
            while len(observer.queue) > 1 and (len(observer.queue) > self.settings.queue
                                               or observer.waiting_bytes > self.settings.queue_bytes):
                observer.waiting_bytes -= len(observer.queue.popleft())
                observer.dropped += 1
            observer.ready.set()

    def reader(self, queries: set[str] | None) -> Reader:
        reader = Reader(queries, self.settings.queue, self.settings.queue_bytes)
        self.readers.add(reader)
        return reader

    def drop(self, reader: Reader) -> None:
        self.readers.discard(reader)

    def add_webhook(self, query: str, url: str) -> Observer:
        observer = Observer(f"o{next(self._ids)}", query, url)
        if url.startswith(("mqtt://", "mqtts://")):  # reports published to a broker's topic (brokers.py)
            from .brokers import publishing_task

            work = publishing_task(observer, self.settings)()
        else:
            work = self._deliver(observer)
        observer.task = asyncio.get_running_loop().create_task(work)
        self.webhooks[observer.id] = observer
        return observer

    def remove_webhook(self, observer_id: str) -> Observer | None:
        observer = self.webhooks.pop(observer_id, None)
        if observer is not None and observer.task is not None:
            observer.task.cancel()
        return observer

    def remove_query(self, query: str) -> None:
        for observer in [o for o in self.webhooks.values() if o.query == query]:
            self.remove_webhook(observer.id)

    async def _deliver(self, observer: Observer) -> None:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.settings.webhook_timeout, follow_redirects=False)
        client = self._client
        while True:
            data = await observer.next_report()
            wait = self.settings.webhook_backoff
            for attempt in range(1, self.settings.webhook_attempts + 1):
                observer.attempts += 1
                try:
                    response = await client.post(observer.url, content=data,
                                                 headers={"content-type": "application/json"})
                    if response.status_code < 300:
                        observer.delivered += 1
                        break
                    observer.last_error = f"HTTP {response.status_code}"
                except httpx.HTTPError as error:
                    observer.last_error = f"{type(error).__name__}: {error}"[:200]
                if attempt == self.settings.webhook_attempts:
                    observer.failed += 1
                else:
                    await asyncio.sleep(wait)
                    wait *= 2

    async def close(self) -> None:
        for observer_id in list(self.webhooks):
            self.remove_webhook(observer_id)
        if self._client is not None:
            await self._client.aclose()


__all__ = ["Observer", "Observers", "Reader"]
