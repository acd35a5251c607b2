"""Running a dialect's gold SQL through `SqlConnector` and comparing it, as sql-eval does
(`agent.evaluation.compare`), with the PostgreSQL gold on DuckDB; a difference is described by
loosening the comparison step by step (order, rounding, case)."""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from agent.evaluation.compare import Table, best_match, norm
from agent.evaluation.defog import Gold, databases
from connectors.base import ConnectorError
from connectors.sql.connector import SqlConnector
from tests.support.defog_copies import load, reference, source_tables
from tests.support.defog_differences import NO_REFERENCE, known
from tests.support.defog_pairs import Pair

TIMEOUT_S = 20.0


def duckdb_gold(con: duckdb.DuckDBPyConnection, gold: Gold) -> list[Table]:
    """Each PostgreSQL gold alternative's result on DuckDB (as written, else transpiled)."""
    tables = []
    for sql in gold.queries:
        candidates = [sql]
        with contextlib.suppress(sqlglot.errors.SqlglotError):
            candidates.append(sqlglot.transpile(sql, read="postgres", write="duckdb")[0])
        for candidate in candidates:
            try:
                cursor = con.execute(_without_time_zones(con, candidate))
            except duckdb.Error:
                continue
            columns = tuple(d[0] for d in cursor.description or ())
            tables.append(Table(columns, tuple(cursor.fetchall())))
            break
    return tables


def _without_time_zones(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """`sql` with its TIMESTAMP WITH TIME ZONE columns (from `NOW()`) cast to UTC timestamps:
    DuckDB's Python client needs pytz to fetch them, and PostgreSQL here runs in UTC too."""
    described = con.execute(f"DESCRIBE {sql}").fetchall()
    zoned = [name for name, type_, *_ in described if type_ == "TIMESTAMP WITH TIME ZONE"]
    if not zoned:
        return sql
    casts = ", ".join(f'CAST("{c}" AS TIMESTAMP) AS "{c}"' for c in zoned)
    return f"SELECT * REPLACE ({casts}) FROM ({sql})"


@dataclass
class Outcome:
    pair: Pair
    sql: str
    #: "match", "differs" or "error" (the connector refused or failed the gold SQL).
    status: str
    reason: str = ""
    elapsed_s: float = 0.0


def explain(golds: list[Table], got: Table, *, ordered: bool) -> str:
    """What differs between `got` and the gold results: the first loosening under which they
    match, else the shape of the difference. It describes, it does not excuse: every
    difference must also be written down for its question in `KNOWN`."""
    if ordered and best_match(golds, got, ordered=False):
        return "order of tied rows"
    for digits, label in ((1, "float rounding at the 2nd decimal"), (0, "numbers apart by < 0.5")):
        loose = [_rounded(g, digits) for g in golds]
        if best_match(loose, _rounded(got, digits), ordered=False):
            return label
    folded = [_folded(g) for g in golds]
    if best_match(folded, _folded(got), ordered=False):
        return "text case or spacing"
    gold = golds[0]
    if len(got.rows) != len(gold.rows):
        return f"{len(got.rows)} rows where DuckDB has {len(gold.rows)}"
    if len(got.columns) != len(gold.columns):
        return f"{len(got.columns)} columns where DuckDB has {len(gold.columns)}"
    return "values differ"


def _rounded(table: Table, digits: int) -> Table:
    def value(v: Any) -> Any:
        v = norm(v)
        return round(v, digits) if isinstance(v, float) else v

    return Table(table.columns, tuple(tuple(value(v) for v in row) for row in table.rows))


def _folded(table: Table) -> Table:
    def value(v: Any) -> Any:
        return " ".join(v.lower().split()) if isinstance(v, str) else v

    return Table(table.columns, tuple(tuple(value(v) for v in row) for row in table.rows))


def compare_pair(
    pair: Pair, connector: SqlConnector, reference_con: duckdb.DuckDBPyConnection
) -> Outcome:
    sql = pair.dialect.queries[0]
    started = time.perf_counter()
    try:
        result = connector.run(sql, max_rows=100_000, timeout_s=TIMEOUT_S)
    except ConnectorError as exc:
        return Outcome(pair, sql, "error", f"{type(exc).__name__}: {exc.message}")
    elapsed = time.perf_counter() - started
    golds = duckdb_gold(reference_con, pair.postgres)
    if not golds:
        return Outcome(pair, sql, "differs", NO_REFERENCE, elapsed)
    got = Table(tuple(result.columns), tuple(result.rows))
    if best_match(golds, got, ordered=pair.ordered):
        return Outcome(pair, sql, "match", "", elapsed)
    return Outcome(pair, sql, "differs", explain(golds, got, ordered=pair.ordered), elapsed)


@dataclass
class Report:
    dialect: str
    outcomes: list[Outcome]
    load_s: float

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def reasons(self) -> Counter[str]:
        """Why the non-matching questions did not match: the hand-written note where the
        comparison reports what was written down, else what it reports."""
        return Counter(self._note(o) or o.reason for o in self.outcomes if o.status != "match")

    def unexplained(self) -> list[Outcome]:
        """Differences not written down for their question, or reported otherwise."""
        return [o for o in self.outcomes if o.status != "match" and not self._note(o)]

    def stale(self) -> list[Outcome]:
        """Questions written down as differing that now match (their entry should go)."""
        return [o for o in self.outcomes if o.status == "match" and known(self.dialect, o.pair)]

    def _note(self, outcome: Outcome) -> str:
        entry = known(self.dialect, outcome.pair)
        return entry.why if entry is not None and entry.found in outcome.reason else ""

    def median_run_ms(self) -> float:
        times = [o.elapsed_s for o in self.outcomes if o.status != "error"]
        return 1000 * statistics.median(times) if times else 0.0

    def summary(self) -> str:
        counts = self.counts()
        ran = counts["match"] + counts["differs"]
        return (
            f"{self.dialect}: {len(self.outcomes)} questions, {ran} ran through SqlConnector, "
            f"{counts['match']} matched DuckDB, {counts['differs']} differ, "
            f"{counts['error']} failed; median run {self.median_run_ms():.1f} ms; "
            f"load {self.load_s:.1f} s"
        )


def evaluate(dialect: str, found: list[Pair], cache: Path) -> Report:
    """Load the databases `found` uses into `dialect`'s engine, run and compare every pair."""
    names = sorted({p.dialect.database for p in found} & set(databases()))
    files = {name: reference(name, cache) for name in names}
    sources = {name: source_tables(path) for name, path in files.items()}
    outcomes = []
    folder = Path(tempfile.mkdtemp(prefix=f"{dialect}-copies-", dir=cache))
    with load(dialect, sources, folder) as loaded:
        for name in names:
            with duckdb.connect(str(files[name]), read_only=True) as con:
                for pair in (p for p in found if p.dialect.database == name):
                    outcomes.append(compare_pair(pair, loaded.connectors[name], con))
        load_s = loaded.load_s
    return Report(dialect, outcomes, load_s)
