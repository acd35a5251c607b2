"""`querybot doctor` on a Snowflake warehouse: fakesnow's server with the real driver for the
catalog, the read-only probe and the sample query; what fakesnow lacks (CURRENT_WAREHOUSE(),
SHOW GRANTS, EXPLAIN; its SHOW WAREHOUSES names one fixed warehouse) scripted at the driver
boundary (recording.py)."""

from __future__ import annotations

import json

import pytest

from bot.config import Warehouse
from bot.doctor.deployment import check_warehouse, render
from bot.doctor.snowflake import split_name
from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.session import Credentials
from tests.connectors.snowflake.conftest import Seeded, make_connector
from tests.support.snowflake_recording import Recorder

pytestmark = pytest.mark.slow  # a server in its own venv

SPEC = "snowflake://myorg-acct/DB/SALES,ARCHIVE?warehouse=QUERYBOT_WH&role=QUERYBOT_READER"
ROLE = "QUERYBOT_READER"


def grant(privilege: str, kind: str, name: str, option: str = "false") -> tuple[str, ...]:
    """A row of SHOW GRANTS TO ROLE as Snowflake writes it."""
    return ("2026-01-01", privilege, kind, name, "ROLE", ROLE, option, "SECURITYADMIN")


def read_only(db: str) -> list[tuple[str, ...]]:
    """The grants docs/warehouses.md sets up, on the seeded database."""
    return [
        grant("USAGE", "WAREHOUSE", "QUERYBOT_WH"),
        grant("USAGE", "DATABASE", db),
        grant("USAGE", "SCHEMA", f"{db}.SALES"),
        grant("USAGE", "SCHEMA", f"{db}.ARCHIVE"),
        grant("SELECT", "TABLE", f"{db}.SALES.ORDERS"),
        grant("SELECT", "VIEW", f"{db}.SALES.BIG_ORDERS"),
        grant("SELECT", "TABLE", f"{db}.ARCHIVE.ORDERS"),
    ]


def script_account(recorder: Recorder, grants: list[tuple[str, ...]]) -> None:
    recorder.script(
        "SELECT CURRENT_USER()",
        ["USER", "ROLE", "WAREHOUSE"],
        [("QUERYBOT", ROLE, "QUERYBOT_WH")],
    )
    recorder.script("SHOW WAREHOUSES", ["name", "size"], [("QUERYBOT_WH", "X-Small")])
    recorder.script(
        "SHOW GRANTS TO ROLE",
        [
            "created_on",
            "privilege",
            "granted_on",
            "name",
            "granted_to",
            "grantee_name",
            "grant_option",
            "granted_by",
        ],
        grants,
    )
    stats = {"partitionsTotal": 1, "partitionsAssigned": 1, "bytesAssigned": 2048}
    recorder.script("EXPLAIN USING JSON", ["content"], [(json.dumps({"GlobalStats": stats}),)])


def doctor(seeded: Seeded, recorder: Recorder, connector: SnowflakeConnector | None = None) -> str:
    made = connector or make_connector(seeded, recorder)
    section = check_warehouse(Warehouse("sf", SPEC, SPEC), lambda _: made, timeout_s=10)
    return render([section])


def test_doctor_on_a_read_only_role(seeded: Seeded, recorder: Recorder) -> None:
    db = seeded.database
    script_account(recorder, read_only(db))
    out = doctor(seeded, recorder)
    assert "✓ opens (snowflake, snowflake SQL)" in out
    assert "✓ 4 tables visible" in out
    assert (
        "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was refused" in out
    )
    assert "Only a query may run on Snowflake" in out
    assert "✓ sample query passed the gate and ran" in out and "2 KiB estimated" in out
    assert "✓ logged in as QUERYBOT, role QUERYBOT_READER, warehouse QUERYBOT_WH (X-Small)" in out
    assert "✓ role QUERYBOT_READER holds only USAGE and SELECT (7 grants)" in out
    assert (
        f"✓ role QUERYBOT_READER may read 3 tables or views in {db}.SALES, {db}.ARCHIVE: "
        f"{db}.ARCHIVE.ORDERS, {db}.SALES.BIG_ORDERS, {db}.SALES.ORDERS\n" in out
    )
    assert "✗" not in out and "warning" not in out and "inherits" not in out
    assert out.endswith("Everything checked is fine.")
    assert not any("QUERYBOT_DOCTOR_PROBE" in s.upper() for s in recorder.statements())


def test_doctor_fails_a_role_that_can_write(seeded: Seeded, recorder: Recorder) -> None:
    db = seeded.database
    script_account(
        recorder,
        [
            *read_only(db),
            grant("INSERT", "TABLE", f"{db}.SALES.ORDERS"),
            grant("CREATE TABLE", "SCHEMA", f"{db}.SALES"),
            grant("USAGE", "ROLE", "ANALYST"),
        ],
    )
    out = doctor(seeded, recorder)
    assert (
        f"✗ role QUERYBOT_READER can do more than read: CREATE TABLE on SCHEMA {db}.SALES; "
        f"INSERT on TABLE {db}.SALES.ORDERS. Revoke these" in out
    )
    assert "role QUERYBOT_READER inherits ANALYST: check their grants too" in out


def test_doctor_fails_any_privilege_but_usage_and_select(seeded: Seeded, recorder) -> None:
    """REFERENCES and MONITOR only show metadata, USAGE on a stage, an integration or a
    function reaches past the tables, and a grant option lets the role hand its SELECT on: the
    docs promise a role holding only USAGE and SELECT, so each is named."""
    db = seeded.database
    script_account(
        recorder,
        [
            *read_only(db),
            grant("REFERENCES", "TABLE", f"{db}.SALES.ORDERS"),
            grant("MONITOR", "WAREHOUSE", "QUERYBOT_WH"),
            grant("OPERATE", "WAREHOUSE", "QUERYBOT_WH"),
            grant("USAGE", "STAGE", f"{db}.SALES.EXPORTS"),
            grant("USAGE", "INTEGRATION", "OPENAI_API"),
            grant("USAGE", "FUNCTION", f'{db}.SALES."CALL_ENDPOINT(VARCHAR):VARCHAR"'),
            grant("SELECT", "TABLE", f"{db}.SALES.CUSTOMERS", option="true"),
        ],
    )
    out = doctor(seeded, recorder)
    [failed] = [line for line in out.splitlines() if "can do more than read" in line]
    for extra in (
        f"REFERENCES on TABLE {db}.SALES.ORDERS",
        "MONITOR on WAREHOUSE QUERYBOT_WH",
        "OPERATE on WAREHOUSE QUERYBOT_WH",
        f"USAGE on STAGE {db}.SALES.EXPORTS",
        "USAGE on INTEGRATION OPENAI_API",
        f'USAGE on FUNCTION {db}.SALES."CALL_ENDPOINT(VARCHAR):VARCHAR"',
        f"SELECT on TABLE {db}.SALES.CUSTOMERS WITH GRANT OPTION",
    ):
        assert extra in failed
    assert "holds only USAGE and SELECT" not in out
    assert "1 problem found" in out


def test_doctor_warns_of_select_outside_the_listed_schemas(seeded: Seeded, recorder) -> None:
    db = seeded.database
    script_account(
        recorder,
        [
            *read_only(db),
            grant("USAGE", "SCHEMA", f"{db}.PRIVATE"),
            grant("SELECT", "TABLE", f"{db}.PRIVATE.SALARIES"),
            grant("SELECT", "VIEW", "HR.PUBLIC.PEOPLE"),
        ],
    )
    out = doctor(seeded, recorder)
    assert "✓ role QUERYBOT_READER holds only USAGE and SELECT (10 grants)" in out
    assert f"may read 3 tables or views in {db}.SALES, {db}.ARCHIVE" in out
    assert (
        f"· warning: role QUERYBOT_READER may also read 2 tables or views outside {db}.SALES, "
        f"{db}.ARCHIVE: HR.PUBLIC.PEOPLE, {db}.PRIVATE.SALARIES. The bot never queries them"
    ) in out
    assert "✗" not in out


def test_doctor_lists_what_the_role_reads_within_bounds(seeded: Seeded, recorder) -> None:
    db = seeded.database
    tables = [grant("SELECT", "TABLE", f"{db}.SALES.T{i:02}") for i in range(25)]
    script_account(recorder, [*read_only(db), *tables])
    out = doctor(seeded, recorder)
    [line] = [line for line in out.splitlines() if "may read 28 tables or views" in line]
    assert line.endswith(f"{db}.SALES.T06 and 18 more")
    assert len(line) < 600


def test_doctor_without_a_role_says_the_grants_are_not_checked(
    seeded: Seeded, recorder: Recorder
) -> None:
    script_account(recorder, read_only(seeded.database))
    connector = SnowflakeConnector(
        "myorg-acct",
        database=seeded.database,
        schemas=["SALES", "ARCHIVE"],
        warehouse="QUERYBOT_WH",
        credentials=Credentials("QUERYBOT", password="pw"),
        connect=recorder.connect,
    )
    out = doctor(seeded, recorder, connector)
    assert (
        "? the role's grants cannot be checked: the URL names no role, so the session uses the "
        "user's default role" in out
    )
    assert "Add &role=ROLE to QUERYBOT_WAREHOUSE" in out
    assert not any(s.upper().startswith("SHOW GRANTS") for s in recorder.statements())
    assert "1 check could not be made" in out


def test_doctor_says_what_it_could_not_read_on_fakesnow(seeded: Seeded, recorder) -> None:
    """Unscripted, fakesnow has no CURRENT_WAREHOUSE() nor SHOW GRANTS: noted, not passed."""
    out = doctor(seeded, recorder)
    assert "could not read the session's user, role and warehouse" in out
    assert "could not read the grants of role QUERYBOT_READER" in out


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("DB.SALES.ORDERS", ["DB", "SALES", "ORDERS"]),
        ("db.sales.orders", ["DB", "SALES", "ORDERS"]),
        ('DB."my.schema"."Order ""Lines"""', ["DB", "my.schema", 'Order "Lines"']),
        ("QUERYBOT_WH", ["QUERYBOT_WH"]),
    ],
)
def test_grant_names_are_split_as_snowflake_resolves_them(name: str, parts: list[str]) -> None:
    assert split_name(name) == parts
