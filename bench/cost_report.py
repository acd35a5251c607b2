"""Cost per answered question: model calls and prompt tokens on the demo golden set, against a
single-prompt baseline that pastes the whole schema.

    uv run python -m bench.cost_report [--golden evals/demo.yaml] [--json PATH]

The bot's side runs the golden set through the evaluation harness (`agent.evaluation.runner`,
what `querybot eval` runs) with the scripted model replaying each question's gold SQL (a
clarifying reply for the ambiguous and unanswerable questions): every call the graph makes is
counted, and its prompt is read back from the scripted model's record (`seen`). The baseline is
one call per question whose prompt is the same instructions, the thread's earlier questions and
the question, with the whole schema pasted in, rendered two ways: as the bot renders a table
(descriptions, row counts, profiled values) and as bare `CREATE TABLE` DDL with column comments.

Tokens are `langchain_core.messages.utils.count_tokens_approximately` on the message list (about
four characters a token plus a few per message), the same for both sides: Gemini's own counter
needs the network. Output tokens are left out: the replies are the same SQL on both sides.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from agent import reference_day
from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentLimits
from agent.evaluation.golden import GoldenQuestion, GoldenSet, load_golden
from agent.evaluation.report import percentile
from agent.evaluation.runner import QuestionResult, evaluation_agent, run_golden
from agent.model import prompts
from agent.model.providers import ScriptedChatModel, load_model
from agent.model.question_context import ContextLimits, table_text
from agent.nodes.generate import system_prompt
from connectors import open_connector
from connectors.base import Connector, TableInfo


def oracle_reply(q: GoldenQuestion) -> dict[str, str]:
    """What a model that knew the answer would reply to `q`."""
    if q.expect == "answer":
        return {"kind": "sql", "explanation": "Answers the question.", "sql": q.gold[0]}
    return {"kind": "clarify", "explanation": "Which measure and period do you mean?", "sql": ""}


def ddl_text(table: TableInfo) -> str:
    """A table as `CREATE TABLE` with its descriptions as comments (a pasted schema)."""
    lines = [f"-- {table.description}"] if table.description else []
    columns = []
    for i, column in enumerate(table.columns, 1):
        comma = "," if i < len(table.columns) else ""
        comment = f" -- {column.description}" if column.description else ""
        columns.append(f"  {column.name} {column.type}{comma}{comment}")
    return "\n".join([*lines, f"CREATE TABLE {table.name} (", *columns, ");"])


def baseline_prompt(
    schema: str,
    connector: Connector,
    limits: AgentLimits,
    earlier: Sequence[str],
    question: str,
    today: dt.date,
) -> list[BaseMessage]:
    """The bot's instructions with `schema` pasted whole, the thread's earlier questions, and the
    question: one call, no retrieval, examples or repairs."""
    tables = prompts.TABLES.format(note="", tables=schema)
    system = system_prompt(connector, limits, tables, today=today)
    messages: list[BaseMessage] = [SystemMessage(system)]
    if earlier:
        turns = "\n".join(f"Q: {q}" for q in earlier)
        messages.append(HumanMessage(prompts.HISTORY.format(turns=turns)))
    messages.append(HumanMessage(question))
    return messages


def spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "total": round(sum(values), 1),
        "median": round(statistics.median(values), 1),
        "p95": round(percentile(values, 0.95), 1),
        "max": round(max(values), 1),
    }


def run(golden_path: Path) -> dict[str, object]:
    golden = load_golden(golden_path)
    limits = AgentLimits(profile_values=True)  # as `querybot eval` and the bot run on DuckDB
    with tempfile.TemporaryDirectory(prefix="querybot-cost-") as tmp:
        script = Path(tmp) / "oracle.jsonl"
        replies = [oracle_reply(q) for chain in golden.chains() for q in chain]
        script.write_text("".join(json.dumps(r) + "\n" for r in replies), encoding="utf-8")
        model = load_model(f"scripted:{script}")
        assert isinstance(model, ScriptedChatModel)
        connector = open_connector(
            golden.warehouse or "demo", data_dir=Path(tmp), today=golden.today
        )
        agent = evaluation_agent(connector, model, limits=limits, today=golden.today)
        try:
            agent.deps.catalog.wait_idle(timeout_s=60)  # values profiled, as in a running bot
            results = run_golden(golden, agent)
            snapshot = agent.deps.catalog.snapshot()
            bot = _bot_side(results, model.seen)
            base = _baselines(golden, connector, limits, snapshot)
        finally:
            agent.deps.catalog.wait_idle(timeout_s=30)
            connector.close()
    answered = sum(r.outcome == "answer" for r in results)
    return {
        "golden": str(golden_path),
        "questions": len(results),
        "answered": answered,
        "correct": sum(r.status == "pass" for r in results),
        "clarified": sum(r.outcome == "clarify" for r in results),
        "tokens": "count_tokens_approximately (about 4 characters a token)",
        "querybot": {**bot, "per_answered": _per(bot, answered)},
        "baseline_rendered": {**base["rendered"], "per_answered": _per(base["rendered"], answered)},
        "baseline_ddl": {**base["ddl"], "per_answered": _per(base["ddl"], answered)},
        "schema_tokens": {
            "rendered": count_tokens_approximately([base["rendered_schema"]]),
            "ddl": count_tokens_approximately([base["ddl_schema"]]),
        },
    }


def _bot_side(results: Sequence[QuestionResult], seen: Sequence[list[BaseMessage]]) -> dict:
    """Calls and prompt tokens per question, the prompts read back from the scripted model."""
    assert sum(r.model_calls for r in results) == len(seen), "calls and recorded prompts differ"
    tokens, at = [], 0
    for r in results:
        prompts_of_question = seen[at : at + r.model_calls]
        at += r.model_calls
        tokens.append(sum(count_tokens_approximately(m) for m in prompts_of_question))
    calls = [r.model_calls for r in results]
    return {"calls": spread(calls), "prompt_tokens": spread(tokens)}


def _baselines(
    golden: GoldenSet, connector: Connector, limits: AgentLimits, snapshot: CatalogSnapshot
) -> dict:
    rendered = "\n\n".join(table_text(t, snapshot, ContextLimits()) for t in snapshot.tables)
    ddl = "\n\n".join(ddl_text(t) for t in snapshot.tables)
    out: dict = {"rendered_schema": rendered, "ddl_schema": ddl}
    for name, schema in (("rendered", rendered), ("ddl", ddl)):
        tokens = []
        for chain in golden.chains():
            for i, q in enumerate(chain):
                earlier = [c.question for c in chain[:i]]
                day = reference_day.today(golden.today)
                messages = baseline_prompt(schema, connector, limits, earlier, q.question, day)
                tokens.append(count_tokens_approximately(messages))
        out[name] = {"calls": spread([1] * len(tokens)), "prompt_tokens": spread(tokens)}
    return out


def _per(side: dict, answered: int) -> dict[str, float]:
    return {
        "calls": round(side["calls"]["total"] / answered, 2),
        "prompt_tokens": round(side["prompt_tokens"]["total"] / answered, 1),
    }


def render(report: dict) -> str:
    lines = [
        f"{report['golden']}: {report['questions']} questions, {report['answered']} answered "
        f"(an answer ran), {report['clarified']} clarifying replies, {report['correct']} scored "
        "correct; scripted model replaying the gold SQL",
        f"tokens: {report['tokens']}",
        "",
        "| | calls / answered question | prompt tokens / answered question "
        "| prompt tokens per question: median / p95 / max |",
        "|---|---|---|---|",
    ]
    for key, label in (
        ("querybot", "querybot (its graph, repairs included)"),
        ("baseline_rendered", "baseline: one call, whole schema as the bot renders it"),
        ("baseline_ddl", "baseline: one call, whole schema as CREATE TABLE DDL"),
    ):
        side = report[key]
        t = side["prompt_tokens"]
        lines.append(
            f"| {label} | {side['per_answered']['calls']} | {side['per_answered']['prompt_tokens']}"
            f" | {t['median']} / {t['p95']} / {t['max']} |"
        )
    s = report["schema_tokens"]
    lines.append(f"\nwhole schema alone: {s['rendered']} tokens rendered, {s['ddl']} as DDL")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--golden", type=Path, default=Path("evals/demo.yaml"))
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    report = run(args.golden)
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
