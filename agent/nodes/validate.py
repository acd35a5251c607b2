"""Put the draft through the SQL gate; a pass becomes a proposal, a failure feedback for repair."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.runnables import RunnableConfig

from agent.audit import sql_sha256
from agent.context import AgentDeps, thread_of
from agent.gate import check_sql
from agent.state import ThreadState
from connectors.base import ConnectorError


def validate(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> dict[str, Any]:
    draft = state["draft"]
    assert draft is not None
    try:
        schema = deps.catalog.gate_schema
    except ConnectorError as exc:
        message = f"I could not read the warehouse's tables: {exc.message} {exc.hint}"
        return {"final": {"kind": "failed", "message": message}}
    verdict = check_sql(draft["sql"], schema, row_limit=deps.limits.row_limit)
    if verdict.ok:
        proposal = {
            "proposal_id": uuid.uuid4().hex,
            "question": state["question"],
            "sql": verdict.sql,
            "explanation": draft["explanation"],
            "tables": list(verdict.tables),
            "sql_sha256": sql_sha256(verdict.sql),
            "warnings": list(verdict.warnings),
        }
        deps.audit.record(
            thread_of(config),
            "proposed",
            proposal_id=proposal["proposal_id"],
            actor=state.get("user", ""),
            sql=verdict.sql,
            detail={"question": state["question"][:2000], "tables": proposal["tables"]},
        )
        return {"proposal": proposal, "feedback": []}
    problems = [str(reason) for reason in verdict.reasons]
    deps.audit.record(
        thread_of(config),
        "gate_rejected",
        actor=state.get("user", ""),
        sql=draft["sql"],
        detail={"reasons": problems, "codes": [r.code for r in verdict.reasons]},
    )
    if state.get("attempts", 0) >= deps.limits.max_attempts:
        listed = "\n".join(f"• {p}" for p in problems)
        message = (
            f"I could not write a query that passes the safety and schema checks after "
            f"{deps.limits.max_attempts} tries. The last problems:\n{listed}\n"
            "Try rephrasing: name the measure and the period, or the tables you mean."
        )
        return {"feedback": problems, "final": {"kind": "failed", "message": message}}
    return {"feedback": problems}
