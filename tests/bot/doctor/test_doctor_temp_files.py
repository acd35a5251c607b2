"""`querybot doctor` on PostgreSQL's temp_file_limit agrees with the connector (issue 36 class 4):
a login without one does not open, with the ALTER ROLE to run; with the risk accepted
(QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP) it opens and the doctor notes what is accepted; with the limit
set the doctor says temporary files are bounded. Through the real command, on the real server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.doctor.test_doctor import doctor, section
from tests.support.sql_fixtures import Sample, bound_temp_files, pg_connect, postgres_sample
from tests.support.standin import SlackStandin


@pytest.fixture(scope="module")
def pg() -> Iterator[Sample]:
    with postgres_sample() as sample:
        yield sample


@pytest.fixture
def login(pg: Sample) -> Iterator[tuple[str, str]]:
    """A fresh login without temp_file_limit, granted what the sample's login reads (name, URL)."""
    name = f"{pg.extra['name']}_{uuid.uuid4().hex[:6]}"
    with pg_connect("postgres") as server:
        server.execute(f"CREATE ROLE {name} LOGIN IN ROLE {pg.extra['name']}")
        try:
            yield name, pg.url.replace(f"//{pg.extra['name']}@", f"//{name}@")
        finally:
            server.execute(f"DROP ROLE {name}")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, login: tuple[str, str]) -> Iterator[str]:
    """A deployment with the one warehouse `pg`, as `login`; yields the login's name."""
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"kind": "clarify", "message": "?"}) + "\n")
    monkeypatch.chdir(tmp_path)  # no .env from the project
    for name in ("QUERYBOT_WAREHOUSE", "SLACK_APP_TOKEN", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP", raising=False)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    config = tmp_path / "querybot.toml"
    config.write_text(f'[warehouses.pg]\nspec = "{login[1]}"\n')
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    with SlackStandin() as api:
        monkeypatch.setenv("SLACK_API_URL", api.url)
        yield login[0]


@pytest.mark.slow
def test_unset_the_warehouse_does_not_open(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = doctor(capsys)
    part = section(out, "warehouse pg ")
    assert code == 1, out
    assert f"✗ does not open: Refusing to query PostgreSQL as {env}:" in part
    assert "temp_file_limit is unset" in part
    assert f"ALTER ROLE {env} SET temp_file_limit = '2GB';" in part
    assert "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP=true" in part


@pytest.mark.slow
def test_with_the_risk_accepted_it_opens_and_the_doctor_notes_it(
    env: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP", "true")
    code, out = doctor(capsys)
    part = section(out, "warehouse pg ")
    assert "✓ opens (postgresql" in part, out
    assert f"temp_file_limit is unlimited for {env}" in part
    assert "QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP=true accepts" in part
    assert f"ALTER ROLE {env} SET temp_file_limit = '2GB';" in part
    assert code == 0, out  # a note, not a failure: the setting said so


@pytest.mark.slow
def test_with_the_limit_set_the_doctor_says_it_is_bounded(
    env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pg_connect("postgres") as server:
        bound_temp_files(server, env)
    code, out = doctor(capsys)
    part = section(out, "warehouse pg ")
    assert "✓ temporary files are bounded (temp_file_limit = 2GB)" in part, out
    assert "ALTER ROLE" not in part
    assert code == 0, out
