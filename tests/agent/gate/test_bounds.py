"""The gate's own work is bounded (issue 15 item 8): statements over a bound are refused with the
bound and what to do, before the quadratic or recursive parts of the check run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent.gate import GateSchema, Verdict, bounds, check_sql
from tests.support import canary


def schema() -> GateSchema:
    return canary.schema("duckdb")


def or_chain(terms: int) -> str:
    return "SELECT id FROM customers WHERE " + " OR ".join(f"id = {i}" for i in range(terms))


def plus_chain(terms: int) -> str:
    return "SELECT " + " + ".join(["id"] * terms) + " FROM customers"


def union_chain(terms: int) -> str:
    return " UNION ALL ".join(["SELECT id FROM customers"] * terms)


def codes(verdict: Verdict) -> list[str]:
    return [r.code for r in verdict.reasons]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sql", "operator"),
    [(or_chain(5_000), "OR"), (plus_chain(10_000), "+")],
    ids=["issue's 5,000-term OR", "issue's 10,000 + terms"],
)
def test_the_issues_flat_chains_are_refused(sql: str, operator: str) -> None:
    verdict = check_sql(sql, schema())
    assert codes(verdict) == ["chain_too_long"]
    message = verdict.reasons[0].message
    assert (
        f"One chain of {operator} " in message and f"more than {bounds.MAX_CHAIN} terms" in message
    )
    assert "split the question" in message


@pytest.mark.slow
@pytest.mark.parametrize("make", [or_chain, plus_chain, union_chain], ids=lambda f: f.__name__)
def test_a_chain_at_the_bound_passes_and_one_more_term_does_not(make: Callable[[int], str]) -> None:
    assert check_sql(make(bounds.MAX_CHAIN), schema()).ok
    assert codes(check_sql(make(bounds.MAX_CHAIN + 1), schema())) == ["chain_too_long"]


def test_size_is_counted_in_bytes_before_parsing() -> None:
    padding = "é" * (bounds.MAX_BYTES // 2)  # two bytes each: half the bound in characters
    sql = f"SELECT id FROM customers WHERE name = '{padding}'"
    assert len(sql) < bounds.MAX_BYTES < len(sql.encode())
    verdict = check_sql(sql, schema())
    assert codes(verdict) == ["too_long"]
    assert f"the limit is {bounds.MAX_BYTES:,}" in verdict.reasons[0].message
    assert check_sql(f"SELECT id FROM customers WHERE name = '{'e' * 1000}'", schema()).ok


def nested(depth: int) -> str:
    return "SELECT " + "ABS(" * depth + "id" + ")" * depth + " FROM customers"


def test_nesting_is_bounded_before_the_parser_recurses() -> None:
    assert check_sql(nested(bounds.MAX_NESTING), schema()).ok
    verdict = check_sql(nested(bounds.MAX_NESTING + 1), schema())
    assert codes(verdict) == ["too_deep"]
    assert f"{bounds.MAX_NESTING + 1} levels deep; the limit is {bounds.MAX_NESTING}" in str(
        verdict.reasons[0]
    )


def test_a_huge_tree_is_refused() -> None:
    values = ", ".join(str(i) for i in range(bounds.MAX_NODES + 1))
    verdict = check_sql(f"SELECT id FROM customers WHERE id IN ({values})", schema())
    assert codes(verdict) == ["too_complex"]
    assert f"more than {bounds.MAX_NODES:,} parts" in verdict.reasons[0].message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT " + "- " * 150 + "id FROM customers",
        "SELECT "
        + " ".join(f"id {'+' if i % 2 else '-'}" for i in range(150))
        + " id FROM customers",
    ],
    ids=["unary minus", "alternating + and -"],
)
def test_deep_trees_without_brackets_are_refused(sql: str) -> None:
    verdict = check_sql(sql, schema())
    assert codes(verdict) == ["too_deep"]
    assert f"more than {bounds.MAX_DEPTH} levels deep" in verdict.reasons[0].message


def within(frames: int, call: Callable[[], Verdict]) -> Verdict:
    """`call()` made from `frames` Python frames deeper, as from inside the bot's graph."""
    return within(frames - 1, call) if frames else call()


DEEP = {
    "brackets": "SELECT " + "(" * 2_000 + "id" + ")" * 2_000 + " FROM customers",
    "functions": nested(1_000),
    "NOT": "SELECT id FROM customers WHERE " + "NOT " * 2_000 + "id = 1",
    "unary minus": "SELECT " + "- " * 2_000 + "id FROM customers",
    "casts": "SELECT id" + "::INT" * 200 + " FROM customers",
    "CASE": "SELECT " + "CASE WHEN id = 1 THEN " * 500 + "id" + " END" * 500 + " FROM customers",
}


@pytest.mark.parametrize("sql", DEEP.values(), ids=DEEP.keys())
@pytest.mark.parametrize("frames", [0, 400])
def test_deep_nesting_is_a_clear_refusal_never_a_crash(sql: str, frames: int) -> None:
    verdict = within(frames, lambda: check_sql(sql, schema()))
    assert codes(verdict) == ["too_deep"], verdict.reasons
    assert "internal_error" not in codes(verdict)
