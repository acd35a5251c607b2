"""What reading the warehouse's catalog costs: queries profiling sends to PostgreSQL per hour, and
how long the first question waits for the catalog (issue 18, items 11 and 12).

    uv run python -m bench.catalog_report [--pg-tables 2000] [--tables 2000,20000]

Profiling: a PostgreSQL database of `--pg-tables` tables shaped like the synthetic ones (25
schemas; text columns with a few repeated values or unique ones; 200 rows each), read through the
real `SqlConnector` by the real catalog, once before ANALYZE (autovacuum is off for these tables,
so none has statistics) and once after. Every statement profiling sends through `connector.run`
is a scan (it reads a table); the catalog's own queries (the table list, the statistics) go
through other methods and are counted apart. One refresh runs per TTL (an hour by default), so
scans per refresh are scans per hour.

First question: the synthetic tables behind an in-memory connector (its table list costs
nothing), the real `AgentDeps`/`Agent` and a scripted model that answers with one SQL statement.
Timed: building the catalog at start in the background (`Catalog.start`, as the bot does when it
opens a warehouse; absent before that existed), then the first question, asked once the build is
done; and the first question asked at the very start, while the build runs. Then the hourly
refresh when nothing changed: its time, and whether it published a new snapshot (1) whose gate
schema and search index were built again. Value profiling is off, so the figures are the table
list, the gate schema and the search index alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.memory import InMemorySaver

from agent.catalog.snapshot import Catalog
from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from bench import synthetic
from connectors.base import CostEstimate, QueryResult, RunContext, TableInfo, find_table
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import bound_temp_files

PG = "host=127.0.0.1 port=5432 user=postgres dbname={db}"
ROWS = 200

#: SQL expressions for a generated column's values, by type (i is the row number).
_VALUES = {
    "BIGINT": "(i * 7919) % 100000",
    "INTEGER": "i % 1000",
    "DECIMAL(12,2)": "round(((i * 13) % 1000)::numeric / 7, 2)",
    "DOUBLE": "(i % 97)::float8 / 7",
    "BOOLEAN": "i % 2 = 0",
    "DATE": "date '2024-01-01' + i % 365",
    "TIMESTAMP": "timestamp '2024-01-01' + i * interval '1 hour'",
}
_TYPES = {"DOUBLE": "double precision"}


def _value(name: str, type_: str) -> str:
    if type_ == "VARCHAR":
        if name in synthetic.VALUES:
            listed = ", ".join(f"'{v}'" for v in synthetic.VALUES[name])
            return f"(ARRAY[{listed}])[1 + i % {len(synthetic.VALUES[name])}]"
        return f"'{name} ' || i"
    return _VALUES[type_]


@contextmanager
def pg_warehouse(count: int) -> Iterator[tuple[str, Callable[[], None]]]:
    """A database of `count` generated tables and a read-only login: its URL, and ANALYZE."""
    name = f"querybot_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG.format(db="postgres"), autocommit=True) as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        try:
            with psycopg.connect(PG.format(db=name), autocommit=True) as admin:
                tables, _ = synthetic.generate(count)
                for schema in sorted({t.name.split(".")[1] for t in tables}):
                    admin.execute(f"CREATE SCHEMA {schema}")
                    admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {name}")
                for table in tables:
                    ref = table.name.split(".", 1)[1]
                    kept = {c.name: c for c in table.columns}.values()  # a name once
                    columns = ", ".join(f"{c.name} {_TYPES.get(c.type, c.type)}" for c in kept)
                    values = ", ".join(_value(c.name, c.type) for c in kept)
                    admin.execute(
                        f"CREATE TABLE {ref} ({columns}) WITH (autovacuum_enabled = false);"
                        f"INSERT INTO {ref} SELECT {values} FROM generate_series(1, {ROWS}) i;"
                        f"GRANT SELECT ON {ref} TO {name}"
                    )
                yield (
                    f"postgresql://{name}@127.0.0.1:5432/{name}",
                    lambda: admin.execute("ANALYZE"),
                )
        finally:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")


def profiling_pass(url: str) -> dict[str, Any]:
    """One catalog refresh with value profiling on: the statements sent, and its time."""
    connector = SqlConnector(url)
    scans: list[str] = []
    run = connector.run
    reads = {"statistics": 0}

    def counting_run(sql: str, **kwargs: Any) -> QueryResult:
        scans.append(sql)
        return run(sql, **kwargs)

    connector.run = counting_run  # type: ignore[method-assign]
    statistics_of = getattr(connector, "statistics", None)
    if statistics_of is not None:

        def counting_statistics(*args: Any, **kwargs: Any) -> Any:
            reads["statistics"] += 1
            return statistics_of(*args, **kwargs)

        connector.statistics = counting_statistics  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        snapshot = Catalog(connector).refresh()
        elapsed = time.perf_counter() - started
    finally:
        connector.close()
    return {
        "scans": len(scans),
        "statistics_reads": reads["statistics"],
        "profiled_tables": len(snapshot.profiles),
        "seconds": round(elapsed, 1),
    }


class GeneratedWarehouse:
    """The synthetic tables behind the connector interface; every run returns one row."""

    name = "synthetic"
    dialect = "duckdb"

    def __init__(self, tables: list[TableInfo]) -> None:
        self.tables = tables

    def list_tables(self) -> list[TableInfo]:
        return list(self.tables)

    def describe(self, table: str) -> TableInfo:
        return find_table(self.tables, table, qualify_hint="")

    def estimate(self, sql: str) -> CostEstimate | None:
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        return QueryResult(["n"], [(1,)], 1, 0.0)

    def cancel(self, job_key: str) -> bool:
        return False

    def close(self) -> None:
        pass


def first_question(count: int, *, wait_for_start: bool) -> dict[str, float]:
    """Seconds to build at start (when the catalog can) and to the first question's proposal."""
    tables, _ = synthetic.generate(count)
    sql = f"SELECT COUNT(*) AS n FROM {tables[0].name}"
    reply = json.dumps({"kind": "sql", "explanation": "Count the rows.", "sql": sql})
    model = ScriptedChatModel(replies=[reply])
    started = time.perf_counter()
    deps = AgentDeps(connector=GeneratedWarehouse(tables), model=model)
    agent = Agent(deps, InMemorySaver())
    start = getattr(deps.catalog, "start", None)
    figures = {}
    if start is not None:
        start()
        if wait_for_start:
            deps.catalog.wait_idle(timeout_s=600)
            figures["build_at_start_s"] = time.perf_counter() - started
    asked = time.perf_counter()
    question = f"How many {tables[0].short_name.replace('_', ' ')} are there?"
    outcome = agent.ask("bench", question, user="U1")
    figures["first_question_s"] = time.perf_counter() - asked
    assert outcome.kind == "proposal", outcome.message
    deps.catalog.wait_idle(timeout_s=600)
    if wait_for_start:  # the hourly refresh, when nothing changed
        current = deps.catalog.snapshot()
        again = time.perf_counter()
        deps.catalog.refresh()
        figures["unchanged_refresh_s"] = time.perf_counter() - again
        figures["rebuilt"] = float(deps.catalog.snapshot() is not current)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-tables", type=int, default=2000)
    parser.add_argument("--tables", default="2000,20000", help="sizes for the first question")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    if args.pg_tables:
        with pg_warehouse(args.pg_tables) as (url, analyze):
            print("postgres, no statistics:", profiling_pass(url))
            analyze()
            print("postgres, analysed:", profiling_pass(url))
    for count in (int(n) for n in args.tables.split(",")):
        for wait in (True, False):
            runs = [first_question(count, wait_for_start=wait) for _ in range(args.runs)]
            medians = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
            when = "after the start-up build" if wait else "at start"
            print(f"{count} tables, first question {when}:", medians)


if __name__ == "__main__":
    main()
