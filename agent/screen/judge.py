"""A draft through the SQL gate, its join conditions held to the warehouse's keys
(agent/screen/joins.py), the connector's cost estimate and the value check (real values for its
literal filters): `screen` runs the checks, `judge` says what their outcome does to the question
(a proposal, feedback for repair, or a clear failure).

Shared by the validate node, the candidates strategy (which screens N drafts and judges the
best), edits and pasted SQL.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace

from langchain_core.runnables import RunnableConfig

from agent.catalog.access import readable_view
from agent.catalog.grounding import check_values
from agent.catalog.snapshot import CatalogSnapshot, table_key
from agent.context import AgentDeps, thread_of
from agent.gate import Verdict, check_sql
from agent.memory.audit import sql_sha256
from agent.outcome import Proposal
from agent.reference_day import pin_sql
from agent.screen.joins import held_to_keys
from agent.screen.periods import period_problems
from agent.screen.ratios import ratio_bases, ratio_problems, unasked_average
from agent.state import Draft, Final, Step, ThreadState, Update, failed
from connectors.base import ActsAs, ConnectorError, CostEstimate, acts_as
from connectors.units import counted


@dataclass(frozen=True)
class Screened:
    """One statement after the gate, the cost estimate and the value check."""

    verdict: Verdict
    estimate: CostEstimate | None
    #: Why it cannot be proposed (none: it passed), with a stable code for each.
    problems: tuple[str, ...]
    codes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.verdict.ok and not self.problems


def screen(
    sql: str, snapshot: CatalogSnapshot, deps: AgentDeps, *, identity: str, person: bool = False
) -> Screened:
    """The gate first, over `snapshot` (the catalog as `identity` may see it), and under an identity
    over what the warehouse says it may read now (`_held_to_access`); then, for what it lets
    through, its joins against the keys (`held_to_keys`: a condition re-pointed, refused or
    flagged), the cost estimate (a dry run where the engine has one: nothing runs) and the
    literal filter values (live only without an identity). `person`: the SQL is a person's
    (pasted, edited, or approved and scheduled), so a join that fans out is flagged, not
    refused: they may mean it."""
    verdict = check_sql(sql, snapshot.gate_schema, row_limit=deps.limits.row_limit)
    if verdict.ok and identity:
        try:
            verdict = _held_to_access(sql, verdict, snapshot, deps, identity)
        except ConnectorError as exc:
            why = f"I could not check what your access may read: {exc.message} {exc.hint}"
            return Screened(verdict, None, (why.strip(),), (ACCESS_UNKNOWN,))
    verdict = held_to_keys(
        verdict, snapshot, row_limit=deps.limits.row_limit, refuse_fan_out=not person
    )
    if not verdict.ok:
        reasons = verdict.reasons
        return Screened(verdict, None, tuple(map(str, reasons)), tuple(r.code for r in reasons))
    verdict = _on_pinned_day(verdict, deps)
    try:
        estimate = deps.connector.estimate(verdict.sql)
    except ConnectorError as exc:  # e.g. a dry run refused by the warehouse
        return Screened(verdict, None, (exc.engine_message[:1000],), ("estimate_failed",))
    if estimate and estimate.refusal:
        return Screened(verdict, estimate, (estimate.refusal,), ("over_cost_limit",))
    misses = tuple(str(m) for m in check_values(verdict.sql, snapshot, deps.live(identity)))
    return Screened(verdict, estimate, misses, ("value_not_found",) * len(misses))


def _on_pinned_day(verdict: Verdict, deps: AgentDeps) -> Verdict:
    """`verdict` with the engine's clock read as the pinned day (QUERYBOT_TODAY), so the SQL
    shown, approved and run answers for the day the model was told; unchanged when unpinned."""
    if deps.pinned_today is None:
        return verdict
    pinned = pin_sql(verdict.sql, deps.pinned_today, deps.connector.dialect)
    if pinned == verdict.sql:
        return verdict
    fix = f"current_date read as the pinned day {deps.pinned_today.isoformat()}"
    return replace(verdict, sql=pinned, fixes=(*verdict.fixes, fix))


def _held_to_access(
    sql: str, verdict: Verdict, view: CatalogSnapshot, deps: AgentDeps, identity: str
) -> Verdict:
    """`verdict` (the gate's pass over `view`) when the warehouse says `identity` may read every
    table it reads now; else the gate's verdict over `view` without the tables it may not (the
    view is kept a while), so such a table is unknown, as in the view. Raises ConnectorError when
    the warehouse cannot say."""
    connector = deps.connector
    if not acts_as(connector) or not isinstance(connector, ActsAs):
        return verdict
    hidden = connector.unreadable(identity, list(verdict.tables))
    if not hidden:
        return verdict
    narrower = readable_view(view, frozenset(table_key(name) for name in hidden))
    return check_sql(sql, narrower.gate_schema, row_limit=deps.limits.row_limit)


#: The code of a draft whose tables could not be checked against the asker's access.
ACCESS_UNKNOWN = "access_unknown"

#: Gate codes that mean the draft needs data the warehouse does not name.
MISSING_NAMES = frozenset({"unknown_table", "unknown_column"})


def _tables_it_has(deps: AgentDeps, identity: str, lead: str = "It has these tables") -> str:
    """The sentence naming the warehouse's tables `identity` may read (the first 20; `lead`
    before them), or "" when there are none or they cannot be read."""
    try:
        names = [t.short_name for t in deps.visible(identity).tables]
    except ConnectorError:
        return ""
    return f" {lead}: {', '.join(names[:20])}." if names else ""


def _missing(listed: str, deps: AgentDeps, identity: str) -> Final:
    """The tries are spent and the last one still named tables or columns the warehouse lacks:
    the question may need data it does not hold, or say it in other words; so ask, naming what
    the warehouse has (under an identity: what it may read)."""
    has = _tables_it_has(deps, identity)
    lacks = (
        "that are not among those your access may read"
        if identity
        else "this warehouse does not have"
    )
    message = (
        f"I could not find the data this question needs: after {deps.limits.max_attempts} "
        f"tries, the query still asks for tables or columns {lacks}:\n"
        f"{listed}\n{has.strip()} "
        "Which of its data do you mean? If it does not record this, the question cannot be "
        "answered from it."
    )
    return {"kind": "clarify", "message": message}


def _reads_no_table(deps: AgentDeps, identity: str) -> Final:
    """The model answered with a query that reads none of the warehouse's tables (`SELECT 'last
    quarter'`, `SELECT NULL AS visitors`): that is no answer from the data, so ask, naming what
    the warehouse has, rather than propose it."""
    has = _tables_it_has(deps, identity)
    message = (
        "I could not tie this question to the warehouse's data: the query I wrote reads none of "
        f"its tables.{has} Which of its data do you mean (the measure, the period, the "
        "tables)? If it does not record this, the question cannot be answered from it."
    )
    return {"kind": "clarify", "message": message}


#: The gate's reason for a name its schema (the view) lacks, and the name as written in it.
_UNKNOWN_TABLE = re.compile(r"Unknown table '(.*)'; it is not among", re.DOTALL)


def outside_access(state: ThreadState, screened: Screened, deps: AgentDeps) -> str | None:
    """Under an identity, why a refused draft ends the question (no repair, nothing proposed),
    or None when it is judged as any refused draft.

    It ends when the asker's access could not be checked, or when the draft names a table
    outside the identity's view: the model was shown no such table. The gate knows only the
    view, so this is decided, and said, from the view and the names as written alone: a table
    the identity may not read and one the warehouse does not have are answered alike, with the
    same words (neither is confirmed to exist, nor corrected to a near name)."""
    if not state.get("identity"):
        return None
    if ACCESS_UNKNOWN in screened.codes:
        return screened.problems[screened.codes.index(ACCESS_UNKNOWN)]
    written = [
        found.group(1)
        for reason in screened.verdict.reasons
        if reason.code == "unknown_table"
        if (found := _UNKNOWN_TABLE.match(reason.message))
    ]
    if not written:
        return None
    names = list(dict.fromkeys(written))
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    which = "is" if len(names) == 1 else "are"
    has = _tables_it_has(deps, state.get("identity", ""), "Your access may read these tables")
    return (
        f"Answering this needs {shown}, which {which} not among the tables your access may "
        f"read, so nothing was proposed and nothing ran.{has} Ask about data you can read, or "
        "ask whoever manages database access."
    )


def kind_label(draft: Draft, deps: AgentDeps) -> str:
    """Which kind of answer the draft makes where the warehouse has metric definitions: its
    metric query's label, else "ad hoc SQL"; "" where there are none to tell it from."""
    if metric := draft.get("metric"):
        return str(metric["label"])
    return "ad hoc SQL" if deps.metrics is not None and deps.metrics.layer is not None else ""


def _held_to_its_meaning(
    state: ThreadState, draft: Draft, screened: Screened, deps: AgentDeps
) -> tuple[Screened, Draft]:
    """A model draft wrong whatever the data goes back to repair: it keeps one day of the
    period the question names (`period_problems`), a ratio divides by itself or filters its
    whole down to its part (`ratio_problems`), or divides by a count of distinct entities where
    the question asks for no average (`unasked_average`). With no attempt left it is proposed
    with that as a warning, for the person approving to see."""
    if not screened.ok or not draft.get("by_model"):
        return screened, draft
    sql, dialect = screened.verdict.sql, deps.connector.dialect
    found = [
        *((p, "one_day_for_a_period") for p in period_problems(state["question"], sql, dialect)),
        *((p, "ratio_always_whole") for p in ratio_problems(sql, dialect)),
        *((p, "unasked_average") for p in unasked_average(state["question"], sql, dialect)),
    ]
    if not found:
        return screened, draft
    problems, codes = (tuple(x) for x in zip(*found, strict=True))
    if state.get("attempts", 0) < deps.limits.max_attempts:
        return Screened(screened.verdict, screened.estimate, problems, codes), draft
    return screened, {**draft, "notes": [*draft.get("notes", []), *problems]}


def judge(
    state: ThreadState,
    draft: Draft,
    screened: Screened,
    config: RunnableConfig,
    deps: AgentDeps,
) -> Update:
    """The update for `draft` once `screened`: a proposal (its warnings include the draft's own
    notes), or feedback for repair (failed when the question's attempts are spent)."""
    screened, draft = _held_to_its_meaning(state, draft, screened, deps)
    verdict, estimate = screened.verdict, screened.estimate
    if screened.ok and not verdict.tables and draft.get("by_model"):
        text = "The model's query reads no table, so it was not proposed."
        final = _reads_no_table(deps, state.get("identity", ""))
        return {"final": final, "trace": [{"kind": "clarify", "text": text}]}
    ended = None if screened.ok else outside_access(state, screened, deps)
    if ended is not None:
        return failed(ended)
    if screened.ok:
        proposal = Proposal(
            proposal_id=uuid.uuid4().hex,
            question=state["question"],
            sql=verdict.sql,
            explanation=draft["explanation"],
            tables=list(verdict.tables),
            columns=list(verdict.columns),
            sql_sha256=sql_sha256(verdict.sql),
            warnings=[
                *draft.get("notes", []),
                *verdict.warnings,
                *(estimate.warnings if estimate else ()),
            ],
            estimated_bytes=estimate.bytes_processed if estimate else None,
            estimated_cost_usd=estimate.cost_usd if estimate else None,
            label=kind_label(draft, deps),
            definitions=list(draft.get("metric", {}).get("definitions", [])),
            run_as=state.get("identity", ""),
            bases=ratio_bases(verdict.sql, deps.connector.dialect),
        )
        deps.audit.record(
            thread_of(config),
            "proposed",
            proposal_id=proposal.proposal_id,
            actor=state.get("user", ""),
            sql=verdict.sql,
            detail={
                "question": state["question"][:2000],
                "tables": proposal.tables,
                **({"run_as": proposal.run_as} if proposal.run_as else {}),
            },
        )
        steps: list[Step] = []
        fixes = [*verdict.fixes]
        if verdict.row_cap_applied:
            fixes.append(f"row cap added (LIMIT {deps.limits.row_limit})")
        if fixes:
            text = f"The gate changed it: {'; '.join(fixes)}."
            steps.append({"kind": "gate_fix", "text": text, "changes": list(verdict.fixes)})
        proposed = f"Proposed for approval (reads {', '.join(proposal.tables)})."
        steps.append({"kind": "proposed", "text": proposed, "proposal_id": proposal.proposal_id})
        # the self-check strategy judges the model's SQL, not a person's
        check = deps.strategies.self_check and bool(draft.get("by_model"))
        return {
            "proposal": proposal.to_state(),
            "feedback": [],
            "trace": steps,
            "needs_check": check,
        }
    problems = list(screened.problems)
    deps.audit.record(
        thread_of(config),
        "gate_rejected",
        actor=state.get("user", ""),
        sql=draft["sql"],
        detail={"reasons": problems, "codes": list(screened.codes)},
    )
    # the model's mistakes only: a person's pasted or edited SQL, or the loosened query, says
    # nothing about what the model should avoid
    if deps.remembers_failures(state.get("identity", "")) and draft.get("by_model"):
        deps.failures.record(
            deps.connector.name, thread_of(config), "rejected", problems, draft["sql"]
        )
    refused: Step = {
        "kind": "checks_failed",
        "text": f"The checks refused it: {'; '.join(problems)}",
    }
    if state.get("attempts", 0) >= deps.limits.max_attempts:
        listed = "\n".join(f"• {p}" for p in problems)
        if screened.codes and set(screened.codes) <= MISSING_NAMES:
            return {
                "feedback": problems,
                "final": _missing(listed, deps, state.get("identity", "")),
                "trace": [refused],
            }
        message = (
            f"I could not write a query that passes the safety and schema checks after "
            f"{counted(deps.limits.max_attempts, 'try', 'tries')}. The last problems:\n{listed}\n"
            "Try rephrasing: name the measure and the period, or the tables you mean."
        )
        return {"feedback": problems, **failed(message, step=refused)}
    missing = bool(set(screened.codes) & MISSING_NAMES)
    return {"feedback": problems, "missing_names": missing, "trace": [refused]}
