"""The demo warehouse, its golden set, and scripted models that replay gold or wrong SQL."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

from agent.catalog.snapshot import Catalog
from agent.evaluation.golden import GoldenQuestion, GoldenSet
from agent.evaluation.runner import gold_sql
from agent.evaluation.scripted import unmatched_ids, vague_ids
from agent.model.providers import ScriptedChatModel
from connectors.demo.build import ensure_demo
from connectors.duckdb.connector import DuckDBConnector
from tests.support.demo_day import TODAY

DEMO_GOLDEN = Path(__file__).resolve().parents[3] / "evals" / "demo.yaml"


def reply_for(question: GoldenQuestion, sql: str | None = None) -> str:
    """The scripted model's reply to `question`: `sql` (default: the first gold SQL) or, for
    questions expecting no answer, a clarifying question."""
    if question.expect != "answer" and sql is None:
        return json.dumps({"kind": "clarify", "explanation": "Which measure do you mean?"})
    text = question.gold[0] if sql is None else sql
    return json.dumps({"kind": "sql", "explanation": "Answers the question.", "sql": text})


@functools.cache
def demo_unmatched(questions: tuple[GoldenQuestion, ...]) -> frozenset[str]:
    """The `questions` (over the demo warehouse) the default's match step answers with no
    model call: those matching no word of the warehouse, and those whose measure is vague."""
    with tempfile.TemporaryDirectory() as folder:
        connector = DuckDBConnector(ensure_demo(Path(folder), today=TODAY))
        try:
            snapshot = Catalog(connector, profile=False).refresh()
            golden = GoldenSet(questions)
            return unmatched_ids(golden, snapshot) | vague_ids(golden, snapshot)
        finally:
            connector.close()


def gold_script(golden: GoldenSet, path: Path) -> Path:
    """A JSONL script for `scripted:PATH` replaying every gold answer in the order the
    default configuration asks (thread by thread): over the demo warehouse, none for the
    questions its match step answers."""
    skip = demo_unmatched(golden.questions) if golden.warehouse == "demo" else frozenset()
    lines = [reply_for(q) for chain in golden.chains() for q in chain if q.id not in skip]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class OracleModel(ScriptedChatModel):
    """Answers each golden question with its gold SQL (in the engine's dialect) whatever the
    call order, and repeats it when asked to repair: a perfect model that never adapts."""

    answers: dict[str, str]

    @classmethod
    def for_set(cls, golden: GoldenSet, dialect: str) -> OracleModel:
        answers = {
            q.question: reply_for(q, gold_sql(golden, q, dialect)[0] if q.gold else None)
            for q in golden.questions
        }
        return cls(replies=[], answers=answers)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        asked = next(
            str(m.content)
            for m in messages
            if isinstance(m, HumanMessage) and str(m.content) in self.answers
        )
        self.replies.append(self.answers[asked])
        return super()._generate(messages, *args, **kwargs)
