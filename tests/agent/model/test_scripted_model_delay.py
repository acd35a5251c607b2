"""The scripted model's `"__delay__"` key: that reply arrives late (a slow provider), the rest
of the line is the reply as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from agent.model import providers as models
from agent.model.providers import ModelConfigError, ScriptedChatModel, ScriptedOutage


def test_a_delay_key_delays_that_reply_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(models.time, "sleep", slept.append)
    path = tmp_path / "script.jsonl"
    lines = [
        {"__delay__": 2, "kind": "sql", "explanation": "x", "sql": "SELECT 1"},
        "on time",
        {"__delay__": 0.5, "__error__": "503 Service Unavailable"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    model = ScriptedChatModel.from_jsonl(path)
    first = json.loads(str(model.invoke([HumanMessage("q")]).content))
    assert first == {"kind": "sql", "explanation": "x", "sql": "SELECT 1"}
    assert slept == [2.0]
    assert model.invoke([HumanMessage("q")]).content == "on time"
    assert slept == [2.0]
    with pytest.raises(ScriptedOutage, match="503"):  # a slow outage: late, then failing
        model.invoke([HumanMessage("q")])
    assert slept == [2.0, 0.5]


@pytest.mark.parametrize("delay", [-1, "2"])
def test_a_delay_that_is_not_seconds_is_refused(tmp_path: Path, delay: object) -> None:
    path = tmp_path / "script.jsonl"
    path.write_text(json.dumps({"__delay__": delay, "kind": "sql"}) + "\n", encoding="utf-8")
    with pytest.raises(ModelConfigError, match="__delay__"):
        ScriptedChatModel.from_jsonl(path)
