"""Scripted gold replies for `querybot eval` under answer-quality strategies.

A scripted model (`QUERYBOT_MODEL=scripted:PATH`) replays its lines in call order, so a script
for an evaluation must hold every call the strategies make, in the order the graph makes them:
per question, the paraphrases (only when the warehouse is too big to be shown whole), the plan,
the SQL (N times with candidates), then the self-check's verdict; none for a question none of
whose words occurs in the warehouse (`unmatched_ids`), which code answers under `ask_unmatched`,
nor for one whose measure is vague (`vague_ids`), which code asks about under `ask_vague`.
Each configuration's lines follow the previous one's, the way `querybot eval --strategies A
--strategies B` asks them.

    python -m agent.evaluation.scripted evals/demo.yaml --strategies default --strategies plan \
        > gold.jsonl

The replies are the gold answers (a clarifying reply where the right answer is not SQL), a plan
naming the gold SQL's text filters (so their grounding runs), and a self-check that accepts:
the script measures what the strategies cost in calls and tokens, not what they gain (a model
that is always right gains nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.catalog.grounding import literal_filters
from agent.catalog.snapshot import CatalogSnapshot
from agent.context import Strategies
from agent.evaluation.golden import GoldenQuestion, GoldenSet, load_golden
from agent.model.question_context import ContextBuilder
from agent.strategies.options import parse_strategies
from agent.strategies.vague import Definitions, vague_measure

CLARIFY = "Which measure and period do you mean?"


def sql_reply(question: GoldenQuestion) -> str:
    """The gold answer: its first SQL, or a clarifying reply where no SQL is right."""
    if question.expect != "answer":
        return json.dumps({"kind": "clarify", "explanation": CLARIFY})
    sql = question.gold[0]
    return json.dumps({"kind": "sql", "explanation": "Answers the question.", "sql": sql})


def plan_filters(sql: str, dialect: str) -> list[dict[str, str]]:
    """The gold SQL's text filters (`column = 'value'`, `IN` lists) as a plan would name them
    (`table.column`), so the plan's value grounding runs on real values."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    tables = {t.alias_or_name.lower(): t.name for t in tree.find_all(exp.Table)}
    only = next(iter(tables.values())) if len(set(tables.values())) == 1 else ""
    filters = []
    for column, value, folded in literal_filters(tree):
        table = tables.get(column.table.lower(), "") if column.table else only
        if table and not folded:
            filters.append({"column": f"{table}.{column.name}", "operator": "=", "value": value})
    return filters


def replies(
    question: GoldenQuestion,
    strategies: Strategies,
    *,
    whole_schema: bool = True,
    dialect: str = "duckdb",
) -> list[str]:
    """Every reply one question takes under `strategies`, in call order."""
    lines = []
    if strategies.variations and not whole_schema:
        paraphrases = [f"{question.question} (phrased another way)"] * strategies.variations
        lines.append(json.dumps({"questions": paraphrases}))
    if strategies.plan:
        if question.expect != "answer":
            return [*lines, json.dumps({"kind": "clarify", "explanation": CLARIFY})]
        plan = {
            "kind": "plan",
            "explanation": "As asked.",
            "fields": [],
            "filters": plan_filters(question.gold[0], dialect),
        }
        lines.append(json.dumps(plan))
    lines += [sql_reply(question)] * max(1, strategies.candidates)
    if strategies.self_check and question.expect == "answer":
        lines.append(json.dumps({"valid": True, "feedback": ""}))
    return lines


def unmatched_ids(golden: GoldenSet, snapshot: CatalogSnapshot) -> frozenset[str]:
    """The questions of `golden` none of whose words (with those of the question each follows)
    occurs in `snapshot`: the match step answers them with no model call."""
    builder = ContextBuilder()
    found = set()
    for chain in golden.chains():
        previous: list[str] = []
        for question in chain:
            if builder.build(" ".join([*previous, question.question]), snapshot).unmatched:
                found.add(question.id)
            previous = [question.question]
    return frozenset(found)


def vague_ids(golden: GoldenSet, snapshot: CatalogSnapshot) -> frozenset[str]:
    """The questions of `golden` whose measure is vague (`vague_measure`, read with the question
    each follows): the match step asks about them with no model call."""
    definitions = Definitions.of(snapshot)
    found = set()
    for chain in golden.chains():
        previous: GoldenQuestion | None = None
        for question in chain:
            # the reply to the step's own question is not asked again
            replies = previous is not None and previous.id in found
            earlier = [previous.question] if previous is not None else []
            if not replies and vague_measure(question.question, definitions, earlier=earlier):
                found.add(question.id)
            previous = question
    return frozenset(found)


def gold_script(
    golden: GoldenSet,
    configurations: Sequence[Strategies],
    *,
    whole_schema: bool = True,
    unmatched: frozenset[str] = frozenset(),
    vague: frozenset[str] = frozenset(),
) -> list[str]:
    """The script for evaluating `golden` under each configuration in turn; `unmatched` and
    `vague`: the ids `unmatched_ids` and `vague_ids` give, which take no call where
    `ask_unmatched` and `ask_vague` are on."""
    dialect = golden.dialect or "duckdb"
    return [
        line
        for strategies in configurations
        for chain in golden.chains()
        for question in chain
        if not (strategies.ask_unmatched and question.id in unmatched)
        and not (strategies.ask_vague and question.id in vague)
        for line in replies(question, strategies, whole_schema=whole_schema, dialect=dialect)
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("golden", type=Path)
    p.add_argument("--strategies", action="append", metavar="SPEC", default=[])
    p.add_argument(
        "--unmatched",
        default="",
        metavar="IDS",
        help="comma-separated ids of questions matching no word of the warehouse (no call)",
    )
    p.add_argument(
        "--vague",
        default="",
        metavar="IDS",
        help="comma-separated ids of questions whose measure is vague (no call)",
    )
    p.add_argument(
        "--retrieval",
        action="store_true",
        help="the warehouse is searched, not shown whole (variations then make a call)",
    )
    args = p.parse_args(argv)
    configurations = [parse_strategies(s) for s in args.strategies or ["default"]]
    golden = load_golden(args.golden)
    unmatched = frozenset(i.strip() for i in args.unmatched.split(",") if i.strip())
    vague = frozenset(i.strip() for i in args.vague.split(",") if i.strip())
    script = gold_script(
        golden,
        configurations,
        whole_schema=not args.retrieval,
        unmatched=unmatched,
        vague=vague,
    )
    for line in script:
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
