"""BigQueryConnector over a scripted REST API, what the emulator cannot show: bad
configuration and credentials refused, datasets in other projects."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.base import (
    WarehouseUnavailable,
)
from connectors.bigquery.connector import BigQueryConnector
from tests.support.bigquery_fake_api import FakeBigQuery


@pytest.mark.parametrize(
    "kwargs",
    [
        {"project": "Bad Project", "datasets": ["sales"]},
        {"project": "proj", "datasets": []},
        {"project": "proj", "datasets": ["sales`; DROP"]},
        {"project": "proj", "datasets": ["sales"], "maximum_bytes_billed": 0},
        {"project": "proj", "datasets": ["sales"], "job_timeout_s": 0},
    ],
)
def test_bad_configuration_is_refused(kwargs: dict, api: FakeBigQuery) -> None:
    with pytest.raises(ValueError):
        BigQueryConnector(**kwargs, client=api.client())


def test_datasets_in_other_projects(api: FakeBigQuery) -> None:
    connector = BigQueryConnector(
        "proj", datasets=["sales", "shared-data.ref"], client=api.client()
    )
    assert connector.datasets == [("proj", "sales"), ("shared-data", "ref")]


def test_missing_key_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable) as caught:
        BigQueryConnector(
            "proj", datasets=["sales"], credentials_path=str(tmp_path / "missing.json")
        )
    assert "GOOGLE_APPLICATION_CREDENTIALS" in caught.value.hint


def test_malformed_key_file_is_unavailable(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text('{"type": "service_account"}')
    with pytest.raises(WarehouseUnavailable, match="credentials"):
        BigQueryConnector("proj", datasets=["sales"], credentials_path=str(key))


def test_no_default_credentials_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(WarehouseUnavailable, match="credentials"):
        BigQueryConnector("proj", datasets=["sales"])
