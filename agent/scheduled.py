"""One scheduled run of SQL a person approved before: checked as carefully as the first run.

A schedule holds the exact approved SQL and its hash; each run sends that SQL through the gate
again over the catalog as it is now (as the identity it runs as sees it), the cost estimate and
its cap again, and runs it only when the gate accepts it unchanged: SQL the gate now refuses, or
would rewrite, is not what was approved, so the schedule must stop until a person approves a new
proposal. The audit log records every run under the approval's proposal id, with its approver.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.context import AgentDeps
from agent.memory.audit import sql_sha256
from agent.nodes.execute import plain
from agent.outcome import Answer
from agent.screen.judge import screen
from connectors.base import ConnectorError, RunContext

#: Why a run stopped its schedule (it needs a person), as codes the bot words for Slack.
GATE_REFUSED, SQL_CHANGED, OVER_COST, HASH_MISMATCH = (
    "gate_refused",
    "sql_changed",
    "over_cost",
    "hash_mismatch",
)


@dataclass(frozen=True)
class ScheduledSql:
    """What a schedule runs: the approved SQL, its hash, who approved it, as which identity."""

    question: str
    sql: str
    sql_sha256: str
    proposal_id: str
    approved_by: str
    owner: str
    #: The warehouse identity the run acts as ("" for the connector's login).
    identity: str = ""


@dataclass(frozen=True)
class RunResult:
    """A run's end: its `answer`, or why it did not run. `stop` names a reason that pauses the
    schedule (a code above); an `error` without `stop` is the warehouse failing this once,
    worth trying again later."""

    answer: Answer | None = None
    stop: str = ""
    error: str = ""


def run_scheduled(deps: AgentDeps, thread_id: str, job: ScheduledSql, *, job_key: str) -> RunResult:
    """Run `job` once if the gate, the access check and the cost cap still let it through."""
    if sql_sha256(job.sql) != job.sql_sha256:
        return RunResult(stop=HASH_MISMATCH, error="The saved SQL does not match its hash.")
    try:
        snapshot = deps.visible(job.identity)
    except ConnectorError as exc:
        return RunResult(error=f"{exc.message} {exc.hint}".strip())
    screened = screen(job.sql, snapshot, deps, identity=job.identity, person=True)
    # a filter value gone from the data is an answer (no rows), not a reason to stop
    codes = set(screened.codes) - {"value_not_found"}
    problems = "; ".join(screened.problems)
    if not screened.verdict.ok:
        return RunResult(stop=GATE_REFUSED, error=problems)
    if "over_cost_limit" in codes:
        return RunResult(stop=OVER_COST, error=problems)
    if codes:  # the estimate or the access check failed this once
        return RunResult(error=problems)
    if screened.verdict.sql != job.sql:
        return RunResult(stop=SQL_CHANGED, error="The gate would now change this SQL.")
    return _run(deps, thread_id, job, job_key, screened.verdict.tables)


def _run(
    deps: AgentDeps, thread_id: str, job: ScheduledSql, job_key: str, tables: tuple[str, ...]
) -> RunResult:
    ran_as = {"ran_as": job.identity} if job.identity else {}

    def record(event: str, **detail: object) -> None:
        """The run in the audit log, under the approval's proposal and its approver."""
        deps.audit.record(
            thread_id,
            event,
            proposal_id=job.proposal_id,
            actor=job.approved_by,
            sql=job.sql,
            detail={**ran_as, **detail},
        )

    labels = {"requester": job.owner, "approver": job.approved_by, "scheduled": "true"}
    try:
        result = deps.connector.run(
            job.sql,
            max_rows=deps.limits.answer_rows,
            timeout_s=deps.limits.query_timeout_s,
            context=RunContext(job_key=job_key, labels=labels, identity=job.identity),
        )
    except ConnectorError as exc:
        record("scheduled_run_failed", error=exc.message)
        return RunResult(error=f"{exc.message} {exc.hint}".strip())
    record("scheduled_run", rows=result.total_rows, elapsed_s=result.elapsed_s)
    answer = Answer(
        question=job.question,
        sql=job.sql,
        explanation="",
        tables=list(tables),
        columns=list(result.columns),
        rows=[[plain(v) for v in row] for row in result.rows],
        total_rows=result.total_rows,
        capped=result.total_rows >= deps.limits.row_limit,
        elapsed_s=round(result.elapsed_s, 3),
        connector=deps.connector.name,
        approved_by=job.approved_by,
        bytes_processed=result.bytes_processed,
        job_url=result.job_url,
        proposal_id=job.proposal_id,
    )
    return RunResult(answer=answer)
