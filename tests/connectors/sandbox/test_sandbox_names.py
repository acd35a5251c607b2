"""Per-thread DuckDB sandboxes from uploaded files, against real DuckDB and SQLite files: file,
table and column names, and each thread's own sandbox.

Each test loads real files (tests/fixtures/files, or Parquet and SQLite files written here by
DuckDB and sqlite3) and reads the result back through the read-only `DuckDBConnector` the bot
queries with."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.sandbox.files import identifier
from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import (
    THREAD,
    load,
    tables,
    upload,
)


@pytest.mark.slow
def test_unicode_file_and_column_names(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    [loaded] = load(sandboxes, tmp_path, "Umsätze Größe 2024.csv")
    assert loaded.name == "umsatze_grosse_2024"
    table = tables(sandboxes)[loaded.name]
    assert [c.name for c in table.columns] == ["stadt", "strasse", "grosse"]
    assert table.columns[1].description == 'Column "Straße" of the file Umsätze Größe 2024.csv.'
    assert query("SELECT stadt FROM umsatze_grosse_2024 WHERE grosse > 10") == [("München",)]
    csv = "日付,売上\n2026-01-01,5\n".encode()
    [cjk] = sandboxes.load(THREAD, upload(tmp_path, "売上.csv", csv), "売上.csv")
    assert cjk.name == "file"
    assert [c.name for c in tables(sandboxes)["file"].columns] == ["column", "column_2"]


@pytest.mark.slow
def test_name_collisions(sandboxes: Sandboxes, tmp_path: Path) -> None:
    assert [t.name for t in load(sandboxes, tmp_path, "sales.csv")] == ["sales"]
    assert [t.name for t in load(sandboxes, tmp_path, "sales.csv")] == ["sales_2"]
    content = b"Amount,amount ,select,2024\n1,2,3,4\n"
    [odd] = sandboxes.load(THREAD, upload(tmp_path, "Sales.csv", content), "Sales.csv")
    assert odd.name == "sales_3"
    columns = [c.name for c in tables(sandboxes)["sales_3"].columns]
    # DuckDB tells duplicate headers apart itself ("amount_1"), ignoring case
    assert columns == ["amount", "amount_1", "select_", "column_2024"]
    [year] = sandboxes.load(THREAD, upload(tmp_path, "2024.csv", b"a\n1\n"), "2024.csv")
    assert year.name == "file_2024"


def test_identifier() -> None:
    assert identifier("Order Date", fallback="column") == "order_date"
    assert identifier("  --Net € (EUR)--  ", fallback="column") == "net_eur"
    assert identifier("Ærø Œuvre", fallback="file") == "aero_oeuvre"
    assert identifier("order", fallback="column", reserved={"order"}) == "order_"
    # words the gate's parser (sqlglot) takes for keywords
    assert identifier("Map", fallback="column") == "map_"
    assert identifier("values", fallback="column") == "values_"
    assert identifier("date", fallback="column") == "date"
    assert identifier("9lives", fallback="file") == "file_9lives"
    assert identifier("🙂", fallback="file") == "file"


@pytest.mark.slow
def test_threads_have_separate_sandboxes(sandboxes: Sandboxes, tmp_path: Path, query) -> None:
    other = "T0TEST:C0FILES:1800000002.000100"
    load(sandboxes, tmp_path, "sales.csv")
    load(sandboxes, tmp_path, "budget.json", thread=other)
    assert set(tables(sandboxes)) == {"sales"}
    assert set(tables(sandboxes, other)) == {"budget"}
    assert sandboxes.directory(THREAD) != sandboxes.directory(other)
    assert THREAD not in str(sandboxes.path(THREAD)), "the path is a hash, not the thread id"
