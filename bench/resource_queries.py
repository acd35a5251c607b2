"""Resource attacks (issue 15 items 4 and 5) through the real connectors with the default bounds.

    uv run python -m bench.resource_queries

Each attack runs in a fresh child process (multiprocessing spawn) with `Limits()` (the defaults
of QUERYBOT_MAX_CELL_BYTES, QUERYBOT_MAX_RESULT_MB, QUERYBOT_ENGINE_MEMORY_MB,
QUERYBOT_ENGINE_TEMP_MB), the default row cap (1,000) and query timeout (60 s). A row gives the
child's peak RSS (`ru_maxrss`, imports included: compare the baseline row; DuckDB runs user
statements in worker processes, whose largest peak the row's "stopped by" adds), the largest
size the engine's temp files reached while it ran (DuckDB: its workers' temp directories;
PostgreSQL: `pg_ls_tmpdir()`; MariaDB and SQLite unlink their temp files at once, so 0 there),
and the bound that stopped it. PostgreSQL and MariaDB rows run when the servers are up on
127.0.0.1 (as a throwaway login and database, like the tests'). `resource_rows()` gives the
rows of the gate report's resource section; the PostgreSQL sort with temp_file_limit unset is
not stopped (ok=False), which is the point of that row: PostgreSQL leaves it to the DBA.
"""

from __future__ import annotations

import multiprocessing
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg

from bench.resources import ResourceRow, table
from connectors.base import ConnectorError, QueryTimeout
from connectors.limits import ResourceLimitExceeded

#: PostgreSQL's port (tests.connectors.sql_fixtures is imported by the parent only: each spawned
#: child imports this module again, and should load no more than the bot would).
PG_PORT = 5432
ROW_CAP = 1000
TIMEOUT_S = 60.0

_RECURSIVE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "


@dataclass(frozen=True)
class Attack:
    name: str
    engine: str
    sql: str


DUCKDB = [
    Attack("baseline: SELECT 1", "duckdb", "SELECT 1"),
    Attack("repeat('x', 10M) over range(1000)", "duckdb",
           "SELECT repeat('x', 10000000) FROM range(1000)"),
    Attack("len(range(1000000000))", "duckdb", "SELECT len(range(1000000000))"),
    Attack("length(repeat('x', 2000000000))", "duckdb", "SELECT length(repeat('x', 2000000000))"),
    Attack("three 32,000-char columns x 1,000 rows", "duckdb",
           "SELECT repeat('a', 32000) AS a, repeat('b', 32000) AS b, repeat('c', 32000) AS c"
           " FROM range(100000)"),
    Attack("a 100 KB string_agg value on each of 100,000 rows", "duckdb",
           "SELECT i, (SELECT string_agg('x', '') FROM range(100000)) AS v"
           " FROM range(100000) t(i)"),
    Attack("a 1 MB string_agg value on each of 100,000 rows", "duckdb",
           "SELECT i, (SELECT string_agg('x', '') FROM range(1000000)) AS v"
           " FROM range(100000) t(i)"),
    Attack("string_agg over a growing window of 1,000,000 rows", "duckdb",
           "SELECT string_agg('x', '') OVER (ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING"
           " AND CURRENT ROW) AS v FROM range(1000000) t(i)"),
    Attack("string_agg over range(500M)", "duckdb",
           "SELECT length(string_agg('xxxxxxxxxx', ',')) FROM range(500000000)"),
    Attack("GROUP BY over range(10000000000)", "duckdb",
           "SELECT count(*) FROM (SELECT i % 1000000000 AS g, count(*) FROM range(10000000000)"
           " t(i) GROUP BY g)"),
]  # fmt: skip
POSTGRES = [
    Attack("repeat('x', 100M) over generate_series(1, 1000)", "postgresql",
           "SELECT repeat('x', 100000000) FROM generate_series(1, 1000)"),
    Attack("sort of 20M rows (temp_file_limit unset)", "postgresql",
           "SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g"
           " ORDER BY g DESC OFFSET 0) s"),
    Attack("same sort, role temp_file_limit = '256MB'", "postgresql+limit",
           "SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g"
           " ORDER BY g DESC OFFSET 0) s"),
]  # fmt: skip
MARIADB = [
    Attack("REPEAT('x', 10M) over a recursive CTE", "mysql",
           _RECURSIVE + "SELECT REPEAT('x', 10000000) FROM r"),
]  # fmt: skip
SQLITE = [
    # 20 rows: SQLite spends ~0.1 s of CPU per value writing up to the length limit.
    Attack("printf('%.*c', 10M, 'x') over a recursive CTE (20 rows)", "sqlite",
           _RECURSIVE.replace("1000", "20") + "SELECT printf('%.*c', 10000000, 'x') FROM r"),
    Attack("zeroblob(2000000000)", "sqlite", "SELECT length(zeroblob(2000000000))"),
]  # fmt: skip


def resource_rows() -> list[ResourceRow]:
    """Every attack's row; PostgreSQL and MariaDB ones only when their servers answer."""
    from tests.connectors.sql_fixtures import (
        MYSQL_PORT,
        mysql_sample,
        port_open,
        postgres_sample,
        sqlite_sample,
    )

    rows: list[ResourceRow] = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="querybot-res-")))
        duck = tmp / "empty.duckdb"
        duckdb.connect(str(duck)).close()
        lite = stack.enter_context(sqlite_sample(tmp))
        rows += [_measure(a, f"duckdb:{duck}") for a in DUCKDB]
        if port_open(PG_PORT):
            pg = stack.enter_context(postgres_sample())
            rows += [_measure(a, pg.url) for a in POSTGRES if a.engine == "postgresql"]
            pg.admin([f"ALTER ROLE {pg.extra['name']} SET temp_file_limit = '256MB'"])
            rows += [_measure(a, pg.url) for a in POSTGRES if a.engine != "postgresql"]
        if port_open(MYSQL_PORT):
            maria = stack.enter_context(mysql_sample())
            rows += [_measure(a, maria.url) for a in MARIADB]
        rows += [_measure(a, lite.url) for a in SQLITE]
    return rows


def _measure(attack: Attack, spec: str) -> ResourceRow:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_child, args=(spec, attack.sql, queue))
    child.start()
    stopped_by, ok, rss_kib, temp_bytes = queue.get(timeout=TIMEOUT_S * 3)
    child.join()
    engine = attack.engine.split("+")[0]
    return ResourceRow(attack.name, engine, rss_kib / 1024, temp_bytes / 2**20, stopped_by, ok)


def _child(spec: str, sql: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """In the child: open the connector as the bot does, run the attack, report."""
    from connectors import open_connector

    connector = open_connector(spec, data_dir=Path(tempfile.gettempdir()))
    with _peak(_temp_probe(connector, spec)) as peak:
        try:
            result = connector.run(sql, max_rows=ROW_CAP, timeout_s=TIMEOUT_S)
            stopped_by, ok = _unstopped(result.rows, result.total_rows, spec)
        except ResourceLimitExceeded as exc:
            stopped_by, ok = f"{exc.setting}: {_short(exc.message)}", True
        except QueryTimeout:
            stopped_by, ok = "QUERYBOT_QUERY_TIMEOUT_S (the time limit, not a size bound)", False
        except ConnectorError as exc:
            stopped_by, ok = f"engine error: {_short(exc.message)}", True
    connector.close()  # DuckDB's workers end here, so their peak is the children's
    if spec.startswith("duckdb"):
        worker_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        worker = f"worker peak {worker_kib / 1024:,.0f} MiB" if worker_kib else "no worker started"
        stopped_by += f"; {worker}"
    queue.put((stopped_by, ok, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, peak[0]))


def _unstopped(rows: list[tuple], total: int, spec: str) -> tuple[str, bool]:
    if spec.startswith("sqlite") and rows and rows[0][0] is None:
        return "SQLITE_LIMIT_LENGTH = QUERYBOT_MAX_CELL_BYTES: printf() gave NULL", True
    if rows == [(1,)]:
        return "nothing to stop (baseline)", True
    return f"nothing: {total:,} row{'s' * (total != 1)} returned", False


def _short(message: str) -> str:
    """The message without its lead-in, its setting (already named) or what follows a `;`."""
    text = message.removeprefix("The query was stopped: ").split(";")[0].rstrip(".")
    return text.rsplit(" (", 1)[0] if text.endswith(")") else text


def _temp_probe(connector: object, spec: str) -> Callable[[], int]:
    """How many bytes of temp files the engine holds now."""
    temp_dir = getattr(connector, "temp_dir", None)
    if temp_dir is not None:  # DuckDB: each worker's directory is the connector's, numbered
        from connectors.duckdb_worker import dir_bytes

        return lambda: sum(dir_bytes(d) for d in temp_dir.parent.glob(f"{temp_dir.name}-w*"))
    if spec.startswith("postgresql"):
        admin = psycopg.connect(host="127.0.0.1", port=PG_PORT, user="postgres", autocommit=True)
        sql = "SELECT coalesce(sum(size), 0) FROM pg_catalog.pg_ls_tmpdir()"
        return lambda: int(admin.execute(sql).fetchone()[0])  # type: ignore[index]
    return lambda: 0


@contextmanager
def _peak(probe: Callable[[], int]) -> Iterator[list[int]]:
    """The largest value `probe` gave while the block ran, polled every 50 ms."""
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], probe())

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()
        peak[0] = max(peak[0], probe())


def main() -> int:
    started = time.perf_counter()
    rows = resource_rows()
    print("\n".join(table(rows)))
    print(f"\n{len(rows)} attacks in {time.perf_counter() - started:.0f} s")
    return 0 if all(row.ok for row in rows if "unset" not in row.attack) else 1


if __name__ == "__main__":
    sys.exit(main())
