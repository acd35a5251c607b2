"""Row types of hidden tables on the real PostgreSQL (127.0.0.1:5432): each attack leaks when sent
straight to the connector as the bot's restricted login, and the gate refuses it before it runs;
built-in casts pass the gate and run.

The throwaway database holds `secret.payroll` (the login has USAGE on the schema, so it may name
its objects, but no SELECT) and `public.bonus` (nothing granted), and `public.orders`, which the
login reads and the gate exposes.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from agent.gate import GateSchema, casts, check_sql
from agent.screen.judge import screen
from bot.settings import Settings
from bot.wiring import Deployment
from connectors import open_connector
from connectors.base import Connector, ConnectorError
from tests.support.needs import unavailable
from tests.support.sql_fixtures import bound_temp_files

#: Each attack, and what it returns (or says) straight from the login.
LEAKS = {
    "SELECT to_json(jsonb_populate_record(CAST(NULL AS secret.payroll), '{}'))": "ceo_salary_usd",
    "SELECT to_json(CAST('(,,)' AS secret.payroll))": "ceo_salary_usd",
    "SELECT to_json(jsonb_populate_record(NULL::bonus, '{}'))": "bonus_usd",
    "SELECT to_json(ROW(NULL, NULL, NULL)::secret.payroll)": "ceo_salary_usd",
    "SELECT to_json(ARRAY['(,,)'::secret.payroll])": "ceo_salary_usd",
    'SELECT to_json(t.a) FROM jsonb_to_record(\'{"a": "(1,2,3)"}\') AS t(a secret.payroll)': "ssn",
    "SELECT (NULL::secret.payroll).*": "ssn",  # in the result's column names
    'SELECT to_json(t.a) FROM jsonb_to_recordset(\'[{"a": "(1,2)"}]\') AS t(a bonus)': "bonus_usd",
    "SELECT to_json('{\"(,)\"}'::_bonus)": "bonus_usd",  # the array type of every table
    "SELECT 'secret.payroll'::regclass::text": "secret.payroll",
    "SELECT 'secret.payroll'::regtype::text": "secret.payroll",
}
#: A cast to a name that is missing fails, to one that exists runs: an oracle of hidden tables.
MISSING = "SELECT CAST(NULL AS secret.no_such_table)"
LEGITIMATE = (
    "SELECT ordered_at::date, CAST(amount AS numeric(10,2)), ARRAY['a', 'b']::text[],"
    " interval '1 day', CAST(id AS text), o FROM orders AS o",
    "SELECT CAST(ordered_at AS timestamp with time zone)::date, amount::numeric(10,2),"
    " CAST('{a,b}' AS varchar(3)[]), CAST('1 day' AS interval day to second), id::int8::text,"
    " to_json(o)->>'id' FROM orders AS o",
)

#: Every type the gate accepts in PostgreSQL, as sqlglot writes it (what runs); `char` of the
#: names is the quoted internal `"char"`.
ACCEPTED = sorted(
    {exp.DataType(this=kind).sql("postgres") for kind in casts.BUILTIN["postgres"]}
    | {
        sqlglot.parse_one("CAST(NULL AS " + ('"char"' if n == "char" else n) + ")", read="postgres")
        .args["to"]
        .sql("postgres")
        for n in casts.BUILTIN_NAMES["postgres"]
    }
)


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Connector]:
    import psycopg

    name = f"querybot_ty_{uuid.uuid4().hex[:8]}"
    reader = f"{name}_ro"
    try:
        server = psycopg.connect(host="127.0.0.1", user="postgres", autocommit=True)
    except psycopg.Error as error:
        unavailable(f"PostgreSQL at 127.0.0.1:5432 is unreachable ({error})")
    try:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {reader} LOGIN")
        bound_temp_files(server, reader)
        with psycopg.connect(
            host="127.0.0.1", user="postgres", dbname=name, autocommit=True
        ) as admin:
            admin.execute("CREATE SCHEMA secret")
            admin.execute(
                "CREATE TABLE secret.payroll (who text, ssn text, ceo_salary_usd integer)"
            )
            admin.execute("INSERT INTO secret.payroll VALUES ('ceo', '078-05-1120', 900)")
            admin.execute(f"GRANT USAGE ON SCHEMA secret TO {reader}")  # names, not rows
            admin.execute("CREATE TABLE public.bonus (who text, bonus_usd integer)")
            admin.execute(
                "CREATE TABLE public.orders (id integer, ordered_at date, amount numeric)"
            )
            admin.execute("INSERT INTO public.orders VALUES (1, '2026-01-05', 12.345)")
            admin.execute(f"GRANT SELECT ON public.orders TO {reader}")
            for shadow in sorted({t.lower() for t in ACCEPTED if re.fullmatch(r"\w+", t)}):
                admin.execute(f'CREATE TABLE public."{shadow}" (ssn text)')  # nothing granted
        connector = open_connector(
            f"postgresql://{reader}@127.0.0.1:5432/{name}", data_dir=tmp_path
        )
        try:
            yield connector
        finally:
            connector.close()
    finally:
        server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        server.execute(f"DROP ROLE IF EXISTS {reader}")
        server.close()


def straight(connector: Connector, sql: str) -> str:
    """What the login sees for `sql` sent without the gate: column names and rows, or the error."""
    try:
        result = connector.run(sql, max_rows=10, timeout_s=10)
    except ConnectorError as error:
        return f"error: {error.message}"
    return f"{result.columns} {result.rows}"


def refusals(connector: Connector, sql: str) -> list[list[str]]:
    """The gate's reason codes for `sql`, with the schema the connector lists and with none."""
    schemas = (
        GateSchema.from_tables(connector.list_tables(), "postgres"),
        GateSchema.from_tables([], "postgres"),
    )
    return [[r.code for r in check_sql(sql, schema).reasons] for schema in schemas]


@pytest.mark.slow
def test_row_types_leak_straight_but_the_gate_refuses_them(postgres: Connector) -> None:
    assert "permission denied" in straight(postgres, "SELECT * FROM secret.payroll")
    assert "permission denied" in straight(postgres, "SELECT * FROM bonus")
    assert [t.name for t in postgres.list_tables()] == ["public.orders"]
    for sql, leaked in LEAKS.items():
        assert leaked in straight(postgres, sql), f"{sql} does not leak here"
        for codes in refusals(postgres, sql):
            assert "denied_type" in codes, (sql, codes)


@pytest.mark.slow
def test_the_missing_type_oracle_is_refused_before_it_runs(postgres: Connector) -> None:
    assert "does not exist" in straight(postgres, MISSING)
    assert "error" not in straight(postgres, "SELECT CAST(NULL AS secret.payroll)")
    for sql in (MISSING, "SELECT CAST(NULL AS secret.payroll)"):
        assert refusals(postgres, sql) == [["denied_type"], ["denied_type"]]


@pytest.mark.slow
def test_a_typed_literal_runs_as_a_column_not_a_cast(postgres: Connector) -> None:
    """`payroll '(,,)'` would be a typed literal; what runs is sqlglot's reading of it, a column
    with an alias, which the engine does not find."""
    unknown = check_sql("SELECT bonus '(,)'", GateSchema.from_tables([], "postgres"))
    assert unknown.ok
    answer = straight(postgres, unknown.sql)
    assert "column" in answer and "does not exist" in answer
    assert "bonus_usd" not in answer


@pytest.mark.slow
def test_built_in_casts_pass_the_gate_and_run(postgres: Connector) -> None:
    schema = GateSchema.from_tables(postgres.list_tables(), "postgres")
    for sql in LEGITIMATE:
        verdict = check_sql(sql, schema)
        assert verdict.ok, verdict.reasons
        [row] = postgres.run(verdict.sql, max_rows=10, timeout_s=10).rows
        assert str(row[0]) == "2026-01-05"
        assert str(row[1]) == "12.35"
        assert row[2] == ["a", "b"]
        assert str(row[3]) == "1 day, 0:00:00"
        assert row[4] == "1"


@pytest.mark.slow
def test_a_listed_type_runs(postgres: Connector) -> None:
    """A type the deployment lists in QUERYBOT_ALLOWED_TYPES passes (here: the exposed table's
    own row type, whose shape the login may read anyway)."""
    tables = postgres.list_tables()
    sql = "SELECT (CAST('(2,2026-01-06,1.5)' AS orders)).id"
    assert refusals(postgres, sql)[0] == ["denied_type"]
    verdict = check_sql(sql, GateSchema.from_tables(tables, "postgres", types=["orders"]))
    assert verdict.ok, verdict.reasons
    assert postgres.run(verdict.sql, max_rows=10, timeout_s=10).rows == [(2,)]


@pytest.mark.slow
def test_the_bot_refuses_before_anything_is_proposed(postgres: Connector, tmp_path: Path) -> None:
    """Through the bot's own screening (settings, deployment, catalog, gate, cost estimate and
    value check), which every draft passes before it is proposed and may run: each attack stops
    at the gate, with nothing to run, while a type listed in QUERYBOT_ALLOWED_TYPES passes."""
    script = tmp_path / "s.jsonl"
    script.write_text('"unused"\n')
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
        "QUERYBOT_PROFILE_VALUES": "off",
        "QUERYBOT_ALLOWED_TYPES": "Orders",
    }
    deployment = Deployment(Settings.from_env(env, dotenv=False), env={})
    try:
        deps = deployment.agent_for(postgres, name="pg").deps
        snapshot = deps.catalog.snapshot()
        for sql in (*LEAKS, MISSING):
            screened = screen(sql, snapshot, deps, identity="")
            assert "denied_type" in screened.codes, (sql, screened.codes)
            assert not screened.ok and not screened.verdict.ok and screened.estimate is None
        listed = "SELECT (CAST('(2,2026-01-06,1.5)' AS orders)).id"
        verdict = screen(listed, snapshot, deps, identity="").verdict
        assert verdict.ok, verdict.reasons
        assert postgres.run(verdict.sql, max_rows=10, timeout_s=10).rows == [(2,)]
    finally:
        deployment.close()


@pytest.mark.slow
def test_every_accepted_type_is_the_servers_own(postgres: Connector) -> None:
    """Each type the allow list accepts, as it will run (sqlglot's writing of it, whatever the
    spelling it was read from), resolves to a type in pg_catalog even where a table of the same
    name exists (the fixture makes one for every one-word name): no accepted type reaches a
    table's row type."""
    for spelling in ACCEPTED:
        where = (
            "SELECT n.nspname FROM pg_catalog.pg_type AS t JOIN pg_catalog.pg_namespace AS n"
            f" ON n.oid = t.typnamespace WHERE t.oid = pg_typeof(CAST(NULL AS {spelling}))"
        )
        try:
            rows = postgres.run(where, max_rows=1, timeout_s=10).rows
        except ConnectorError as error:
            raise AssertionError(f"{spelling}: {error.message}") from None
        assert rows == [("pg_catalog",)], spelling
