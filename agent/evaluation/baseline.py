"""The naive baseline querybot is measured against: what seeds of this field do.

The whole schema as CREATE TABLE text (with column comments), the dialect, today's date (the pinned
one when the golden set pins it, and then SQL reading the clock reads that day, as the bot's does)
and the question in one prompt; one model call; the SQL taken from the reply as it is; run once. No
grounding, no retrieval, no examples, no gate, no repair, no failure memory, no clarifying
questions. A follow-up sees its thread's earlier questions and SQL, as a chat would.

It answers to the same calls `run_golden` makes of an `Agent` (`ask`, `decide`, `deps.connector`,
`deps.limits`), so both are scored by the same code. It runs model-written SQL without the gate: use
it only on a read-only evaluation connection (the DuckDB connector always is).
"""

from __future__ import annotations

import datetime as dt
import re
import time
import uuid
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agent.context import AgentLimits
from agent.model import prompts
from agent.model.question_context import create_table
from agent.nodes.execute import plain
from agent.outcome import Answer, Outcome
from agent.reference_day import pin_sql, today
from connectors.base import Connector, ConnectorError

SYSTEM = """You write SQL for a {dialect} database. Today is {today}.
Answer with one SQL query in a ```sql code block.

{schema}"""

_FENCED = re.compile(r"```(?:sql)?\s*(.*?)```", re.IGNORECASE | re.DOTALL)
_BARE = re.compile(r"\b(WITH|SELECT)\b.*", re.IGNORECASE | re.DOTALL)


def sql_of(reply: str) -> str:
    """The SQL in a model's reply: the first fenced block, else from the first WITH/SELECT."""
    fenced = _FENCED.search(reply)
    if fenced:
        return fenced.group(1).strip().rstrip(";").strip()
    bare = _BARE.search(reply)
    return bare.group(0).strip().rstrip(";").strip() if bare else ""


@dataclass
class _Deps:
    connector: Connector
    limits: AgentLimits


@dataclass
class NaiveBaseline:
    """One prompt, one call, the reply's SQL run as it is."""

    connector: Connector
    model: BaseChatModel
    limits: AgentLimits = field(default_factory=AgentLimits)
    #: The day it is asked on when pinned; None: the real date.
    pinned_today: dt.date | None = None
    _turns: dict[str, list[BaseMessage]] = field(default_factory=dict)

    @property
    def deps(self) -> _Deps:
        return _Deps(self.connector, self.limits)

    def system_prompt(self) -> str:
        schema = "\n\n".join(create_table(t) for t in self.connector.list_tables())
        dialect = prompts.DIALECT_NAMES.get(self.connector.dialect, self.connector.dialect)
        return SYSTEM.format(
            dialect=dialect, today=today(self.pinned_today).isoformat(), schema=schema
        )

    def ask(self, thread_id: str, question: str, *, user: str) -> Outcome:
        turns = self._turns.setdefault(thread_id, [])
        messages = [SystemMessage(self.system_prompt()), *turns, HumanMessage(question)]
        try:
            reply = str(self.model.invoke(messages).content)
        except Exception as exc:  # a failed call is a failed question, as in querybot
            return Outcome(kind="failed", message=f"the model failed: {exc}")
        sql = sql_of(reply)
        turns += [HumanMessage(question), AIMessage(f"```sql\n{sql}\n```")]
        if not sql:
            return Outcome(kind="failed", message=f"no SQL in the reply: {reply[:300]}")
        if self.pinned_today is not None:  # the engine's clock says the real date
            sql = pin_sql(sql, self.pinned_today, self.connector.dialect)
        started = time.perf_counter()
        try:
            result = self.connector.run(
                sql, max_rows=self.limits.row_limit, timeout_s=self.limits.query_timeout_s
            )
        except ConnectorError as exc:
            return Outcome(kind="failed", message=f"the SQL failed: {exc.message}")
        answer = Answer(
            question=question,
            sql=sql,
            explanation="",
            tables=[],
            columns=list(result.columns),
            rows=[[plain(v) for v in row] for row in result.rows],
            total_rows=result.total_rows,
            capped=result.truncated,
            elapsed_s=round(time.perf_counter() - started, 3),
            connector=self.connector.name,
            approved_by=user,
            proposal_id=uuid.uuid4().hex,
        )
        return Outcome(kind="answer", answer=answer)

    def decide(self, thread_id: str, proposal_id: str, **kwargs: object) -> Outcome:
        raise RuntimeError("the baseline never proposes: it runs its SQL at once")
