"""Put the draft through the SQL gate, then check its literal filters against the values that
occur (agent.grounding); a pass becomes a proposal, a failure feedback for repair."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.runnables import RunnableConfig

from agent.audit import sql_sha256
from agent.context import AgentDeps, thread_of
from agent.gate import check_sql
from agent.grounding import check_values
from agent.state import ThreadState
from connectors.base import ConnectorError


def validate(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> dict[str, Any]:
    draft = state["draft"]
    assert draft is not None
    try:
        snapshot = deps.catalog.snapshot()
    except ConnectorError as exc:
        message = f"I could not read the warehouse's tables: {exc.message} {exc.hint}"
        return {"final": {"kind": "failed", "message": message}}
    verdict = check_sql(draft["sql"], snapshot.gate_schema, row_limit=deps.limits.row_limit)
    problems = [str(reason) for reason in verdict.reasons]
    codes = [r.code for r in verdict.reasons]
    estimate = None
    if verdict.ok:
        try:
            estimate = deps.connector.estimate(verdict.sql)
        except ConnectorError as exc:  # e.g. a dry run refused by the warehouse
            problems, codes = [exc.engine_message[:1000]], ["estimate_failed"]
        else:
            if estimate and estimate.refusal:
                problems, codes = [estimate.refusal], ["over_cost_limit"]
    if verdict.ok and not problems:
        live = deps.connector if deps.limits.profile_values else None
        problems = [str(m) for m in check_values(verdict.sql, snapshot, live)]
        codes = ["value_not_found"] * len(problems)
    if verdict.ok and not problems:
        proposal = {
            "proposal_id": uuid.uuid4().hex,
            "question": state["question"],
            "sql": verdict.sql,
            "explanation": draft["explanation"],
            "tables": list(verdict.tables),
            "sql_sha256": sql_sha256(verdict.sql),
            "warnings": [
                *state.get("notes", []),
                *verdict.warnings,
                *(estimate.warnings if estimate else ()),
            ],
            "estimated_bytes": estimate.bytes_processed if estimate else None,
            "estimated_cost_usd": estimate.cost_usd if estimate else None,
        }
        deps.audit.record(
            thread_of(config),
            "proposed",
            proposal_id=proposal["proposal_id"],
            actor=state.get("user", ""),
            sql=verdict.sql,
            detail={"question": state["question"][:2000], "tables": proposal["tables"]},
        )
        steps = []
        fixes = [*verdict.fixes]
        if verdict.row_cap_applied:
            fixes.append(f"row cap added (LIMIT {deps.limits.row_limit})")
        if fixes:
            steps.append({"kind": "gate_fix", "text": f"The gate changed it: {'; '.join(fixes)}."})
        proposed = f"Proposed for approval (reads {', '.join(proposal['tables'])})."
        steps.append({"kind": "proposed", "text": proposed, "proposal_id": proposal["proposal_id"]})
        # the self-check strategy judges the model's SQL, not a person's
        check = deps.strategies.self_check and bool(draft.get("by_model"))
        return {"proposal": proposal, "feedback": [], "trace": steps, "needs_check": check}
    deps.audit.record(
        thread_of(config),
        "gate_rejected",
        actor=state.get("user", ""),
        sql=draft["sql"],
        detail={"reasons": problems, "codes": codes},
    )
    if deps.strategies.remember_failures:
        deps.failures.record(
            deps.connector.name, thread_of(config), "rejected", problems, draft["sql"]
        )
    refused = {"kind": "checks_failed", "text": "The checks refused it: " + "; ".join(problems)}
    if state.get("attempts", 0) >= deps.limits.max_attempts:
        listed = "\n".join(f"• {p}" for p in problems)
        message = (
            f"I could not write a query that passes the safety and schema checks after "
            f"{deps.limits.max_attempts} tries. The last problems:\n{listed}\n"
            "Try rephrasing: name the measure and the period, or the tables you mean."
        )
        return {
            "feedback": problems,
            "final": {"kind": "failed", "message": message},
            "trace": [refused],
        }
    return {"feedback": problems, "trace": [refused]}
