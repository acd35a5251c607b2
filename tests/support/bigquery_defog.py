"""defog-data databases and sql-eval gold questions, for BigQuery-versus-DuckDB comparisons.

Each database's PostgreSQL dump is loaded into an in-memory DuckDB (the reference), then its
tables are copied row for row into a BigQuery dataset of the same name, so both engines hold
the very same values (the dumps compute dates from `NOW()` at load time).
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import decimal
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from google.cloud import bigquery

from agent.evaluation.defog import CORPORA, duckdb_statements

DEFOG = CORPORA / "defog-data"
SQL_EVAL = CORPORA / "sql-eval"

_BQ_TYPES = {
    "BIGINT": "INT64",
    "INTEGER": "INT64",
    "SMALLINT": "INT64",
    "DOUBLE": "FLOAT64",
    "FLOAT": "FLOAT64",
    "VARCHAR": "STRING",
    "BOOLEAN": "BOOL",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIME": "TIME",
}


# -- loading -------------------------------------------------------------------------------


def load_duckdb(database: str) -> duckdb.DuckDBPyConnection:
    """The PostgreSQL dump `database`.sql in an in-memory DuckDB, repaired to load as
    `querybot eval` loads it (`duckdb_statements`)."""
    con = duckdb.connect()
    for statement in duckdb_statements((DEFOG / f"{database}.sql").read_text()):
        con.execute(statement)
    return con


def copy_to_bigquery(
    con: duckdb.DuckDBPyConnection, client: bigquery.Client, dataset: str
) -> dict[str, int]:
    """Every table of `con` as a table of `dataset` (created), with the same rows.

    Returns the row count per table.
    """
    client.create_dataset(dataset, exists_ok=True)
    counts = {}
    columns = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE NOT internal ORDER BY table_name, column_index"
    ).fetchall()
    for table, cols in itertools.groupby(columns, key=lambda c: c[0]):
        names_types = [(name, type_) for _, name, type_ in cols]
        schema = [bigquery.SchemaField(name, _bq_type(type_)) for name, type_ in names_types]
        ref = f"{client.project}.{dataset}.{table}"
        client.create_table(bigquery.Table(ref, schema=schema), exists_ok=True)
        schema_name = con.execute(
            "SELECT schema_name FROM duckdb_tables() WHERE table_name = ?", [table]
        ).fetchone()
        assert schema_name is not None
        rows = con.execute(f'SELECT * FROM "{schema_name[0]}"."{table}"').fetchall()
        payload = [
            {name: _json(value) for (name, _), value in zip(names_types, row, strict=True)}
            for row in rows
        ]
        if payload:
            errors = client.insert_rows_json(ref, payload)
            assert not errors, errors
        counts[table] = len(rows)
    return counts


def _bq_type(duckdb_type: str) -> str:
    if duckdb_type.startswith("DECIMAL"):
        return "NUMERIC"
    return _BQ_TYPES[duckdb_type]


def _json(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.date | dt.time):  # datetime is a date
        return value.isoformat()
    return value


# -- gold questions -------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldQuestion:
    """One sql-eval question with its BigQuery and PostgreSQL gold alternatives."""

    database: str
    category: str
    question: str
    bigquery: tuple[str, ...]
    postgres: tuple[str, ...]


def gold_questions() -> list[GoldQuestion]:
    """Questions present in both gold files, matched on database and question text."""
    bq = _read(SQL_EVAL / "questions_gen_bigquery.csv")
    pg = {(r["db_name"], r["question"]): r for r in _read(SQL_EVAL / "questions_gen_postgres.csv")}
    questions = []
    for row in bq:
        other = pg.get((row["db_name"], row["question"]))
        if other is None:
            continue
        questions.append(
            GoldQuestion(
                database=row["db_name"],
                category=row["query_category"],
                question=row["question"],
                bigquery=tuple(split_statements(row["query"])),
                postgres=tuple(
                    q for text in split_statements(other["query"]) for q in expand_braces(text)
                ),
            )
        )
    return questions


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def split_statements(text: str) -> list[str]:
    """`a; b` as `[a, b]`, keeping `;` inside quotes."""
    parts, current, quote = [], [], ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == ";":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def expand_braces(query: str) -> list[str]:
    """sql-eval's `SELECT {a, b} ... GROUP BY {}`: every non-empty subset of the columns."""
    match = re.search(r"\{([^{}]*)\}", query)
    if match is None or not match.group(1).strip():
        return [query]
    options = [o.strip() for o in match.group(1).split(",")]
    left, right = query[: match.start()], query[match.end() :]
    expanded = []
    for size in range(1, len(options) + 1):
        for subset in itertools.combinations(options, size):
            columns = ", ".join(subset)
            expanded.append(left + columns + right.replace("GROUP BY {}", f"GROUP BY {columns}"))
    return expanded


def run_postgres_gold(con: duckdb.DuckDBPyConnection, sql: str) -> Result | None:
    """A PostgreSQL gold query on DuckDB (as written, else transpiled), or None if neither runs."""
    candidates = [sql]
    with contextlib.suppress(sqlglot.errors.SqlglotError):
        candidates.append(sqlglot.transpile(sql, read="postgres", write="duckdb")[0])
    for candidate in candidates:
        try:
            cursor = con.execute(candidate)
            return Result([d[0] for d in cursor.description or ()], cursor.fetchall())
        except duckdb.Error:
            continue
    return None


# -- comparing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


def canonical(result: Result) -> tuple[tuple[Any, ...], ...]:
    """Rows as a sorted multiset of normalised values, columns in a content-defined order.

    Column names and order, row order, number types and float noise are not compared: the
    same answer written two ways (another alias, `SELECT b, a`, NUMERIC against DOUBLE)
    compares equal; different values or row counts do not.
    """
    rows = [tuple(_normal(v) for v in row) for row in result.rows]
    width = len(result.columns)
    columns = sorted(range(width), key=lambda i: sorted(repr(r[i]) for r in rows))
    return tuple(sorted((tuple(r[i] for i in columns) for r in rows), key=repr))


def agree(first: Result, second: Result) -> bool:
    return len(first.columns) == len(second.columns) and canonical(first) == canonical(second)


def _normal(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float | decimal.Decimal):
        number = float(value)
        return round(number, 4) if math.isfinite(number) else str(number)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return tuple(_normal(v) for v in value)
    return str(value)


def databases(questions: Iterable[GoldQuestion]) -> list[str]:
    return sorted({q.database for q in questions})
