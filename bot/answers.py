"""Posting an answer in its thread: the result (Slack's table block, or the same rows as
monospaced text where a workspace refuses it; the SQL itself only when the card just approved
above does not show it), the whole result as `result.csv` when not every row is shown, the SQL
as `query.sql` when the message shows only its start, and its chart (Slack's native chart
block, or a PNG where the data does not fit the block or the workspace refused it lately). A
failed file or chart costs that file or chart, never the answer."""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.outcome import Answer, Proposal
from bot import blocks
from bot.attachments import (
    REFUSED_FOR_S,
    Attachment,
    Refusals,
    csv_file,
    render_chart,
    sql_file,
)
from bot.slack_thread import SlackThread, post

log = logging.getLogger(__name__)


class Answers:
    """Posts answers; remembers which workspaces refused the native chart block lately."""

    def __init__(self, client: WebClient, *, display_rows: int) -> None:
        self.client = client
        self.display_rows = display_rows
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
            )

        try:
            post(self.client, thread, result(use_table=True))
        except SlackApiError as exc:
            if exc.response.get("error") != "invalid_blocks":
                raise
            # Workspaces or clients without the table block: the same rows as monospaced text.
            log.warning("Slack refused the table block (%s); sending text", exc.response)
            post(self.client, thread, result(use_table=False))
        if blocks.sql_cut(answer.sql):
            self._upload(thread, sql_file(answer.sql, blocks.RAN_SQL_FILE, "The SQL that ran"))
        if answer.total_rows > min(self.display_rows, len(answer.rows)):
            self._upload(thread, csv_file(answer))
        self._chart(thread, answer)

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
