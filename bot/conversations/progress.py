"""A status that moves while a long step runs: the bot edits one message ("Writing SQL… 6 s",
"Running… 12 s") from a small thread until the step ends.

The first edit comes after `first_s`, so quick steps cost no extra Slack call; later edits come
at doubling intervals up to `longest_s`, so twenty long queries stay well inside
`chat.update`'s rate limit. Leaving the `with` block stops the thread and waits for an edit in
flight, so the caller's final edit always lands last.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)


class Progress:
    """Calls `show(elapsed_seconds)` now and then while the `with` block runs."""

    def __init__(
        self, show: Callable[[int], None], *, first_s: float = 3.0, longest_s: float = 30.0
    ) -> None:
        self._show = show
        self._first_s = first_s
        self._longest_s = longest_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="querybot-progress", daemon=True)
        #: Whether `show` was called at least once (the caller may need to redraw).
        self.shown = False

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _tick(self) -> None:
        wait = self._first_s
        while not self._stop.wait(wait):
            try:
                self._show(round(time.monotonic() - self._started))
                self.shown = True
            except Exception:  # a status is a courtesy: never let it break the job
                log.warning("Could not update a progress message", exc_info=True)
            wait = min(wait * 2, self._longest_s)
