"""`querybot eval --strategies`: each configuration is scored and its calls and tokens reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.golden import GoldenSet
from agent.evaluation.scripted import gold_script, replies
from agent.strategies.options import parse_strategies
from bot.cli import main
from tests.agent.evaluation.conftest import DEMO_GOLDEN


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    return tmp_path


def test_the_script_holds_every_call_of_each_strategy(demo_golden: GoldenSet) -> None:
    answer = next(q for q in demo_golden.questions if q.expect == "answer")
    clarify = next(q for q in demo_golden.questions if q.expect == "clarify")
    every = parse_strategies("plan,self_check,candidates:3,variations:2")
    assert len(replies(answer, parse_strategies("none"))) == 1
    # plan, three drafts, the check; paraphrases only where the schema is searched
    assert len(replies(answer, every)) == 5
    assert len(replies(answer, every, whole_schema=False)) == 6
    # a plan that asks back ends the question
    assert len(replies(clarify, every)) == 1


@pytest.mark.slow
def test_eval_compares_configurations_in_calls_and_tokens(
    env: Path,
    demo_golden: GoldenSet,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    specs = ["none", "plan,self_check", "candidates:3"]
    threads = GoldenSet(tuple(q for chain in demo_golden.chains()[:4] for q in chain))
    script = gold_script(threads, [parse_strategies(s) for s in specs])
    (env / "s.jsonl").write_text("\n".join(script) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{env / 's.jsonl'}")
    args = ["eval", str(DEMO_GOLDEN), "--limit", "4", "--out", str(env / "r.json")]
    assert main([*args, *(a for s in specs for a in ("--strategies", s))]) == 0
    out = capsys.readouterr().out
    assert "| Strategies | Accuracy | Calls/question | Tokens/question |" in out
    report = json.loads((env / "r.json").read_text())
    rows = {r["strategies"]: r for r in report["comparison"]}
    assert set(rows) == set(specs) and all(r["accuracy"] == 1.0 for r in rows.values())
    assert rows["none"]["calls_per_question"] == 1.0
    assert rows["plan,self_check"]["calls_per_question"] == 3.0
    assert rows["candidates:3"]["calls_per_question"] == 3.0
    assert rows["none"]["tokens_per_question"] < rows["plan,self_check"]["tokens_per_question"]
    by_node = report["configurations"]["plan,self_check"]["summary"]["by_node"]
    assert by_node["plan"]["calls"] == by_node["check"]["calls"] == by_node["generate"]["calls"]
    assert report["configurations"]["candidates:3"]["meta"]["strategies"] == (
        "candidates:3,remember_failures,redraft,ask_unmatched,ask_vague"
    )


def test_an_unknown_strategy_is_refused_before_any_work(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(DEMO_GOLDEN), "--strategies", "psychic"]) == 2
    assert "Unknown strategy 'psychic'" in capsys.readouterr().err
