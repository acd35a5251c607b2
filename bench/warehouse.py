"""The benchmark's warehouse: the defog-data databases and the demo as real DuckDB files, hidden
among generated tables, plus the sql-eval gold questions over them.

Each defog database becomes its own DuckDB file (`academic.duckdb` holds `academic.main.author`),
with the corpus's column descriptions as comments, so the real connector and profiler read them.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from agent.catalog import ProfileLimits, TableProfile, profile_tables
from connectors.base import TableInfo
from connectors.demo import ensure_demo
from connectors.duckdb import DuckDBConnector

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
DEFOG = CORPORA / "defog-data"
SQL_EVAL = CORPORA / "sql-eval"
DATABASES = tuple(sorted(p.stem for p in DEFOG.glob("*.sql")))


def build_defog(database: str, target: Path) -> Path:
    """The PostgreSQL dump of `database` as the DuckDB file `target` (built once)."""
    if target.exists():
        return target
    text = (DEFOG / f"{database}.sql").read_text()
    text = re.sub(r"INTERVAL '(\d+) min'", r"INTERVAL '\1 minutes'", text)
    text = text.replace("'%Y%m%d %H:%i:%s'", "'YYYYMMDD HH24:MI:SS'")
    partial = target.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    for tree in sqlglot.parse(text, read="postgres"):
        if tree is None:
            continue
        for table in tree.find_all(exp.Table):
            if table.db == "public":
                table.set("db", None)
        for type_ in tree.find_all(exp.DataType):
            if type_.this in (exp.DataType.Type.SERIAL, exp.DataType.Type.BIGSERIAL):
                type_.set("this", exp.DataType.Type.INT)
        for node in list(tree.find_all(exp.ForeignKey, exp.Reference)):
            (node.parent if isinstance(node.parent, exp.ColumnConstraint) else node).pop()
        if isinstance(tree, exp.Create) and tree.kind == "SCHEMA":
            tree.set("exists", True)
        con.execute(tree.sql("duckdb"))
    meta = json.loads((DEFOG / f"{database}.json").read_text())["table_metadata"]
    for table, columns in meta.items():
        for column in columns:
            text = column["column_description"].replace("'", "''")
            con.execute(f"COMMENT ON COLUMN {table}.\"{column['column_name']}\" IS '{text}'")
    con.close()
    partial.rename(target)
    return target


@dataclass(frozen=True)
class RealTables:
    tables: list[TableInfo]
    profiles: dict[str, TableProfile]
    #: defog database -> its DuckDB file
    files: dict[str, Path]


def real_tables(cache: Path) -> RealTables:
    """Every defog and demo table, read and profiled through the real DuckDB connector."""
    cache.mkdir(parents=True, exist_ok=True)
    files = {db: build_defog(db, cache / f"{db}.duckdb") for db in DATABASES}
    tables: list[TableInfo] = []
    profiles: dict[str, TableProfile] = {}
    for path in [*files.values(), ensure_demo(cache)]:
        connector = DuckDBConnector(path)
        try:
            found = tuple(connector.list_tables())
            tables += found
            profiles |= profile_tables(connector, found, ProfileLimits())
        finally:
            connector.close()
    return RealTables(tables, profiles, files)


@dataclass(frozen=True)
class Gold:
    database: str
    question: str
    category: str
    #: Each acceptable answer's SQL (PostgreSQL, braces expanded to the first choice).
    queries: tuple[str, ...]

    def table_sets(self) -> list[set[str]]:
        """Per acceptable answer, the qualified names (`academic.main.author`) it reads."""
        sets = []
        for query in self.queries:
            try:
                tree = sqlglot.parse_one(query, read="postgres")
            except sqlglot.errors.ParseError:
                continue
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            names = set()
            for table in tree.find_all(exp.Table):
                if table.name.lower() in ctes or not table.name:
                    continue
                schema = (table.db or "main").lower()
                names.add(f"{self.database}.{schema}.{table.name.lower()}")
            if names:
                sets.append(names)
        return sets


def gold_questions() -> list[Gold]:
    with (SQL_EVAL / "questions_gen_postgres.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        Gold(r["db_name"], r["question"], r["query_category"], tuple(_alternatives(r["query"])))
        for r in rows
    ]


def _alternatives(text: str) -> list[str]:
    """sql-eval's `a; b` alternatives, with `{x, y}` column choices reduced to the first."""
    parts, current, quote = [], [], ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ";":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    out = []
    for part in (p.strip() for p in parts if p.strip()):
        match = re.search(r"\{([^{}]*)\}", part)
        if match and match.group(1).strip():
            first = match.group(1).split(",")[0].strip()
            part = part[: match.start()] + first + part[match.end() :]
            part = part.replace("GROUP BY {}", f"GROUP BY {first}")
        out.append(part)
    return out


def idk_questions() -> list[tuple[str, str]]:
    """(database, question) pairs the data cannot answer."""
    with (SQL_EVAL / "idk.csv").open(newline="") as handle:
        return [(r["db_name"], r["question"]) for r in csv.DictReader(handle)]


__all__ = ["DATABASES", "Gold", "RealTables", "gold_questions", "idk_questions", "real_tables"]
