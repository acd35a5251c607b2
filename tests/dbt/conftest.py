"""The shop dbt project (tests/dbt/shop), built once per session with dbt-duckdb into a temporary
directory (tests/dbt/shop_build.py): nothing is written next to the project's own files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.duckdb.connector import DuckDBConnector
from tests.dbt.shop_build import BuiltProject, build_shop


@pytest.fixture(scope="session")
def shop_project(tmp_path_factory: pytest.TempPathFactory) -> BuiltProject:
    return build_shop(tmp_path_factory.mktemp("dbt"))


@pytest.fixture(scope="session")
def shop_warehouse(shop_project: BuiltProject) -> Iterator[DuckDBConnector]:
    """The built shop as querybot reads it: a read-only DuckDB connector."""
    connector = DuckDBConnector(shop_project.database)
    yield connector
    connector.close()
