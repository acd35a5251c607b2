"""What running SQLite statements in worker processes costs (connectors/sql/sqlite_worker.py).

    uv run python -m bench.sqlite_workers [--runs 50] [--fresh 5]

On a 10,000-row SQLite file of five columns, with the default limits:
- first query: a new connector's first `run("SELECT 1")`, which starts its worker: median of
  FRESH connectors;
- per query: `run()` on a warm worker against the same statement on an in-process connection
  (what `run` did before: the guarded connection, its deadline, rows metered), median of RUNS
  each, for `SELECT 1` and 1,000 rows (pickled back to the bot);
- an idle worker's resident memory (VmRSS).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.duckdb_workers import median_ms, worker_rss_mib
from connectors.limits import Meter, RunLimits
from connectors.sql.connector import SqlConnector
from connectors.sql.sqlite_guard import clear_deadline, set_deadline
from connectors.sql.sqlite_worker import open_connection

QUERIES = {"SELECT 1": "SELECT 1", "1,000 rows": "SELECT * FROM t LIMIT 1000"}


def in_process(con: sqlite3.Connection, sql: str) -> None:
    set_deadline(con, 30)
    try:
        Meter(RunLimits()).read(iter(con.execute(sql)), 1000)
    finally:
        clear_deadline(con)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--fresh", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite"
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE t (id INTEGER, a TEXT, b REAL, c TEXT, d INTEGER)")
            con.executemany(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                ((i, f"name {i}", i * 1.5, "x" * 40, i % 7) for i in range(10000)),
            )
        url = f"sqlite:///{path}"
        firsts = []
        for _ in range(args.fresh):
            connector = SqlConnector(url, pool_size=1)
            started = time.perf_counter()
            connector.run("SELECT 1", max_rows=1, timeout_s=30)
            firsts.append(time.perf_counter() - started)
            connector.close()
        print(
            f"first query (starts a worker): median {statistics.median(firsts) * 1000:.0f} ms, "
            f"max {max(firsts) * 1000:.0f} ms over {args.fresh} connectors"
        )
        connector = SqlConnector(url, pool_size=1)
        connector.run("SELECT 1", max_rows=1, timeout_s=30)
        local = open_connection(path, RunLimits())
        print("\n| query | in-process connection (ms) | worker run() (ms) | overhead (ms) |")
        print("|---|---:|---:|---:|")
        for name, sql in QUERIES.items():
            here = median_ms(lambda sql=sql: in_process(local, sql), args.runs)
            pooled = median_ms(
                lambda sql=sql: connector.run(sql, max_rows=1000, timeout_s=30), args.runs
            )
            print(f"| {name} | {here:.2f} | {pooled:.2f} | {pooled - here:.2f} |")
        rss = worker_rss_mib("connectors.sql.sqlite_worker")
        print(f"\nidle worker VmRSS: {', '.join(f'{m:.0f} MiB' for m in rss)}")
        connector.close()


if __name__ == "__main__":
    main()
