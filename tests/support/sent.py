"""What a connector was sent, for tests that assert which queries ran (or that none did)."""

from __future__ import annotations

from typing import Any


def record_runs(connector: Any) -> list[str]:
    """Make `connector.run` also append each statement it is given to the returned list."""
    sent: list[str] = []
    real = connector.run

    def run(sql: str, **kwargs: Any) -> Any:
        sent.append(sql)
        return real(sql, **kwargs)

    connector.run = run
    return sent
