"""Verified examples, on SQLite and PostgreSQL: a thumbs up marks a learnt example verified by
that person, or stores it first when it was never learnt; other examples stay unverified; a
store opened on a database made before the column existed gains it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.examples import ExampleStore
from tests.support.pgdb import scratch_database


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path | str]:
    if request.param == "sqlite":
        yield tmp_path / "examples.sqlite"
    else:
        with scratch_database("verified") as url:
            yield url


def test_a_thumbs_up_verifies_a_learnt_example_or_stores_it(where: Path | str) -> None:
    store = ExampleStore(where, warehouse="sales")
    try:
        store.add("q1", "SELECT 1", tables=["t"], columns=["t.a"], approved_by="U1")
        store.add("q2", "SELECT 2", tables=["t"], columns=[], approved_by="U1")
        store.verify(
            "q1", "SELECT 1", tables=["t"], columns=["t.a"], approved_by="U1", verified_by="U2"
        )
        store.verify("q3", "SELECT 3", tables=["t"], columns=[], approved_by="U1", verified_by="U3")
        assert [(e.question, e.approved_by, e.verified_by) for e in store.verified()] == [
            ("q1", "U1", "U2"),
            ("q3", "U1", "U3"),
        ]
        assert [e.question for e in store.active()] == ["q1", "q2", "q3"]
    finally:
        store.close()


def test_a_store_made_before_verification_gains_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE examples (id INTEGER PRIMARY KEY AUTOINCREMENT, question TEXT NOT NULL,"
            " sql TEXT NOT NULL, tables TEXT NOT NULL, columns TEXT NOT NULL, approved_by TEXT"
            " NOT NULL, approved_at TEXT NOT NULL, retired_at TEXT)"
        )
        conn.execute(
            "INSERT INTO examples (question, sql, tables, columns, approved_by, approved_at)"
            " VALUES ('q', 'SELECT 1', '[]', '[]', 'U1', '2026-01-01')"
        )
    store = ExampleStore(path)
    try:
        [old] = store.active()
        assert old.verified_by == ""
        store.verify("q", "SELECT 1", tables=[], columns=[], approved_by="U1", verified_by="U2")
        assert [e.id for e in store.verified()] == [old.id]
    finally:
        store.close()
