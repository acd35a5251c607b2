"""The Looker connector over a real JDBC driver: HSQLDB standing in for the Open SQL Interface.

The JDBC path (metadata through DatabaseMetaData, sample rows, runs, cancel, errors) is real;
the database behind it is not Looker (see tests/fixtures/looker/standin.py).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.gate import GateSchema, check_sql
from connectors import open_connector
from connectors.base import (
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    RunContext,
    WarehouseUnavailable,
)
from connectors.looker.connector import LookerConnector
from connectors.looker.metadata import DIMENSION, is_measure
from tests.fixtures.looker import standin

SPEC = "looker://looker.example.com/shop"


@pytest.fixture(scope="module")
def standin_url() -> str:
    return standin.build("looker_tests")


def open_looker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, spec: str = SPEC, **env: str
) -> LookerConnector:
    for name in ("LOOKER_JDBC_URL", "LOOKER_JDBC_DRIVER", "LOOKER_SAMPLE_ROWS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    connector = open_connector(spec, data_dir=tmp_path)
    assert isinstance(connector, LookerConnector)
    return connector


@pytest.fixture
def looker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> Iterator[LookerConnector]:
    connector = open_looker(monkeypatch, tmp_path, **standin.env(standin_url))
    yield connector
    connector.close()


def test_models_explores_and_fields_come_from_database_metadata(looker: LookerConnector) -> None:
    tables = {t.name: t for t in looker.list_tables()}
    assert sorted(tables) == ["shop.orders", "shop.users"]  # the model's schema only
    orders = tables["shop.orders"]
    assert [c.name for c in orders.columns] == [
        "orders.id",
        "orders.status",
        "orders.created_date",
        "orders.amount",
        "users.country",
        "orders.count",
        "orders.total_amount",
    ]
    measures = [c.name for c in orders.columns if is_measure(c)]
    assert measures == ["orders.count", "orders.total_amount"]  # IS_GENERATEDCOLUMN = YES
    status = next(c for c in orders.columns if c.name == "orders.status")
    assert status.description == f"{DIMENSION}. Where the order is"  # REMARKS
    assert looker.describe("orders") == orders
    with pytest.raises(QueryFailed, match="no table"):
        looker.describe("ordrs")


def test_sample_rows_show_a_few_visible_dimensions_only(looker: LookerConnector) -> None:
    orders = looker.describe("shop.orders")
    assert orders.description.startswith("Orders with their buyers. Sample rows of ")
    note = orders.description.split("Sample rows of ", 1)[1]
    assert note.startswith("`orders.id`, `orders.status`, `orders.created_date`: ")
    assert "(1, 'complete', '2026-01-05')" in note
    assert "orders.count" not in note and "orders.amount" not in note
    assert note.count("(") == 3  # three rows


def test_no_sample_rows_when_turned_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> None:
    env = standin.env(standin_url, LOOKER_SAMPLE_ROWS="0")
    connector = open_looker(monkeypatch, tmp_path, **env)
    try:
        assert connector.describe("orders").description == "Orders with their buyers"
    finally:
        connector.close()


def test_gate_normalised_looker_sql_runs_through_jdbc(looker: LookerConnector) -> None:
    schema = GateSchema.from_tables(looker.list_tables(), looker.dialect)
    verdict = check_sql(
        "SELECT `orders.status`, AGGREGATE(`orders.count`) AS orders, "
        "AGGREGATE(`orders.total_amount`) AS total FROM `orders` "
        "WHERE `users.country` = 'FR' GROUP BY `orders.status` ORDER BY total DESC;",
        schema,
    )
    assert verdict.ok, verdict.reasons
    # pretty printed, one clause a line: Looker reads the line breaks as whitespace
    assert verdict.sql == (
        "SELECT\n"
        "  `orders.status`,\n"
        "  AGGREGATE(`orders.count`) AS `orders`,\n"
        "  AGGREGATE(`orders.total_amount`) AS `total`\n"
        "FROM `shop`.`orders`\n"
        "WHERE\n"
        "  `users.country` = 'FR'\n"
        "GROUP BY\n"
        "  `orders.status`\n"
        "ORDER BY\n"
        "  `total` DESC\n"
        "LIMIT 1000"
    )
    result = looker.run(verdict.sql, max_rows=10, timeout_s=30)
    assert result.columns == ["orders.status", "orders", "total"]
    assert result.rows == [("complete", 2.0, 30.5), ("cancelled", 1.0, 3.0)]


def test_cancel_stops_a_running_query(looker: LookerConnector) -> None:
    failures: list[BaseException] = []

    def work() -> None:
        try:
            looker.run(standin.SLOW_SQL, max_rows=1, timeout_s=60, context=RunContext("k1"))
        except BaseException as exc:  # recorded for the assertion below
            failures.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 10
    while not looker.cancel("k1"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    thread.join(30)
    assert [type(f) for f in failures] == [QueryCancelled]


def test_missing_settings_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("LOOKER_CLIENT_ID", "LOOKER_CLIENT_SECRET", "LOOKER_JDBC_JAR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOOKER_CLIENT_ID", "abc")
    with pytest.raises(ValueError, match="needs LOOKER_CLIENT_SECRET, LOOKER_JDBC_JAR"):
        open_connector(SPEC, data_dir=tmp_path)
    with pytest.raises(ValueError, match=r"needs a host: looker://HOST"):
        open_connector("looker:", data_dir=tmp_path)


def test_the_extra_not_installed_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # as if jaydebeapi were missing
    monkeypatch.setitem(sys.modules, "connectors.looker.connector", None)
    with pytest.raises(ValueError, match=r"uv sync --extra looker"):
        open_connector(SPEC, data_dir=tmp_path)


def test_a_missing_jar_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> None:
    env = standin.env(standin_url, LOOKER_JDBC_JAR=str(tmp_path / "avatica-looker.jar"))
    with pytest.raises(WarehouseUnavailable, match=r"avatica-looker\.jar does not exist"):
        open_looker(monkeypatch, tmp_path, **env)


def test_a_wrong_api_key_is_a_login_error_naming_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> None:
    env = standin.env(standin_url, LOOKER_CLIENT_SECRET="wrong")
    with pytest.raises(PermissionDenied, match="Looker refused the login") as caught:
        open_looker(monkeypatch, tmp_path, **env)
    assert "LOOKER_CLIENT_ID" in caught.value.hint


def test_an_unreachable_instance_names_the_host(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, standin_url: str
) -> None:
    env = standin.env(standin_url, LOOKER_JDBC_URL="jdbc:hsqldb:hsql://127.0.0.1:1/none")
    with pytest.raises(WarehouseUnavailable, match="Cannot reach Looker") as caught:
        open_looker(monkeypatch, tmp_path, **env)
    assert "https://looker.example.com" in caught.value.hint
