"""Resource attacks (issues 15 and 36) through the real connectors with the default bounds.

    uv run python -m bench.resource_queries

Each attack runs in a fresh child process (multiprocessing spawn) with `RunLimits()` (the defaults
of QUERYBOT_MAX_CELL_BYTES, QUERYBOT_MAX_RESULT_MB, QUERYBOT_ENGINE_MEMORY_MB,
QUERYBOT_ENGINE_TEMP_MB), the default row cap (1,000) and query timeout (60 s; the time attacks
3 s, each expected to end in a timeout within its engine's stated grace). A row gives the
child's peak RSS (`ru_maxrss`, imports included: compare the baseline row), the largest peak of
its worker processes (DuckDB and SQLite run user statements in workers), the largest peak of the
PostgreSQL backends that served it (their `VmHWM`, polled from /proc: the server runs here), the
largest size the engine's temp files reached while it ran (DuckDB: its workers' temp directories;
PostgreSQL: `pg_ls_tmpdir()`; MariaDB and SQLite unlink their temp files at once, so 0 there),
and the bound that stopped it. PostgreSQL and MariaDB rows run when the servers are up on
127.0.0.1 (as a throwaway login and database, like the tests'). `resource_rows()` gives the
rows of the gate report's resource section; with the login's temp_file_limit unset the
PostgreSQL connector refuses to open (the DBA must set it), which that row shows. One row is
known not to be bounded by the bot (`LEFT_TO_DBA`: an aggregate of table values in PostgreSQL's
backend memory, which PostgreSQL cannot bound per query); it is shown, not failed.
"""

from __future__ import annotations

import multiprocessing
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg
from sqlalchemy.engine import make_url

from bench.resources import ResourceRow, peak, status_kib, table
from connectors.base import ConnectorError, QueryTimeout
from connectors.limits import ResourceLimitExceeded
from connectors.sql.watchdog import GRACE_S as WATCHDOG_GRACE_S
from connectors.workers.proc import GRACE_S as WORKER_GRACE_S

#: PostgreSQL's port (tests.support.sql_fixtures is imported by the parent only: each spawned
#: child imports this module again, and should load no more than the bot would).
PG_PORT = 5432
ROW_CAP = 1000
TIMEOUT_S = 60.0
#: The time attacks' timeout: each must end in QueryTimeout within it plus its engine's grace.
SHORT_TIMEOUT_S = 3.0
#: How long past its timeout a run may take, by engine: a worker is killed `WORKER_GRACE_S`
#: after it; a server statement is cancelled, then its connection cut, each a watchdog grace on.
TIME_GRACE_S = {
    "duckdb": WORKER_GRACE_S,
    "sqlite": WORKER_GRACE_S,
    "postgresql": 2 * WATCHDOG_GRACE_S,
    "mysql": 2 * WATCHDOG_GRACE_S,
}
#: What the bench allows past a time bound for the kill or the cut to take effect and the error
#: to come back.
REACTION_S = 1.0
#: Attacks the bot cannot bound itself, shown for what a DBA must set (docs/safety.md).
LEFT_TO_DBA = ("array_agg of table values",)

_RECURSIVE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "


@dataclass(frozen=True)
class Attack:
    """`timed`: a time attack, run with `SHORT_TIMEOUT_S`, stopped by the time bound."""

    name: str
    engine: str
    sql: str
    timed: bool = False


#: Twelve distinct searches of a 500 kB needle in a 1 MB haystack, each a single engine step.
_INSTR = " + ".join(
    f"instr(printf('%.*c', 1000000, 'a'), printf('%.*c', {500000 + i}, 'a') || 'b')"
    for i in range(1, 13)
)
#: PostgreSQL's `hr.blobs`, made by `_blobs`: one 1.5 MB text value.
_BLOB_BYTES = 1_500_000


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
    Attack("levenshtein() of two 60,000-character strings (time)", "duckdb",
           "SELECT levenshtein(s, s || 'b') FROM (SELECT string_agg('a', '') AS s"
           " FROM range(60000))", timed=True),
]  # fmt: skip
POSTGRES = [
    Attack("repeat('x', 100M) over generate_series(1, 1000)", "postgresql",
           "SELECT repeat('x', 100000000) FROM generate_series(1, 1000)"),
    Attack("repeat('x', 900M)", "postgresql", "SELECT repeat('x', 900000000)"),
    Attack("a 1.5 MB value stored in a table", "postgresql", "SELECT id, body FROM hr.blobs"),
    Attack("that value doubled in the SELECT", "postgresql",
           "SELECT body || body AS v FROM hr.blobs"),
    Attack("array_agg of 3,000 x 1 MB values", "postgresql",
           "SELECT array_agg(repeat('x', 1000000)) FROM generate_series(1, 3000)"),
    Attack("string_agg to 1.5 GB", "postgresql",
           "SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 1500)"),
    Attack("array_fill of 100M elements", "postgresql",
           "SELECT cardinality(array_fill(1, ARRAY[100000000]))"),
    Attack("string_agg of table values past 1 GB", "postgresql",
           "SELECT length(string_agg(body, '')) FROM hr.blobs, generate_series(1, 800)"),
    Attack("recursive doubling to 1.5 GB", "postgresql",
           "WITH RECURSIVE r(s) AS (SELECT 'x'::text UNION ALL SELECT s || s FROM r"
           " WHERE length(s) < 1500000000) SELECT length(s) FROM r"),
    Attack("array_agg of table values (700 x 1.5 MB)", "postgresql",
           "SELECT cardinality(array_agg(body)) FROM hr.blobs, generate_series(1, 700)"),
    Attack("100,000 md5() of 1 MB strings (time)", "postgresql",
           "SELECT count(DISTINCT md5(repeat('x', 1000000) || g))"
           " FROM generate_series(1, 100000) g",
           timed=True),
    Attack("sort of 20M rows (temp_file_limit unset: refused)", "postgresql+unset",
           "SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g"
           " ORDER BY g DESC OFFSET 0) s"),
    Attack("same sort, role temp_file_limit = '256MB'", "postgresql+limit",
           "SELECT count(*) FROM (SELECT g FROM generate_series(1, 20000000) g"
           " ORDER BY g DESC OFFSET 0) s"),
]  # fmt: skip
MARIADB = [
    Attack("REPEAT('x', 10M) over a recursive CTE", "mysql",
           _RECURSIVE + "SELECT REPEAT('x', 10000000) FROM r"),
    Attack("one REPLACE() on megabyte strings (time)", "mysql",
           "SELECT LENGTH(REPLACE(REPEAT('a', 1000000), CONCAT(REPEAT('a', 20000), 'b'), 'c'))",
           timed=True),
    Attack("one LOCATE() on megabyte strings (time)", "mysql",
           "SELECT LOCATE(CONCAT(REPEAT('a', 500000), 'b'), REPEAT('a', 1000000))", timed=True),
]  # fmt: skip
SQLITE = [
    # 20 rows: SQLite spends ~0.1 s of CPU per value writing up to the length limit.
    Attack("printf('%.*c', 10M, 'x') over a recursive CTE (20 rows)", "sqlite",
           _RECURSIVE.replace("1000", "20") + "SELECT printf('%.*c', 10000000, 'x') FROM r"),
    Attack("zeroblob(2000000000)", "sqlite", "SELECT length(zeroblob(2000000000))"),
    Attack("twelve instr() of 500 kB in 1 MB in one expression (time)", "sqlite",
           f"SELECT {_INSTR}", timed=True),
    Attack("the same twelve over a 12-row CTE (time)", "sqlite",
           "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 12)"
           " SELECT sum(instr(printf('%.*c', 1000000, 'a'), printf('%.*c', 500000 + i, 'a')"
           " || 'b')) FROM r", timed=True),
    Attack("one replace() on megabyte strings (time)", "sqlite",
           "SELECT length(replace(printf('%.*c', 1000000, 'a'), printf('%.*c', 500000, 'a')"
           " || 'b', 'c'))", timed=True),
]  # fmt: skip


def resource_rows() -> list[ResourceRow]:
    """Every attack's row; PostgreSQL and MariaDB ones only when their servers answer."""
    from tests.support.sql_fixtures import (
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
            pg.admin(_blobs(pg.extra["name"]))
            rows += [_measure(a, pg.url) for a in POSTGRES if a.engine == "postgresql"]
            pg.admin([f"ALTER ROLE {pg.extra['name']} RESET temp_file_limit"])
            rows += [_measure(a, pg.url) for a in POSTGRES if a.engine == "postgresql+unset"]
            pg.admin([f"ALTER ROLE {pg.extra['name']} SET temp_file_limit = '256MB'"])
            rows += [_measure(a, pg.url) for a in POSTGRES if a.engine == "postgresql+limit"]
        if port_open(MYSQL_PORT):
            maria = stack.enter_context(mysql_sample())
            rows += [_measure(a, maria.url) for a in MARIADB]
        rows += [_measure(a, lite.url) for a in SQLITE]
    return rows


def _measure(attack: Attack, spec: str) -> ResourceRow:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_child, args=(spec, attack, queue))
    child.start()
    found = queue.get(timeout=TIMEOUT_S * 3)
    child.join()
    engine = attack.engine.split("+")[0]
    return ResourceRow(
        attack.name,
        engine,
        found["rss_kib"] / 1024,
        found["temp_bytes"] / 2**20,
        found["stopped_by"],
        found["ok"],
        children_mib=found["children_kib"] / 1024 if found["children_kib"] else None,
        backend_mib=found["backend_kib"] / 1024 if found["backend_kib"] else None,
        left_to_dba=any(mark in attack.name for mark in LEFT_TO_DBA),
    )


def _child(spec: str, attack: Attack, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """In the child: open the connector as the bot does, run the attack, report."""
    from connectors import open_connector

    engine = attack.engine.split("+")[0]
    timeout_s = SHORT_TIMEOUT_S if attack.timed else TIMEOUT_S
    found: dict[str, object] = {"temp_bytes": 0, "children_kib": 0, "backend_kib": 0}
    try:
        connector = open_connector(spec, data_dir=Path(tempfile.gettempdir()))
    except ConnectorError as exc:  # e.g. PostgreSQL without temp_file_limit
        found.update(stopped_by=f"refused at open: {_short(exc.message)}", ok=True)
        queue.put({**found, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss})
        return
    if attack.timed:  # the worker or connection is started before the clock does
        connector.run("SELECT 1", max_rows=1, timeout_s=TIMEOUT_S)
    started = time.perf_counter()
    with peak(_temp_probe(connector, spec)) as temp, peak(_backend_probe(spec)) as backend:
        try:
            result = connector.run(attack.sql, max_rows=ROW_CAP, timeout_s=timeout_s)
            stopped_by, ok = _unstopped(result.rows, result.total_rows, spec)
        except ResourceLimitExceeded as exc:
            stopped_by, ok = f"{exc.setting}: {_short(exc.message)}", not attack.timed
        except QueryTimeout:
            took = time.perf_counter() - started
            bound = timeout_s + TIME_GRACE_S[engine]
            stopped_by = (
                f"QUERYBOT_QUERY_TIMEOUT_S ({timeout_s:.0f} s): timed out after {took:.1f} s"
                f" (timeout + grace {bound:.0f} s)"
            )
            ok = attack.timed and took <= bound + REACTION_S
        except ConnectorError as exc:
            stopped_by, ok = f"engine error: {_short(exc.message)}", not attack.timed
    connector.close()  # the workers end here, so their peaks are the children's
    found.update(
        stopped_by=stopped_by,
        ok=ok,
        rss_kib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        temp_bytes=temp[0],
        children_kib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        backend_kib=backend[0],
    )
    queue.put(found)


def _backend_probe(spec: str) -> Callable[[], int]:
    """The largest peak (`VmHWM`, KiB) of the PostgreSQL backends serving the bench's login."""
    if not spec.startswith("postgresql"):
        return lambda: 0
    login = make_url(spec).username
    admin = psycopg.connect(host="127.0.0.1", port=PG_PORT, user="postgres", autocommit=True)
    sql = "SELECT pid FROM pg_catalog.pg_stat_activity WHERE usename = %s"
    return lambda: max(
        (status_kib(pid) for (pid,) in admin.execute(sql, (login,)).fetchall()), default=0
    )


def _blobs(login: str) -> list[str]:
    """SQL (as the database's owner) for `hr.blobs`: one row holding a 1.5 MB text value."""
    return [
        "CREATE TABLE hr.blobs (id int, body text)",
        f"INSERT INTO hr.blobs SELECT 1, repeat('x', {_BLOB_BYTES})",
        f"GRANT SELECT ON hr.blobs TO {login}",
    ]


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
        from connectors.duckdb.worker import dir_bytes

        return lambda: sum(dir_bytes(d) for d in temp_dir.parent.glob(f"{temp_dir.name}-w*"))
    if spec.startswith("postgresql"):
        admin = psycopg.connect(host="127.0.0.1", port=PG_PORT, user="postgres", autocommit=True)
        sql = "SELECT coalesce(sum(size), 0) FROM pg_catalog.pg_ls_tmpdir()"
        return lambda: int(admin.execute(sql).fetchone()[0])  # type: ignore[index]
    return lambda: 0


def main() -> int:
    started = time.perf_counter()
    rows = resource_rows()
    print("\n".join(table(rows)))
    print(f"\n{len(rows)} attacks in {time.perf_counter() - started:.0f} s")
    return 0 if all(row.ok or row.left_to_dba for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
