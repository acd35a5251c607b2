"""The sandbox tests' fixtures: a fresh `Sandboxes`, and `query`, which runs SQL on a thread's
sandbox the way the bot does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.duckdb.connector import DuckDBConnector
from connectors.sandbox.sandboxes import Sandboxes
from tests.connectors.sandbox.sandbox_uploads import THREAD


@pytest.fixture
def sandboxes(tmp_path: Path) -> Sandboxes:
    return Sandboxes(tmp_path / "sandboxes")


@pytest.fixture
def query(sandboxes: Sandboxes) -> Iterator:
    """Opens the thread's sandbox the way the bot does and runs SQL on it."""
    opened: list[DuckDBConnector] = []

    def run(sql: str, thread: str = THREAD) -> list[tuple]:
        connector = sandboxes.open(thread)
        opened.append(connector)
        try:
            return connector.run(sql, max_rows=1000, timeout_s=10).rows
        finally:
            connector.close()

    yield run
