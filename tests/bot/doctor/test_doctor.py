"""`querybot doctor` against real warehouses: the demo DuckDB file, a SQLite file, PostgreSQL and
MariaDB on this machine (the test logins of tests/support/sql_fixtures.py: the PostgreSQL one
holds every write grant on its database, so only the read-only transaction refuses the probe),
Looker's HSQLDB stand-in, a port nothing listens on, and logins too powerful to be held
read-only; Slack is the Web API stand-in (its own checks: tests/bot/doctor/test_doctor_slack.py).
Connectors unlike the shipped ones: tests/bot/doctor/test_doctor_probes.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.doctor.deployment import PROBE_WRITE
from tests.fixtures.looker import standin
from tests.support.sql_fixtures import (
    HOST,
    MYSQL_PORT,
    PG_PORT,
    Sample,
    closed_port,
    mysql_sample,
    port_open,
    postgres_sample,
    require,
    sqlite_sample,
)
from tests.support.standin import SlackStandin


@pytest.fixture(scope="module")
def pg() -> Iterator[Sample]:
    with postgres_sample() as sample:
        yield sample


@pytest.fixture(scope="module")
def maria() -> Iterator[Sample]:
    with mysql_sample() as sample:
        yield sample


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[Sample]:
    folder = tmp_path / "lite"
    folder.mkdir()
    with sqlite_sample(folder) as sample:
        yield sample


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandin]:
    with SlackStandin() as api:
        yield api


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: SlackStandin) -> Path:
    """A deployment's environment: scripted model, Slack secrets Slack accepts; the config file
    is written by each test."""
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"kind": "clarify", "message": "?"}) + "\n")
    monkeypatch.chdir(tmp_path)  # no .env from the project
    for name in ("QUERYBOT_WAREHOUSE", "SLACK_APP_TOKEN", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    monkeypatch.setenv("SLACK_API_URL", slack.url)
    config = tmp_path / "querybot.toml"
    monkeypatch.setenv("QUERYBOT_CONFIG", str(config))
    return config


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def section(out: str, title: str) -> str:
    """The lines of one section of the report."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), None)
    return "\n".join(lines[start:end])


@pytest.mark.slow
def test_every_real_warehouse_passes_and_is_left_unchanged(
    env: Path,
    demo_file: Path,
    lite: Sample,
    pg: Sample,
    maria: Sample,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PG_URL", pg.url)
    env.write_text(
        'default = "shop"\n'
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        f'[warehouses.lite]\nspec = "{lite.url}"\n'
        '[warehouses.pg]\nspec = "${PG_URL}"\n'
        f'[warehouses.maria]\nspec = "{maria.url}"\n'
        '[channels]\nC0PG000001 = "pg"\n'
    )
    before = [s.fingerprint() for s in (lite, pg, maria)]
    code, out = doctor(capsys)
    assert code == 0, out
    assert f"deployment: config file {env}" in out
    assert "· channel C0PG000001 -> pg" in out
    assert "· other channels and direct messages -> shop" in out
    for name, engine in [("shop", "duckdb"), ("lite", "sqlite"), ("pg", "postgresql")]:
        part = section(out, f"warehouse {name} ")
        assert f"✓ opens ({engine}" in part
        assert "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was " in part
        assert "✓ sample query passed the gate and ran: SELECT" in part and "-> 1 row" in part
    assert "✓ 7 tables visible" in section(out, "warehouse shop ")
    assert "read-only transaction" in section(out, "warehouse pg ")
    assert "(${PG_URL})" in out and pg.url not in out  # the expanded secret is never shown
    maria_part = section(out, "warehouse maria ")
    assert "✓ opens (mysql" in maria_part
    assert (
        "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was " in maria_part
    )
    assert "✓ 4 tables visible" in maria_part  # departments, employees, salaries and a view
    assert "✓ QUERYBOT_MODEL builds" in out and "the doctor calls no model" in out
    assert "✓ Slack accepts SLACK_BOT_TOKEN: bot @querybot in Stand-in" in out
    assert f"state (SQLite files in {env.parent / 'data'})" in out
    assert "✓ the data directory is writable" in out
    assert "Everything checked is fine." in out
    assert [s.fingerprint() for s in (lite, pg, maria)] == before


def test_failures_say_what_to_do_and_exit_non_zero(
    env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = closed_port()
    env.write_text(
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        f'[warehouses.dead]\nspec = "postgresql://querybot:hunter2@{HOST}:{dead}/x"\n'
        '[warehouses.gone]\nspec = "sqlite:///nowhere/at/all.db"\n'
        '[warehouses.odd]\nspec = "oracle://x"\n'
    )
    monkeypatch.delenv("SLACK_SIGNING_SECRET")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxp-user-token")
    code, out = doctor(capsys)
    assert code == 1
    assert "✓ opens (duckdb" in section(out, "warehouse shop ")
    dead_part = section(out, "warehouse dead ")
    assert f"(postgresql://querybot:***@{HOST}:{dead}/x)" in dead_part and "hunter2" not in out
    assert "✗ does not open:" in dead_part
    assert "· not checked: tables, read-only, sample query" in dead_part
    assert "✗ does not open:" in section(out, "warehouse gone ")
    assert "Unknown warehouse 'oracle://x'" in section(out, "warehouse odd ")
    assert "✗ SLACK_BOT_TOKEN does not start with xoxb-" in out
    assert "✗ neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (--http)" in out
    assert "5 problems found (marked ✗)" in out, out


def test_logins_too_powerful_are_refused_at_open(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No connector here lets its login write: PostgreSQL superusers and MariaDB's root (ALL
    PRIVILEGES) are refused when the connector opens, which the doctor reports as a failure."""
    require(port_open(PG_PORT), "PostgreSQL is not reachable")
    require(port_open(MYSQL_PORT), "MariaDB is not reachable")
    env.write_text(
        f'[warehouses.pgroot]\nspec = "postgresql://postgres@{HOST}:{PG_PORT}/postgres"\n'
        f'[warehouses.mariaroot]\nspec = "mysql://root@{HOST}:{MYSQL_PORT}/test"\n'
    )
    code, out = doctor(capsys)
    assert code == 1
    assert "✗ does not open:" in section(out, "warehouse pgroot ")
    assert "Refusing to query PostgreSQL as 'postgres'" in section(out, "warehouse pgroot ")
    mariaroot = section(out, "warehouse mariaroot ")
    assert "✗ does not open: Refusing to query MySQL as 'root" in mariaroot


@pytest.mark.slow
def test_the_state_database(
    env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require(port_open(PG_PORT), "PostgreSQL is not reachable")
    env.write_text(f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n')
    monkeypatch.setenv("QUERYBOT_STATE_URL", f"postgresql://postgres@{HOST}:{PG_PORT}/postgres")
    code, out = doctor(capsys)
    assert code == 0, out
    assert "✓ PostgreSQL is reachable" in section(out, "state (QUERYBOT_STATE_URL=")
    dead = f"postgresql://querybot:hunter2@{HOST}:{closed_port()}/state"
    monkeypatch.setenv("QUERYBOT_STATE_URL", dead)
    code, out = doctor(capsys)
    assert code == 1
    state = section(out, "state (QUERYBOT_STATE_URL=")
    assert "querybot:***@" in state and "hunter2" not in out
    assert "✗ PostgreSQL cannot be reached:" in state and "Connection refused" in state


def test_only_one_warehouse(env: Path, demo_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env.write_text(
        f'[warehouses.shop]\nspec = "duckdb:{demo_file}"\n'
        '[warehouses.other]\nspec = "sqlite:///nowhere.db"\n'
    )
    code, out = doctor(capsys, "--warehouse", "shop")
    assert code == 0, out
    assert "warehouse other" not in out
    code, out = doctor(capsys, "--warehouse", "nope")
    assert code == 1 and "There is no warehouse named 'nope'" in out


def test_a_broken_config_file_is_one_failure_line(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env.write_text('[warehouses.a]\nspec = "postgresql://u:${NOT_SET_ANYWHERE}@h/db"\n')
    code, out = doctor(capsys)
    assert code == 1
    assert f"✗ {env}: warehouses.a.spec: ${{NOT_SET_ANYWHERE}} is used but" in out
    assert "Traceback" not in out


@pytest.mark.slow
def test_without_a_config_file_the_single_warehouse_is_checked(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUERYBOT_CONFIG")
    monkeypatch.setenv("QUERYBOT_MODEL", "google_genai:gemini-2.5-flash")
    code, out = doctor(capsys)  # QUERYBOT_WAREHOUSE unset: the demo, built in the data dir
    assert code == 1  # no GOOGLE_API_KEY
    assert "deployment: QUERYBOT_WAREHOUSE, no config file" in out
    assert "✓ opens (duckdb" in section(out, "warehouse main (demo)")
    assert "✗ GOOGLE_API_KEY is not set" in out


@pytest.mark.slow
def test_looker_through_the_hsqldb_standin(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Looker connector over the JDBC stand-in: its Explores, the probe refused before it
    is sent (the connector runs queries only), a sample on the first field the Looker gate
    accepts; the stand-in unchanged."""
    url = standin.build("doctor_looker")
    for name, value in standin.env(url, LOOKER_SAMPLE_ROWS="0").items():
        monkeypatch.setenv(name, value)
    env.write_text('[warehouses.looker]\nspec = "looker://looker.example.com/shop"\n')
    code, out = doctor(capsys)
    assert code == 0, out
    part = section(out, "warehouse looker (looker://looker.example.com/shop)")
    assert "✓ opens (looker, looker SQL)" in part
    assert "✓ 2 tables visible (shop.orders, shop.users)" in part
    assert (
        f"✓ read-only: a test write ({PROBE_WRITE}) was refused (Looker runs queries only, and "
        "this statement starts with 'CREATE'" in part
    )
    assert (
        "✓ sample query passed the gate and ran: SELECT `orders.id` FROM `shop`.`orders` "
        "LIMIT 1 -> 1 row" in part
    )
    from connectors.looker.jdbc import JdbcRunner  # the optional `looker` extra

    dba = JdbcRunner(
        name="HSQLDB",
        driver=standin.DRIVER,
        url=url,
        jars=[standin.require_jar()],
        properties={"user": "SA", "password": ""},
    )
    try:
        probes = dba.run(
            "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME LIKE 'QUERYBOT%'",
            max_rows=5,
            timeout_s=30,
        )
        assert probes.rows == []
    finally:
        dba.close()
