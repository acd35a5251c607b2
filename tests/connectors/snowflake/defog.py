"""defog-data databases loaded into fakesnow, and sql-eval's PostgreSQL gold SQL transpiled to
Snowflake by sqlglot, for Snowflake-versus-DuckDB comparisons.

Each database's PostgreSQL dump is loaded into an in-memory DuckDB (the reference, as for
BigQuery: tests/support/bigquery_defog.py), then its tables are copied row for row into a schema of
the same name in one fakesnow database, so both engines hold the very same values.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import snowflake.connector
import sqlglot

from tests.support.bigquery_defog import SQL_EVAL, _read, expand_braces, split_statements

#: DuckDB column types as Snowflake writes them.
_TYPES = {
    "BIGINT": "NUMBER(38, 0)",
    "INTEGER": "NUMBER(38, 0)",
    "SMALLINT": "NUMBER(38, 0)",
    "DOUBLE": "FLOAT",
    "FLOAT": "FLOAT",
    "VARCHAR": "VARCHAR",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP_NTZ",
    "TIME": "TIME",
}


def snowflake_type(duckdb_type: str) -> str:
    if duckdb_type.startswith("DECIMAL"):
        return duckdb_type.replace("DECIMAL", "NUMBER")
    return _TYPES[duckdb_type]


def copy_to_fakesnow(
    con: duckdb.DuckDBPyConnection, connect_kwargs: dict[str, object], database: str, name: str
) -> dict[str, int]:
    """Every table of `con` as a table of `database` (created) with the same rows, in the
    schema `name` (a table of DuckDB's `main`) or in its own schema (ewallet's `consumer_div`);
    the row count per `SCHEMA.TABLE`."""
    columns = con.execute(
        "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE NOT internal ORDER BY table_name, column_index"
    ).fetchall()
    counts = {}
    with snowflake.connector.connect(**connect_kwargs) as conn:
        cursor = conn.cursor()
        cursor.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
        for (source_schema, table), cols in itertools.groupby(columns, key=lambda c: c[:2]):
            schema = name if source_schema == "main" else source_schema
            cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {database}.{schema}")
            typed = [(column, snowflake_type(type_)) for *_, column, type_ in cols]
            target = f"{database}.{schema}.{table}"
            listed = ", ".join(f"{column} {type_}" for column, type_ in typed)
            cursor.execute(f"CREATE TABLE {target} ({listed})")
            rows = con.execute(f'SELECT * FROM "{source_schema}"."{table}"').fetchall()
            if rows:
                marks = ", ".join(["%s"] * len(typed))
                cursor.executemany(f"INSERT INTO {target} VALUES ({marks})", rows)
            counts[f"{schema.upper()}.{table.upper()}"] = len(rows)
    return counts


@dataclass(frozen=True)
class GoldQuestion:
    """One sql-eval question: its PostgreSQL gold alternatives (sql-eval's `{a, b}` column
    choices expanded) and each transpiled to Snowflake."""

    database: str
    category: str
    question: str
    postgres: tuple[str, ...]

    def snowflake(self) -> Iterator[tuple[str, str]]:
        """(PostgreSQL gold, its Snowflake transpilation, or '' when sqlglot cannot write it)."""
        for sql in self.postgres:
            try:
                yield sql, sqlglot.transpile(sql, read="postgres", write="snowflake")[0]
            except sqlglot.errors.SqlglotError:
                yield sql, ""


def gold_questions() -> list[GoldQuestion]:
    return [
        GoldQuestion(
            database=row["db_name"],
            category=row["query_category"],
            question=row["question"],
            postgres=tuple(
                q for text in split_statements(row["query"]) for q in expand_braces(text)
            ),
        )
        for row in _read(SQL_EVAL / "questions_gen_postgres.csv")
    ]
