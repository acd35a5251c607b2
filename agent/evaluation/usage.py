"""Count model calls and tokens of whatever runs inside `measure()` (the graph's nodes included).

The accounting meter (agent.model.accounting) reached through a context variable, the way
`get_usage_metadata_callback` works, so a question's ask and its approvals are counted together
without hooks in the graph or `Agent`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from langchain_core.tracers.context import register_configure_hook

from agent.model.accounting import Meter

_current: ContextVar[Meter | None] = ContextVar("querybot_eval_usage", default=None)
register_configure_hook(_current, inheritable=True)


@contextmanager
def measure() -> Iterator[Meter]:
    usage = Meter()
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)
