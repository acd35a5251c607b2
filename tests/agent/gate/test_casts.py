"""The type allow list (agent/gate/casts.py) on the gate, every dialect, every spelling.

A type name reaches the catalogue beyond the exposed tables (a PostgreSQL table's row type is a
type of its name), so any type that is not the engine's built-in one, nor listed in
QUERYBOT_ALLOWED_TYPES, is refused: `denied_type` where sqlglot reads the spelling, a parse
error where it cannot (then nothing runs either). Built-in casts still pass.
"""

from __future__ import annotations

import pytest

from agent.gate import GateSchema, check_sql
from agent.gate.casts import parse_allowed_types
from tests.support.fixture_files import Case, load_cases

DIALECTS = ("postgres", "duckdb", "mysql", "sqlite", "bigquery", "snowflake", "looker")
TABLES = {"orders": {"id": "int", "amount": "decimal", "ordered_at": "date"}}

#: Spellings that name a hidden table's row type, or a catalogue or pseudo type.
ROW_TYPES = (
    "SELECT to_json(jsonb_populate_record(CAST(NULL AS secret.payroll), '{}'))",
    "SELECT CAST('(,,)' AS secret.payroll)",
    "SELECT NULL::secret.payroll",
    "SELECT TRY_CAST(NULL AS payroll)",
    "SELECT SAFE_CAST(NULL AS payroll)",
    "SELECT CAST(NULL AS payroll[])",
    "SELECT CAST(NULL AS _payroll)",  # the array type PostgreSQL makes for every table
    "SELECT CAST(NULL AS payroll ARRAY)",
    "SELECT '{}'::secret.payroll[][]",
    'SELECT CAST(NULL AS "Payroll")',
    "SELECT ROW(1, 2)::payroll",
    "SELECT (NULL::payroll).*",
    "SELECT jsonb_populate_record(NULL::payroll, '{}')",
    "SELECT * FROM jsonb_to_record('{}') AS t(a payroll)",
    "SELECT * FROM jsonb_to_recordset('[]') AS t(a INT, b payroll[])",
    "SELECT json_value('{}', '$' RETURNING payroll)",
    "SELECT CAST(x AS payroll) FROM (SELECT 1 AS x) AS s",
    "SELECT CAST(NULL AS MAP(INT, payroll))",
    "SELECT CAST(NULL AS ARRAY<payroll>)",
    "SELECT CAST(NULL AS STRUCT(a payroll))",
    "SELECT CAST(NULL AS pg_catalog.int4)",
    "SELECT CONVERT(NULL, payroll)",
)
CATALOGUE_TYPES = tuple(
    f"SELECT 'secret.payroll'::{name}"
    for name in ("regclass", "regtype", "regnamespace", "regrole", "regproc", "oid", "xid")
) + tuple(
    f"SELECT NULL::{name}" for name in ("record", "anyelement", "anyarray", "cstring", "void")
)
#: Where sqlglot reads these spellings, the type allow list refuses them (elsewhere the parser).
READ_AS_TYPES = ("postgres", "duckdb", "sqlite")
#: ... except spellings sqlglot reads in some of them only (DuckDB's STRUCT(...), PostgreSQL's
#: RETURNING clause, arrays in a column definition list).
UNREAD = {(d, "SELECT CAST(NULL AS STRUCT(a payroll))") for d in ("postgres", "sqlite")} | {
    (d, "SELECT json_value('{}', '$' RETURNING payroll)") for d in ("duckdb", "sqlite")
}
UNREAD.add(("sqlite", "SELECT * FROM jsonb_to_recordset('[]') AS t(a INT, b payroll[])"))


def schemas(dialect: str, types: tuple[str, ...] = ()) -> tuple[GateSchema, GateSchema]:
    """The table list known, and unknown (the safety rules alone)."""
    return (
        GateSchema.from_mapping(TABLES, dialect, types=types),
        GateSchema.from_mapping({}, dialect, types=types),
    )


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", ROW_TYPES + CATALOGUE_TYPES)
def test_every_spelling_of_a_type_beyond_the_builtins_is_refused(dialect: str, sql: str) -> None:
    if sql == "SELECT NULL::record" and dialect in ("bigquery", "looker"):
        pytest.skip("GoogleSQL's RECORD is its STRUCT, a built-in type with no catalogue behind it")
    for schema in schemas(dialect):
        verdict = check_sql(sql, schema)
        codes = [r.code for r in verdict.reasons]
        assert not verdict.ok, f"{dialect}: the gate let {sql} through"
        assert "internal_error" not in codes
        if dialect in READ_AS_TYPES and (dialect, sql) not in UNREAD:
            assert "denied_type" in codes, (dialect, sql, verdict.reasons)
        else:
            assert codes in (["parse_error"], ["denied_type"]), (dialect, sql, verdict.reasons)


@pytest.mark.parametrize("dialect", READ_AS_TYPES)
def test_the_reason_names_the_type_and_what_to_do(dialect: str) -> None:
    verdict = check_sql("SELECT CAST(NULL AS secret.payroll)", schemas(dialect)[1])
    [reason] = verdict.reasons
    assert reason.code == "denied_type"
    assert reason.message.startswith("secret.payroll is not one of the")
    assert "use a built-in type" in reason.message
    assert "QUERYBOT_ALLOWED_TYPES" in reason.message


def test_a_typed_literal_of_a_row_type_runs_as_a_column_not_a_cast() -> None:
    """`payroll '(,,)'` is PostgreSQL's typed literal; sqlglot reads a column and an alias, and
    what runs is its rendering: a column the gate checks (unknown here), never the cast."""
    known, unknown = schemas("postgres")
    assert [r.code for r in check_sql("SELECT payroll '(,,)'", known).reasons] == ["unknown_column"]
    verdict = check_sql("SELECT payroll '(,,)'", unknown)
    assert verdict.ok and 'payroll AS "(,,)"' in verdict.sql


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "SELECT CAST(NULL AS geography)"),  # PostGIS: resolved by search_path
        ("postgres", "SELECT CAST(NULL AS hstore)"),
        ("postgres", "SELECT CAST(NULL AS serial)"),  # not a type: a table may be named so
        ("postgres", "SELECT CAST(NULL AS unknown)"),
        ("postgres", "SELECT CAST(NULL AS STRUCT(a INT))"),
        ("duckdb", "SELECT CAST(NULL AS tsvector)"),
        ("duckdb", "SELECT 'english'::regconfig"),
        ("sqlite", "SELECT CAST(NULL AS INT[])"),
        ("mysql", "SELECT CAST(NULL AS geography)"),
        ("bigquery", "SELECT CAST(NULL AS MAP(INT, TEXT))"),
        ("snowflake", "SELECT CAST(1 AS hugeint)"),
        ("snowflake", "SELECT CAST(NULL AS FILE)"),  # a staged file, not a value
        ("mysql", "SELECT CAST(NULL AS interval day to second)"),
    ],
)
def test_a_type_of_another_engine_is_refused(dialect: str, sql: str) -> None:
    verdict = check_sql(sql, schemas(dialect)[1])
    assert [r.code for r in verdict.reasons] == ["denied_type"], verdict.reasons


LEGITIMATE = {
    "postgres": (
        "SELECT ordered_at::date, CAST(amount AS numeric(10,2)), CAST(NULL AS text[]),"
        " interval '1 day', 'english'::regconfig, CAST(NULL AS tsvector),"
        " CAST(id AS double precision), CAST(NULL AS int4range) FROM orders",
        "SELECT CAST(NULL AS interval day to second), INTERVAL '1 2' DAY TO SECOND,"
        " CAST(NULL AS timestamp with time zone), CAST(NULL AS polygon), CAST('a' AS \"char\"),"
        " CAST(1 AS int4), CAST(1 AS float8), CAST('' AS bytea), CAST(NULL AS cidr)",
        "SELECT o FROM orders AS o",
        "SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00:00'",
    ),
    "duckdb": (
        "SELECT ordered_at::date, CAST(amount AS numeric(10,2)), CAST(NULL AS text[]),"
        " interval '1 day', CAST(id AS hugeint), CAST(NULL AS STRUCT(a INT)),"
        " CAST(NULL AS MAP(INT, TEXT)), CAST(NULL AS INT[3]) FROM orders",
        "SELECT CAST(NULL AS INTERVAL DAY), CAST(NULL AS UNION(a INT, b TEXT)),"
        " CAST('a' AS ENUM('a', 'b')), CAST(NULL AS UBIGINT)",
        "SELECT o FROM orders AS o",
    ),
    "mysql": (
        "SELECT CAST(ordered_at AS date), CAST(amount AS decimal(10,2)), CAST(id AS SIGNED),"
        " CAST(id AS CHAR), CAST(id AS UNSIGNED), ordered_at + INTERVAL 1 DAY FROM orders",
        "SELECT CONVERT(id USING utf8mb4), CAST(id AS CHAR CHARACTER SET utf8mb4),"
        " CONVERT(amount, DECIMAL(10, 2)), CAST(ordered_at AS DATETIME(6)) FROM orders",
    ),
    "sqlite": (
        "SELECT CAST(amount AS REAL), CAST(id AS TEXT), CAST(id AS INTEGER),"
        " CAST(amount AS numeric(10,2)), DATE '2024-01-01' FROM orders",
    ),
    "bigquery": (
        "SELECT CAST(id AS INT64), CAST(amount AS NUMERIC), CAST(id AS STRING),"
        " CAST(NULL AS STRUCT<a INT64>), CAST(NULL AS ARRAY<DATE>),"
        " CAST(NULL AS GEOGRAPHY), INTERVAL 1 DAY, INTERVAL '1 2' DAY TO HOUR FROM orders",
    ),
    "snowflake": (
        "SELECT CAST(id AS NUMBER(10,2)), CAST(id AS VARCHAR), ordered_at::date,"
        " CAST(id AS VARIANT), CAST(NULL AS OBJECT), CAST(NULL AS ARRAY), CAST(1 AS DECFLOAT),"
        " CAST(NULL AS TIMESTAMP_NTZ) FROM orders",
    ),
}


@pytest.mark.parametrize(("dialect", "sql"), [(d, s) for d, ss in LEGITIMATE.items() for s in ss])
def test_built_in_casts_still_pass(dialect: str, sql: str) -> None:
    for schema in schemas(dialect):
        verdict = check_sql(sql, schema)
        assert verdict.ok, (dialect, verdict.reasons)


@pytest.mark.parametrize("dialect", ["postgres", "duckdb", "sqlite"])
def test_a_type_the_deployment_lists_passes_and_no_other(dialect: str) -> None:
    listed = parse_allowed_types(" Mood , analytics.Currency ,geography")
    assert listed == {"mood", "analytics.currency", "geography"}
    arrays = ("SELECT CAST(NULL AS mood[])",) if dialect != "sqlite" else ()  # SQLite has none
    for schema in schemas(dialect, tuple(listed)):
        for sql in (
            "SELECT CAST('happy' AS mood)",
            "SELECT CAST(1 AS analytics.currency)",
            "SELECT CAST(NULL AS geography)",
            *arrays,
        ):
            verdict = check_sql(sql, schema)
            assert verdict.ok, (dialect, sql, verdict.reasons)
        for sql in ("SELECT CAST(NULL AS payroll)", "SELECT CAST(1 AS currency)"):
            assert [r.code for r in check_sql(sql, schema).reasons] == ["denied_type"]


def test_a_quoted_name_is_matched_as_postgresql_folds_it() -> None:
    """PostgreSQL keeps a quoted name's case: `"Mood"` is another type than a listed `mood`."""
    schema = schemas("postgres", ("mood",))[1]
    assert check_sql('SELECT CAST(NULL AS "mood")', schema).ok
    assert not check_sql('SELECT CAST(NULL AS "Mood")', schema).ok


def test_a_malformed_list_is_an_error_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"QUERYBOT_ALLOWED_TYPES: 'analytics\.' is not a type"):
        parse_allowed_types("mood, analytics.")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT jsonb_populate_record(o, '{}') FROM orders AS o",
        "SELECT json_populate_record(o, '{}') FROM orders AS o",
        "SELECT jsonb_populate_recordset(o, '[]') FROM orders AS o",
        "SELECT * FROM json_populate_recordset(NULL::int, '[]') AS t",
    ],
)
def test_functions_that_read_a_types_shape_are_not_known_pure(sql: str) -> None:
    """json(b)_populate_record(set) exist to read a type's columns from the catalogue: they are
    no longer listed as pure or as table functions, even over an exposed table's row."""
    for schema in schemas("postgres"):
        codes = [r.code for r in check_sql(sql, schema).reasons]
        assert codes in (["unknown_function"], ["denied_table_function"]), (sql, codes)


def test_a_whole_row_reference_of_an_exposed_table_still_passes() -> None:
    known = schemas("postgres")[0]
    for sql in ("SELECT to_json(o) FROM orders AS o", "SELECT orders FROM orders"):
        assert check_sql(sql, known).ok, sql


@pytest.mark.parametrize("case", load_cases("types.sql"), ids=str)
def test_golden_type_case_is_refused_with_its_code(case: Case) -> None:
    """The fixture the gate report counts (tests/fixtures/gate/types.sql), with no schema."""
    verdict = check_sql(case.sql, GateSchema.from_tables([], case.dialect))
    assert not verdict.ok
    assert case.code in [r.code for r in verdict.reasons], verdict.reasons
