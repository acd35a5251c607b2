"""Files shared in a conversation: fetched from Slack, loaded into the thread's sandbox, and the
outcome posted in the thread ("Loaded sales.csv as table `sales` …" or why not).

Listeners call `shared`, which only queues a job in the thread's queue of the worker pool, so
the "Loading…" message, the download and the load happen in order with the thread's questions.
A question that came with the files is asked once they are loaded, and only if at least one
was: a question about a file that could not be read is not sent to another warehouse. A
proposal still waiting in the thread is retired once a file is loaded: it was written for what
the thread was answered from before.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from bot import blocks
from bot.blocks import Message
from bot.blocks.base import escaped, finish, section
from bot.conversations.conversations import Conversations
from bot.files.sandboxes import SandboxAgents
from bot.files.slack_files import FileUnavailable, SharedFile, SlackFiles
from bot.settings import Settings
from bot.slack_thread import SlackThread, post
from connectors.sandbox.files import FileRejected
from connectors.sandbox.load import LoadedTable
from connectors.units import counted

log = logging.getLogger(__name__)

LOAD_FAILED = (
    "Something went wrong while loading this file, so nothing was loaded. Share it again in a "
    "minute; if it keeps happening, tell whoever runs querybot (the details are in its log)."
)
NOT_ASKED = "I did not look at your question, since no file was loaded; share a file I can read."
#: The setting behind each bound an upload can hit (`SandboxLimits`), and its default, named in the
#: refusal so a person can ask for it to be raised.
_DEFAULTS = Settings()
BOUND_SETTINGS = {
    "size": ("QUERYBOT_FILE_MAX_MB", f"{_DEFAULTS.file_max_mb:g} MB"),
    "rows": ("QUERYBOT_FILE_MAX_ROWS", f"{_DEFAULTS.file_max_rows:,}"),
    "tables": ("QUERYBOT_FILE_MAX_TABLES", f"{_DEFAULTS.file_max_tables:,}"),
    "columns": ("QUERYBOT_FILE_MAX_COLUMNS", f"{_DEFAULTS.file_max_columns:,}"),
    "cells": ("QUERYBOT_FILE_MAX_CELLS", f"{_DEFAULTS.file_max_cells:,}"),
    "expanded": ("QUERYBOT_FILE_MAX_EXPANDED_MB", f"{_DEFAULTS.file_max_expanded_mb:g} MB"),
    "memory": ("QUERYBOT_FILE_MEMORY_MB", f"{_DEFAULTS.file_memory_mb:g} MB"),
    "time": ("QUERYBOT_FILE_TIMEOUT_S", f"{_DEFAULTS.file_timeout_s:g} s"),
    "disk": ("QUERYBOT_FILE_DISK_MB", f"{_DEFAULTS.file_disk_mb:g} MB"),
    "field": ("QUERYBOT_MAX_CELL_BYTES", f"{_DEFAULTS.limits.max_cell_bytes:,} bytes"),
}
RETIRED = (
    ":arrow_heading_down: Replaced: a file was loaded into this thread, which is now answered "
    "from it; nothing was run."
)


class ThreadUploads:
    """Loads shared files into thread sandboxes (see the module docstring)."""

    def __init__(
        self, conversations: Conversations, agents: SandboxAgents, files: SlackFiles
    ) -> None:
        self.conversations = conversations
        self.client = conversations.client
        self.agents = agents
        self.files = files

    def shared(
        self,
        thread: SlackThread,
        files: list[dict[str, Any]],
        *,
        user: str,
        question: str = "",
        known_only: bool = False,
    ) -> None:
        """Files shared in `thread` by `user`, with the message's question (if any).

        `known_only`: a file in a thread without a mention is taken only when the thread is a
        conversation with the bot already; elsewhere it is none of the bot's business.
        """

        def job() -> None:
            if known_only and not self.conversations.router.route(thread.id).is_conversation():
                return
            loaded = self._load_all(thread, files, bool(question))
            if loaded:
                self.conversations.retire_pending(thread.id, RETIRED)
            if question and loaded:
                self.conversations.question(thread, question, user=user)

        self.conversations.work.submit(thread.id, job)

    def _load_all(
        self, thread: SlackThread, files: list[dict[str, Any]], question: bool
    ) -> list[LoadedTable]:
        """Describe, download and load each file, then say in the thread what was loaded."""
        described: list[SharedFile] = []
        problems: list[str] = []
        for obj in files:
            try:
                described.append(self.files.describe(obj))
            except FileUnavailable as exc:
                problems.append(str(exc))
            except Exception:
                log.exception("Reading the file record %s in %s failed", obj.get("id"), thread.id)
                problems.append(LOAD_FAILED)
        names = ", ".join(f.name for f in described) or "the file"
        placeholder: str | None = None
        try:
            placeholder = self._post(thread, blocks.working(f"Loading {names}…"))
        except Exception:  # the outcome is posted anew at the end
            log.exception("Could not say in %s that files are loading", thread.id)
        loaded: list[LoadedTable] = []
        for file in described:
            try:
                loaded += self._load_one(thread, file)
            except (FileUnavailable, FileRejected) as exc:
                log.info("%s shared in %s was not loaded: %s", file.id, thread.id, exc)
                problems.append(_problem_text(exc))
            except Exception:
                log.exception("Loading %s shared in %s failed", file.id, thread.id)
                problems.append(LOAD_FAILED)
        message = loaded_message(loaded, problems, question=question)
        try:
            if placeholder:
                self.client.chat_update(
                    channel=thread.channel, ts=placeholder, text=message.text, blocks=message.blocks
                )
            else:
                self._post(thread, message)
        except Exception:
            log.exception("Could not post what was loaded in %s", thread.id)
        return loaded

    def _load_one(self, thread: SlackThread, file: SharedFile) -> list[LoadedTable]:
        with self.agents.sandboxes.staging() as directory:
            path = directory / ("upload" + Path(file.name).suffix.lower()[:16])
            self.files.download(file, path)
            tables = self.agents.load(thread.id, path, file.name)
        log.info("Loaded %s in %s as %s", file.id, thread.id, ", ".join(t.name for t in tables))
        return tables

    def _post(self, thread: SlackThread, message: Message) -> str:
        return post(self.client, thread, message)


def _problem_text(exc: Exception) -> str:
    if isinstance(exc, FileRejected):
        message = exc.message
        if message.startswith(("could not", "loading")):  # the rest: a file name, kept as is
            message = message[0].upper() + message[1:]
        text = f"{message} {exc.hint}".strip()
        if exc.bound in BOUND_SETTINGS:
            setting, default = BOUND_SETTINGS[exc.bound]
            text += f" (This limit is set by {setting}; the default is {default}.)"
        return text
    return str(exc)


def loaded_message(tables: list[LoadedTable], problems: list[str], *, question: bool) -> Message:
    """What was loaded (tables, rows, columns) and what was not, for the thread; `question`:
    the message asked something, which is not answered when nothing was loaded."""
    plain: list[str] = []
    marked: list[str] = []
    by_file: dict[str, list[LoadedTable]] = {}
    for table in tables:
        by_file.setdefault(table.source, []).append(table)
    for source, found in by_file.items():
        what = "table" if len(found) == 1 else "tables"
        listed = ", ".join(f"`{t.name}` ({_shape(t)})" for t in found)
        plain.append(f"Loaded {source} as {what} {listed}.")
        marked.append(f"Loaded {escaped(source, 200)} as {what} {listed}.")
    if tables:
        ask = f"Ask me about {'it' if len(tables) == 1 else 'them'}."
        plain.append(ask)
        marked.append(ask)
    parts = [section(":page_facing_up: " + " ".join(marked))] if tables else []
    parts += [section(f":warning: {escaped(problem, 2900)}") for problem in problems]
    if question and not tables:
        parts.append(section(NOT_ASKED))
    fallback = " ".join(plain) or (problems[0] if problems else "Nothing was loaded.")
    return finish(fallback, parts)


def _shape(table: LoadedTable) -> str:
    """A loaded table's rows and columns: "1,200 rows, 1 column"."""
    return f"{counted(table.rows, 'row')}, {counted(table.columns, 'column')}"
