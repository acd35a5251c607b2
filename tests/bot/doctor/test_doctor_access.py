"""`querybot doctor` on `run_as` rules, against PostgreSQL and MariaDB with roles
(tests/support/pg_roles.py, mariadb_roles.py) and SQLite with table allowlists: each identity
the rules name can be assumed or not, and what it reads, as whoever enforces it says; a
warehouse whose engine has no roles and no allowlists is told what to write. And the start:
run_as that does not fit the engine stops it, naming the key."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.access.identity import RunAsRules
from bot.config import Warehouse
from bot.doctor.deployment import check_warehouse
from bot.doctor.report import Section, render
from bot.settings import Settings, SettingsError
from bot.wiring import Deployment
from connectors.base import Connector
from connectors.sql.connector import SqlConnector
from tests.support.mariadb_roles import role_warehouse
from tests.support.pg_roles import rls_warehouse


def opener(warehouse: Warehouse) -> Connector:
    return SqlConnector(warehouse.spec)


def test_each_role_is_assumed_and_what_it_reads_is_said() -> None:
    with rls_warehouse() as pg:
        rules = RunAsRules(
            users={"U0ANA0001": pg.east},
            groups=(("S0SALES01", pg.west),),
            unmapped=pg.stranger,
        )
        section = check_warehouse(Warehouse("pg", pg.url, pg.url, run_as=rules), opener)
    report = render([section])
    print(report)
    lines = {line.text: line.status for line in section.lines}
    east = (
        f"run_as {pg.east!r}: can be assumed; reads 2 of 3 tables (shop.region_access, shop.sales)"
    )
    west = f"run_as {pg.west!r}: can be assumed; reads 3 of 3 tables"
    assert any(text.startswith(east) and status == "ok" for text, status in lines.items())
    assert any(text.startswith(west) and status == "ok" for text, status in lines.items())
    [stranger] = [t for t in lines if t.startswith(f"run_as {pg.stranger!r}")]
    assert lines[stranger] == "fail"
    assert "may not run queries as" in stranger and f'GRANT "{pg.stranger}"' in stranger
    assert f"people no rule names run as {pg.stranger!r}" in report


def lite_spec(tmp_path: Path) -> str:
    """A SQLite file with tables t and u."""
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
        con.execute("CREATE TABLE u (b INTEGER)")
    return f"sqlite:///{path}"


def run_as_lines(section: Section) -> dict[str, str]:
    return {line.text: line.status for line in section.lines if "run_as" in line.text}


def test_an_engine_without_roles_is_told_to_list_tables_or_drop_run_as(tmp_path: Path) -> None:
    spec = lite_spec(tmp_path)
    rules = RunAsRules(users={"U0ANA0001": "analyst"})
    section = check_warehouse(Warehouse("lite", spec, spec, run_as=rules), opener)
    [(text, status)] = run_as_lines(section).items()
    assert status == "fail" and text.startswith("warehouses.lite.run_as: sqlite has no identities")
    assert "run_as.tables" in text and "remove run_as" in text


def test_allowlists_are_checked_and_what_each_reads_is_said(tmp_path: Path) -> None:
    spec = lite_spec(tmp_path)
    rules = RunAsRules(
        users={"U0ANA0001": "analyst"},
        unmapped="staff",
        tables={"analyst": ("t",), "staff": ("t", "u")},
    )
    lines = run_as_lines(check_warehouse(Warehouse("lite", spec, spec, run_as=rules), opener))
    analyst = (
        "run_as 'analyst': can be assumed; reads 1 of 2 tables (main.t); querybot refuses "
        "queries reading any other table"
    )
    assert any(text.startswith(analyst) and status == "ok" for text, status in lines.items())
    assert any(t.startswith("run_as 'staff': can be assumed; reads 2 of 2") for t in lines)
    wrong = RunAsRules(unmapped="staff", tables={"staff": ("v",)})
    lines = run_as_lines(check_warehouse(Warehouse("lite", spec, spec, run_as=wrong), opener))
    [text] = [t for t, s in lines.items() if s == "fail"]
    assert text.startswith("warehouses.lite.run_as.tables.staff.v: There is no table named 'v'")


def test_mariadb_roles_are_assumed_and_what_each_reads_is_said() -> None:
    with role_warehouse() as db:
        rules = RunAsRules(
            users={"U0ANA0001": db.east}, groups=(("S0SALES01", db.west),), unmapped=db.stranger
        )
        section = check_warehouse(Warehouse("maria", db.url, db.url, run_as=rules), opener)
    lines = run_as_lines(section)
    print(render([section]))
    east = f"run_as {db.east!r}: can be assumed; reads 1 of 2 tables ({db.database}.sales); "
    west = f"run_as {db.west!r}: can be assumed; reads 2 of 2 tables"
    assert any(
        t.startswith(east) and "no row-level security" in t and s == "ok" for t, s in lines.items()
    )
    assert any(t.startswith(west) and s == "ok" for t, s in lines.items())
    [stranger] = [t for t in lines if t.startswith(f"run_as {db.stranger!r}")]
    assert lines[stranger] == "fail" and f"GRANT `{db.stranger}`" in stranger


def start(tmp_path: Path, run_as: str) -> SettingsError | Deployment:
    """Open a SQLite warehouse (tables t and u) with `run_as` lines as the bot would: the
    SettingsError that stops the start, or the deployment (the caller closes it)."""
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
        con.execute("CREATE TABLE u (b INTEGER)")
    config = tmp_path / "querybot.toml"
    config.write_text(
        f'[warehouses.lite]\nspec = "sqlite:///{path}"\n[warehouses.lite.run_as]\n{run_as}',
        encoding="utf-8",
    )
    script = tmp_path / "script.jsonl"
    script.write_text("", encoding="utf-8")
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
        "QUERYBOT_CONFIG": str(config),
    }
    deployment = Deployment(Settings.from_env(env, dotenv=False))
    try:
        deployment.open_warehouses()
    except SettingsError as exc:
        deployment.close()
        return exc
    return deployment


def test_run_as_on_an_engine_without_roles_needs_allowlists(tmp_path: Path) -> None:
    stopped = start(tmp_path, 'unmapped = "analyst"\n')
    assert isinstance(stopped, SettingsError)
    message = str(stopped)
    assert "warehouses.lite.run_as" in message and "run_as.tables" in message


def test_an_allowlist_naming_a_missing_table_stops_the_start(tmp_path: Path) -> None:
    stopped = start(
        tmp_path, 'unmapped = "analyst"\n[warehouses.lite.run_as.tables]\nanalyst = ["tt"]\n'
    )
    assert isinstance(stopped, SettingsError)
    assert "warehouses.lite.run_as.tables.analyst.tt: There is no table named 'tt'" in str(stopped)


def test_with_allowlists_the_warehouse_holds_each_identity_to_its_own(tmp_path: Path) -> None:
    started = start(
        tmp_path, 'unmapped = "analyst"\n[warehouses.lite.run_as.tables]\nanalyst = ["t"]\n'
    )
    assert isinstance(started, Deployment)
    try:
        agent = started.agents["lite"]
        assert agent.unreadable("analyst", ["main.t", "main.u"]) == ["main.u"]
    finally:
        started.close()
