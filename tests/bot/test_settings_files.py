"""The QUERYBOT_FILE_* bounds on uploads (issue 15, item 6): defaults, values, and a message
naming the variable when one is not above 0."""

from __future__ import annotations

import pytest

from bot.files.sandboxes import sandbox_limits
from bot.settings import Settings, SettingsError
from connectors.sandbox.bounds import MIB, SandboxLimits

BOUNDS = [
    "QUERYBOT_FILE_MAX_COLUMNS",
    "QUERYBOT_FILE_MAX_CELLS",
    "QUERYBOT_FILE_MAX_EXPANDED_MB",
    "QUERYBOT_FILE_MEMORY_MB",
    "QUERYBOT_FILE_TIMEOUT_S",
    "QUERYBOT_FILE_DISK_MB",
]


def test_the_defaults_are_the_loaders_own() -> None:
    assert sandbox_limits(Settings.from_env({}, dotenv=False)) == SandboxLimits()


def test_values_reach_the_loader() -> None:
    env = dict(zip(BOUNDS, ["40", "1000", "64", "300", "7.5", "20"], strict=True))
    limits = sandbox_limits(Settings.from_env(env, dotenv=False))
    assert (limits.max_columns, limits.max_cells) == (40, 1000)
    assert (limits.max_expanded_bytes, limits.memory_bytes) == (64 * MIB, 300 * MIB)
    assert (limits.timeout_s, limits.disk_bytes) == (7.5, 20 * MIB)


@pytest.mark.parametrize("name", BOUNDS)
@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_bound_must_be_above_zero(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({name: value}, dotenv=False)
    message = str(caught.value)
    assert message.startswith(f"{name} must be a ")
    assert message.endswith(f"got '{value}'.")
    assert " from 1 to " in message or " above 0, at most " in message
