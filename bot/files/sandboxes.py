"""The agents of threads with uploaded files: one per thread's sandbox
(`Sandboxes`).

`SandboxAgents.lookup` is the Router's override: a thread with a sandbox on disk is answered by
an Agent over that sandbox (built on first use, also after a restart), a thread whose sandbox
was swept is told its files are gone, and any other thread goes on to its channel's warehouse.
A thread with files is a conversation from its first file on, so replies there need no mention
even before its first question.

Loading a file closes the thread's agent first (DuckDB keeps one database instance per file, and
the catalog must be read again); the next lookup opens it anew. A background timer finds
sandboxes idle for `idle_s` and hands each removal to the thread's own job queue, so a sandbox is
never removed while a question or query of its thread runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agent.conversation import Agent
from bot.routing import Route
from bot.settings import Settings
from connectors.base import Connector
from connectors.limits import RunLimits
from connectors.sandbox.bounds import MIB, SandboxLimits
from connectors.sandbox.load import LoadedTable
from connectors.sandbox.sandboxes import Sandboxes, SandboxInfo
from connectors.units import counted

log = logging.getLogger(__name__)

#: Builds an Agent over a sandbox's connector (`Deployment.agent_for`); the name is for logs.
AgentFactory = Callable[[Connector, str], Agent]
#: Runs a job after the thread's earlier jobs (`Work.submit`).
Submit = Callable[[str, Callable[[], None]], None]


def files_gone(info: SandboxInfo, idle_s: float) -> str:
    """What a thread whose sandbox was removed is told: its files are gone, upload them again."""
    names = info.file_names
    files = (
        f"The file {names[0]}"
        if len(names) == 1
        else f"The files {', '.join(names[:-1])} and {names[-1]}"
        if names
        else "The files"
    )
    verb, it = ("was", "it") if len(names) == 1 else ("were", "them")
    return (
        f"{files} shared in this conversation {verb} deleted after {duration(idle_s)} "
        f"without use, so I cannot answer from {it} any more. Upload {it} again in this "
        f"thread to keep asking about {it}, or ask in a new conversation about the warehouse."
    )


class SandboxAgents:
    """Sandbox agents by thread id (see the module docstring)."""

    def __init__(
        self,
        sandboxes: Sandboxes,
        build: AgentFactory,
        *,
        idle_s: float,
        run_limits: RunLimits | None = None,
    ) -> None:
        self.sandboxes = sandboxes
        self.build = build
        self.idle_s = idle_s
        #: What one query on a sandbox may cost (its connector's engine memory and temp files).
        self.run_limits = run_limits
        #: Guards the maps below; each thread's own lock guards opening, loading and closing
        #: its sandbox, so a long load holds up no other thread.
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}
        self._agents: dict[str, Agent] = {}
        #: Threads whose removal waits in their job queue.
        self._expiring: set[str] = set()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    # -- the Router's override -----------------------------------------------------------------

    def lookup(self, thread_id: str) -> Route | None:
        """The route of a thread with files: its sandbox's Agent, or none and why when its
        files were removed; None for a thread without files."""
        found = self._agents.get(thread_id)
        if found is None and self.sandboxes.exists(thread_id):
            with self._thread_lock(thread_id):
                found = self._agents.get(thread_id)
                if found is None and self.sandboxes.exists(thread_id):
                    found = self._open(thread_id)
        if found is not None:
            self.sandboxes.touch(thread_id)
            return Route(thread_id, found, files=True)
        info = self.sandboxes.info(thread_id)
        if info is not None and info.removed_at is not None:
            return Route(thread_id, None, refusal=files_gone(info, self.idle_s), files=True)
        return None

    # -- files ---------------------------------------------------------------------------------

    def load(self, thread_id: str, file: Path, name: str) -> list[LoadedTable]:
        """Load `file` into the thread's sandbox (see Sandboxes.load); the thread's agent is
        closed first and opened again on its next lookup."""
        with self._thread_lock(thread_id):
            self._close(thread_id)
            return self.sandboxes.load(thread_id, file, name)

    def remove(self, thread_id: str) -> bool:
        """Close the thread's agent and remove its sandbox (leaving a tombstone)."""
        with self._thread_lock(thread_id):
            self._close(thread_id)
            removed = self.sandboxes.remove(thread_id)
        if removed:
            log.info("Removed the sandbox of %s", thread_id)
        return removed

    # -- idle sweep ----------------------------------------------------------------------------

    def start(self, submit: Submit) -> None:
        """Sweep idle sandboxes in the background until `close`; removals go through `submit`."""
        interval = min(max(self.idle_s / 4, 0.5), 300.0)

        def run() -> None:
            while not self._stop.wait(interval):
                try:
                    self.sweep(submit)
                except Exception:
                    log.exception("Sweeping idle sandboxes failed")

        self._timer = threading.Thread(target=run, name="querybot-sandbox-sweep", daemon=True)
        self._timer.start()

    def sweep(self, submit: Submit) -> list[str]:
        """Queue the removal of every sandbox idle for `idle_s` (and purge old tombstones);
        returns the thread ids queued."""
        queued = []
        for thread_id in self.sandboxes.idle(self.idle_s):
            with self._guard:
                if thread_id in self._expiring:
                    continue
                self._expiring.add(thread_id)
            submit(thread_id, partial(self._expire, thread_id))
            queued.append(thread_id)
        self.sandboxes.purge()
        return queued

    def _expire(self, thread_id: str) -> None:
        """Runs in the thread's job queue: remove the sandbox if nothing used it meanwhile."""
        try:
            with self._thread_lock(thread_id):
                info = self.sandboxes.info(thread_id)
                if (
                    info is not None
                    and info.last_used <= time.time() - self.idle_s
                    and info.removed_at is None
                ):
                    self.remove(thread_id)
        finally:
            with self._guard:
                self._expiring.discard(thread_id)

    def close(self) -> None:
        """Stop the sweep and close every open sandbox agent (their files stay on disk)."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join(timeout=5)
        for thread_id in list(self._agents):
            with self._thread_lock(thread_id):
                self._close(thread_id)

    # -- internals -----------------------------------------------------------------------------

    def _thread_lock(self, thread_id: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(thread_id, threading.RLock())

    def _open(self, thread_id: str) -> Agent:
        connector = self.sandboxes.open(thread_id, limits=self.run_limits)
        try:
            agent = self.build(connector, f"files of {thread_id}")
        except BaseException:
            connector.close()
            raise
        with self._guard:
            self._agents[thread_id] = agent
        return agent

    def _close(self, thread_id: str) -> None:
        with self._guard:
            found = self._agents.pop(thread_id, None)
        if found is None:
            return
        try:
            found.close()
        except Exception:
            log.exception("Closing the sandbox of %s failed", thread_id)


def duration(seconds: float) -> str:
    """`1 day`, `3 hours`, `20 minutes`, `5 seconds` (the largest whole unit)."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = round(seconds / size)
            return counted(n, unit)
    return counted(max(round(seconds), 1), "second")


def sandbox_limits(settings: Settings) -> SandboxLimits:
    """What an upload may hold and cost, as the QUERYBOT_FILE_* settings say; one value of it
    is held to QUERYBOT_MAX_CELL_BYTES, the bound on one value of a query's result."""
    return SandboxLimits(
        max_file_bytes=settings.file_max_bytes,
        max_field_bytes=settings.limits.max_cell_bytes,
        max_rows=settings.file_max_rows,
        max_tables=settings.file_max_tables,
        max_columns=settings.file_max_columns,
        max_cells=settings.file_max_cells,
        max_expanded_bytes=int(settings.file_max_expanded_mb * MIB),
        memory_bytes=int(settings.file_memory_mb * MIB),
        timeout_s=settings.file_timeout_s,
        disk_bytes=int(settings.file_disk_mb * MIB),
    )
