"""The naive baseline: whole schema as CREATE TABLE text, one call, the reply's SQL run as it is,
scored by the same code as querybot, side by side in `querybot eval --baseline`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.baseline import NaiveBaseline, create_table, sql_of
from agent.evaluation.golden import GoldenQuestion, GoldenSet
from agent.evaluation.runner import run_golden
from agent.model.providers import ScriptedChatModel
from bot.cli import main
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.evaluation.conftest import DEMO_GOLDEN, gold_script

COUNT = "SELECT count(*) AS n FROM orders WHERE status = 'pending'"


def q(id_: str, question: str, *gold: str, expect: str = "answer") -> GoldenQuestion:
    return GoldenQuestion(id_, "test", question, tuple(gold), expect)  # type: ignore[arg-type]


def test_the_sql_is_taken_from_the_reply_as_it_is() -> None:
    assert sql_of("Here:\n```sql\nSELECT 1;\n```\nDone.") == "SELECT 1"
    assert sql_of("```\nWITH a AS (SELECT 1) SELECT * FROM a\n```") == (
        "WITH a AS (SELECT 1) SELECT * FROM a"
    )
    assert sql_of("The answer is SELECT 2;") == "SELECT 2"
    assert sql_of("I cannot tell which revenue you mean.") == ""


@pytest.mark.slow
def test_the_prompt_is_the_whole_schema_as_create_table(demo: DuckDBConnector) -> None:
    baseline = NaiveBaseline(demo, ScriptedChatModel(replies=[]))
    prompt = baseline.system_prompt()
    for table in demo.list_tables():
        assert create_table(table) in prompt
    assert "CREATE TABLE" in prompt and " -- " in prompt, "column comments are kept"
    assert "DuckDB" in prompt


@pytest.mark.slow
def test_one_call_no_repair_no_clarifying(demo: DuckDBConnector) -> None:
    golden = GoldenSet(
        (
            q("right", "How many orders are pending?", COUNT),
            q("broken", "How many orders are pending, again?", COUNT),
            q("vague", "How are we doing?", expect="clarify"),
        )
    )
    replies = [
        f"```sql\n{COUNT}\n```",
        "```sql\nSELECT count(*) FROM no_such_table\n```",
        "Which measure do you mean?",
    ]
    model = ScriptedChatModel(replies=replies)
    results = {r.id: r for r in run_golden(golden, NaiveBaseline(demo, model))}
    assert results["right"].status == "pass" and results["right"].model_calls == 1
    assert results["broken"].status == "fail" and "the SQL failed" in results["broken"].message
    assert results["broken"].model_calls == 1, "no repair"
    assert results["vague"].status == "fail", "it never asks back"
    assert model.calls == 3


@pytest.mark.slow
def test_eval_baseline_runs_side_by_side(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    demo_golden: GoldenSet,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    chains = demo_golden.chains()[:2]
    baseline = [f"```sql\n{q.gold[0]}\n```" for chain in chains for q in chain]
    gold = gold_script(demo_golden, tmp_path / "gold.jsonl").read_text().splitlines()
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join([json.dumps(r) for r in baseline] + gold) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{script}")
    out_file = tmp_path / "report.json"
    args = ["eval", str(DEMO_GOLDEN), "--limit", "2", "--baseline", "--out", str(out_file)]
    assert main([*args, "--strategies", "default"]) == 0
    report = json.loads(out_file.read_text())
    assert list(report["configurations"]) == ["naive baseline", "default"]
    for name in ("naive baseline", "default"):
        assert report["configurations"][name]["summary"]["accuracy"] == 1.0
    assert "| naive baseline |" in capsys.readouterr().out
