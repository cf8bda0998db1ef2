"""The service under load: 1M triples from 4 concurrent clients while 10 queries are registered.

Every report the service sends (by Server-Sent Events) must be one the command line's replay of the
same streams makes, none lost, none twice; the server's memory must settle; the push latency is
reported. RSP_PLUGIN_LOAD_TRIPLES sets the size (default 1,000,000)."""

from __future__ import annotations

import os

import pytest

from rsp_plugin.bench.serve import queries, replay, run_load, start_server, workload
from service_helpers import bare, free_port

pytestmark = pytest.mark.load


def test_a_million_triples_from_four_clients_lose_and_repeat_no_report(capsys):
    triples = int(os.environ.get("RSP_PLUGIN_LOAD_TRIPLES", 1_000_000))
    streams = workload(triples, clients=4)
    texts = queries(4)
    port = free_port()
    server = start_server(port)
    try:
        report = run_load(f"http://127.0.0.1:{port}", streams, texts, pid=server.pid)
    finally:
        server.terminate()
        server.wait(30)
    expected = replay(streams, texts)
    assert report.triples == triples
    assert set(report.reports) == set(expected) and len(expected) == 10
    for name, sent in report.reports.items():
        assert [r["seq"] for r in sent] == list(range(1, len(sent) + 1)), name  # none lost, none twice
        assert [bare(r) for r in sent] == expected[name], name
    assert sum(map(len, expected.values())) > 10 * (triples // 4 // 1000) * 0.8  # the queries did report
    # memory settles: the windows are full after a few seconds of stream time, the vocabulary repeats
    quarter = next(rss for pushed, rss in report.rss_samples if pushed >= triples // 4)
    end = report.rss_samples[-1][1]
    assert end - quarter < 64 * 1024, report.rss_samples  # kB
    with capsys.disabled():
        print(f"\nservice load: {report.triples:,} triples in {report.seconds:.1f} s ({report.throughput:,.0f}/s), "
              f"push p50 {report.latency(0.5):.0f} ms, p99 {report.latency(0.99):.0f} ms, "
              f"{sum(map(len, report.reports.values())):,} reports, RSS {quarter / 1024:.0f} MB at 1/4, "
              f"{end / 1024:.0f} MB at the end")
