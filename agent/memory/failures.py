"""Remembered failures: the model's SQL the gate rejected, SQL the warehouse refused, and SQL a
person rejected, per connector.

The remember-failures strategy gives the model the problems met earlier in the same thread, and
those that recur across threads on the same connector (seen in at least two threads), as "avoid"
hints: a misspelt column or a function the engine lacks is then not tried again and again.

Another thread's mistake is shown only where it is relevant, so that it can never become the
subject of a question it has nothing to do with (a small model, shown "column product_name does
not exist" before every question, answered that instead): only while repairing a draft, and only
when the failed SQL read one of the draft's tables. A person's rejection (`PERSON_REJECTED`) is a
hint for the rest of its thread only: what one person turned down says nothing about another
thread's question. An evaluation keeps each question to itself (`across_threads=False`), so its
score does not depend on question order. Only the problem text is kept and shown (no result
rows); each is cut to one line of at most 300 characters.

One table (a `Storage`): in memory by default; in production a SQLite file per warehouse, or, with
`QUERYBOT_STATE_URL`, PostgreSQL, where every replica is warned by the others' failures and each row
names its warehouse (a SQLite file is one warehouse's own: its rows name none).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from pathlib import Path

import sqlglot
from sqlglot import exp

from agent.memory.storage import Storage, Tables, open_storage

SCHEMA = """
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connector TEXT NOT NULL,
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    problem TEXT NOT NULL,
    sql TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_by_connector ON failures (connector, problem);
"""
#: In PostgreSQL the failures of every warehouse share the table; each row names its own.
TABLES = Tables(
    "failures",
    SCHEMA,
    SCHEMA.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"),
    added={"failures": {"warehouse": "TEXT NOT NULL DEFAULT ''"}},
)

#: Characters of one remembered problem.
PROBLEM_CHARS = 300

#: The kind of a failure that is a person's rejection (a hint in its own thread only).
PERSON_REJECTED = "person_rejected"


#: Rows of recurring problems read to find those relevant to a draft's tables.
RECURRING_ROWS = 200


def read_tables(sql: str, dialect: str) -> frozenset[str]:
    """Lower-case names (without schema) of the tables `sql` reads; empty when it does not
    parse, so an unreadable statement is relevant to nothing."""
    try:
        trees = sqlglot.parse(sql, dialect=dialect or None)
    except Exception:  # any parse failure: no tables, no hint
        return frozenset()
    names: set[str] = set()
    for tree in trees:
        if tree is None:
            continue
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        names |= {t.name.lower() for t in tree.find_all(exp.Table) if t.name} - ctes
    return frozenset(names)


def one_line(problem: str) -> str:
    """A problem as it is remembered: its first line, spaces collapsed, cut short."""
    line = " ".join(problem.strip().splitlines()[0].split()) if problem.strip() else ""
    return line[:PROBLEM_CHARS]


class FailureStore:
    """Thread-safe store of failures, keyed by connector (the warehouse they happened on)."""

    def __init__(
        self,
        where: Storage | Path | str = ":memory:",
        *,
        warehouse: str = "",
        across_threads: bool = True,
    ) -> None:
        #: Whether one thread's recurring mistakes may be hinted in another.
        self.across_threads = across_threads
        self._db = open_storage(where, TABLES)
        self._owned = not isinstance(where, Storage)
        self._warehouse = warehouse if self._db.shared else ""

    def record(self, connector: str, thread: str, kind: str, problems: list[str], sql: str) -> None:
        """Remember `problems` (gate reasons, an engine error, a rejection: `kind`) met by
        `sql`."""
        at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        rows = [
            (self._warehouse, connector, thread, kind, line, sql[:2000], at)
            for line in dict.fromkeys(one_line(p) for p in problems)
            if line
        ]
        self._db.many(
            "INSERT INTO failures (warehouse, connector, thread, kind, problem, sql, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def hints(
        self,
        connector: str,
        thread: str,
        limit: int = 5,
        *,
        tables: Collection[str] = (),
        dialect: str = "",
    ) -> list[str]:
        """Problems to avoid: this thread's latest, then those recurring in other threads (at
        least two; never a person's rejection) whose SQL read one of `tables` (a draft's, in
        `dialect`), most frequent first; at most `limit`, each once."""
        wanted = {t.lower() for t in tables}
        mine = self._db.rows(
            "SELECT problem FROM failures WHERE warehouse = ? AND connector = ? AND thread = ?"
            " ORDER BY id DESC LIMIT ?",
            (self._warehouse, connector, thread, limit),
        )
        recurring = (
            self._db.rows(
                "SELECT problem, sql FROM failures WHERE warehouse = ? AND connector = ?"
                " AND thread != ? AND problem IN (SELECT problem FROM failures"
                " WHERE warehouse = ? AND connector = ? AND kind != ? GROUP BY problem"
                " HAVING count(DISTINCT thread) >= 2) ORDER BY id DESC LIMIT ?",
                (
                    self._warehouse,
                    connector,
                    thread,
                    self._warehouse,
                    connector,
                    PERSON_REJECTED,
                    RECURRING_ROWS,
                ),
            )
            if self.across_threads and wanted
            else []
        )
        relevant = [p for p, sql in recurring if read_tables(sql, dialect) & wanted]
        found = dict.fromkeys(p for p in [*(p for (p,) in mine), *relevant])
        return list(found)[:limit]

    def close(self) -> None:
        """Close the database this store opened (one given as a Storage is its owner's)."""
        if self._owned:
            self._db.close()
