"""The bot's conversational messages: placeholder, help, proposal (and its decided forms),
clarifying questions and failures."""

from __future__ import annotations

import json
from dataclasses import dataclass

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    PlainTextObject,
)

from agent.outcome import Proposal
from agent.strategies.planning import plan_lines
from bot.blocks.base import (
    CONTEXT_TEXT,
    PROPOSED_SQL_FILE,
    SECTION_TEXT,
    SQL_SECTIONS,
    Message,
    code_sections,
    context,
    cut,
    escaped,
    finish,
    mention,
    names,
    section,
)
from connectors.units import byte_size

APPROVE_ACTION = "approve_proposal"
REJECT_ACTION = "reject_proposal"
EDIT_ACTION = "edit_proposal"
CANCEL_ACTION = "cancel_query"

EXAMPLE = "which region had the most revenue last month?"


def working(status: str = "Working on it…") -> Message:
    """The placeholder posted at once (then showing `status` while the model writes SQL); the
    proposal (or an answer) replaces it."""
    return finish(status, [section(f":hourglass_flowing_sand: {escaped(status, SECTION_TEXT)}")])


def writing(elapsed_s: int) -> Message:
    return working(f"Writing SQL… {elapsed_s} s")


def running(verdict: str, elapsed_s: int) -> str:
    """An approved proposal's verdict while its query runs."""
    return f"{verdict} · :hourglass_flowing_sand: Running… {elapsed_s} s"


def help_message() -> Message:
    """The reply to a mention with no question."""
    text = (
        f"Ask me a question about the data, for example: `@querybot {EXAMPLE}`\n"
        "I reply here with the SQL I would run. Nothing runs until someone presses *Approve*. "
        "Reply in the thread to follow up; no need to mention me again."
    )
    return finish("Ask me a question about the data.", [section(text)])


@dataclass(frozen=True)
class Audience:
    """Who will see the result of a card's query: everyone in `channel`'s thread, or
    (`private`) only the asker and the approver."""

    channel: str = ""
    private: bool = False

    def said(self, requested_by: str) -> str:
        """The card's words for it (mrkdwn)."""
        if self.private:
            return f"the result will be sent only to {mention(requested_by)} and the approver"
        if not self.channel or self.channel.startswith("D"):
            return "the result is posted in this conversation"
        return f"the result will be visible to everyone in <#{self.channel}>"

    def plainly(self) -> str:
        """The same as plain text, for a confirmation dialog (which shows no mentions)."""
        if self.private:
            return "Only the person who asked and the approver (you) will see the result."
        if not self.channel or self.channel.startswith("D"):
            return "The result is posted in this conversation."
        return "Everyone in this channel will see the result."


def _proposal_body(prop: Proposal, requested_by: str, note: str, audience: Audience) -> list[Block]:
    blocks: list[Block] = []
    if note:
        blocks.append(context(note))
    explanation = prop.explanation.strip() or "Proposed query"
    blocks.append(section(f"*{escaped(explanation, SECTION_TEXT - 2)}*"))
    if prop.bases:  # what each ratio divides by, said by code: the base tells a share from a margin
        blocks.append(context(*(escaped(b, CONTEXT_TEXT) for b in prop.bases[:5])))
    if prop.plan and (lines := plan_lines(prop.plan)):
        read = "\n".join(f"• {line}" for line in lines)
        blocks.append(section("*How I read your question*\n" + escaped(read, SECTION_TEXT - 40)))
    sql_blocks, sql_cut = code_sections(prop.sql, SQL_SECTIONS)
    blocks += sql_blocks
    if sql_cut:
        blocks.append(
            context(
                f":warning: The SQL is {len(prop.sql):,} characters long; only the start is "
                f"shown here. The whole statement is in the file `{PROPOSED_SQL_FILE}` in this "
                "thread. Approve only if you trust it, or ask for a simpler query."
            )
        )
    if prop.label:
        # governed (MetricFlow compiled it from the team's metric definitions) or ad hoc SQL
        shown = [f"*{escaped(prop.label, CONTEXT_TEXT - 4)}*"]
        shown += [escaped(d, CONTEXT_TEXT) for d in prop.definitions[:5]]
        blocks.append(context(*shown))
    facts = [f"Reads {names(prop.tables)}"]
    if prop.estimated_bytes is not None:
        facts.append(f"will scan about {byte_size(prop.estimated_bytes)}")
    if prop.estimated_cost_usd is not None:
        facts.append(f"estimated cost ${prop.estimated_cost_usd:,.2f}")
    facts.append(f"asked by {mention(requested_by)}")
    if prop.run_as:
        # whose access the warehouse applies, and who will see what it returns
        facts.append(
            f"runs as {mention(requested_by)}'s access (`{escaped(prop.run_as, 100)}`); "
            + audience.said(requested_by)
        )
    elif audience.private:
        facts.append(audience.said(requested_by))
    blocks.append(context(" · ".join(facts)))
    warnings = [f":warning: {escaped(w, CONTEXT_TEXT - 10)}" for w in prop.warnings[:10]]
    if warnings:
        blocks.append(context(*warnings))
    return blocks


def card_value(prop: Proposal) -> str:
    """A decision button's value: the proposal id and the hash of the SQL the card shows, so a
    click names exactly the SQL the person saw (the SQL itself stays in the bot's store)."""
    return json.dumps({"p": prop.proposal_id, "h": prop.sql_sha256}, separators=(",", ":"))


def card_of(value: str) -> tuple[str, str]:
    """(proposal id, SQL hash) from a decision button's value; ("", "") when it is not one."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return "", ""
    if not isinstance(parsed, dict):
        return "", ""
    pid, sha = parsed.get("p"), parsed.get("h")
    return (pid, sha) if isinstance(pid, str) and isinstance(sha, str) else ("", "")


#: Slack's limit on a confirmation dialog's text.
CONFIRM_TEXT = 300
#: What the Cancel button's dialog says before the running query is stopped.
STOP_TEXT = (
    "The warehouse stops the query now: it returns nothing and is not run again. "
    "To get an answer later, ask the question again."
)


def approve_confirm(prop: Proposal, audience: Audience) -> ConfirmObject:
    """The dialog Approve opens: the query runs as shown on the card, what it reads, whose
    access it runs with, and who will see the result."""
    who = audience.plainly()
    access = f" It runs with the asker's access ({prop.run_as})." if prop.run_as else ""
    fixed = len("The SQL on this card runs as shown and reads . ") + len(who) + len(access)
    tables = cut(", ".join(prop.tables) or "no tables", max(20, CONFIRM_TEXT - fixed))
    text = f"The SQL on this card runs as shown and reads {tables}.{access} {who}"
    return ConfirmObject(
        title="Run this query?",
        text=PlainTextObject(text=cut(text, CONFIRM_TEXT)),
        confirm="Run query",
        deny="Not yet",
    )


def cancel_confirm() -> ConfirmObject:
    """The dialog Cancel opens before the running query is stopped."""
    return ConfirmObject(
        title="Stop this query?",
        text=PlainTextObject(text=STOP_TEXT),
        confirm="Stop query",
        deny="Keep running",
        style="danger",
    )


def proposal(
    prop: Proposal, *, requested_by: str, note: str = "", audience: Audience = Audience()
) -> Message:
    """The SQL awaiting approval, with Approve / Reject / Edit SQL buttons (`card_value`).
    Approve asks for confirmation first (`approve_confirm`); Reject is not styled as
    dangerous: it runs nothing and destroys nothing. `note` is mrkdwn the caller escaped;
    `audience`: who will see the result."""
    value = card_value(prop)
    approve = ButtonElement(
        text="Approve",
        action_id=APPROVE_ACTION,
        value=value,
        style="primary",
        confirm=approve_confirm(prop, audience),
    )
    buttons = ActionsBlock(
        elements=[
            approve,
            ButtonElement(text="Reject", action_id=REJECT_ACTION, value=value),
            ButtonElement(text="Edit SQL", action_id=EDIT_ACTION, value=value),
        ]
    )
    blocks = [*_proposal_body(prop, requested_by, note, audience), buttons]
    return finish(f"Proposed query: {prop.explanation}", blocks)


def decided(
    prop: Proposal, *, requested_by: str, verdict: str, audience: Audience = Audience()
) -> Message:
    """The proposal's message after a decision: the buttons replaced by `verdict` (mrkdwn)."""
    blocks = [*_proposal_body(prop, requested_by, "", audience), context(verdict)]
    return finish(f"Proposed query: {prop.explanation}", blocks)


def running_card(
    prop: Proposal, *, requested_by: str, verdict: str, audience: Audience = Audience()
) -> Message:
    """The approved proposal's message while its query runs: `verdict` (mrkdwn, "Running…")
    and a Cancel button carrying only the proposal id, which asks before it stops the query."""
    button = ButtonElement(
        text="Cancel", action_id=CANCEL_ACTION, value=prop.proposal_id, confirm=cancel_confirm()
    )
    cancel = ActionsBlock(elements=[button])
    blocks = [*_proposal_body(prop, requested_by, "", audience), context(verdict), cancel]
    return finish(f"Proposed query: {prop.explanation}", blocks)


def approved_by(user: str) -> str:
    return f":white_check_mark: Approved by {mention(user)}"


def rejected_by(user: str) -> str:
    return f":x: Rejected by {mention(user)}; nothing was run."


def edited_by(user: str) -> str:
    return f":pencil2: Edited by {mention(user)}; the edited version is below. Nothing was run."


def cancelled_by(user: str | None) -> str:
    """`user` is None when the bot does not know who cancelled (it always should)."""
    return (
        f":octagonal_sign: Cancelled by {mention(user)}" if user else ":octagonal_sign: Cancelled"
    )


def cancelled(user: str | None) -> Message:
    """The thread's note when someone stopped the approved query while it ran."""
    by = f" by {mention(user)}" if user else ""
    text = f"Cancelled{by}: the query was stopped and returned nothing."
    return finish(text, [section(f":octagonal_sign: {text}")], mrkdwn=True)


SUPERSEDED = ":arrow_heading_down: Replaced by a newer question in this thread; nothing was run."


def clarify(message: str) -> Message:
    """The agent asks something back (or says the data cannot answer)."""
    blocks = [
        section(f":question: {escaped(message, SECTION_TEXT - 12)}"),
        context("Reply in this thread to continue; no need to mention me."),
    ]
    return finish(message, blocks)


def refused(mrkdwn: str) -> Message:
    """The bot will not answer here; `mrkdwn` (already escaped) says why and where to ask."""
    return finish("I cannot answer here.", [section(f":no_entry: {mrkdwn}")])


def sent_privately(users: list[str]) -> Message:
    """The thread's note where a result went instead of the thread (a private channel's)."""
    who = " and ".join(mention(u) for u in users)
    text = (
        f"The answer was sent privately to {who}: this channel's answers go only to the person "
        "who asked and the approver."
    )
    return finish(text, [section(f":lock: {text}")], mrkdwn=True)


def notice(message: str) -> Message:
    """Something the thread should know that is neither a question nor a failure."""
    return finish(message, [section(f":information_source: {escaped(message, SECTION_TEXT - 24)}")])


def failure(message: str) -> Message:
    """Something stopped the question; `message` says what and what to do."""
    blocks = [section(f":warning: {escaped(message, SECTION_TEXT - 12)}")]
    return finish(message, blocks)
