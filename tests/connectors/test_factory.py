"""open_connector: the spec strings QUERYBOT_WAREHOUSE accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import WarehouseUnavailable
from connectors.demo.current import CurrentDemo


@pytest.mark.slow
def test_demo_builds_on_first_use(tmp_path: Path) -> None:
    connector = open_connector("demo", data_dir=tmp_path / "data")
    try:
        assert isinstance(connector, CurrentDemo)  # no pinned day: it follows the real date
        assert (tmp_path / "data" / "demo.duckdb").is_file()
        assert connector.describe("orders").name == "demo.main.orders"
    finally:
        connector.close()


def test_duckdb_path(shop_file: Path, tmp_path: Path) -> None:
    connector = open_connector(f"duckdb:{shop_file}", data_dir=tmp_path)
    try:
        assert connector.run("SELECT count(*) FROM sales", max_rows=1, timeout_s=5).rows == [(2,)]
    finally:
        connector.close()
    assert not (tmp_path / "demo.duckdb").exists()


def test_duckdb_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable):
        open_connector(f"duckdb:{tmp_path / 'missing.duckdb'}", data_dir=tmp_path)


@pytest.mark.parametrize("spec", ["postgresql:localhost/db", "sqlite:x.db", "", "demo2"])
def test_unknown_spec_lists_the_supported_forms(spec: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Supported forms") as caught:
        open_connector(spec, data_dir=tmp_path)
    assert "demo" in str(caught.value)
    assert "duckdb:PATH" in str(caught.value)


@pytest.mark.parametrize("spec", ["duckdb:", "demo:extra"])
def test_malformed_spec(spec: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        open_connector(spec, data_dir=tmp_path)
    assert not (tmp_path / "demo.duckdb").exists()
