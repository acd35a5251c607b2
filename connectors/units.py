"""Counts and sizes in words people read, the one way every message says them: the
connectors' refusals, the agent's messages and trace steps, and the bot's cards and terminal
output. Here, at the bottom layer, so every layer can use them."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "", *, more: bool = False) -> str:
    """`n` with thousands separators and `noun`, singular for exactly one: "1 row",
    "0 rows", "1,234 rows"; `more` marks a count that may be higher ("1,000+ rows")."""
    word = noun if n == 1 and not more else plural or noun + "s"
    return f"{n:,}{'+' if more else ''} {word}"
