"""`querybot eval --from-feedback`: the examples people verified with a thumbs up in Slack, and
only those, written as a golden set."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.evaluation.golden import load_golden
from agent.memory.examples import ExampleStore
from bot.cli import main


def test_verified_examples_export_as_a_golden_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUERYBOT_WAREHOUSE", "demo")
    monkeypatch.setenv("QUERYBOT_DATA_DIR", str(tmp_path / "data"))
    store = ExampleStore(tmp_path / "data" / "examples.sqlite")
    store.add(
        "How many orders?", "SELECT count(*) FROM orders", tables=[], columns=[], approved_by="U1"
    )
    store.verify(
        "How many customers?",
        "SELECT count(*) FROM customers",
        tables=[],
        columns=[],
        approved_by="U1",
        verified_by="U2",
    )
    store.close()
    assert main(["eval", "--from-feedback", str(tmp_path / "verified.yaml")]) == 0
    assert "1 verified example written to" in capsys.readouterr().err
    golden = load_golden(tmp_path / "verified.yaml")
    assert [(q.question, q.category) for q in golden.questions] == [
        ("How many customers?", "verified")
    ]
    assert golden.questions[0].gold == ("SELECT count(*) FROM customers",)
    assert golden.warehouse == "demo"
