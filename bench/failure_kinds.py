"""Classify every failure of an evaluation report (`querybot eval --out`), so a real model's
misses can be counted by kind and compared across configurations.

    uv run python -m bench.failure_kinds REPORT.json [--list] [--defog]

The kinds come from what the report holds (the outcome, its message, the SQL that ran and the
gold SQL of the golden set), compared with sqlglot, first rule that fits:

- `clarify when it should answer`, `answered when it should clarify or decline`, `ended without
  a reply` (failed for another reason where no answer was expected);
- `unreadable reply` (no SQL could be read from the model's reply), `model error`;
- `gate refused` (the question ended on the gate's reasons: unknown column or table, ...),
  `engine error` (the warehouse refused the SQL: dialect, types), `empty result` (it ran, found
  no rows, and a loosened query was offered);
- for answers that ran but differ: `wrong table or join path` (another set of tables than every
  gold SQL), `aggregation or grouping` (GROUP BY or aggregates differ), `date logic` (the gold
  filters or groups on dates and the answer's date expressions differ), `ratio arithmetic` (the
  gold divides), `wrong value or column` (the rest: a filter literal, a column, an order).

`--list` prints each failure with its kind, for reading them one by one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from agent.evaluation import defog
from agent.evaluation.golden import GoldenQuestion, GoldenSet, load_golden
from agent.evaluation.runner import gold_sql

_DATE_FUNCS = (exp.DateTrunc, exp.DateAdd, exp.DateSub, exp.DateDiff, exp.Extract, exp.CurrentDate)


def _tree(sql: str, dialect: str) -> exp.Expr | None:
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except Exception:  # unreadable SQL classifies by message instead
        return None


def _tables(tree: exp.Expr) -> frozenset[str]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return frozenset(t.name.lower() for t in tree.find_all(exp.Table) if t.name) - ctes


def _aggregates(tree: exp.Expr) -> tuple[bool, frozenset[str]]:
    names = frozenset(type(a).__name__ for a in tree.find_all(exp.AggFunc))
    return bool(tree.find(exp.Group)), names


def _dates(tree: exp.Expr) -> frozenset[str]:
    found = {type(n).__name__ for n in tree.find_all(*_DATE_FUNCS)}
    found |= {"interval"} if tree.find(exp.Interval) else set()
    return frozenset(found)


def kind_of(result: dict[str, Any], golds: list[str], dialect: str) -> str:
    """The kind of one failed question (see the module docstring)."""
    outcome, message = result["outcome"], result.get("message") or ""
    if result["expect"] != "answer":
        if outcome == "answer":
            return "answered when it should clarify or decline"
        return "ended without a reply"
    if outcome == "clarify":
        return "clarify when it should answer"
    if outcome == "proposal":  # the result was empty; a loosened query awaits approval
        return "empty result"
    if outcome != "answer":
        if "not valid JSON" in message or "no SQL in the reply" in message:
            return "unreadable reply"
        if "language model" in message or "the model failed" in message:
            return "model error"
        if "query failed" in message.lower() or "the SQL failed" in message:
            return "engine error"
        return "gate refused"
    answer = _tree(result["sql"], dialect)
    trees = [t for t in (_tree(g, dialect) for g in golds) if t is not None]
    if answer is None or not trees:
        return "wrong value or column"
    if all(_tables(answer) != _tables(t) for t in trees):
        return "wrong table or join path"
    if all(_aggregates(answer) != _aggregates(t) for t in trees):
        return "aggregation or grouping"
    if any(_dates(t) for t in trees) and all(_dates(answer) != _dates(t) for t in trees):
        return "date logic"
    if any(t.find(exp.Div) for t in trees):
        return "ratio arithmetic"
    return "wrong value or column"


def questions_of(sets: list[GoldenSet]) -> dict[str, tuple[GoldenSet, GoldenQuestion]]:
    """Each question id of `sets`, with its set (which says the gold SQL's dialect)."""
    return {q.id: (golden, q) for golden in sets for q in golden.questions}


def classify(
    report: dict[str, Any], questions: dict[str, tuple[GoldenSet, GoldenQuestion]], dialect: str
) -> list[tuple[str, str]]:
    """(question id, kind) of every failure in one configuration's report."""
    out = []
    for result in report["questions"]:
        if result["status"] != "fail":
            continue
        found = questions.get(result["id"])
        golds = gold_sql(found[0], found[1], dialect) if found else []
        out.append((result["id"], kind_of(result, golds, dialect)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("report", type=Path)
    p.add_argument("--golden", type=Path, default=Path("evals/demo.yaml"))
    p.add_argument("--defog", action="store_true", help="the report is of defog's sql-eval")
    p.add_argument("--dialect", default="duckdb")
    p.add_argument("--list", action="store_true", help="each failure with its kind")
    args = p.parse_args(argv)
    data = json.loads(args.report.read_text(encoding="utf-8"))
    configs = data.get("configurations") or {"report": data}
    sets = list(defog.golden_sets().values()) if args.defog else [load_golden(args.golden)]
    questions = questions_of(sets)
    kinds: dict[str, Counter[str]] = {}
    for name, report in configs.items():
        classified = classify(report, questions, args.dialect)
        kinds[name] = Counter(kind for _, kind in classified)
        if args.list:
            for qid, kind in classified:
                print(f"{name}\t{qid}\t{kind}")
    names = sorted(
        {k for c in kinds.values() for k in c}, key=lambda k: -sum(c[k] for c in kinds.values())
    )
    print("| kind | " + " | ".join(kinds) + " |")
    print("|---|" + "---:|" * len(kinds))
    for k in names:
        print(f"| {k} | " + " | ".join(str(c[k]) for c in kinds.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
