"""Posting an answer in its thread: the result (Slack's table block, or the same rows as
monospaced text where a workspace refuses it; the SQL itself only when the card just approved
above does not show it), the whole result as `result.csv` when not every row is shown, the SQL
as `query.sql` when the message shows only its start, and its chart (Slack's native chart
block, or a PNG where the data does not fit the block or the workspace refused it lately). A
failed file or chart costs that file or chart, never the answer.

In a channel whose answers are private (its `answers`), `post_privately` sends the result and
its native chart only to the asker and the approver (chat.postEphemeral, scope chat:write), and
the thread is told where it went. Its files (the CSV, the chart as PNG where the block cannot
show it, the SQL cut short) cannot ride an ephemeral message and would be seen by everyone if
shared in the channel, so they go to each recipient's direct messages with the bot
(`send_direct`)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.outcome import Answer, Proposal
from bot import blocks
from bot.blocks.attachments import (
    REFUSED_FOR_S,
    Attachment,
    Refusals,
    csv_file,
    render_chart,
    sql_file,
)
from bot.conversations.direct_files import send_direct
from bot.slack_thread import SlackThread, post, tell

log = logging.getLogger(__name__)

#: Said in the thread when a private answer reached nobody.
NOT_SENT = (
    "The query ran, but Slack would not show its answer privately to the person who asked or "
    "the approver (are they still in this channel?), and this channel's answers are never "
    "posted in the thread. Ask again here once they are."
)


class Answers:
    """Posts answers; remembers which workspaces refused the native chart block lately."""

    def __init__(
        self,
        client: WebClient,
        *,
        display_rows: int,
        feedback: bool = True,
        schedule: bool = False,
    ) -> None:
        self.client = client
        self.display_rows = display_rows
        #: Whether answers carry Slack's thumbs up/down (QUERYBOT_SLACK_FEEDBACK).
        self.feedback = feedback
        #: Whether answers carry the "Schedule…" button (QUERYBOT_SCHEDULES).
        self.schedule = schedule
        self._refused = Refusals()

    def post(self, thread: SlackThread, answer: Answer, *, approved_sql: str | None = None) -> None:
        """The result, then the whole result as a CSV when not every row is shown, then the
        chart when the answer has one.

        `approved_sql` is the SQL of the card just approved in this thread: when it is the SQL
        that ran, the result refers to the card instead of repeating it.
        """

        def result(use_table: bool) -> blocks.Message:
            return blocks.result(
                answer,
                display_rows=self.display_rows,
                use_table=use_table,
                approved_above=approved_sql == answer.sql,
                feedback=self.feedback,
                schedule=self.schedule,
            )

        try:
            post(self.client, thread, result(use_table=True))
        except SlackApiError as exc:
            if exc.response.get("error") != "invalid_blocks":
                raise
            # Workspaces or clients without the table block: the same rows as monospaced text.
            log.warning("Slack refused the table block (%s); sending text", exc.response)
            post(self.client, thread, result(use_table=False))
        for attachment in self._files(answer):
            self._upload(thread, attachment)
        self._chart(thread, answer)

    def post_privately(
        self, thread: SlackThread, answer: Answer, to: list[str], *, approved_sql: str | None
    ) -> None:
        """The result, and its native chart, to each of `to` only (see the module docstring);
        then the thread's note naming them."""
        approved_above = approved_sql == answer.sql

        def result(use_table: bool) -> blocks.Message:
            return blocks.result(
                answer,
                display_rows=self.display_rows,
                use_table=use_table,
                approved_above=approved_above,
                private=True,
                feedback=self.feedback,
                schedule=self.schedule,
            )

        native = None if self._refused.refused(thread.team) else blocks.chart(answer)
        sent = [user for user in to if self._tell(thread, user, result, native, answer)]
        post(
            self.client,
            thread,
            blocks.sent_privately(sent) if sent else blocks.failure(NOT_SENT),
        )

    def _tell(
        self,
        thread: SlackThread,
        user: str,
        result: Callable[[bool], blocks.Message],
        chart: blocks.Message | None,
        answer: Answer,
    ) -> bool:
        """`result` (with Slack's table block, else monospaced rows) and `chart` to `user` only,
        then the answer's files to their direct messages; whether the result reached them
        (Slack refuses someone no longer in the channel)."""
        try:
            try:
                tell(self.client, thread, user, result(True))
            except SlackApiError as exc:
                if exc.response.get("error") != "invalid_blocks":
                    raise
                log.warning("Slack refused the table block (%s); sending text", exc.response)
                tell(self.client, thread, user, result(False))
        except SlackApiError:
            log.exception("Could not send the answer to %s in %s", user, thread.id)
            return False
        charted = chart is None
        if chart is not None:
            try:
                tell(self.client, thread, user, chart)
                charted = True
            except SlackApiError as exc:  # a failed chart costs the chart, not the answer
                log.exception("Could not send the chart to %s in %s", user, thread.id)
                if exc.response.get("error") == "invalid_blocks":
                    self._refused.note(thread.team)
                    charted = False
        files = self._files(answer)
        png = None if chart is not None and charted else render_chart(answer)
        send_direct(self.client, thread, user, answer.question, [*files, *([png] if png else [])])
        return True

    def _files(self, answer: Answer) -> list[Attachment]:
        """The answer's files besides its chart: the SQL that ran when its message shows only
        the start, and the whole result when not every row is shown."""
        files = []
        if blocks.sql_cut(answer.sql):
            files.append(sql_file(answer.sql, blocks.RAN_SQL_FILE, "The SQL that ran"))
        if answer.total_rows > min(self.display_rows, len(answer.rows)):
            files.append(csv_file(answer))
        return files

    def proposed_sql(self, thread: SlackThread, proposal: Proposal) -> None:
        """The proposal's SQL as a file, when its message shows only the start (the file is
        the very text the approval's hash covers)."""
        if blocks.sql_cut(proposal.sql):
            title = "The proposed SQL"
            self._upload(thread, sql_file(proposal.sql, blocks.PROPOSED_SQL_FILE, title))

    def _chart(self, thread: SlackThread, answer: Answer) -> None:
        """The answer's chart, if it has one: Slack's native chart block, else a PNG (the data
        does not fit the block, or the workspace refused the block lately). A failed chart
        costs the chart, not the answer."""
        native = blocks.chart(answer)
        if native is not None and not self._refused.refused(thread.team):
            try:
                post(self.client, thread, native)
                return
            except SlackApiError as exc:
                if exc.response.get("error") != "invalid_blocks":
                    log.exception("Could not post the chart in %s", thread.id)
                    return
                if self._refused.note(thread.team):
                    log.warning(
                        "Workspace %s refused the native chart block (invalid_blocks); its "
                        "charts come as PNG files for the next %d minutes",
                        thread.team,
                        REFUSED_FOR_S // 60,
                    )
            except Exception:
                log.exception("Could not post the chart in %s", thread.id)
                return
        png = render_chart(answer)
        if png is not None:
            self._upload(thread, png)

    def _upload(self, thread: SlackThread, attachment: Attachment) -> None:
        """Share a file in the thread; a failed upload costs the file, not the answer."""
        try:
            self.client.files_upload_v2(
                channel=thread.channel,
                thread_ts=thread.ts or None,
                file=attachment.content,
                filename=attachment.filename,
                title=attachment.title,
            )
        except Exception:
            log.exception("Could not upload %s to %s", attachment.filename, thread.id)
