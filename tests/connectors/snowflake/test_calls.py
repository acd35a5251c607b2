"""How the Snowflake connector names a function call (connectors/snowflake/sql.py): by the name
Snowflake runs it under, whatever sqlglot makes of it, and operators sqlglot models as functions
are not calls. No server: these only parse."""

from __future__ import annotations

import time

import pytest
import sqlglot
from sqlglot import exp

from connectors.base import PermissionDenied
from connectors.snowflake.sql import call_name, parse


def names(sql: str) -> list[str | None]:
    """The name of every function node of `sql`, in walk order."""
    tree = sqlglot.parse_one(sql, read="snowflake")
    return [call_name(node, sql) for node in tree.walk() if isinstance(node, exp.Func)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT IFF(a, 1, 2)", ["IFF"]),  # typed (exp.If), named as written
        ("SELECT iff(a, 1, 2)", ["iff"]),
        ("SELECT ZEROIFNULL(a)", ["ZEROIFNULL"]),  # sqlglot makes it IFF(a IS NULL, 0, a)
        ("SELECT AI_CLASSIFY(a, ['x'])", ["AI_CLASSIFY", None]),  # the array literal is not
        ("SELECT CURRENT_USER", ["CURRENT_USER"]),  # no brackets: sqlglot's Snowflake name
        ("SELECT CURRENT_DATE", ["CURRENT_DATE"]),
        ("SELECT CAST(a AS INT)", ["CAST"]),
        ("SELECT a::INT", ["CAST"]),
        ("SELECT EXTRACT(year FROM d)", ["DATE_PART"]),
        ("SELECT CASE WHEN a THEN 1 END", [None, None]),  # the WHEN is an exp.If to sqlglot
        ("SELECT 1 WHERE a AND b OR c", [None, None]),
        ("SELECT 1 WHERE EXISTS (SELECT 1)", [None]),
        ('SELECT "IFF"(a, 1, 2)', ['"IFF"']),  # quoted: never a built-in's name
        ("SELECT MY_UDF(a)", ["MY_UDF"]),
    ],
)
def test_a_call_is_named_as_snowflake_runs_it(sql: str, expected: list[str | None]) -> None:
    assert names(sql) == expected


@pytest.mark.parametrize(("sql", "name"), [("BIT_AND(a, b)", "BIT_AND"), ("XOR(a, b)", "XOR")])
def test_a_name_sqlglot_reads_as_an_operator_is_still_a_call(sql: str, name: str) -> None:
    """Snowflake has neither (BITAND and BOOLXOR are its own); sqlglot reads them as the `&`
    and XOR operators."""
    with pytest.raises(PermissionDenied, match=rf"calls {name}\(\)"):
        parse(f"SELECT {sql} FROM t")


def test_a_long_condition_is_checked_quickly() -> None:
    """Each link of an AND chain is a function to sqlglot: written out one by one, 1,000 links
    took 46 s."""
    sql = "SELECT ID FROM ORDERS WHERE " + " AND ".join(f"AMOUNT > {i}" for i in range(1000))
    started = time.perf_counter()
    parse(sql)
    assert time.perf_counter() - started < 5
