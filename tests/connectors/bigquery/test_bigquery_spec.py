"""`bigquery:PROJECT/DATASET[,DATASET...]` and the settings it reads from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors import open_connector
from connectors.base import WarehouseUnavailable
from connectors.bigquery.connector import BigQueryConnector, from_spec
from connectors.settings import BigQuerySettings, ConnectorSettings, SettingsError

EMULATOR = {"BIGQUERY_API_ENDPOINT": "http://127.0.0.1:9050"}


def settings(env: dict[str, str]) -> BigQuerySettings:
    return BigQuerySettings.from_env(env)


def test_spec_names_project_and_datasets() -> None:
    connector = from_spec("my-proj/sales, archive,other-proj.ref", settings(EMULATOR))
    assert connector.project == "my-proj"
    assert connector.datasets == [
        ("my-proj", "sales"),
        ("my-proj", "archive"),
        ("other-proj", "ref"),
    ]
    assert connector.maximum_bytes_billed == 10 * 1024**3
    assert connector.price_per_tib_usd == 6.25
    assert connector.location is None


def test_environment_sets_location_cap_and_price() -> None:
    env = {
        **EMULATOR,
        "BIGQUERY_LOCATION": "europe-west2",
        "QUERYBOT_BQ_MAX_BYTES_BILLED": "1073741824",
        "QUERYBOT_BQ_PRICE_PER_TIB": "7.5",
    }
    connector = from_spec("my-proj/sales", settings(env))
    assert connector.location == "europe-west2"
    assert connector.maximum_bytes_billed == 1024**3
    assert connector.price_per_tib_usd == 7.5


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("QUERYBOT_BQ_MAX_BYTES_BILLED", "10GB", "a whole number from 1 to 1000000000000000"),
        ("QUERYBOT_BQ_MAX_BYTES_BILLED", "0", "a whole number from 1 to 1000000000000000"),
        ("QUERYBOT_BQ_PRICE_PER_TIB", "cheap", "a number from 0 to 1000"),
        ("QUERYBOT_BQ_PRICE_PER_TIB", "-1", "a number from 0 to 1000"),
    ],
)
def test_bad_numbers_are_named(variable: str, value: str, expected: str) -> None:
    with pytest.raises(SettingsError) as caught:
        settings({**EMULATOR, variable: value})
    assert str(caught.value).startswith(f"{variable} must be {expected} (default ")
    assert str(caught.value).endswith(f"got '{value}'.")


@pytest.mark.parametrize("arg", ["", "my-proj", "my-proj/", "/sales", "my-proj/ , "])
def test_malformed_specs(arg: str) -> None:
    with pytest.raises(ValueError, match="PROJECT/DATASET"):
        from_spec(arg, settings(EMULATOR))


def test_key_file_from_the_environment_is_used(tmp_path: Path) -> None:
    env = {"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")}
    with pytest.raises(WarehouseUnavailable, match=r"missing\.json"):
        from_spec("my-proj/sales", settings(env))


def test_factory_opens_bigquery(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BIGQUERY_API_ENDPOINT", "http://127.0.0.1:9050")
    monkeypatch.setenv("BIGQUERY_LOCATION", "US")
    connector = open_connector("bigquery:my-proj/sales", data_dir=tmp_path)
    try:
        assert isinstance(connector, BigQueryConnector)
        assert (connector.project, connector.datasets, connector.location) == (
            "my-proj",
            [("my-proj", "sales")],
            "US",
        )
    finally:
        connector.close()


def test_factory_uses_the_settings_it_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The bot passes the settings it checked at start; the environment is not read again."""
    monkeypatch.setenv("BIGQUERY_LOCATION", "US")
    monkeypatch.setenv("QUERYBOT_BQ_PRICE_PER_TIB", "cheap")
    given = ConnectorSettings(
        bigquery_api_endpoint="http://127.0.0.1:9050",
        bigquery_location="EU",
        bq_max_bytes_billed=1024,
    )
    connector = open_connector("bigquery:my-proj/sales", data_dir=tmp_path, settings=given)
    try:
        assert isinstance(connector, BigQueryConnector)
        assert (connector.location, connector.maximum_bytes_billed) == ("EU", 1024)
    finally:
        connector.close()


def test_factory_names_a_bad_variable_of_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BIGQUERY_API_ENDPOINT", "http://127.0.0.1:9050")
    monkeypatch.setenv("QUERYBOT_BQ_MAX_BYTES_BILLED", "10 GiB")
    with pytest.raises(SettingsError, match=r"^QUERYBOT_BQ_MAX_BYTES_BILLED must be a whole"):
        open_connector("bigquery:my-proj/sales", data_dir=tmp_path)


def test_factory_lists_the_bigquery_form(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"bigquery:PROJECT/DATASET"):
        open_connector("bigqueery:x/y", data_dir=tmp_path)
