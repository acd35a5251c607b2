"""Functions are allow-listed: golden cases per dialect (tests/fixtures/gate/functions.sql), the
lists' consistency with the deny lists, and QUERYBOT_ALLOWED_FUNCTIONS from the setting to the
gate."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.gate import GateSchema, check_sql, denylist, functions
from bot.settings import Settings, SettingsError
from bot.wiring import Deployment
from connectors import open_connector
from tests.support import canary
from tests.support.fixture_files import Case, load_cases
from tests.support.sql_text import tokens

CASES = load_cases("functions.sql")


def schema_for(case: Case) -> GateSchema:
    trusted = case.meta.get("functions", "")
    return GateSchema.from_tables(
        canary.tables(case.dialect), case.dialect, functions=trusted.split(",") if trusted else ()
    )


def test_cases_cover_every_dialect() -> None:
    dialects = {c.dialect for c in CASES}
    assert dialects == {"duckdb", "postgres", "mysql", "sqlite", "bigquery"}
    assert all(any(c.code and c.dialect == d for c in CASES) for d in dialects)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_function_case(case: Case) -> None:
    verdict = check_sql(case.sql, schema_for(case))
    if case.code is None:
        assert verdict.ok, verdict.reasons
        assert tokens(verdict.sql, case.dialect) == tokens(case.expected, case.dialect)
        again = check_sql(verdict.sql, schema_for(case))
        assert (again.ok, again.sql) == (True, verdict.sql), "not a fixpoint"
        return
    assert not verdict.ok
    assert case.code in [r.code for r in verdict.reasons], verdict.reasons
    unknown = check_sql(case.sql, GateSchema.from_tables([], case.dialect))
    assert not unknown.ok, "accepted when the schema is unknown"


def test_refusal_names_the_function_and_the_setting() -> None:
    verdict = check_sql("SELECT payroll_total(amount) FROM orders", canary.schema("postgres"))
    (reason,) = verdict.reasons
    assert reason.code == "unknown_function"
    assert "payroll_total()" in reason.message
    assert "known pure postgres functions" in reason.message
    assert "QUERYBOT_ALLOWED_FUNCTIONS" in reason.message


@pytest.mark.parametrize("dialect", sorted(functions.PURE_FUNCTIONS))
def test_no_pure_name_is_a_denied_one(dialect: str) -> None:
    """The allow lists and the deny lists never disagree (a denied name would stay refused)."""
    deny_as = "bigquery" if dialect == "looker" else "mysql" if dialect == "mariadb" else dialect
    denied = {
        name
        for name in functions.PURE_FUNCTIONS[dialect]
        if denylist.denied_function(name, deny_as)
    }
    assert not denied


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ()),
        (" fiscal_week ", ("fiscal_week",)),
        ('Analytics."Margin", fiscal_week(),', ("analytics.margin", "fiscal_week")),
    ],
)
def test_setting_is_read(value: str, expected: tuple[str, ...]) -> None:
    settings = Settings.from_env({"QUERYBOT_ALLOWED_FUNCTIONS": value}, dotenv=False)
    assert settings.allowed_functions == expected


def test_a_malformed_setting_says_what_to_write() -> None:
    with pytest.raises(SettingsError, match=r"QUERYBOT_ALLOWED_FUNCTIONS: 'analytics\.' is not"):
        Settings.from_env({"QUERYBOT_ALLOWED_FUNCTIONS": "fiscal_week, analytics."}, dotenv=False)


def test_the_setting_reaches_the_gate_of_every_agent(tmp_path: Path) -> None:
    """QUERYBOT_ALLOWED_FUNCTIONS, through the deployment's limits and the agent's catalog, to
    the GateSchema its questions are checked against (also after a catalog refresh)."""
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, ordered_at TEXT)")
    script = tmp_path / "s.jsonl"
    script.write_text('"unused"\n')
    sql = "SELECT fiscal_week(ordered_at) FROM orders"
    for trusted, accepted in (("", False), ("Fiscal_Week", True)):
        env = {
            "QUERYBOT_MODEL": f"scripted:{script}",
            "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
            "QUERYBOT_PROFILE_VALUES": "off",
            "QUERYBOT_ALLOWED_FUNCTIONS": trusted,
        }
        deployment = Deployment(Settings.from_env(env, dotenv=False), env={})
        connector = open_connector(f"sqlite:///{path}", data_dir=tmp_path)
        try:
            catalog = deployment.agent_for(connector, name="shop").deps.catalog
            assert check_sql(sql, catalog.gate_schema).ok is accepted
            assert check_sql(sql, catalog.refresh().gate_schema).ok is accepted
        finally:
            connector.close()
            deployment.close()
