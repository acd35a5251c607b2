"""sql-eval's gold SQL for PostgreSQL, MySQL and SQLite, run through `SqlConnector` and compared
with the same question's PostgreSQL gold on DuckDB.

The reference is each defog-data database loaded into DuckDB by `agent.evaluation.defog`
(the loader `querybot eval` and the benchmarks use). Its rows are then copied, value for value,
into PostgreSQL (one schema per database), MariaDB (one database each) and SQLite (one file
each), so every engine holds the very same values: the dumps compute dates from `NOW()` at load
time, and loading each engine from the dump separately would let them drift apart.

The dialect's gold SQL (its first acceptable answer) runs through the connector as a
SELECT-only login; the PostgreSQL gold alternatives run on DuckDB (as written, else transpiled
by sqlglot); the two are compared as sql-eval does (`agent.evaluation.compare`). A difference
is described by loosening the comparison step by step (order, rounding, case), and must be
written down for its question in `KNOWN` with what the comparison reports and why, so a new
difference (even one only in the decimals) is never explained away.

This module is the one the tests and benchmarks import; the pieces live beside it:
`defog_copies` (the reference and the copies), `defog_pairs` (the questions),
`defog_comparison` (running and comparing) and `defog_differences` (`KNOWN`).
"""

from __future__ import annotations

from agent.evaluation.defog import Gold
from tests.support.defog_comparison import duckdb_gold, evaluate, explain
from tests.support.defog_copies import load_mariadb, reference, source_tables
from tests.support.defog_differences import KNOWN
from tests.support.defog_pairs import DIALECTS, Pair, pairs

__all__ = [
    "DIALECTS",
    "KNOWN",
    "Gold",
    "Pair",
    "duckdb_gold",
    "evaluate",
    "explain",
    "load_mariadb",
    "pairs",
    "reference",
    "source_tables",
]
