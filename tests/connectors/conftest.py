"""Shared warehouses: the demo built once per session, and a tiny hand-made DuckDB file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from connectors.duckdb.connector import DuckDBConnector


@pytest.fixture
def shop_file(tmp_path: Path) -> Path:
    """A small file with a commented table, a view, and the same table name in two schemas."""
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        """
        CREATE TABLE sales (region VARCHAR, amount DECIMAL(10, 2), sold_on DATE);
        INSERT INTO sales VALUES ('North', 10.50, '2026-01-05'), ('South', 7.00, '2026-01-20');
        COMMENT ON TABLE sales IS 'One row per sale';
        COMMENT ON COLUMN sales.amount IS 'Sale amount in USD';
        CREATE VIEW big_sales AS SELECT * FROM sales WHERE amount > 10;
        CREATE SCHEMA archive;
        CREATE TABLE archive.sales (region VARCHAR);
        CREATE TABLE archive.notes (note VARCHAR);
        """
    )
    con.close()
    return path


@pytest.fixture
def shop(shop_file: Path) -> Iterator[DuckDBConnector]:
    connector = DuckDBConnector(shop_file)
    yield connector
    connector.close()
