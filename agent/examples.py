"""Verified examples: questions whose SQL a person approved and that returned rows.

Every such run is stored (question, SQL, the tables and columns it read, who approved it, when);
questions like a new one are offered to the model as worked examples. When the catalog changes,
examples that read a table or column that no longer exists are retired (kept, never offered).

One SQLite table; `:memory:` by default, a file path in production.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import bm25s

from agent.catalog import CatalogSnapshot, table_key
from agent.retrieval import words

SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    question TEXT NOT NULL,
    sql TEXT NOT NULL,
    tables TEXT NOT NULL,
    columns TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    retired_at TEXT
);
"""


@dataclass(frozen=True)
class Example:
    id: int
    question: str
    sql: str
    tables: tuple[str, ...]
    #: `table.column` pairs, as the gate reports them.
    columns: tuple[str, ...]
    approved_by: str
    approved_at: str


class ExampleStore:
    """Thread-safe store of verified examples with a BM25 index over their questions."""

    def __init__(self, path: Path | str = ":memory:") -> None:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._conn.executescript(SCHEMA)
        self._index: tuple[bm25s.BM25, list[Example]] | None = None

    def add(
        self,
        question: str,
        sql: str,
        *,
        tables: list[str],
        columns: list[str],
        approved_by: str,
    ) -> None:
        """Store one approved run; the same active question and SQL are kept once."""
        at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self._lock:
            known = self._conn.execute(
                "SELECT 1 FROM examples WHERE question = ? AND sql = ? AND retired_at IS NULL",
                (question, sql),
            ).fetchone()
            if known:
                return
            self._conn.execute(
                "INSERT INTO examples (question, sql, tables, columns, approved_by, approved_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (question, sql, json.dumps(tables), json.dumps(columns), approved_by, at),
            )
            self._index = None

    def active(self) -> list[Example]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, question, sql, tables, columns, approved_by, approved_at"
                " FROM examples WHERE retired_at IS NULL ORDER BY id"
            ).fetchall()
        return [
            Example(i, q, s, tuple(json.loads(t)), tuple(json.loads(c)), by, at)
            for i, q, s, t, c, by, at in rows
        ]

    def retire_missing(self, snapshot: CatalogSnapshot) -> list[int]:
        """Retire examples reading a table or column the snapshot no longer has; their ids."""
        if not snapshot.tables:
            return []  # an empty listing is more likely an outage than a dropped warehouse
        columns = {
            f"{key}.{c.name.lower()}" for key, t in snapshot.by_key.items() for c in t.columns
        }
        gone = [
            e.id
            for e in self.active()
            if any(table_key(t) not in snapshot.by_key for t in e.tables)
            or any(table_key(c) not in columns for c in e.columns)
        ]
        if gone:
            at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            with self._lock:
                self._conn.executemany(
                    "UPDATE examples SET retired_at = ? WHERE id = ?", [(at, i) for i in gone]
                )
                self._index = None
        return gone

    def similar(self, question: str, k: int = 3) -> list[Example]:
        """Up to `k` active examples sharing words with `question`, most similar first."""
        with self._lock:
            index = self._index
        if index is None:
            examples = self.active()
            bm25 = bm25s.BM25()
            if examples:
                bm25.index([words(e.question) or ["_"] for e in examples], show_progress=False)
            index = (bm25, examples)
            with self._lock:
                self._index = index
        bm25, examples = index
        tokens = [t for t in words(question) if examples and t in bm25.vocab_dict]
        if not tokens:
            return []
        scores = bm25.get_scores(tokens)
        ranked = sorted(range(len(examples)), key=lambda i: -scores[i])
        return [examples[i] for i in ranked[:k] if scores[i] > 0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
