"""`QUERYBOT_STRATEGIES` (and `querybot eval --strategies`): which answer-quality steps run.

    QUERYBOT_STRATEGIES=plan,self_check,candidates:3,variations:2,remember_failures

Names listed are switched on in addition to the shipped default (`Strategies()`; `default` or an
empty value is that alone); `-name` switches one off (`-follow_ups`); a leading `none` starts from
everything off (`none,plan`). `candidates:N` and `variations:N` take a count (3 and 2 when
none is given).
"""

from __future__ import annotations

from dataclasses import fields, replace

from agent.context import Strategies

_COUNTS = {"candidates": (1, 8), "variations": (0, 5)}
_ON = {"candidates": 3, "variations": 2}


class StrategiesError(ValueError):
    """The strategies setting cannot be read; the message says what is accepted."""


def _names() -> list[str]:
    return [f.name for f in fields(Strategies)]


def _off() -> Strategies:
    return Strategies(
        **{n: (_COUNTS[n][0] if n in _COUNTS else False) for n in _names()}  # type: ignore[arg-type]
    )


def parse_strategies(text: str) -> Strategies:
    """The strategies `text` names (see the module docstring); raises StrategiesError."""
    items = [i.strip().lower() for i in text.split(",") if i.strip()]
    base = Strategies()
    if items and items[0] in {"default", "none"}:
        base = _off() if items[0] == "none" else base
        items = items[1:]
    changes: dict[str, bool | int] = {}
    for item in items:
        off = item.startswith("-")
        name, _, count = item.lstrip("-").partition(":")
        if name not in _names():
            raise StrategiesError(
                f"Unknown strategy {name!r}: use default, none, or any of "
                f"{', '.join(_names())} (candidates:N and variations:N take a count)."
            )
        if name in _COUNTS:
            low, high = _COUNTS[name]
            if off:
                changes[name] = low
                continue
            try:
                value = int(count) if count else _ON[name]
            except ValueError as exc:
                raise StrategiesError(f"{name}:{count}: the count must be a number") from exc
            if not low <= value <= high:
                raise StrategiesError(f"{name}:{value}: the count must be {low} to {high}")
            changes[name] = value
        elif count:
            raise StrategiesError(f"{name} takes no count")
        else:
            changes[name] = not off
    return replace(base, **changes)  # type: ignore[arg-type]


def describe(strategies: Strategies) -> str:
    """The model-side strategies that are on, as `parse_strategies` reads them ("none" for
    none): the configuration's name in the evaluation report."""
    on = []
    for name in (
        "plan",
        "self_check",
        "candidates",
        "variations",
        "remember_failures",
        "redraft",
        "ask_unmatched",
        "ask_vague",
    ):
        value = getattr(strategies, name)
        if name in _COUNTS:
            if value != _COUNTS[name][0]:
                on.append(f"{name}:{value}")
        elif value:
            on.append(name)
    return ",".join(on) or "none"
