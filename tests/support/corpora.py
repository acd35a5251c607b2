"""Readers for the shared public corpora: SQL-injection payloads, sql-eval gold SQL, defog schemas.

The corpora live beside the repository (`../shared/corpora`, or `$QUERYBOT_CORPORA`) and are read
in place, never copied into it. Used by the gate tests and by `bench/gate_report.py`.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from dataclasses import dataclass
from functools import cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from agent.evaluation.defog import CORPORA
from agent.gate import GateSchema
from connectors.base import ColumnInfo, TableInfo

PAYLOADS = CORPORA / "sqli-payloads"
GOLD = CORPORA / "sql-eval"
DEFOG = CORPORA / "defog-data"

DIALECTS = ("duckdb", "bigquery", "mysql", "postgres", "sqlite")
GOLD_DIALECTS = ("postgres", "mysql", "sqlite", "bigquery", "snowflake")
#: Dialects sql-eval has no gold for: another dialect's gold, transpiled by sqlglot.
TRANSPILED_GOLD = {"snowflake": "postgres"}
#: Functions of the source dialect the target lacks and sqlglot writes unchanged: a transpiled
#: alternative calling one is no gold in the target (Snowflake has no AGE(); two alternatives).
LACKING = {"snowflake": frozenset({"age"})}

#: Where a payload is spliced: alone, and into a query in string and numeric positions.
SPLICES = {
    "alone": "{p}",
    "string": "SELECT id, name FROM customers WHERE name = '{p}'",
    "numeric": "SELECT id, name FROM customers WHERE id = {p}",
}


def missing() -> str | None:
    """Why the corpora cannot be read, or None when they are all present."""
    for folder in (PAYLOADS, GOLD, DEFOG):
        if not folder.is_dir():
            return f"corpus folder {folder} is missing"
    return None


@cache
def payloads() -> tuple[str, ...]:
    """Every distinct non-blank payload line, in file order (files in name order)."""
    lines: list[str] = []
    for path in sorted(PAYLOADS.iterdir()):
        if path.name == "LICENSE" or path.suffix == ".json" or not path.is_file():
            continue
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        lines.extend(line for line in text.splitlines() if line.strip())
    return tuple(dict.fromkeys(lines))


def spliced(payload: str) -> dict[str, str]:
    """The statements one payload becomes: alone, in a string literal, in a numeric position."""
    return {where: template.replace("{p}", payload) for where, template in SPLICES.items()}


@dataclass(frozen=True)
class Gold:
    """One acceptable gold answer to one sql-eval question."""

    dialect: str
    db: str
    question: str
    sql: str


@cache
def gold(dialect: str) -> tuple[Gold, ...]:
    """Gold SQL for `dialect`: alternatives split on `;`, `{a, b}` column choices expanded; for
    a dialect in TRANSPILED_GOLD, each transpiled from its source (one sqlglot cannot write is
    left out)."""
    source = TRANSPILED_GOLD.get(dialect, dialect)
    path = GOLD / f"questions_gen_{source}.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    result: list[Gold] = []
    for row in rows:
        for alternative in row["query"].split(";"):
            for sql in expand_braces(alternative.strip()):
                if sql and source != dialect:
                    sql = _transpiled(sql, source, dialect)
                if sql:
                    result.append(Gold(dialect, row["db_name"], row["question"], sql))
    return tuple(result)


def _transpiled(sql: str, source: str, dialect: str) -> str:
    """`sql` written in `dialect`, or "" when sqlglot cannot or `dialect` lacks a function."""
    try:
        tree = sqlglot.parse_one(sql, read=source)
        written = tree.sql(dialect, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError:
        return ""
    called = {f.name.lower() for f in tree.find_all(exp.Anonymous)}
    return "" if called & LACKING.get(dialect, frozenset()) else written


_BRACES = re.compile(r"\{([^{}]*)\}")


def expand_braces(query: str) -> list[str]:
    """sql-eval's notation: `SELECT {a.x, a.y} ... GROUP BY {}` accepts any non-empty subset of
    the listed columns, and `{}` repeats the chosen subset."""
    match = _BRACES.search(query)
    if match is None or not match.group(1).strip():
        return [query]
    options = [o.strip() for o in match.group(1).split(",")]
    subsets = itertools.chain.from_iterable(
        itertools.combinations(options, n) for n in range(1, len(options) + 1)
    )
    expanded = []
    for subset in subsets:
        columns = ", ".join(subset)
        rest = query[match.end() :].replace("{}", columns)
        expanded.append(query[: match.start()] + columns + rest)
    return expanded


def table_name(db: str, key: str, dialect: str) -> str:
    """How each connector would name a defog table (`key` is `table` or `schema.table`)."""
    schema, _, table = key.rpartition(".")
    if dialect == "postgres":  # the dumps create tables unquoted, so Postgres folds them
        return f"{schema or 'public'}.{table}".lower()
    if dialect == "mysql":
        return f"{db}.{table}"
    if dialect == "sqlite":
        return f"main.{table}"
    if dialect == "bigquery":
        return f"defog.{db}.{table}"
    if dialect == "snowflake":  # as tests/connectors/snowflake/defog.py loads them
        return f"DEFOG.{schema or db}.{table}".upper()
    return f"{db}.main.{table}"


def defog_tables(db: str, dialect: str) -> list[TableInfo]:
    """One defog database's tables, named as the `dialect` connector would name them."""
    metadata = json.loads((DEFOG / f"{db}.json").read_text(encoding="utf-8"))["table_metadata"]
    tables = []
    for key, columns in metadata.items():
        fold = {"postgres": str.lower, "snowflake": str.upper}.get(dialect, str)
        infos = tuple(ColumnInfo(fold(c["column_name"]), c["data_type"]) for c in columns)
        tables.append(TableInfo(table_name(db, key, dialect), infos))
    return tables


@cache
def defog_schema(db: str, dialect: str) -> GateSchema:
    return GateSchema.from_tables(defog_tables(db, dialect), dialect)
