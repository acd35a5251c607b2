"""Verified examples: questions whose SQL a person approved and that returned rows.

Every such run is stored (question, SQL, the tables and columns it read, who approved it, when);
questions like a new one are offered to the model as worked examples. When the catalog changes,
examples that read a table or column that no longer exists are retired (kept, never offered).
An example learnt from a question asked as a warehouse identity (run_as) records that identity
and is offered only to questions asked as that same identity: under row-level security its
question, literals and rows may be that identity's alone, and no table check can see that. One
learnt with no identity (the bot's own login) is offered to questions with no identity, and to
one asked as an identity only where the caller says the login reads no other rows than the
identity of the tables they share (`similar`'s `shared`). Every example is offered only for a
question whose catalog view has every table it read. Each set of examples a question may be offered
is searched with its own index, so one identity's questions do not even weigh in the ranking of
another's.

One table (a `Storage`): in memory by default; in production a SQLite file per warehouse, or, with
`QUERYBOT_STATE_URL`, PostgreSQL, where every replica learns from the others' approvals and each row
names its warehouse (a SQLite file is one warehouse's own: its rows name none).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import bm25s

from agent.catalog.retrieval import words
from agent.catalog.snapshot import CatalogSnapshot, table_key
from agent.memory.storage import Storage, Tables, open_storage

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
#: In PostgreSQL the examples of every warehouse share the table; each row names its own.
TABLES = Tables(
    "examples",
    SCHEMA,
    SCHEMA.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"),
    added={
        "examples": {
            "warehouse": "TEXT NOT NULL DEFAULT ''",
            "run_as": "TEXT NOT NULL DEFAULT ''",
            "verified_by": "TEXT NOT NULL DEFAULT ''",
            "verified_at": "TEXT NOT NULL DEFAULT ''",
        }
    },
)
_ACTIVE = "warehouse = ? AND retired_at IS NULL"


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
    #: The warehouse identity the question was asked as; "" for the bot's login.
    run_as: str = ""
    #: Who said its answer was right (a thumbs up in Slack), and so made it a golden
    #: question (`querybot eval --from-feedback`); "" when no one has.
    verified_by: str = ""


class ExampleStore:
    """Thread-safe store of verified examples with a BM25 index over their questions.

    The index is built again when the active examples change, here or in another replica."""

    def __init__(self, where: Storage | Path | str = ":memory:", *, warehouse: str = "") -> None:
        self._db = open_storage(where, TABLES)
        self._owned = not isinstance(where, Storage)
        self._warehouse = warehouse if self._db.shared else ""
        self._lock = threading.Lock()
        #: By (identity, shared): the index of the examples such a question may be offered,
        #: and the (count, highest id) of all the active examples when it was built.
        self._indexes: dict[tuple[str, bool], _Index] = {}

    def add(
        self,
        question: str,
        sql: str,
        *,
        tables: list[str],
        columns: list[str],
        approved_by: str,
        run_as: str = "",
    ) -> None:
        """Store one approved run (`run_as`: the identity it was asked as); the same active
        question and SQL are kept once."""
        at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._db.rows(
            "INSERT INTO examples (warehouse, question, sql, tables, columns, approved_by,"
            " approved_at, run_as) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1"
            f" FROM examples WHERE {_ACTIVE} AND question = ? AND sql = ?)",
            (
                self._warehouse,
                question,
                sql,
                json.dumps(tables),
                json.dumps(columns),
                approved_by,
                at,
                run_as,
                self._warehouse,
                question,
                sql,
            ),
        )

    def verify(
        self,
        question: str,
        sql: str,
        *,
        tables: list[str],
        columns: list[str],
        approved_by: str,
        verified_by: str,
        run_as: str = "",
    ) -> None:
        """Mark an approved run as verified by `verified_by` (someone who said its answer was
        right), storing it first if it is not kept yet (an answer approved before learning, or
        whose example was retired)."""
        self.add(
            question, sql, tables=tables, columns=columns, approved_by=approved_by, run_as=run_as
        )
        at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._db.rows(
            f"UPDATE examples SET verified_by = ?, verified_at = ? WHERE {_ACTIVE}"
            " AND question = ? AND sql = ?",
            (verified_by, at, self._warehouse, question, sql),
        )

    def active(self) -> list[Example]:
        rows = self._db.rows(
            "SELECT id, question, sql, tables, columns, approved_by, approved_at, run_as,"
            f" verified_by FROM examples WHERE {_ACTIVE} ORDER BY id",
            (self._warehouse,),
        )
        return [
            Example(i, q, s, tuple(json.loads(t)), tuple(json.loads(c)), by, at, run_as, checked)
            for i, q, s, t, c, by, at, run_as, checked in rows
        ]

    def verified(self) -> list[Example]:
        """The active examples someone verified, oldest first."""
        return [e for e in self.active() if e.verified_by]

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
            self._db.many(
                "UPDATE examples SET retired_at = ? WHERE id = ?", [(at, i) for i in gone]
            )
        return gone

    def similar(
        self,
        question: str,
        k: int = 3,
        *,
        within: Collection[str] | None = None,
        identity: str = "",
        shared: bool = False,
    ) -> list[Example]:
        """Up to `k` active examples sharing words with `question`, most similar first, of
        those a question asked as `identity` ("": the bot's login) may be offered: the ones
        learnt as that same identity, and with `shared` also those learnt with no identity.
        With `within` (table keys, `agent.catalog.profiling.table_key`), only those reading no other
        table."""
        # Ids only grow and a retired example never comes back, so the count and highest id of
        # the active ones change whenever they do.
        ((count, highest),) = self._db.rows(
            f"SELECT count(*), COALESCE(max(id), 0) FROM examples WHERE {_ACTIVE}",
            (self._warehouse,),
        )
        key = (identity, shared and bool(identity))
        with self._lock:
            index = self._indexes.get(key)
        if index is None or index.seen != (count, highest):
            mine = {identity, ""} if key[1] else {identity}
            examples = [e for e in self.active() if e.run_as in mine]
            index = _Index.of(examples, (count, highest))
            with self._lock:
                self._indexes[key] = index
        ranked = index.ranked(question)
        if within is not None:
            ranked = [e for e in ranked if all(table_key(t) in within for t in e.tables)]
        return ranked[:k]

    def close(self) -> None:
        """Close the database this store opened (one given as a Storage is its owner's)."""
        if self._owned:
            self._db.close()


@dataclass(frozen=True)
class _Index:
    """A BM25 index over some examples' questions."""

    bm25: bm25s.BM25
    examples: list[Example]
    #: The (count, highest id) of all the active examples when it was built.
    seen: tuple[int, int]

    @classmethod
    def of(cls, examples: list[Example], seen: tuple[int, int]) -> _Index:
        bm25 = bm25s.BM25()
        if examples:
            bm25.index([words(e.question) or ["_"] for e in examples], show_progress=False)
        return cls(bm25, examples, seen)

    def ranked(self, question: str) -> list[Example]:
        """The examples sharing words with `question`, most similar first."""
        examples = self.examples
        tokens = [t for t in words(question) if examples and t in self.bm25.vocab_dict]
        if not tokens:
            return []
        scores = self.bm25.get_scores(tokens)
        order = sorted(range(len(examples)), key=lambda i: -scores[i])
        return [examples[i] for i in order if scores[i] > 0]
