"""The scripted model's outage line: one call fails like a provider outage, the next answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from agent.models import ScriptedChatModel, ScriptedOutage


def test_an_error_line_fails_that_call_only(tmp_path: Path) -> None:
    path = tmp_path / "script.jsonl"
    lines = [{"__error__": "503 Service Unavailable"}, "after the outage", {"__error__": 1, "x": 2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    model = ScriptedChatModel.from_jsonl(path)
    with pytest.raises(ScriptedOutage, match="503 Service Unavailable"):
        model.invoke([HumanMessage("q")])
    assert model.invoke([HumanMessage("q")]).content == "after the outage"
    # an object with other keys is a normal reply, not an outage
    assert json.loads(str(model.invoke([HumanMessage("q")]).content)) == lines[2]
    assert model.calls == 3
