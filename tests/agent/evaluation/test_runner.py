"""The harness scores a perfect model 100% and each kind of wrong answer as the failure it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.golden import GoldenQuestion, GoldenSet
from agent.evaluation.report import build_report, render
from agent.evaluation.runner import evaluation_agent, run_golden
from agent.model.providers import ScriptedChatModel, load_model
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.evaluation.conftest import gold_script, reply_for


@pytest.mark.slow
def test_a_model_replaying_the_gold_sql_scores_100_percent(
    demo_golden: GoldenSet, demo: DuckDBConnector, tmp_path: Path
) -> None:
    model = load_model(f"scripted:{gold_script(demo_golden, tmp_path / 'gold.jsonl')}")
    results = run_golden(demo_golden, evaluation_agent(demo, model, today=demo_golden.today))
    report = build_report(results, {})
    assert report["failures"] == []
    summary = report["summary"]
    assert summary["accuracy"] == 1.0
    assert summary["questions"] == len(demo_golden.questions)
    assert summary["exact"] == sum(q.expect == "answer" for q in demo_golden.questions)
    assert summary["rightly_declined"] == summary["unanswerable"] == 7
    assert summary["rightly_clarified"] == summary["ambiguous"] == 7
    assert summary["repairs"] == 0
    # six questions match no word of the warehouse, one ranks by "best" with no measure:
    # asked back by code, with no call
    asked_back = [r.id for r in results if {"unmatched", "vague"} & set(r.steps)]
    assert len(asked_back) == 7 and set(asked_back) <= {
        q.id for q in demo_golden.questions if q.expect != "answer"
    }
    assert summary["model_calls"]["total"] == len(demo_golden.questions) - 7
    assert summary["input_tokens"]["median"] > 0
    assert all(acc["accuracy"] == 1.0 for acc in report["by_category"].values())
    assert isinstance(model, ScriptedChatModel) and model.calls == len(model.replies)


def test_follow_ups_see_the_turn_they_follow(demo_golden: GoldenSet, demo: DuckDBConnector) -> None:
    chain = next(c for c in demo_golden.chains() if c[0].id == "follow-01")
    model = ScriptedChatModel(replies=[reply_for(q) for q in chain])
    results = run_golden(GoldenSet(tuple(chain)), evaluation_agent(demo, model))
    assert [r.status for r in results] == ["pass"] * 3
    follow_up_prompt = "\n".join(str(m.content) for m in model.seen[1])
    assert chain[0].question in follow_up_prompt


def q(id_: str, question: str, *gold: str, expect: str = "answer") -> GoldenQuestion:
    return GoldenQuestion(id_, "test", question, tuple(gold), expect)  # type: ignore[arg-type]


COUNT = "SELECT count(*) AS n FROM orders WHERE status = 'pending'"
BY_CATEGORY = "SELECT category, count(*) AS n FROM products GROUP BY category"


def test_wrong_answers_are_scored_as_failures_with_their_reason(demo: DuckDBConnector) -> None:
    golden = GoldenSet(
        (
            q("wrong-value", "How many orders are pending?", COUNT),
            q("missing-column", "Products per category?", BY_CATEGORY),
            q("extra-column", "Products per category, again?", BY_CATEGORY),
            q("asked-back", "How many orders are pending, please?", COUNT),
            q("answered-ambiguous", "How are our orders doing?", expect="clarify"),
            q("answered-unanswerable", "How many website visitors per region?", expect="decline"),
            q("never-valid", "How many pending orders now?", COUNT),
        )
    )
    broken = "SELECT count(*) FROM no_such_table"
    replies = [
        reply_for(golden.questions[0], COUNT.replace("pending", "shipped")),
        reply_for(golden.questions[1], "SELECT count(*) AS n FROM products GROUP BY category"),
        reply_for(
            golden.questions[2],
            "SELECT category, count(*) AS n, avg(list_price) AS p FROM products GROUP BY 1",
        ),
        json.dumps({"kind": "clarify", "explanation": "Which status do you mean?"}),
        reply_for(golden.questions[0]),
        reply_for(golden.questions[0]),
        *[reply_for(golden.questions[0], broken)] * 3,
    ]
    model = ScriptedChatModel(replies=replies)
    results = {r.id: r for r in run_golden(golden, evaluation_agent(demo, model))}

    assert results["wrong-value"].status == "fail"
    assert results["wrong-value"].reason == "the values differ from the gold answer"
    assert "shipped" in results["wrong-value"].sql
    assert results["missing-column"].status == "fail"
    assert results["missing-column"].reason.startswith("1 column (n) where the gold answer has 2")
    assert (results["extra-column"].status, results["extra-column"].match) == ("pass", "subset")
    assert results["asked-back"].reason.startswith("asked or declined instead of answering")
    assert results["answered-ambiguous"].reason == (
        "ran SQL where the right reply was a clarifying question"
    )
    assert results["answered-unanswerable"].reason == (
        "ran SQL where the right reply was saying the data cannot answer"
    )
    never = results["never-valid"]
    # every draft read a table the warehouse lacks: it ends asking which data is meant
    assert (never.status, never.outcome, never.model_calls, never.repairs) == (
        "fail",
        "clarify",
        3,
        2,
    )
    assert never.reason.startswith("asked or declined instead of answering: I could not find")
    # no SQL was proposed: the report keeps the last draft, the statement behind the failure
    assert (never.sql, never.refused_sql) == ("", broken)
    assert results["wrong-value"].refused_sql == ""

    report = build_report(list(results.values()), {})
    assert report["summary"]["correct"] == 1
    assert [f["id"] for f in report["failures"]] == [
        "wrong-value",
        "missing-column",
        "asked-back",
        "answered-ambiguous",
        "answered-unanswerable",
        "never-valid",
    ]
    assert report["failures"][-1]["refused_sql"] == broken


def test_the_report_counts_the_gates_fixes(demo: DuckDBConnector) -> None:
    golden = GoldenSet(
        (
            q("fenced", "How many orders are pending?", COUNT),
            q("plain", "Products per category?", BY_CATEGORY),
        )
    )
    fenced = reply_for(golden.questions[0], f"```sql\n{COUNT};\n```")
    model = ScriptedChatModel(replies=[fenced, reply_for(golden.questions[1])])
    results = run_golden(golden, evaluation_agent(demo, model))
    assert [r.status for r in results] == ["pass", "pass"]
    assert results[0].gate_fixes == ["stripped markdown fence", "removed trailing semicolon"]
    assert results[1].gate_fixes == []  # the row cap alone is no fix
    report = build_report(results, {})
    summary = report["summary"]
    assert "Fixed by the gate (besides the row cap): 1 question, 1 of them right (" in render(
        report
    )
    assert (summary["questions_gate_fixed"], summary["gate_fixed_right"]) == (1, 1)
    assert summary["gate_fixes"] == {"stripped markdown fence": 1, "removed trailing semicolon": 1}


def test_a_broken_gold_query_is_not_blamed_on_the_bot(demo: DuckDBConnector) -> None:
    golden = GoldenSet((q("bad-gold", "How many orders?", "SELECT count(*) FROM nowhere"),))
    model = ScriptedChatModel(replies=[reply_for(golden.questions[0], COUNT)])
    (result,) = run_golden(golden, evaluation_agent(demo, model))
    assert result.status == "gold_error"
    assert build_report([result], {})["summary"]["questions"] == 0


def test_one_questions_mistake_never_reaches_another(demo: DuckDBConnector) -> None:
    golden = GoldenSet(
        (
            q("first", "How many orders are pending?", COUNT),
            q("second", "How many orders are pending today?", COUNT),
            q("third", "How many orders are pending now?", COUNT),
        )
    )
    mistake = "SELECT count(*) AS n FROM orders WHERE state = 'pending'"
    other = "SELECT count(*) AS n FROM orders WHERE stat = 'pending'"
    good = reply_for(golden.questions[0])
    replies = [reply_for(golden.questions[0], mistake), good] * 2
    replies += [reply_for(golden.questions[0], other), good]
    model = ScriptedChatModel(replies=replies)
    results = run_golden(golden, evaluation_agent(demo, model))
    assert [r.status for r in results] == ["pass"] * 3
    # the same mistake in two questions would be a recurring hint in the bot; not here
    third_repair = "\n".join(str(m.content) for m in model.seen[5])
    assert "Unknown column 'stat'" in third_repair and "state" not in third_repair
