"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: the
query connection changes nothing, even for the harmful catalogue sent past the gate.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from connectors.base import PermissionDenied
from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    load,
    tables,
)
from tests.support import canary
from tests.support.fixture_files import load_harmful


@pytest.mark.slow
def test_the_query_connection_cannot_change_the_sandbox(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    load(sandboxes, tmp_path, "sales.csv")
    path = sandboxes.path(THREAD)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    connector = sandboxes.open(THREAD)
    try:
        for sql in (
            "INSERT INTO sales (order_id) VALUES (99)",
            "DROP TABLE sales",
            "CREATE TABLE extra AS SELECT 1 AS x",
            "COMMENT ON TABLE sales IS 'changed'",
            f"COPY sales TO '{tmp_path / 'out.csv'}'",
            f"SELECT * FROM read_csv('{secret}')",
            f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        ):
            with pytest.raises(PermissionDenied):
                connector.run(sql, max_rows=10, timeout_s=5)
    finally:
        connector.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


@pytest.mark.slow
def test_the_harmful_catalogue_sent_past_the_gate_changes_and_reveals_nothing(
    sandboxes: Sandboxes, tmp_path: Path
) -> None:
    """The canary tables the catalogue targets (customers, orders, users) uploaded as CSV files
    through the loader, then every statement of the catalogue (every dialect's) and DuckDB's own
    escapes, as written and aimed at a directory holding a secret, sent straight to the
    sandbox's query connector (no gate): a write fails on the lock, not on a missing table."""
    for upload_file in canary.write_csvs(tmp_path / "incoming"):
        sandboxes.load(THREAD, upload_file, upload_file.name)
    assert set(tables(sandboxes)) == set(canary.COLUMNS)
    directory = tmp_path / "secrets"
    canary.write_secrets(directory)
    harmful = load_harmful()
    statements = canary.aimed([h.sql for h in harmful] + canary.ESCAPES["duckdb"], directory)
    db = sandboxes.path(THREAD)
    connector = sandboxes.open(THREAD)
    try:
        watched = [directory, db.parent, Path.home() / ".duckdb"]
        run = canary.contain(connector, statements, lambda: canary.duckdb_snapshot(db), watched)
    finally:
        connector.close()
    print(f"\nsandbox: {run.executed} statements, {dict(run.errors)}; ran: {run.ran}")
    assert run.executed == len(statements) > len(harmful)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    assert not run.stopped, "every statement reached DuckDB: the engine held, not a check"
    writes = [h.sql for h in harmful if h.dialect == "duckdb" and h.code in ("write", "ddl")]
    refused = {sql for sql, _ in run.blocked}  # refused as a write to the read-only file
    assert [sql for sql in writes if sql not in refused] == [
        "INSERT OR REPLACE INTO customers VALUES (1, 'a', 'b')",  # no key: the binder stops it
        # DuckDB allows data-modifying WITH only at the top level
        "SELECT * FROM (WITH d AS (UPDATE users SET password = 'x' RETURNING *) SELECT * FROM d)"
        " AS t",
        "CREATE TEMP TABLE t AS SELECT 1",  # in the run's own memory, gone when it ends
    ]
