"""sql-eval's gold SQL over the defog-data databases shared as files.

Each defog database (its DuckDB reference, built by `agent.evaluation.defog`) is exported the way
a person would share it: one CSV file per table, or one SQLite file holding every table. The
files are loaded into a sandbox exactly as an upload is (type sniffing, name sanitising), and
every PostgreSQL gold query, as DuckDB runs it, goes through the sandbox's read-only connector
and is compared with the same query on the reference (sql-eval's comparison). So the sandbox
holds the same data as the original, whatever the format it arrived in.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from agent.evaluation.compare import Table, best_match
from agent.evaluation.defog import CORPORA, Gold, databases, gold_questions
from connectors.base import ConnectorError
from connectors.sandbox.bounds import SandboxLimits
from connectors.sandbox.sandboxes import Sandboxes
from tests.support import defog_sql
from tests.support.sql_fixtures import require

pytestmark = pytest.mark.slow

LIMITS = SandboxLimits(max_file_bytes=10**9, max_rows=10**8, max_tables=100)

#: Differences read one by one: a CSV file carries no types, and the sniffer reads the text as
#: the type it looks like, which the original did not always use. (form, database, a piece of
#: the SQL) -> why.
KNOWN = {
    ("csv", "derm_treatment", "concomitant_med_start_date"): "concomitant_meds.start_dt is "
    "text in the original; the sniffer reads its 'YYYY-MM-DD' values as DATE, and the gold's "
    "TO_DATE(text) refuses a DATE",
    ("csv", "yelp", "AVG(review.rating) AS average_rating"): "review.rating is a 4-byte FLOAT "
    "in the original; read back from its decimal text it is a DOUBLE, so averages differ past "
    "the 2nd decimal",
    ("csv", "yelp", "SELECT business.latitude, business.longitude"): "latitude and longitude "
    "are text in the original; the sniffer reads them as numbers",
}


@pytest.fixture(scope="module")
def references(defog_duckdb: Path) -> dict[str, Path]:
    """Each database's DuckDB reference, built once for the run (the suite's `defog_duckdb`)."""
    require((CORPORA / "sql-eval").is_dir(), f"the shared corpora are missing ({CORPORA})")
    return {d: defog_duckdb / f"{d}.duckdb" for d in databases()}


def export_csv(reference: Path, folder: Path) -> list[Path]:
    """One CSV file per table, with a header, as a spreadsheet export would be."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    with duckdb.connect(str(reference), read_only=True) as con:
        for schema, table in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() ORDER BY 1, 2"
        ).fetchall():
            path = folder / f"{table}.csv"
            con.execute(f'COPY "{schema}"."{table}" TO \'{path}\' (HEADER)')
            files.append(path)
    return files


def export_sqlite(reference: Path, folder: Path) -> list[Path]:
    """One SQLite file holding every table; dates and times as ISO text, as SQLite keeps them."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{reference.stem}.sqlite"
    with closing(sqlite3.connect(path)) as con, con:
        for table in defog_sql.source_tables(reference):
            columns = ", ".join(f'"{c.name}" {c.type}' for c in table.columns)
            con.execute(f'CREATE TABLE "{table.name}" ({columns})')
            marks = ", ".join("?" * len(table.columns))
            con.executemany(
                f'INSERT INTO "{table.name}" VALUES ({marks})',
                [tuple(_sqlite_value(v) for v in row) for row in table.rows],
            )
    return [path]


def _sqlite_value(value: object) -> object:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value) if isinstance(value, decimal.Decimal) else value


def runnable(con: duckdb.DuckDBPyConnection, gold: Gold) -> str | None:
    """The first gold alternative DuckDB runs on the original (as written, else transpiled),
    with its tables unqualified: an upload's tables have no schema of their own."""
    for sql in gold.queries:
        candidates = [sql]
        with contextlib.suppress(sqlglot.errors.SqlglotError):
            candidates.append(sqlglot.transpile(sql, read="postgres", write="duckdb")[0])
        for candidate in candidates:
            try:
                con.execute(candidate).fetchall()
            except duckdb.Error:
                continue
            tree = sqlglot.parse_one(candidate, read="duckdb")
            for table in tree.find_all(exp.Table):
                table.set("db", None)
            return tree.sql(dialect="duckdb")
    return None


def known(form: str, database: str, sql: str) -> str:
    return next(
        (
            why
            for (f, db, piece), why in KNOWN.items()
            if (f, db) == (form, database) and piece in sql
        ),
        "",
    )


# Each upload is loaded by a fresh child process, and the CSV form loads one file per table of
# the 11 databases (about a hundred): over a minute alone, more beside other test workers.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("form", ["csv", "sqlite"])
def test_gold_sql_over_uploaded_files_matches_the_original(
    form: str, references: dict[str, Path], tmp_path: Path
) -> None:
    outcomes: Counter[str] = Counter()
    unexplained: list[str] = []
    golds_by_db: dict[str, list[Gold]] = {}
    for gold in gold_questions(CORPORA, "postgres"):
        golds_by_db.setdefault(gold.database, []).append(gold)
    for database in databases():
        reference = references[database]
        export = export_csv if form == "csv" else export_sqlite
        sandboxes = Sandboxes(tmp_path / "sandboxes", LIMITS)
        for path in export(reference, tmp_path / database):
            sandboxes.load(database, path, path.name)
        connector = sandboxes.open(database)
        try:
            with duckdb.connect(str(reference), read_only=True) as con:
                for gold in golds_by_db.get(database, []):
                    sql = runnable(con, gold)
                    if sql is None:
                        outcomes["gold fails on DuckDB"] += 1
                        continue
                    expected = defog_sql.duckdb_gold(con, gold)
                    ordered = gold.category == "order_by"
                    try:
                        result = connector.run(sql, max_rows=100_000, timeout_s=20)
                    except ConnectorError as exc:
                        status, reason = "failed", exc.message
                    else:
                        got = Table(tuple(result.columns), tuple(result.rows))
                        if best_match(expected, got, ordered=ordered):
                            outcomes["match"] += 1
                            continue
                        status = "differs"
                        reason = defog_sql.explain(expected, got, ordered=ordered)
                    why = known(form, database, sql)
                    outcomes[f"{status}, explained" if why else status] += 1
                    if not why:
                        unexplained.append(f"{database}: {status}: {reason} :: {sql[:300]}")
        finally:
            connector.close()
    print(f"\n{form}: {dict(outcomes)}")  # -s shows the figures
    assert outcomes["match"] > 200
    assert not unexplained, "\n".join(unexplained)
