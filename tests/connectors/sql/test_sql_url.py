"""SqlConnector URLs and names, without a server: what is accepted, refused, and never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import WarehouseUnavailable
from connectors.sql.connector import SqlConnector, flavor_for
from connectors.sql.flavor import qualified
from tests.support.sql_fixtures import closed_port


@pytest.mark.parametrize(
    ("url", "name", "dialect"),
    [
        ("postgresql://u@h/db", "postgresql", "postgres"),
        ("postgresql+psycopg://u@h:5433/db", "postgresql", "postgres"),
        ("postgres://u@h/db", "postgresql", "postgres"),
        ("mysql://u@h/db", "mysql", "mysql"),
        ("mariadb://u@h/db", "mysql", "mysql"),
        ("mysql+pymysql://u@h/db", "mysql", "mysql"),
    ],
)
def test_server_urls_map_to_their_flavor(url: str, name: str, dialect: str) -> None:
    flavor = flavor_for(url)
    assert (flavor.name, flavor.dialect) == (name, dialect)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg2://u:s3cret@h/db",
        "postgres+psycopg2://u:s3cret@h/db",
        "mysql+mysqldb://u:s3cret@h/db",
        "oracle://u:s3cret@h/db",
        "not a url with s3cret",
        "",
    ],
)
def test_unsupported_urls_are_value_errors_without_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="Supported forms") as caught:
        SqlConnector(url)
    assert "s3cret" not in str(caught.value)


def test_pool_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="pool_size"):
        SqlConnector("sqlite:///x.db", pool_size=0)


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_unreachable_server_through_the_factory(scheme: str, tmp_path: Path) -> None:
    port = closed_port()
    with pytest.raises(WarehouseUnavailable) as caught:
        open_connector(f"{scheme}://u:s3cret@127.0.0.1:{port}/db", data_dir=tmp_path)
    assert f"127.0.0.1:{port}" in caught.value.hint
    assert "s3cret" not in caught.value.message + caught.value.hint


@pytest.mark.parametrize("spec", ["postgresql:", "mysql:localhost", "sqlite:x.db", "mariadb:/x"])
def test_factory_specs_that_are_not_urls(spec: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Supported forms") as caught:
        open_connector(spec, data_dir=tmp_path)
    for form in ("postgresql://", "mysql://", "sqlite:///PATH", "duckdb:PATH"):
        assert form in str(caught.value)


@pytest.mark.parametrize(
    ("dialect", "schema", "table", "expected"),
    [
        ("postgres", "hr", "employees", "hr.employees"),
        ("postgres", "hr", "Employees", 'hr."Employees"'),
        ("postgres", "my schema", "order items", '"my schema"."order items"'),
        ("mysql", "shop_db", "order items", "shop_db.`order items`"),
        ("sqlite", "main", "employees", "main.employees"),
    ],
)
def test_qualified_names_quote_what_needs_quoting(
    dialect: str, schema: str, table: str, expected: str
) -> None:
    assert qualified(schema, table, dialect) == expected
