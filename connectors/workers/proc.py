"""The side of a connector worker process that runs in the worker (`Pool` starts it and says why
workers exist).

A worker is a fresh interpreter (`python -m MODULE FD FD FD PATH`, the spec's `module`, never a fork
of the threaded bot) that reads its `Spec`, sets RLIMIT_AS to the spec's address space before it
opens anything, opens the engine's connection and then serves runs one at a time. Each engine module
supplies how to open the connection and how to run one statement on it (metered by
`connectors.limits.Meter`, ending in a QueryResult or a ConnectorError); this module owns the
protocol, the cancels and the address-space limit, so DuckDB and SQLite share them, and the rule
that a run which ends past its timeout (one engine step nothing could interrupt) is a QueryTimeout,
as an engine's statement timeout would have made it.

Protocol (multiprocessing.connection over three pipes): the parent sends the `Spec`, the worker
answers ("ready", None) or ("error", ...); then per run the parent sends (seq, sql, max_rows,
timeout_s, limits) and the worker answers ("ok", QueryResult) or ("error", ...). A cancel is
the run's `seq` on the control pipe (a stale one, for an earlier run, is ignored).
"""

from __future__ import annotations

import pickle
import resource
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol, TypeVar

from connectors.base import ConnectorError, QueryResult, QueryTimeout
from connectors.limits import RunLimits, engine_memory

#: Seconds a worker has to stop after its timeout or a cancel before it is killed: the hard
#: time bound of every run in a worker, whatever one step of the engine costs.
GRACE_S = 5.0

#: Seconds a new worker has to open the file.
START_S = 60.0

#: Where the project's packages are, for the worker's import path.
ROOT = Path(__file__).resolve().parents[2]


class Spec(Protocol):
    """What a worker opens. Frozen dataclasses in the engine modules (pickled to the worker)."""

    @property
    def path(self) -> str:
        """The database file (also the label of the worker's command line)."""
        ...

    @property
    def engine(self) -> str:
        """The engine's name in messages (`DuckDB`, `SQLite`)."""
        ...

    @property
    def module(self) -> str:
        """The worker's module, run with `python -m`."""
        ...

    @property
    def address_space(self) -> int:
        """RLIMIT_AS of the worker, in bytes."""
        ...

    def for_worker(self, number: int) -> Spec:
        """The spec of the connector's `number`th worker (e.g. with a temp directory of its own)."""
        ...

    def clean_up(self) -> None:
        """Remove what a worker of this spec leaves behind once it is gone."""
        ...


class Closeable(Protocol):
    def close(self) -> None: ...


Con = TypeVar("Con", bound=Closeable)

#: Runs one statement: (connection, spec, sql, max_rows, timeout_s, limits, stop event).
RunFn = Callable[[Con, Any, str, int, float, RunLimits, threading.Event], QueryResult]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (engine messages can run to many lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def freeze(exc: ConnectorError) -> tuple[Any, ...]:
    """`exc` as a message that unpickles whatever its class's __init__ takes, with the engine
    exception behind it (its `__cause__`: callers tell an engine's refusal from a connector's
    own check by it)."""
    cause = exc.__cause__
    if cause is not None:
        try:
            pickle.dumps(cause)
        except Exception:  # an exception that does not pickle: its class name and text
            cause = RuntimeError(f"{type(cause).__name__}: {cause}")
    return ("error", type(exc), exc.args, dict(vars(exc)), cause)


def thaw(
    cls: type[ConnectorError],
    args: tuple[Any, ...],
    state: dict[str, Any],
    cause: BaseException | None = None,
) -> ConnectorError:
    """The ConnectorError `freeze` sent."""
    if not (isinstance(cls, type) and issubclass(cls, ConnectorError)):
        raise TypeError(f"not a connector error: {cls!r}")
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    exc.__cause__ = cause
    return exc


def main(open_: Callable[[Any], Con], run: RunFn[Con]) -> None:
    """The worker's entry point (`__main__` of an engine's worker module): the pipes are the
    first three arguments."""
    fds = [int(fd) for fd in sys.argv[1:4]]
    serve(
        Connection(fds[0], writable=False),
        Connection(fds[1], readable=False),
        Connection(fds[2], writable=False),
        open_,
        run,
    )


def serve(
    requests: Connection,
    replies: Connection,
    control: Connection,
    open_: Callable[[Any], Con],
    run: RunFn[Con],
) -> None:
    """Open the connection the `Spec` names under its address-space limit (`open_` raises a
    ConnectorError when it cannot), then serve runs until the parent closes the request pipe."""
    spec = requests.recv()
    resource.setrlimit(resource.RLIMIT_AS, (spec.address_space, spec.address_space))
    try:
        con = open_(spec)
    except ConnectorError as exc:
        replies.send(freeze(exc))
        return
    replies.send(("ready", None))
    cancels = _Cancels()
    threading.Thread(
        target=cancels.listen, args=(control,), name="querybot-worker-cancel", daemon=True
    ).start()
    while True:
        try:
            seq, sql, max_rows, timeout_s, limits = requests.recv()
        except EOFError:
            break
        stop = cancels.started(seq)
        started = time.monotonic()
        try:
            result = run(con, spec, sql, max_rows, timeout_s, limits, stop)
            # One step the engine could not interrupt may end past the limit: the run is over
            # its time all the same, as a statement timeout would have ended it.
            if time.monotonic() - started > timeout_s:
                raise QueryTimeout(timeout_s)
            reply: tuple[Any, ...] = ("ok", result)
        except ConnectorError as exc:
            reply = freeze(exc)
        except MemoryError:
            reply = freeze(engine_memory(limits, f"MemoryError in the {spec.engine} worker"))
        cancels.ended()
        try:
            replies.send(reply)
        except MemoryError:
            replies.send(freeze(engine_memory(limits, "MemoryError sending the result")))
    con.close()


class _Cancels:
    """Cancels from the control pipe, each matched to the run it names: the run in progress is
    stopped, and a cancel that came before its run was read is kept until that run starts
    (seqs only grow, so one below the current run's is stale)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = -1
        self._stop: threading.Event | None = None
        self._early: set[int] = set()

    def listen(self, control: Connection) -> None:
        """Read cancels until the parent closes the control pipe."""
        while True:
            try:
                seq = control.recv()
            except (EOFError, OSError):
                return
            with self._lock:
                if self._seq == seq and self._stop is not None:
                    self._stop.set()
                elif seq > self._seq:
                    self._early.add(seq)

    def started(self, seq: int) -> threading.Event:
        """The stop event of run `seq`, which starts now: already set if it was cancelled."""
        stop = threading.Event()
        with self._lock:
            self._seq, self._stop = seq, stop
            if seq in self._early:
                stop.set()
            self._early.difference_update([s for s in self._early if s <= seq])
        return stop

    def ended(self) -> None:
        """The run in progress has ended: a cancel of it comes too late to stop anything."""
        with self._lock:
            self._stop = None
