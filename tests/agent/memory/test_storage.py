"""agent/memory/storage.py and the stores on it: files written before it still open, and read the
same."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.memory.audit import AuditLog, sql_sha256
from agent.memory.examples import ExampleStore
from agent.memory.failures import FailureStore
from agent.memory.storage import SqliteStorage, Tables

#: The tables as the code before agent/memory/storage.py created them (frozen copies: do not
#: update).
OLD_EXAMPLES = """
CREATE TABLE examples (
    id INTEGER PRIMARY KEY AUTOINCREMENT, question TEXT NOT NULL, sql TEXT NOT NULL,
    tables TEXT NOT NULL, columns TEXT NOT NULL, approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL, retired_at TEXT
);
INSERT INTO examples (question, sql, tables, columns, approved_by, approved_at)
VALUES ('units sold?', 'SELECT SUM(q) FROM items', '["items"]', '["items.q"]', 'U1',
        '2026-01-01T00:00:00+00:00');
"""
OLD_FAILURES = """
CREATE TABLE failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT, connector TEXT NOT NULL, thread TEXT NOT NULL,
    kind TEXT NOT NULL, problem TEXT NOT NULL, sql TEXT NOT NULL, at TEXT NOT NULL
);
CREATE INDEX failures_by_connector ON failures (connector, problem);
INSERT INTO failures (connector, thread, kind, problem, sql, at)
VALUES ('duckdb', 'T:1', 'gate', 'column q2 does not exist', 'SELECT q2 FROM items', '2026');
"""
OLD_AUDIT = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, thread_id TEXT NOT NULL,
    event TEXT NOT NULL, proposal_id TEXT NOT NULL DEFAULT '', actor TEXT NOT NULL DEFAULT '',
    sql TEXT NOT NULL DEFAULT '', sql_sha256 TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""


def old_file(path: Path, script: str) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    conn.close()
    return path


def test_an_old_examples_file_opens_with_its_examples_and_old_code_still_reads_it(
    tmp_path: Path,
) -> None:
    path = old_file(tmp_path / "examples.sqlite", OLD_EXAMPLES)
    store = ExampleStore(path, warehouse="shop")
    assert [e.question for e in store.similar("units sold")] == ["units sold?"]
    store.add("revenue?", "SELECT 1", tables=["t"], columns=[], approved_by="U2")
    store.add("revenue?", "SELECT 1", tables=["t"], columns=[], approved_by="U3")  # kept once
    assert [e.question for e in store.active()] == ["units sold?", "revenue?"]
    store.close()
    # a rollback to the code before: its statements still read the file
    with sqlite3.connect(path) as conn:
        found = conn.execute("SELECT question FROM examples WHERE retired_at IS NULL").fetchall()
    conn.close()
    assert found == [("units sold?",), ("revenue?",)]


def test_an_old_failures_file_opens_with_its_failures(tmp_path: Path) -> None:
    store = FailureStore(old_file(tmp_path / "failures.sqlite", OLD_FAILURES), warehouse="shop")
    store.record("duckdb", "T:1", "engine", ["Binder Error: no q3"], "SELECT q3 FROM items")
    assert store.hints("duckdb", "T:1") == ["Binder Error: no q3", "column q2 does not exist"]
    store.close()


def test_an_old_audit_file_opens_and_stays_append_only(tmp_path: Path) -> None:
    path = old_file(tmp_path / "audit.sqlite", OLD_AUDIT)
    log = AuditLog(path)
    log.record("T:1", "approved", proposal_id="p1", actor="U1", sql="SELECT 1")
    assert log.approved_sha256("p1") == sql_sha256("SELECT 1")
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")
    conn.close()


def test_a_batch_that_fails_part_way_writes_nothing(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "s.sqlite")
    storage.create(Tables("t", "CREATE TABLE t (k TEXT PRIMARY KEY);", ""))
    with pytest.raises(sqlite3.IntegrityError):
        storage.many("INSERT INTO t (k) VALUES (?)", [("a",), ("b",), ("a",)])
    assert storage.rows("SELECT k FROM t") == []
    storage.close()
