"""open_connector: the spec strings QUERYBOT_WAREHOUSE accepts."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_a_worker_starts_without_the_settings_library() -> None:
    """Every DuckDB and SQLite run may start a worker interpreter, which imports this package:
    pydantic-settings, which only the openers that read settings need, would double its start."""
    modules = ["connectors.duckdb.worker", "connectors.sql.sqlite_worker"]
    probe = (
        "import importlib, json, sys\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('pydantic'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout) == []
