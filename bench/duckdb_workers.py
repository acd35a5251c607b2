"""What running DuckDB statements in worker processes costs (connectors/duckdb/worker.py).

    uv run python -m bench.duckdb_workers [--runs 50] [--fresh 5]

On the demo warehouse, with the default limits:
- first query: a new connector's first `run("SELECT 1")`, which starts its worker (a fresh
  interpreter importing DuckDB and opening the file): median of FRESH connectors;
- per query: `run()` on a warm worker against the same statement on an in-process cursor
  (what `run` did before: a cursor of its own, rows fetched 64 at a time and metered), median
  of RUNS each, for `SELECT 1` and for 1,000 demo rows (the row cap, pickled back to the bot);
- an idle worker's resident memory after those runs (VmRSS).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from connectors.demo.build import ensure_demo
from connectors.duckdb.connector import DuckDBConnector
from connectors.duckdb.worker import _stream
from connectors.limits import Meter, RunLimits

QUERIES = {
    "SELECT 1": "SELECT 1",
    "1,000 rows of orders": "SELECT * FROM orders LIMIT 1000",
}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def in_process(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """What `run` did in the bot process before: its own cursor, rows fetched 64 at a time and
    metered (kept up to the row cap, the rest counted)."""
    cursor = con.cursor()
    try:
        cursor.execute(sql)
        Meter(RunLimits()).read(_stream(cursor), 1000)
    finally:
        cursor.close()


def worker_rss_mib(module: str = "connectors.duckdb.worker") -> list[float]:
    """VmRSS of this process's workers running `module`."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            status = Path(f"/proc/{pid}/status").read_text()
            if module.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                kib = next(line.split()[1] for line in status.splitlines() if line[:6] == "VmRSS:")
                found.append(int(kib) / 1024)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--fresh", type=int, default=5)
    args = parser.parse_args()
    path = ensure_demo(Path(tempfile.gettempdir()) / "querybot-bench-demo")

    firsts = []
    for _ in range(args.fresh):
        connector = DuckDBConnector(path)
        started = time.perf_counter()
        connector.run("SELECT 1", max_rows=1, timeout_s=60)
        firsts.append(time.perf_counter() - started)
        connector.close()
    print(f"first query (starts a worker): median {statistics.median(firsts) * 1000:.0f} ms, "
          f"max {max(firsts) * 1000:.0f} ms over {args.fresh} connectors")  # fmt: skip

    connector = DuckDBConnector(path)
    con = connector._con  # the connector's own in-process connection, which `run` used before
    print("\n| query | in-process cursor (ms) | worker run() (ms) | overhead (ms) |")
    print("|---|---:|---:|---:|")
    for name, sql in QUERIES.items():
        connector.run(sql, max_rows=1000, timeout_s=60)  # warm
        in_process(con, sql)
        local = median_ms(lambda sql=sql: in_process(con, sql), args.runs)
        pooled = median_ms(
            lambda sql=sql: connector.run(sql, max_rows=1000, timeout_s=60), args.runs
        )
        print(f"| {name} | {local:.2f} | {pooled:.2f} | {pooled - local:.2f} |")
    print(f"\nidle worker VmRSS: {', '.join(f'{m:.0f} MiB' for m in worker_rss_mib())}")
    connector.close()


if __name__ == "__main__":
    main()
