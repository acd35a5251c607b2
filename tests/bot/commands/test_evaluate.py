"""`querybot eval`: the report, the comparison with an earlier one, and exported approvals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.evaluation.golden import GoldenSet, load_golden
from agent.memory.examples import ExampleStore
from bot.cli import main
from tests.agent.evaluation.conftest import DEMO_GOLDEN, gold_script, reply_for


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("QUERYBOT_PROFILE_VALUES", "off")
    return tmp_path


@pytest.mark.slow
def test_eval_writes_a_report_and_compares_it_with_an_earlier_one(
    env: Path,
    demo_golden: GoldenSet,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{gold_script(demo_golden, env / 'g.jsonl')}")
    assert main(["eval", str(DEMO_GOLDEN), "--out", str(env / "old.json")]) == 0
    assert "Accuracy: 100.0%" in capsys.readouterr().out
    old = json.loads((env / "old.json").read_text())
    assert old["summary"]["accuracy"] == 1.0 and old["meta"]["warehouse"] == "demo"

    first = demo_golden.questions[0]
    wrong = [reply_for(first, "SELECT 1.0 AS list_price FROM products")]
    wrong += [reply_for(q) for q in demo_golden.questions[1:3]]
    (env / "wrong.jsonl").write_text("\n".join(wrong) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{env / 'wrong.jsonl'}")
    args = ["eval", str(DEMO_GOLDEN), "--limit", "3", "--compare", str(env / "old.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Accuracy: 66.7% (2/3" in out
    assert f"[{first.id}] {first.question}" in out and "1.0 AS list_price" in out
    assert "Accuracy: 100.0% -> 66.7%" in out
    assert f"Worse (now wrong): {first.id}\n" in out


@pytest.mark.slow
def test_approved_examples_export_as_a_golden_set_that_evaluates(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ExampleStore(env / "data" / "examples.sqlite")
    for question, sql in [
        ("How many customers?", "SELECT count(*) FROM customers"),
        ("Orders per channel?", "SELECT channel, count(*) FROM orders GROUP BY 1"),
    ]:
        store.add(question, sql, tables=[], columns=[], approved_by="U1")
    store.close()
    assert main(["eval", "--export-examples", str(env / "team.yaml")]) == 0
    assert "2 approved examples written to" in capsys.readouterr().err
    golden = load_golden(env / "team.yaml")
    assert [q.question for q in golden.questions] == ["How many customers?", "Orders per channel?"]
    assert golden.warehouse == "demo" and {q.category for q in golden.questions} == {"approved"}

    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{gold_script(golden, env / 'g.jsonl')}")
    assert main(["eval", str(env / "team.yaml")]) == 0
    assert "Accuracy: 100.0% (2/2" in capsys.readouterr().out


def test_one_exported_example_is_counted_in_the_singular(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ExampleStore(env / "data" / "examples.sqlite")
    store.add(
        "How many customers?",
        "SELECT count(*) FROM customers",
        tables=[],
        columns=[],
        approved_by="U1",
    )
    store.close()
    assert main(["eval", "--export-examples", str(env / "one.yaml")]) == 0
    assert "1 approved example written to" in capsys.readouterr().err


def test_eval_without_a_set_says_what_to_give(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval"]) == 2
    assert "name a golden set" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_defog_builds_the_database_and_scores_its_questions(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    declines = [json.dumps({"kind": "clarify", "explanation": "The data cannot say."})] * 5
    (env / "s.jsonl").write_text("\n".join(declines) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{env / 's.jsonl'}")
    args = ["eval", "--defog", "--databases", "broker", "--cache", str(env / "cache")]
    assert main([*args, "--out", str(env / "defog.json")]) == 0
    assert (env / "cache" / "broker.duckdb").is_file()
    report = json.loads((env / "defog.json").read_text())
    assert report["summary"]["questions"] == 4 and report["summary"]["gold_errors"] == 1
    assert {q["database"] for q in report["questions"]} == {"broker"}
    assert "asked or declined instead of answering" in capsys.readouterr().out


MIXED = """warehouse: demo
questions:
  - id: q1
    category: lookup
    question: What is the list price of the Wireless Earbuds Pro?
    gold: SELECT list_price FROM products WHERE product_name = 'Wireless Earbuds Pro'
  - id: q2
    category: follow_up
    follow_up_of: q1
    question: And of the product with the SKU EL-003?
    gold: SELECT list_price FROM products WHERE sku = 'EL-003'
  - id: q3
    category: lookup
    question: Which product has the SKU EL-003?
    gold: SELECT product_name FROM products WHERE sku = 'EL-003'
"""


def test_eval_categories_keep_each_chosen_question_with_the_one_it_follows(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (env / "mixed.yaml").write_text(MIXED)
    golden = load_golden(env / "mixed.yaml")
    asked = golden.questions[:2]  # the follow-up, and the question it follows
    (env / "g.jsonl").write_text("\n".join(reply_for(q) for q in asked) + "\n")
    monkeypatch.setenv("QUERYBOT_MODEL", f"scripted:{env / 'g.jsonl'}")
    args = ["eval", str(env / "mixed.yaml"), "--categories", "follow_up"]
    assert main([*args, "--out", str(env / "r.json")]) == 0
    report = json.loads((env / "r.json").read_text())
    assert [q["id"] for q in report["questions"]] == ["q1", "q2"]
    assert report["summary"]["accuracy"] == 1.0

    assert main(["eval", str(env / "mixed.yaml"), "--categories", "ratio"]) == 0  # none: no run
