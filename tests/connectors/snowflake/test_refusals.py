"""Read-only by construction: what the Snowflake connector refuses before anything is sent
(it runs every check before it opens a session), and what the gate says of the same statements
in the `snowflake` dialect. What both accept runs on fakesnow."""

from __future__ import annotations

import pytest

from agent.gate import GateSchema
from agent.gate.check import check_sql
from connectors.base import ConnectorError, PermissionDenied
from tests.connectors.snowflake.conftest import Seeded
from tests.support.snowflake_recording import Recorder

pytestmark = pytest.mark.slow  # a server in its own venv


@pytest.fixture
def seeded(module_seeded: Seeded) -> Seeded:
    """Nothing here writes (the connector refuses before sending, or runs a read), so the
    module's tests share one seeded database instead of seeding one each."""
    return module_seeded


#: Statements that write, call out or read past the listed schemas, each with what the
#: connector's refusal names.
HARMFUL = {
    "INSERT INTO ORDERS (ID) VALUES (99)": "INSERT",
    "UPDATE ORDERS SET AMOUNT = 0": "UPDATE",
    "DELETE FROM ORDERS": "DELETE",
    "MERGE INTO ORDERS o USING CUSTOMERS c ON o.ID = c.ID WHEN MATCHED THEN DELETE": "MERGE",
    "DROP TABLE ORDERS": "DROP",
    "CREATE TABLE T AS SELECT * FROM ORDERS": "CREATE",
    "CREATE TEMPORARY TABLE T AS SELECT 1 AS X": "CREATE",
    "TRUNCATE TABLE ORDERS": "TRUNCATE",
    "GRANT SELECT ON ORDERS TO ROLE PUBLIC": "GRANT",
    "ALTER SESSION SET QUERY_TAG = 'x'": "ALTER",
    "USE ROLE ACCOUNTADMIN": "USE",
    "COPY INTO @~/out FROM ORDERS": "COPY",
    "COPY INTO ORDERS FROM @stage": "COPY",
    "PUT file:///etc/passwd @~": "PUT",
    "GET @~/out file:///tmp/": "COMMAND",
    "CALL SYSTEM$WAIT(10)": "COMMAND",
    "EXECUTE IMMEDIATE 'DROP TABLE ORDERS'": "COMMAND",
    "SELECT 1 AS X; DROP TABLE ORDERS": "2",
    "SELECT * INTO T FROM ORDERS": "INTO",
    "WITH d AS (DELETE FROM ORDERS) SELECT 1 AS X": "DELETE",
    "SELECT $1 FROM @stage/data.csv": "@stage",
    "SELECT * FROM DIRECTORY(@stage)": "DIRECTORY",
    "SELECT SYSTEM$CANCEL_QUERY('01b2')": "SYSTEM$CANCEL_QUERY",
    "SELECT SYSTEM$WAIT(60)": "SYSTEM$WAIT",
    "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))": "RESULT_SCAN",
    "SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY())": "QUERY_HISTORY",
    "SELECT * FROM TABLE(INFER_SCHEMA(LOCATION => '@stage'))": "INFER_SCHEMA",
    "SELECT * FROM TABLE(GENERATOR(ROWCOUNT => 1000000000000))": "GENERATOR",
    "SELECT UTIL.PUBLIC.CALL_ENDPOINT(REGION) FROM ORDERS": "CALL_ENDPOINT",
    "SELECT CALL_ENDPOINT(REGION) FROM ORDERS": "CALL_ENDPOINT",
    "SELECT GETVARIABLE('X')": "GETVARIABLE",
    "SELECT * FROM IDENTIFIER('PRIVATE.SALARIES')": "IDENTIFIER",
    "SELECT * FROM PRIVATE.SALARIES": "PRIVATE.SALARIES",
    "SELECT * FROM INFORMATION_SCHEMA.TABLES": "INFORMATION_SCHEMA.TABLES",
    "SELECT * FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY": "ACCOUNT_USAGE",
    "SELECT * FROM OTHERDB.SALES.ORDERS": "OTHERDB.SALES.ORDERS",
    "SELECT o.ID FROM ORDERS o JOIN PUBLIC.X p ON o.ID = p.ID": "PUBLIC.X",
    # Functions sqlglot models as typed expressions, not pure built-ins: Cortex calls a model,
    # TO_FILE reads a stage, the context functions read the session or the account.
    "SELECT AI_CLASSIFY(NOTE, ['urgent', 'routine']) AS C FROM ORDERS": "AI_CLASSIFY",
    "SELECT AI_AGG(NOTE, 'Summarise the notes') AS S FROM ORDERS": "AI_AGG",
    "SELECT AI_EMBED('e5-base-v2', NOTE) AS E FROM ORDERS": "AI_EMBED",
    "SELECT AI_SUMMARIZE_AGG(NOTE) AS S FROM ORDERS": "AI_SUMMARIZE_AGG",
    "SELECT TO_FILE('@docs/contract.pdf') AS F": "TO_FILE",
    "SELECT CURRENT_ROLE() AS R": "CURRENT_ROLE",
    "SELECT CURRENT_USER() AS U": "CURRENT_USER",
    "SELECT CURRENT_USER AS U": "CURRENT_USER",
    "SELECT CURRENT_ACCOUNT() AS A": "CURRENT_ACCOUNT",
    "SELECT CURRENT_WAREHOUSE() AS W": "CURRENT_WAREHOUSE",
    "SELECT CURRENT_IP_ADDRESS() AS I": "CURRENT_IP_ADDRESS",
    "SELECT CURRENT_SESSION() AS S": "CURRENT_SESSION",
    "SELECT CURRENT_AVAILABLE_ROLES() AS R": "CURRENT_AVAILABLE_ROLES",
    "SELECT CURRENT_STATEMENT() AS S": "CURRENT_STATEMENT",
    "SELECT ID FROM ORDERS WHERE NOTE = CURRENT_SECONDARY_ROLES()": "CURRENT_SECONDARY_ROLES",
    # Nested under an operator, in a subquery, in a table function's argument.
    "SELECT ID FROM ORDERS WHERE ID > 0 AND REGION = CURRENT_REGION()": "CURRENT_REGION",
    "SELECT ID FROM ORDERS WHERE EXISTS (SELECT 1 WHERE CURRENT_ROLE() = 'SYSADMIN')": (
        "CURRENT_ROLE"
    ),
    "SELECT f.VALUE FROM TABLE(FLATTEN(input => SPLIT(CURRENT_USER(), 'a'))) f": "CURRENT_USER",
    # Not a table function the connector reads from (it and the gate agree).
    "SELECT c.NAME, s.VALUE FROM CUSTOMERS c, LATERAL STRTOK_SPLIT_TO_TABLE(c.NAME, 'a') s": (
        "STRTOK_SPLIT_TO_TABLE"
    ),
}


@pytest.mark.parametrize("sql", HARMFUL)
def test_the_connector_refuses_before_sending_anything(connector, recorder: Recorder, sql):
    for attempt in (
        lambda: connector.run(sql, max_rows=10, timeout_s=10),
        lambda: connector.estimate(sql),
    ):
        with pytest.raises(ConnectorError) as refused:
            attempt()
        assert HARMFUL[sql].upper() in refused.value.message.upper()
    assert recorder.logins == [] and recorder.sent == []  # no session was even opened


def test_a_write_is_a_permission_refusal_not_a_repairable_failure(connector) -> None:
    with pytest.raises(PermissionDenied) as refused:
        connector.run("DELETE FROM ORDERS", max_rows=1, timeout_s=10)
    assert not refused.value.retryable_by_repair


@pytest.mark.parametrize("sql", HARMFUL)
def test_the_gate_refuses_them_too(connector, sql) -> None:
    schema = GateSchema.from_tables(connector.list_tables(), "snowflake")
    assert not check_sql(sql, schema, row_limit=100).ok


#: Names Snowflake has no built-in for, which sqlglot reads as one (another engine's spelling):
#: sent as written, Snowflake would call a user-defined function of that name if the schema has
#: one, so the connector refuses them; the gate writes Snowflake's own name, which runs.
ALIASES = {
    "SELECT IIF(AMOUNT > 100, 1, 0) AS X FROM SALES.ORDERS": ("IIF", "IFF("),
    "SELECT IF(AMOUNT > 100, 1, 0) AS X FROM SALES.ORDERS": ("IF", "IFF("),
    "SELECT COUNT(DATE_ADD(PLACED_ON, 1)) AS X FROM SALES.ORDERS": ("DATE_ADD", "DATEADD("),
    "SELECT ARG_MAX(ID, AMOUNT) AS X FROM SALES.ORDERS": ("ARG_MAX", "MAX_BY("),
    "SELECT STRING_AGG(REGION, ',') AS X FROM SALES.ORDERS": ("STRING_AGG", "LISTAGG("),
    "SELECT SAFE_CAST(AMOUNT AS INT) AS X FROM SALES.ORDERS": ("SAFE_CAST", "TRY_CAST("),
    'SELECT "IFF"(AMOUNT > 100, 1, 0) AS X FROM SALES.ORDERS': ('"IFF"', "IFF("),
}


@pytest.mark.parametrize("sql", ALIASES)
def test_a_name_snowflake_lacks_is_refused_and_the_gate_writes_snowflakes(
    connector, recorder: Recorder, sql
) -> None:
    written, snowflakes = ALIASES[sql]
    with pytest.raises(PermissionDenied) as refused:
        connector.run(sql, max_rows=10, timeout_s=10)
    assert f"calls {written}()" in refused.value.message
    assert recorder.logins == [] and recorder.sent == []
    schema = GateSchema.from_tables(connector.list_tables(), "snowflake")
    verdict = check_sql(sql, schema, row_limit=100)
    assert verdict.ok, verdict.reasons
    assert snowflakes in verdict.sql and written not in verdict.sql.replace(snowflakes, "")
    assert connector.run(verdict.sql, max_rows=100, timeout_s=30).rows


#: Snowflake idioms a model writes: accepted by the gate, then run by the connector on fakesnow
#: (SALES.ORDERS qualified: a bare ORDERS is ambiguous with ARCHIVE.ORDERS, and the gate says so).
READS = {
    "SELECT REGION, SUM(AMOUNT) AS TOTAL FROM SALES.ORDERS GROUP BY REGION ORDER BY TOTAL DESC": 3,
    "SELECT ID, IFF(AMOUNT > 100, 'big', 'small') AS SIZE FROM SALES.ORDERS": 30,
    "SELECT ID FROM SALES.ORDERS QUALIFY ROW_NUMBER() OVER (PARTITION BY REGION ORDER BY ID) = 1": (
        3
    ),
    "SELECT DATE_TRUNC('MONTH', PLACED_ON) AS M, COUNT(*) AS N FROM SALES.ORDERS GROUP BY 1": 1,
    "SELECT ID FROM SALES.ORDERS WHERE PLACED_ON >= DATEADD(DAY, -7, '2026-01-20'::DATE)": 19,
    "SELECT REGION FROM SALES.ORDERS WHERE REGION ILIKE 'e%' LIMIT 5": 5,
    "SELECT o.ID, c.NAME FROM SALES.ORDERS o JOIN SALES.CUSTOMERS c ON c.ID = o.ID": 2,
    "SELECT ID FROM BIG_ORDERS": 20,
    "SELECT COUNT(*) AS N FROM ARCHIVE.ORDERS": 1,
    "WITH t AS (SELECT REGION, AMOUNT FROM SALES.ORDERS) SELECT REGION, MAX(AMOUNT) FROM t "
    "GROUP BY 1": 3,
    # FLATTEN of a column's value, in TABLE(...) or LATERAL: 'Ada' and 'Grace' split on 'a'.
    "SELECT c.NAME, f.VALUE FROM SALES.CUSTOMERS c, "
    "TABLE(FLATTEN(input => SPLIT(c.NAME, 'a'))) f": 4,
    "SELECT c.NAME, f.VALUE FROM SALES.CUSTOMERS c, "
    "LATERAL FLATTEN(input => SPLIT(c.NAME, 'a')) f": 4,
    "SELECT f.VALUE FROM TABLE(FLATTEN(input => PARSE_JSON('[1, 2, 3]'))) f": 3,
    # Operators sqlglot models as functions (CASE, ::, EXISTS, AND, COALESCE, DATE literals)
    # are not calls: only ID 1 is a US order with a customer of its ID.
    "SELECT o.ID, CASE WHEN o.AMOUNT > 100 THEN 'big' END AS S, o.AMOUNT::INT AS A, "
    "COALESCE(o.NOTE, '') AS N FROM SALES.ORDERS o WHERE EXISTS (SELECT 1 FROM SALES.CUSTOMERS "
    "c WHERE c.ID = o.ID) AND o.REGION IN ('EU', 'US') AND o.PLACED_ON > DATE '2025-01-01'": 1,
}


@pytest.mark.parametrize("sql", READS)
def test_snowflake_reads_pass_the_gate_and_run(connector, sql) -> None:
    schema = GateSchema.from_tables(connector.list_tables(), "snowflake")
    verdict = check_sql(sql, schema, row_limit=100)
    assert verdict.ok, verdict.reasons
    result = connector.run(verdict.sql, max_rows=100, timeout_s=30)
    assert result.total_rows == READS[sql]


#: What the gate refuses in Snowflake's TABLE(...), and what its reason says: FLATTEN reads only
#: its input, but only of a column or an expression; any other table function there is refused
#: (the connector refuses those that reach past the tables, HARMFUL above).
TABLE_REFUSALS = {
    "SELECT f.VALUE FROM TABLE(FLATTEN(input => (SELECT ARRAY_AGG(ID) FROM SALES.ORDERS))) f": (
        "FLATTEN(...) may flatten a column or an expression, not a subquery"
    ),
    "SELECT s.VALUE FROM TABLE(SPLIT_TO_TABLE('a,b', ',')) s": "may only wrap FLATTEN(...)",
    "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))": "may only wrap FLATTEN(...)",
    "SELECT * FROM TABLE(UTIL.PUBLIC.FLATTEN(input => PARSE_JSON('[1]')))": (
        "may only wrap FLATTEN(...)"  # a user-defined function of that name
    ),
}


def test_lateral_split_to_table_passes_the_gate(connector) -> None:
    """SPLIT_TO_TABLE reads only its arguments; sqlglot types it, so the gate must know the type
    (its refusal once listed split_to_table among the allowed table functions)."""
    schema = GateSchema.from_tables(connector.list_tables(), "snowflake")
    sql = "SELECT c.NAME, s.VALUE FROM SALES.CUSTOMERS c, LATERAL SPLIT_TO_TABLE(c.NAME, 'a') s"
    verdict = check_sql(sql, schema, row_limit=100)
    assert verdict.ok, verdict.reasons


@pytest.mark.parametrize("sql", TABLE_REFUSALS)
def test_the_gate_allows_only_flatten_of_a_value_in_table(connector, sql) -> None:
    schema = GateSchema.from_tables(connector.list_tables(), "snowflake")
    verdict = check_sql(sql, schema, row_limit=100)
    assert not verdict.ok
    [reason] = verdict.reasons
    assert reason.code == "denied_table_function" and TABLE_REFUSALS[sql] in reason.message
