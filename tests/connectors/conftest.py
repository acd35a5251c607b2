"""Shared warehouses: a tiny hand-made DuckDB file, per test or per module with one connector."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from connectors.duckdb.connector import DuckDBConnector


def build_shop_file(path: Path) -> Path:
    """A small file with a commented table, a view, and the same table name in two schemas."""
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
def shop_file(tmp_path: Path) -> Path:
    """The shop file of one test (`build_shop_file`)."""
    return build_shop_file(tmp_path / "shop.duckdb")


@pytest.fixture(scope="module")
def module_shop_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop file of a module's tests that only read it, through one connector (`shop`)."""
    return build_shop_file(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="module")
def shop(module_shop_file: Path) -> Iterator[DuckDBConnector]:
    """One connector on `module_shop_file` for a module's tests, as the bot keeps one for all
    its questions (its worker started once, not per test); a test that changes a connector or
    needs a file of its own opens its own on `shop_file`."""
    connector = DuckDBConnector(module_shop_file)
    yield connector
    connector.close()
