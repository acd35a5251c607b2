"""The defog-data benchmark databases in PostgreSQL, and sql-eval's PostgreSQL gold SQL run
through SqlConnector.

Each `NAME.sql` dump (read in place from the shared corpora, never copied) loads into its own
database; the column descriptions of `NAME.json` become column comments, so the metadata path
is exercised at scale. The connector uses a login holding only `pg_read_all_data`.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from psycopg import sql as pgsql

from connectors.base import ConnectorError
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import (
    CORPORA,
    HOST,
    PG_PORT,
    bound_temp_files,
    pg_connect,
    port_open,
    require,
    unique_name,
)

DEFOG = CORPORA / "defog-data"
GOLD = CORPORA / "sql-eval" / "questions_gen_postgres.csv"

#: The dumps create some tables as `public.x`: they go to the benchmark's own schema instead.
PUBLIC = re.compile(r"\b(CREATE TABLE|INSERT INTO) public\.")

#: Share of the gold queries that must run; the rest are listed in the failure message.
MIN_SHARE_RUN = 0.95


@dataclass
class Defog:
    connectors: dict[str, SqlConnector]
    #: Benchmark database -> number of non-empty column descriptions in its JSON.
    described: dict[str, int]


@pytest.fixture(scope="module")
def defog() -> Iterator[Defog]:
    """One PostgreSQL database, one schema per benchmark database (dropping one database is
    much faster than dropping eleven), one connector per schema with its `search_path`."""
    require(DEFOG.is_dir() and GOLD.is_file(), f"the shared corpora are missing ({CORPORA})")
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    database = unique_name()
    names = sorted(p.stem for p in DEFOG.glob("*.sql"))
    connectors: dict[str, SqlConnector] = {}
    described: dict[str, int] = {}
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {database}")
        server.execute(f"CREATE ROLE {database} LOGIN")
        bound_temp_files(server, database)
        server.execute(f"GRANT pg_read_all_data TO {database}")
        try:
            with pg_connect(database) as admin:
                for name in names:
                    admin.execute(f"CREATE SCHEMA {name}")
                    admin.execute(f"SET search_path TO {name}")
                    dump = (DEFOG / f"{name}.sql").read_text()
                    admin.execute(PUBLIC.sub(r"\1 ", dump))  # type: ignore[call-overload]
                    described[name] = _comment_columns(admin, name)
                admin.execute("ANALYZE")
            for name in names:
                url = f"postgresql://{database}@{HOST}:{PG_PORT}/{database}"
                connectors[name] = SqlConnector(
                    f"{url}?options=-c%20search_path%3D{name}", pool_size=1
                )
            yield Defog(connectors, described)
        finally:
            for connector in connectors.values():
                connector.close()
            server.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {database}")


def _comment_columns(admin: object, name: str) -> int:
    """Turn the JSON's column descriptions into comments; how many there were."""
    metadata = json.loads((DEFOG / f"{name}.json").read_text())["table_metadata"]
    count = 0
    for table, columns in metadata.items():
        for column in columns:
            if text := column["column_description"].strip():
                admin.execute(  # type: ignore[attr-defined]
                    pgsql.SQL("COMMENT ON COLUMN {} IS {}").format(
                        pgsql.SQL(f"{table}.{column['column_name']}"), pgsql.Literal(text)
                    )
                )
                count += 1
    return count


def first_gold(query: str) -> str:
    """The first of the `;`-separated answers, with sql-eval's `{a, b}` column choices taken
    whole and each `{}` filled with the choice before it."""
    first = next(q for q in query.split(";") if q.strip())
    choice = ""

    def fill(match: re.Match[str]) -> str:
        nonlocal choice
        if match.group(1).strip():
            choice = match.group(1)
        return choice

    return re.sub(r"\{([^{}]*)\}", fill, first)


def test_first_gold_expands_column_choices() -> None:
    query = "SELECT {a.x, a.y}, count(*) FROM a GROUP BY {} ORDER BY 2;SELECT {a.y} FROM a"
    assert first_gold(query) == "SELECT a.x, a.y, count(*) FROM a GROUP BY a.x, a.y ORDER BY 2"


@pytest.mark.slow
def test_every_database_is_described_with_its_comments(defog: Defog) -> None:
    tables = defog.connectors["academic"].list_tables()  # every schema, as one login sees it
    assert all(t.columns for t in tables)
    for name, count in defog.described.items():
        schema = "consumer_div" if name == "ewallet" else name  # ewallet makes its own
        mine = [t for t in tables if t.name.startswith(f"{schema}.")]
        assert mine, name
        assert sum(1 for t in mine for c in t.columns if c.description) == count, name
    assert sum(defog.described.values()) > 400


@pytest.mark.slow
def test_postgres_gold_sql_runs(defog: Defog) -> None:
    rows = list(csv.DictReader(GOLD.open(newline="")))
    failures: list[str] = []
    outcomes: Counter[str] = Counter()
    for row in rows:
        sql = first_gold(row["query"])
        try:
            result = defog.connectors[row["db_name"]].run(sql, max_rows=100, timeout_s=10)
            outcomes["ran"] += 1
            outcomes["ran, with rows"] += result.total_rows > 0
        except ConnectorError as exc:
            outcomes[type(exc).__name__] += 1
            failures.append(f"{row['db_name']}: {exc.message} <- {sql[:120]}")
    print(f"gold SQL through SqlConnector: {dict(outcomes)} of {len(rows)}")  # shown with -s
    assert outcomes["ran"] >= MIN_SHARE_RUN * len(rows), "\n".join(failures)
