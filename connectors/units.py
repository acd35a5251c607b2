"""Counts and sizes in words people read, the one way every message says them: the
connectors' refusals, the agent's messages and trace steps, and the bot's cards and terminal
output. Here, at the bottom layer, so every layer can use them."""

from __future__ import annotations

#: Binary units, as the engines count memory and BigQuery bills (1 KiB = 1,024 bytes).
_UNITS = ("KiB", "MiB", "GiB", "TiB")


def counted(n: float, noun: str, plural: str = "", *, more: bool = False) -> str:
    """`n` with thousands separators and `noun`, singular for exactly one: "1 row",
    "0 rows", "1,234 rows", a mean as it is ("2.5 model calls"); `more` marks a count that may
    be higher ("1,000+ rows")."""
    word = noun if n == 1 and not more else plural or noun + "s"
    return f"{n:,}{'+' if more else ''} {word}"


def byte_size(n: int) -> str:
    """`n` bytes for people: "1 byte", "1,023 bytes", "1.5 KiB", "120 MiB", "3 TiB". One
    decimal under ten (none when it is .0), whole numbers from ten, in the largest unit that
    keeps the number under 1,024 once rounded (so never "1,024 KiB"), TiB at most."""
    if n < 1024:
        return counted(n, "byte")
    value, unit = n / 1024, _UNITS[0]
    for larger in _UNITS[1:]:
        if round(value) < 1024:
            break
        value, unit = value / 1024, larger
    shown = f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:,.0f}"
    return f"{shown} {unit}"
