"""Property-based: for generated and mutated SQL the gate never raises, never fails inside, and
never accepts a statement that writes, stacks, locks or calls a dangerous function."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.gate import GateSchema, Verdict, check_sql
from tests.support import canary, corpora, oracle
from tests.support.fixture_files import load_cases, load_harmful
from tests.support.needs import in_ci

settings.register_profile(
    "gate",
    max_examples=int(os.environ.get("GATE_EXAMPLES", "800")),
    deadline=None,
    derandomize=in_ci(),
    suppress_health_check=[HealthCheck.too_slow],
)

FRAGMENTS = (
    "SELECT", "FROM", "WHERE", "customers", "orders", "users", "name", "id", "*", ",", "(", ")",
    ";", "'", '"', "`", "--", "/*", "*/", "/*!50000", "#", "\n", "1", "=", "OR 1=1", "AND",
    "UNION ALL", "WITH x AS", "LIMIT 5", "LIMIT", "OFFSET", "INTO", "OUTFILE '/tmp/x'", "@v :=",
    "DELETE FROM", "INSERT INTO", "UPDATE", "SET", "DROP TABLE", "CREATE TABLE", "COPY", "TO",
    "ATTACH", "PRAGMA", "CALL", "EXECUTE", "FOR UPDATE", "FOR SHARE", "LOCK", "RETURNING *",
    "VALUES (1)", "GRANT", "TRUNCATE", "pg_sleep(1)", "sleep(1)", "read_csv('/etc/passwd')",
    "load_file('/etc/passwd')", "query('DROP TABLE users')", "'/etc/passwd'", "$$", "E'\\x'",
    "0x41", "nextval('s')", "main.", "canary.", "AS t", "GROUP BY 1", "ORDER BY 1", "COUNT(*)",
)  # fmt: skip
PAYLOADS = ("' OR 1=1 --", "1; DROP TABLE users", "1 AND SLEEP(5)", "1 /*!UNION*/ SELECT 2")
SEEDS = tuple(
    [c.sql for c in load_cases("normalise.sql") + load_cases("reject.sql")]
    + [h.sql for h in load_harmful()]
    + [sql for p in PAYLOADS for sql in corpora.spliced(p).values()]
)

dialects = st.sampled_from(corpora.DIALECTS)
generated = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30).map(" ".join)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A seed statement with a few random insertions, deletions, duplications and splices."""
    sql = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(sql)))
        op = draw(st.sampled_from(("insert", "delete", "duplicate", "splice")))
        if op == "insert":
            sql = f"{sql[:at]} {draw(st.sampled_from(FRAGMENTS))} {sql[at:]}"
        elif op == "delete":
            sql = sql[:at] + sql[at + draw(st.integers(1, 12)) :]
        elif op == "duplicate":
            sql = sql[:at] + sql[at : at + draw(st.integers(1, 30))] + sql[at:]
        else:
            other = draw(st.sampled_from(SEEDS))
            sql = sql[:at] + other[draw(st.integers(0, len(other))) :]
    return sql


def check_property(sql: str, dialect: str, known: bool) -> Verdict:
    schema = canary.schema(dialect) if known else GateSchema.from_tables([], dialect)
    verdict = check_sql(sql, schema)
    assert isinstance(verdict, Verdict)
    codes = [r.code for r in verdict.reasons]
    assert "internal_error" not in codes, (sql, verdict.reasons)
    if verdict.ok:
        assert not codes and verdict.sql
        assert oracle.harm(verdict.sql, dialect) is None, (sql, verdict.sql)
        again = check_sql(verdict.sql, schema)
        assert again.ok and again.sql == verdict.sql, (sql, verdict.sql, again)
    else:
        assert codes
    return verdict


@pytest.mark.slow
@settings(settings.get_profile("gate"))
@given(sql=generated, dialect=dialects, known=st.booleans())
def test_generated_sql(sql: str, dialect: str, known: bool) -> None:
    check_property(sql, dialect, known)


@pytest.mark.slow
@settings(settings.get_profile("gate"))
@given(sql=mutated(), dialect=dialects, known=st.booleans())
def test_mutated_sql(sql: str, dialect: str, known: bool) -> None:
    check_property(sql, dialect, known)


@pytest.mark.slow
@settings(settings.get_profile("gate"), max_examples=300)
@given(sql=st.text(max_size=300), dialect=dialects)
def test_any_text(sql: str, dialect: str) -> None:
    check_property(sql, dialect, known=True)


@settings(settings.get_profile("gate"), max_examples=50)
@given(value=st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text())))
def test_not_text_at_all(value: object) -> None:
    verdict = check_sql(value, canary.schema("duckdb"))  # type: ignore[arg-type]
    assert not verdict.ok and verdict.reasons
