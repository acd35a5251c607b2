"""The reference and its copies: each defog-data database loaded into DuckDB by
`agent.evaluation.defog`, its rows copied value for value into PostgreSQL (one schema per
database), MariaDB (one database each) and SQLite (one file each), and a SELECT-only
`SqlConnector` on each copy."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from agent.evaluation.defog import build_defog
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import (
    HOST,
    MYSQL_PORT,
    PG_PORT,
    bound_temp_files,
    mysql_connect,
    pg_connect,
    port_open,
    require,
    unique_name,
)

#: DuckDB column type -> the type each engine gets (DECIMAL(p,s) keeps its arguments).
_TYPES = {
    "postgres": {"DOUBLE": "DOUBLE PRECISION", "FLOAT": "REAL", "VARCHAR": "TEXT"},
    "mysql": {"VARCHAR": "TEXT", "TIMESTAMP": "DATETIME(6)", "TIME": "TIME(6)"},
    "sqlite": {"VARCHAR": "TEXT", "BIGINT": "INTEGER", "DOUBLE": "REAL", "FLOAT": "REAL"},
}


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class SourceTable:
    """A table of the DuckDB reference: where the dump put it, its columns and rows."""

    schema: str
    name: str
    columns: tuple[Column, ...]
    rows: list[tuple[Any, ...]]


def reference(database: str, cache: Path) -> Path:
    """The DuckDB file of `database` (built once into `cache`)."""
    return build_defog(database, cache / f"{database}.duckdb")


def source_tables(path: Path) -> list[SourceTable]:
    with duckdb.connect(str(path), read_only=True) as con:
        names = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() ORDER BY 1, 2"
        ).fetchall()
        tables = []
        for schema, table in names:
            columns = con.execute(
                "SELECT column_name, data_type FROM duckdb_columns()"
                " WHERE schema_name = ? AND table_name = ? ORDER BY column_index",
                [schema, table],
            ).fetchall()
            rows = con.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
            tables.append(SourceTable(schema, table, tuple(Column(*c) for c in columns), rows))
    return tables


def _type(dialect: str, duck: str) -> str:
    return _TYPES[dialect].get(duck, duck)


def _create(dialect: str, qualified: str, table: SourceTable) -> str:
    quote = "`" if dialect == "mysql" else '"'
    columns = ", ".join(
        f"{quote}{_name(dialect, c.name)}{quote} {_type(dialect, c.type)}" for c in table.columns
    )
    return f"CREATE TABLE {qualified} ({columns})"


def _name(dialect: str, name: str) -> str:
    """PostgreSQL folds the dumps' unquoted mixed-case names (`sbTransaction`) to lower case."""
    return name.lower() if dialect == "postgres" else name


def _sqlite_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


@dataclass
class Loaded:
    """Every defog database in one engine, and a connector per database."""

    dialect: str
    connectors: dict[str, SqlConnector] = field(default_factory=dict)
    #: Seconds spent copying the rows in.
    load_s: float = 0.0

    def close(self) -> None:
        for connector in self.connectors.values():
            connector.close()


def _schema(database: str, table: SourceTable) -> str:
    """The PostgreSQL schema: the dump's own (ewallet's `consumer_div`), else the database."""
    return table.schema if table.schema != "main" else database


@contextmanager
def load_postgres(sources: dict[str, list[SourceTable]]) -> Iterator[Loaded]:
    """One database, a schema per defog database, a login with `pg_read_all_data` whose
    `search_path` the connector URL points at that schema."""
    require(port_open(PG_PORT), f"PostgreSQL is not reachable at {HOST}:{PG_PORT}")
    name = unique_name()
    loaded = Loaded("postgres")
    with pg_connect("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        server.execute(f"GRANT pg_read_all_data TO {name}")
        try:
            started = time.perf_counter()
            with pg_connect(name) as admin:
                for database, tables in sources.items():
                    for table in tables:
                        schema = _schema(database, table)
                        admin.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                        target = f'"{schema}"."{_name("postgres", table.name)}"'
                        admin.execute(_create("postgres", target, table))
                        with admin.cursor() as cur, cur.copy(f"COPY {target} FROM STDIN") as copy:
                            for row in table.rows:
                                copy.write_row(row)
                admin.execute("ANALYZE")
            loaded.load_s = time.perf_counter() - started
            for database, tables in sources.items():
                schema = _schema(database, tables[0])
                url = f"postgresql://{name}@{HOST}:{PG_PORT}/{name}"
                loaded.connectors[database] = SqlConnector(
                    f"{url}?options=-c%20search_path%3D{schema}", pool_size=1
                )
            yield loaded
        finally:
            loaded.close()
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")


@contextmanager
def load_mariadb(sources: dict[str, list[SourceTable]]) -> Iterator[Loaded]:
    """A database per defog database, named as it (the MySQL gold qualifies some tables with
    it: `broker.sbCustomer`), and a user with SELECT on them only. A server-wide named lock
    keeps two test sessions from loading at once; a database of that name that this session
    did not create stops the run rather than being dropped."""
    require(port_open(MYSQL_PORT), f"MariaDB is not reachable at {HOST}:{MYSQL_PORT}")
    prefix = unique_name()
    loaded = Loaded("mysql")
    admin = mysql_connect()
    cur = admin.cursor()
    cur.execute("SELECT GET_LOCK('querybot_defog', 300)")
    created: list[str] = []
    try:
        cur.execute("SHOW DATABASES")
        taken = sorted(set(sources) & {r[0] for r in cur.fetchall()})
        require(not taken, f"MariaDB already holds databases named {taken}; drop them first")
        cur.execute(f"CREATE USER '{prefix}'@'%' IDENTIFIED BY 'defog-ro'")
        started = time.perf_counter()
        for database, tables in sources.items():
            schema = database
            cur.execute(f"CREATE DATABASE {schema}")
            created.append(schema)
            for table in tables:
                target = f"{schema}.`{table.name}`"
                cur.execute(_create("mysql", target, table))
                if table.rows:
                    marks = ", ".join(["%s"] * len(table.columns))
                    cur.executemany(f"INSERT INTO {target} VALUES ({marks})", table.rows)
            cur.execute(f"GRANT SELECT ON {schema}.* TO '{prefix}'@'%'")
        loaded.load_s = time.perf_counter() - started
        for database in sources:
            loaded.connectors[database] = SqlConnector(
                f"mysql://{prefix}:defog-ro@{HOST}:{MYSQL_PORT}/{database}", pool_size=1
            )
        yield loaded
    finally:
        loaded.close()
        for database in created:
            cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"DROP USER IF EXISTS '{prefix}'@'%'")
        admin.close()  # releases the lock


@contextmanager
def load_sqlite(sources: dict[str, list[SourceTable]], folder: Path) -> Iterator[Loaded]:
    """A file per defog database in `folder`; dates and times as ISO text, as SQLite keeps them."""
    loaded = Loaded("sqlite")
    started = time.perf_counter()
    for database, tables in sources.items():
        path = folder / f"{database}.sqlite"
        con = sqlite3.connect(path)
        with con:
            for table in tables:
                con.execute(_create("sqlite", f'"{table.name}"', table))
                if table.rows:
                    marks = ", ".join("?" * len(table.columns))
                    rows = [tuple(_sqlite_value(v) for v in row) for row in table.rows]
                    con.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', rows)
        con.close()
    loaded.load_s = time.perf_counter() - started
    try:
        for database in sources:
            loaded.connectors[database] = SqlConnector(
                f"sqlite:///{folder / f'{database}.sqlite'}", pool_size=1
            )
        yield loaded
    finally:
        loaded.close()


@contextmanager
def load(dialect: str, sources: dict[str, list[SourceTable]], folder: Path) -> Iterator[Loaded]:
    if dialect == "postgres":
        with load_postgres(sources) as loaded:
            yield loaded
    elif dialect == "mysql":
        with load_mariadb(sources) as loaded:
            yield loaded
    else:
        with load_sqlite(sources, folder) as loaded:
            yield loaded
