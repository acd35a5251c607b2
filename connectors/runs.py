"""Runs in flight by job key, so another thread can stop one (`Connector.cancel`).

A run is tracked from before its statement starts until its result is read. The engine-side
way to stop it (interrupt a cursor, cancel a backend or a job) is `arm`ed once it exists and
`disarm`ed before the handle goes away; a cancel that comes before `arm` is remembered and
carried out by `arm`. Stopping happens under the registry's lock, so it never races a disarm
(no interrupt reaches a cursor that was already closed or reused). A run whose cancel
returned True raises QueryCancelled even if its statement managed to finish (some engines,
MySQL's SLEEP() for one, return normally when stopped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

Stop = Callable[[], None]


@dataclass
class Run:
    """One tracked run: whether a cancel asked it to stop, and how to stop it now."""

    key: str
    cancelled: bool = False
    stop: Stop | None = None


class Runs:
    """The runs of one connector that were started with a job key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, Run] = {}

    @contextmanager
    def track(self, key: str) -> Iterator[Run]:
        """Track the run for `key` (an empty key is not tracked: nothing can name it)."""
        run = Run(key)
        if key:
            with self._lock:
                self._live[key] = run
        try:
            yield run
        finally:
            if key:
                with self._lock:
                    if self._live.get(key) is run:
                        del self._live[key]
                    run.stop = None

    def arm(self, run: Run, stop: Stop) -> None:
        """`stop` can now stop `run`; it is called at once if a cancel already came."""
        with self._lock:
            run.stop = stop
            if run.cancelled:
                stop()

    def disarm(self, run: Run) -> None:
        """The handle `stop` used is going away: no later cancel may call it."""
        with self._lock:
            run.stop = None

    def cancel(self, key: str) -> bool:
        """Stop the run for `key`; True when one was running and had not been cancelled."""
        with self._lock:
            run = self._live.get(key) if key else None
            if run is None or run.cancelled:
                return False
            run.cancelled = True
            if run.stop is not None:
                run.stop()
            return True
