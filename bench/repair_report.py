"""Repair benchmark: typical model mistakes applied to sql-eval's gold SQL, and how many the
bot's deterministic steps fix or pinpoint, with no model at all.

    uv run python -m bench.repair_report [--cache .cache/bench] [--corpora DIR]

Each gold query (transpiled to DuckDB, on the defog-data databases) gets one mistake at a time,
where the query has a place for it. The mistaken SQL then goes through what the bot does before a
person sees it and after approval: the gate (with its fixes), value grounding of literal filters
(`agent.catalog.grounding`), and execution. It is

- fixed: the gate accepts it, grounding finds nothing, and it returns the gold result;
- pinpointed: the gate, grounding or the engine reports a problem naming the culprit (the
  misspelt column, the literal, the function...), which is what the repair prompt gets;
- missed: it runs and returns a wrong result, or the feedback does not name the culprit.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

from agent.catalog.grounding import check_values
from agent.catalog.profiling import ProfileLimits, profile_tables
from agent.catalog.snapshot import CatalogSnapshot
from agent.evaluation import defog
from agent.evaluation.compare import Table, best_match
from agent.evaluation.runner import gold_sql
from agent.gate import check_sql
from connectors.base import ConnectorError
from connectors.duckdb.connector import DuckDBConnector


@dataclass(frozen=True)
class Mistake:
    """The mistaken SQL and the text that feedback must name to pinpoint it."""

    sql: str
    culprit: str


Mutation = Callable[[exp.Expression, str], Mistake | None]


def _first_text_filter(tree: exp.Expression) -> exp.Literal | None:
    for eq in tree.find_all(exp.EQ, exp.In):
        for literal in eq.find_all(exp.Literal):
            if literal.is_string and any(c.isalpha() for c in literal.this):
                return literal
    return None


def literal_case(tree: exp.Expression, sql: str) -> Mistake | None:
    """'Machine Learning' written as 'machine learning' (or upper case when already lower)."""
    literal = _first_text_filter(tree)
    if literal is None:
        return None
    value = literal.this
    wrong = value.lower() if value != value.lower() else value.upper()
    literal.set("this", wrong)
    return Mistake(tree.sql("duckdb"), value)


def misspelt_column(tree: exp.Expression, sql: str) -> Mistake | None:
    """A column name with one letter dropped (`author_name` -> `author_nme`); the feedback
    must name the misspelt column."""
    for column in tree.find_all(exp.Column):
        name = column.name
        if len(name) >= 5 and not column.find_ancestor(exp.Order):
            wrong = name[:-2] + name[-1]
            column.this.set("this", wrong)
            return Mistake(tree.sql("duckdb"), wrong)
    return None


def missing_group_by_column(tree: exp.Expression, sql: str) -> Mistake | None:
    """One column dropped from a GROUP BY of two or more that the SELECT list shows."""
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if not group or len(group.expressions) < 2:
            continue
        shown = {e.unalias().sql() for e in select.expressions}
        for key in group.expressions:
            if isinstance(key, exp.Column) and key.sql() in shown:
                key.pop()
                return Mistake(tree.sql("duckdb"), key.name)
    return None


#: A function written the way another engine spells it, for a DuckDB warehouse.
_FOREIGN = (
    (re.compile(r"\bCOALESCE\(", re.I), "NVL(", "NVL"),
    (re.compile(r"\bCURRENT_DATE\b(?!\()", re.I), "GETDATE()", "GETDATE"),
    (re.compile(r"\bLENGTH\(", re.I), "CHAR_LENGTH_B(", "CHAR_LENGTH_B"),
    (re.compile(r"\bDATE_TRUNC\('(\w+)',\s*", re.I), r"DATETRUNC(\1, ", "DATETRUNC"),
    (re.compile(r"\bSTRFTIME\(", re.I), "DATE_FORMAT(", "DATE_FORMAT"),
)


def dialect_function(tree: exp.Expression, sql: str) -> Mistake | None:
    """A function of another engine (NVL, GETDATE(), DATETRUNC, DATE_FORMAT...)."""
    for pattern, replacement, name in _FOREIGN:
        if pattern.search(sql):
            return Mistake(pattern.sub(replacement, sql, count=1), name)
    return None


def markdown_fence(tree: exp.Expression, sql: str) -> Mistake | None:
    return Mistake(f"Here is the query:\n```sql\n{sql}\n```", "")


def trailing_semicolon(tree: exp.Expression, sql: str) -> Mistake | None:
    return Mistake(sql + ";", "")


def missing_qualifier(tree: exp.Expression, sql: str) -> Mistake | None:
    """A column's table qualifier dropped where several joined tables have that column."""
    counts = Counter(c.name.lower() for c in tree.find_all(exp.Column) if c.table)
    for column in tree.find_all(exp.Column):
        if column.table and counts[column.name.lower()] > 1:
            tables = {c.table for c in tree.find_all(exp.Column) if c.name == column.name}
            if len(tables) > 1:
                column.set("table", None)
                return Mistake(tree.sql("duckdb"), column.name)
    return None


MUTATIONS: dict[str, Mutation] = {
    "wrong case in a literal": literal_case,
    "misspelt column": misspelt_column,
    "missing GROUP BY column": missing_group_by_column,
    "wrong dialect function": dialect_function,
    "markdown fences": markdown_fence,
    "trailing semicolon": trailing_semicolon,
    "missing table qualifier": missing_qualifier,
}


def judge(
    mistake: Mistake, gold: Table, snapshot: CatalogSnapshot, connector: DuckDBConnector
) -> str:
    """fixed, pinpointed-by-gate, pinpointed-by-grounding, pinpointed-by-engine or missed."""
    culprit = mistake.culprit.lower()
    verdict = check_sql(mistake.sql, snapshot.gate_schema, row_limit=1000)
    if not verdict.ok:
        said = " ".join(str(r) for r in verdict.reasons).lower()
        return "pinpointed by gate" if culprit and culprit in said else "missed"
    misses = check_values(verdict.sql, snapshot, connector)
    if misses:
        said = " ".join(str(m) for m in misses).lower()
        return "pinpointed by grounding" if culprit and culprit in said else "missed"
    try:
        result = connector.run(verdict.sql, max_rows=1000, timeout_s=30)
    except ConnectorError as exc:
        said = f"{exc.message} {exc.hint}".lower()
        return "pinpointed by engine" if culprit and culprit in said else "missed"
    got = Table(tuple(result.columns), tuple(result.rows))
    return "fixed" if best_match([gold], got, ordered=False) else "missed"


OUTCOMES = (
    "fixed",
    "pinpointed by gate",
    "pinpointed by grounding",
    "pinpointed by engine",
    "missed",
)


def measure(cache: Path, corpora: Path) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {name: Counter() for name in MUTATIONS}
    for database, golden in defog.golden_sets(corpora, idk=False).items():
        path = defog.build_defog(database, cache / f"{database}.duckdb", corpora=corpora)
        connector = DuckDBConnector(path)
        try:
            tables = tuple(connector.list_tables())
            profiles = profile_tables(connector, tables, ProfileLimits())
            snapshot = CatalogSnapshot(tables, "duckdb", profiles)
            for question in golden.questions:
                sql = gold_sql(golden, question, "duckdb")[0]
                try:
                    result = connector.run(sql, max_rows=1000, timeout_s=30)
                except ConnectorError:
                    continue  # gold SQL DuckDB cannot run: nothing to compare with
                gold = Table(tuple(result.columns), tuple(result.rows))
                for name, mutate in MUTATIONS.items():
                    mistake = mutate(sqlglot.parse_one(sql, read="duckdb"), sql)
                    if mistake is not None and mistake.sql != sql:
                        counts[name][judge(mistake, gold, snapshot, connector)] += 1
        finally:
            connector.close()
    return counts


def table(counts: dict[str, Counter[str]]) -> str:
    head = (
        "| Mistake | Cases | Fixed | Pinpointed (gate / grounding / engine) | Fixed or pinpointed |"
    )
    lines = [head, "|---|---:|---:|---:|---:|"]
    for name, c in counts.items():
        total = sum(c.values())
        good = total - c["missed"]
        pin = " / ".join(str(c[o]) for o in OUTCOMES[1:4])
        share = f"{100 * good / total:.1f}%" if total else "-"
        lines.append(f"| {name} | {total} | {c['fixed']} | {pin} | {share} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(".cache/bench"))
    parser.add_argument("--corpora", type=Path, default=defog.CORPORA)
    args = parser.parse_args()
    print(table(measure(args.cache, args.corpora)))


if __name__ == "__main__":
    main()
