"""Issue 36 class 4 on the real PostgreSQL: temp_file_limit fails closed.

Only a superuser may set temp_file_limit, and without it one query's sorts and hashes may fill
the server's disk. A login without one is refused, at open and in every run (a session opened
later may have lost it), with the ALTER ROLE to run, unless QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP
accepts the risk; with the limit set it runs. The doctor's view:
tests/bot/doctor/test_doctor_temp_files.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from connectors.base import PermissionDenied
from connectors.limits import RunLimits
from connectors.settings import LimitSettings
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import Sample, bound_temp_files, pg_connect, postgres_sample


@pytest.fixture(scope="module")
def sample() -> Iterator[Sample]:
    with postgres_sample() as loaded:
        yield loaded


@pytest.fixture
def login(sample: Sample) -> Iterator[tuple[str, str]]:
    """A fresh login without temp_file_limit (name, URL), dropped afterwards."""
    name = f"{sample.extra['name']}_{uuid.uuid4().hex[:6]}"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {name} LOGIN")
        try:
            yield name, sample.url.replace(f"//{sample.extra['name']}@", f"//{name}@")
        finally:
            server.execute(f"DROP ROLE {name}")


def test_a_login_without_temp_file_limit_is_refused_naming_the_alter_role(
    login: tuple[str, str],
) -> None:
    name, url = login
    with pytest.raises(PermissionDenied) as caught:
        SqlConnector(url, pool_size=1)
    assert f"Refusing to query PostgreSQL as {name}" in caught.value.message
    assert "temp_file_limit is unset" in caught.value.message
    assert f"ALTER ROLE {name} SET temp_file_limit = '2GB';" in caught.value.hint
    assert "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP=true" in caught.value.hint


def test_the_suggested_limit_follows_querybot_engine_temp_mb(login: tuple[str, str]) -> None:
    name, url = login
    with pytest.raises(PermissionDenied) as caught:
        SqlConnector(url, pool_size=1, limits=RunLimits(engine_temp_mb=512))
    assert f"ALTER ROLE {name} SET temp_file_limit = '512MB';" in caught.value.hint


def test_accepting_the_risk_lets_it_run(
    login: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP", "true")
    limits = LimitSettings.from_env().limits
    assert limits.allow_unbounded_temp
    accepted = SqlConnector(login[1], pool_size=1, limits=limits)
    try:
        limit = "SELECT current_setting('temp_file_limit')"
        assert accepted.run(limit, max_rows=1, timeout_s=10).rows == [("-1",)]
    finally:
        accepted.close()


def test_with_the_limit_set_it_runs(login: tuple[str, str]) -> None:
    name, url = login
    with pg_connect("postgres") as server:
        bound_temp_files(server, name)
    bounded = SqlConnector(url, pool_size=1)
    try:
        limit = "SELECT current_setting('temp_file_limit')"
        assert bounded.run(limit, max_rows=1, timeout_s=10).rows == [("2GB",)]
    finally:
        bounded.close()


def test_a_connection_opened_after_the_limit_was_removed_is_refused(
    login: tuple[str, str],
) -> None:
    name, url = login
    with pg_connect("postgres") as server:
        bound_temp_files(server, name)
        connector = SqlConnector(url, pool_size=1)
        try:
            server.execute(f"ALTER ROLE {name} RESET temp_file_limit")
            # The login check's connection was discarded: this run's session is a new one.
            with pytest.raises(PermissionDenied, match="temp_file_limit is unset") as caught:
                connector.run("SELECT 1", max_rows=1, timeout_s=10)
            assert f"ALTER ROLE {name} SET temp_file_limit = '2GB';" in caught.value.hint
        finally:
            connector.close()


def test_the_accept_setting_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP", raising=False)
    assert not LimitSettings.from_env().limits.allow_unbounded_temp
    assert not RunLimits().allow_unbounded_temp
