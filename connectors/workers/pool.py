"""Worker processes that run a connector's statements, so a run's time and memory bounds hold
whatever the engine does: DuckDB (it builds result vectors outside its memory_limit) and SQLite (one
step of its virtual machine can take seconds, and its interrupt is only seen between steps). The
worker's side is `worker_proc`.

A worker is started when a run finds none free, up to `max_workers` runs in flight (further runs
wait for one to end, up to their own timeout, as the SQL warehouses' runs wait for one of their 4
connections), so the engine-memory and temp-file bounds hold per run and their total stays
bounded; a worker is reused by the next run and kept while idle up to `idle_workers` (a worker
holds its own engine instance and its cached pages). A worker is replaced after it ran out of
memory, died, or had to be killed because it did not stop within `GRACE_S` of its timeout or a
cancel: that kill is the hard bound on a run's time.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Protocol, runtime_checkable

from connectors.base import (
    ConnectorError,
    QueryCancelled,
    QueryResult,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.limits import SETTINGS, RunLimits, engine_memory
from connectors.workers import proc as worker_proc
from connectors.workers.proc import ROOT, START_S, Spec, thaw

log = logging.getLogger(__name__)

#: Idle workers a connector keeps for the next runs; more are stopped once their run ends.
IDLE_WORKERS = 2

#: Runs of one connector in flight at once (each in its own worker); more wait their turn.
MAX_WORKERS = 4

#: Seconds between two checks of a run's deadline while its worker has not answered.
_POLL_S = 0.1

#: Arms a run's cancel: called with the function that stops it (`Runs.arm`).
Arm = Callable[[Callable[[], None]], None]


@runtime_checkable
class StartsWorkers(Protocol):
    """An engine whose statements `SqlConnector` runs in worker processes (SQLite)."""

    def workers(self, max_workers: int) -> Pool:
        """The connector's pool of workers, `max_workers` runs at once."""
        ...


class _Gone(Exception):
    """The worker had died before the run reached it (it may be retried on a fresh one)."""


class Worker:
    """One worker process and the pipes to it."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self._control_lock = threading.Lock()
        requests_in, requests_out = os.pipe()
        replies_in, replies_out = os.pipe()
        control_in, control_out = os.pipe()
        theirs = [requests_in, replies_out, control_in]
        ours = [requests_out, replies_in, control_out]
        env = os.environ | {
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
            ),
            # glibc reserves address space per thread arena; two keep RLIMIT_AS about memory.
            "MALLOC_ARENA_MAX": "2",
        }
        try:
            self.process = subprocess.Popen(
                # The file's path only labels the process (`ps`); the worker reads `spec`.
                [sys.executable, "-m", spec.module, *map(str, theirs), spec.path],
                pass_fds=theirs,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # a Ctrl-C to the bot's terminal is the bot's to handle
            )
        except OSError as exc:  # no process to be had (a process or memory limit)
            for fd in ours:
                os.close(fd)
            raise WarehouseUnavailable(
                f"Cannot start a {spec.engine} worker for {spec.path}: {exc}",
                hint="Try again in a moment; if it keeps failing, the bot's host is short of "
                "processes or memory.",
            ) from exc
        finally:
            for fd in theirs:
                os.close(fd)
        self._requests = Connection(ours[0], readable=False)
        self._replies = Connection(ours[1], writable=False)
        self._control = Connection(ours[2], readable=False)
        try:
            self._requests.send(spec)
            ready = self._replies.poll(START_S) and self._replies.recv()
        except (OSError, EOFError):
            ready = None
        if not ready or ready[0] != "ready":
            self.kill()
            if ready:
                raise thaw(*ready[1:])
            raise WarehouseUnavailable(
                f"The {spec.engine} worker for {spec.path} did not start.",
                hint="Try again; if it keeps failing, the bot's log says why.",
            )

    def run(
        self, seq: int, sql: str, max_rows: int, timeout_s: float, limits: RunLimits, arm: Arm
    ) -> QueryResult:
        """Run `sql` in the worker; kill it when it overruns its timeout or a cancel by
        `GRACE_S`."""
        if not self.alive:
            raise _Gone()
        try:
            self._requests.send((seq, sql, max_rows, timeout_s, limits))
        except OSError as exc:
            raise _Gone() from exc
        asked: list[float] = []  # when a cancel came

        def stop() -> None:
            asked.append(time.monotonic())
            with self._control_lock, contextlib.suppress(OSError):
                self._control.send(seq)

        arm(stop)
        deadline = time.monotonic() + timeout_s + worker_proc.GRACE_S
        while not self._replies.poll(_POLL_S):
            now = time.monotonic()
            if asked and now > asked[0] + worker_proc.GRACE_S:
                self.kill()
                raise QueryCancelled()
            if now > deadline:
                self.kill()
                raise QueryTimeout(timeout_s)
        try:
            reply = self._replies.recv()
        except (EOFError, OSError):
            raise self._died(limits) from None
        if reply[0] == "ok":
            return reply[1]
        raise thaw(*reply[1:])

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Let the worker finish (it exits when its request pipe closes), killing it if it
        does not within GRACE_S."""
        self.close_pipes()
        try:
            self.process.wait(worker_proc.GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()
        self.spec.clean_up()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        self.close_pipes()
        self.spec.clean_up()

    def close_pipes(self) -> None:
        """Close the pipes to the worker: one waiting for a run sees the end and exits."""
        with self._control_lock:
            for pipe in (self._requests, self._replies, self._control):
                pipe.close()

    def _died(self, limits: RunLimits) -> ConnectorError:
        """The error for a worker that died mid-run: out of memory when a signal ended it (an
        allocation failed under RLIMIT_AS, or the kernel's out-of-memory killer)."""
        try:
            code = self.process.wait(worker_proc.GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        self.close_pipes()
        if code < 0:
            name = signal.Signals(-code).name
            log.warning("The %s worker died of signal %s", self.spec.engine, name)
            return engine_memory(limits, f"the {self.spec.engine} worker died of {name}")
        log.warning(
            "The %s worker exited with %s mid-run (its stderr is above)", self.spec.engine, code
        )
        return WarehouseUnavailable(
            f"The {self.spec.engine} worker stopped while it ran the query (exit status {code}).",
            hint="Try again; if it happens again, the bot's log says why.",
        )


class Pool:
    """The workers of one connector, each opening `spec.for_worker(n)` (a temp directory of its
    own, for DuckDB); `max_workers` run at once, `idle_workers` are kept between runs."""

    def __init__(
        self, spec: Spec, *, max_workers: int = MAX_WORKERS, idle_workers: int = IDLE_WORKERS
    ) -> None:
        self.spec = spec
        self._idle_workers = idle_workers
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._closed = False
        self._numbers = itertools.count(1)
        self._slots = threading.BoundedSemaphore(max_workers)

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, limits: RunLimits, arm: Arm
    ) -> QueryResult:
        """Run `sql` on a free worker (a new one when none is), once one of `max_workers` slots
        is free (waiting at most `timeout_s`, then the run has `timeout_s` of its own). A worker
        found dead before the run reached it is replaced once."""
        if not self._slots.acquire(timeout=timeout_s):
            raise QueryTimeout(timeout_s)
        try:
            return self._run(sql, max_rows, timeout_s, limits, arm)
        finally:
            self._slots.release()

    def _run(
        self, sql: str, max_rows: int, timeout_s: float, limits: RunLimits, arm: Arm
    ) -> QueryResult:
        for attempt in (1, 2):
            worker = self._acquire()
            healthy = False
            try:
                result = worker.run(next(self._numbers), sql, max_rows, timeout_s, limits, arm)
                healthy = True
                return result
            except _Gone:
                if attempt == 2:
                    raise self._gone() from None
            except ConnectorError as exc:
                out_of_memory = getattr(exc, "setting", "") == SETTINGS["engine_memory_mb"]
                healthy = worker.alive and not out_of_memory
                if self._closed:
                    raise self._gone() from exc
                raise
            finally:
                self._release(worker, healthy=healthy)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the idle workers and kill those still running (their runs end unavailable)."""
        with self._lock:
            self._closed = True
            idle, busy = self._idle, list(self._busy)
            self._idle = []
        for worker in busy:
            worker.kill()
        for worker in idle:  # all told first, so they shut down side by side
            worker.close_pipes()
        for worker in idle:
            worker.stop()

    def _acquire(self) -> Worker:
        with self._lock:
            if self._closed:
                raise self._gone()
            worker = self._idle.pop() if self._idle else None
            number = next(self._numbers)
        if worker is None:
            worker = Worker(self.spec.for_worker(number))
        with self._lock:
            if self._closed:
                worker.stop()
                raise self._gone()
            self._busy.add(worker)
        return worker

    def _release(self, worker: Worker, *, healthy: bool) -> None:
        with self._lock:
            self._busy.discard(worker)
            keep = healthy and not self._closed and len(self._idle) < self._idle_workers
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.stop() if healthy else worker.kill()

    def _gone(self) -> WarehouseUnavailable:
        return WarehouseUnavailable(
            f"The {self.spec.engine} connection to {self.spec.path} is closed.",
            hint="Restart the bot.",
        )
