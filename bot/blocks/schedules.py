"""Block Kit for scheduled questions: a run's post (the result, the change since the last run,
the SQL's hash and who approved it), the note that a schedule paused, and a person's list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
)

from agent.outcome import Answer
from bot.blocks.base import (
    MAX_BLOCKS,
    Message,
    context,
    escaped,
    finish,
    fit,
    mention,
    section,
)
from bot.blocks.results import result
from bot.schedules.alerts import describe as describe_alert
from bot.schedules.records import ACTIVE, Schedule
from bot.schedules.when import describe

#: A schedule's buttons in a list: the action id names what, the value the schedule.
SCHEDULE_ACTIONS = ("schedule_pause", "schedule_resume", "schedule_run_now", "schedule_delete")
PAUSE, RESUME, RUN_NOW, DELETE = SCHEDULE_ACTIONS
#: A listed schedule's "Edit time" button, which opens the time modal.
EDIT_TIME = "schedule_edit_time"


def when_and_what(schedule: Schedule) -> str:
    """The schedule in a line: its question, when it runs, and its alert."""
    line = f"*{escaped(schedule.question, 300)}*, {describe(schedule.cron, schedule.time_zone)}"
    if schedule.alert:
        line += f", posting only {describe_alert(schedule.alert)}"
    return line


def provenance(schedule: Schedule) -> str:
    """Which SQL runs, who approved it, who owns the schedule."""
    sql = f"`{schedule.sql_sha256[:12]}`"
    return (
        f"SQL {sql} approved by {mention(schedule.approved_by)} · "
        f"schedule of {mention(schedule.owner)}"
        + (f" · runs as `{escaped(schedule.run_as, 100)}`" if schedule.run_as else "")
    )


def scheduled_post(
    schedule: Schedule,
    answer: Answer,
    *,
    headline: str,
    change: str,
    note: str,
    display_rows: int,
    use_table: bool = True,
) -> Message:
    """A run's post: what fired it (`headline`, for an alert) or the schedule line, the
    change since the last run, a `note` (a catch-up), the result, and where the SQL came from."""
    lines = [f":calendar: {when_and_what(schedule)}"]
    if headline:
        lines.insert(0, f":rotating_light: {escaped(headline, 500)}")
    if change:
        lines.append(escaped(change, 300))
    if note:
        lines.append(f"_{escaped(note, 500)}_")
    body = result(replace(answer, proposal_id=""), display_rows=display_rows, use_table=use_table)
    head = finish(f"Scheduled: {schedule.question}", [section("\n".join(lines))])
    foot = finish("", [context(provenance(schedule))])
    blocks = [*head.blocks, *body.blocks[: MAX_BLOCKS - 2], *foot.blocks]
    return Message(text=head.text, blocks=blocks)


def paused(schedule: Schedule, reason: str, *, admins: Sequence[str] = ()) -> Message:
    """A schedule paused: what, why (`reason`: mrkdwn, naming people; text from the warehouse
    or the gate in it is escaped by the caller), and who can act (its owner, or the admins)."""
    who = mention(schedule.owner)
    if admins:
        who += " or " + ", ".join(mention(a) for a in admins)
    text = (
        f":pause_button: The schedule {when_and_what(schedule)} is paused: "
        f"{fit(reason, 1500)}\n{who} can resume it (`@querybot schedules`) once that is "
        "mended, or ask the question again for a new proposal."
    )
    return finish(f"A schedule paused: {schedule.question}", [section(text)])


def posts_in(schedule: Schedule, here: str = "") -> str:
    """Where a schedule's runs post, in words (read in the thread `here`, a thread ts)."""
    if schedule.post_channel[:1] == "D":
        return "in the owner's direct messages"
    if schedule.post_thread_ts and schedule.post_thread_ts == here:
        return "in this thread"
    if schedule.post_thread_ts:
        return f"in the answer's thread in <#{schedule.post_channel}>"
    return f"in <#{schedule.post_channel}>"


def schedule_made(schedule: Schedule, by: str, here: str) -> Message:
    """The answer's thread (`here`, its ts) told of a new schedule: who made it, what, when,
    where, and how to change it."""
    text = (
        f":calendar: {mention(by)} scheduled {when_and_what(schedule)}; each run posts "
        f"{posts_in(schedule, here)}.\nTo pause, resume, run it now or delete it: "
        "`@querybot schedules` (its owner, or a querybot admin)."
    )
    return finish(f"Scheduled: {schedule.question}", [section(text)])


def schedule_list(schedules: Sequence[Schedule]) -> Message:
    """A person's schedules, each with its state and buttons."""
    if not schedules:
        return finish("No schedules", [section(NO_SCHEDULES)])
    return finish(f"{len(schedules)} schedules", schedule_blocks(schedules))


NO_SCHEDULES = "You have no schedules. Under an answer, press *Schedule…* to make one."


def schedule_blocks(schedules: Sequence[Schedule], limit: int = 15) -> list[Block]:
    """Each of the first `limit` schedules: what and when, where it posts, its state, its
    buttons and where its SQL came from (three blocks a schedule)."""
    blocks: list[Block] = []
    for schedule in schedules[:limit]:
        state = "active" if schedule.status == ACTIVE else f"paused: {schedule.paused_reason}"
        blocks.append(
            section(f"{when_and_what(schedule)}\nposts {posts_in(schedule)} · {fit(state, 500)}")
        )
        toggle = RESUME if schedule.status != ACTIVE else PAUSE
        blocks.append(
            ActionsBlock(
                elements=[
                    ButtonElement(
                        text=toggle.removeprefix("schedule_").capitalize(),
                        action_id=toggle,
                        value=schedule.schedule_id,
                    ),
                    ButtonElement(text="Run now", action_id=RUN_NOW, value=schedule.schedule_id),
                    ButtonElement(
                        text="Edit time", action_id=EDIT_TIME, value=schedule.schedule_id
                    ),
                    ButtonElement(
                        text="Delete",
                        action_id=DELETE,
                        value=schedule.schedule_id,
                        style="danger",
                    ),
                ]
            )
        )
        blocks.append(context(provenance(schedule)))
    return blocks
