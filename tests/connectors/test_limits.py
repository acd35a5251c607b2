"""The resource bounds' settings and their measure (connectors/limits.py), without an engine."""

from __future__ import annotations

import pytest

from bot.settings import Settings, SettingsError
from connectors.limits import MIB, Meter, ResourceLimitExceeded, RunLimits, value_bytes


def test_settings_read_the_four_bounds_with_their_defaults() -> None:
    assert Settings.from_env({}, dotenv=False).limits == RunLimits()
    env = {
        "QUERYBOT_MAX_CELL_BYTES": "5000",
        "QUERYBOT_MAX_RESULT_MB": "8",
        "QUERYBOT_ENGINE_MEMORY_MB": "256",
        "QUERYBOT_ENGINE_TEMP_MB": "100",
    }
    limits = Settings.from_env(env, dotenv=False).limits
    assert limits == RunLimits(
        max_cell_bytes=5000, max_result_bytes=8 * MIB, engine_memory_mb=256, engine_temp_mb=100
    )


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "lots"])
def test_a_bound_that_is_not_a_positive_whole_number_is_refused_by_name(value: str) -> None:
    with pytest.raises(SettingsError, match="QUERYBOT_MAX_RESULT_MB"):
        Settings.from_env({"QUERYBOT_MAX_RESULT_MB": value}, dotenv=False)


def test_values_are_measured_in_utf8_bytes_and_long_ones_are_not_walked_to_the_end() -> None:
    assert value_bytes("abc", 100) == 3
    assert value_bytes("é" * 10, 100) == 20
    assert value_bytes(b"\x00" * 7, 100) == 7
    assert value_bytes(["ab", "cd"], 100) == 2 * (8 + 2)
    assert value_bytes({"k": "v" * 50}, 100) == 8 + 1 + 8 + 50
    assert 100 < value_bytes(list(range(10**6)), 100) < 200  # stopped once past the cap


def test_the_meter_counts_the_rest_without_keeping_it_but_still_checks_each_value() -> None:
    meter = Meter(RunLimits(max_cell_bytes=10, max_result_bytes=100), lambda: ["name"])
    kept, total = meter.read(iter([("x" * 10,)] * 50), max_rows=3)
    assert len(kept) == 3 and total == 50
    with pytest.raises(ResourceLimitExceeded, match=r"'name'.*QUERYBOT_MAX_CELL_BYTES"):
        meter.read(iter([("short",), ("x" * 11,)]), max_rows=1)
    with pytest.raises(ResourceLimitExceeded, match="QUERYBOT_MAX_RESULT_MB"):
        Meter(RunLimits(max_result_bytes=100)).read(iter([("x" * 30,)] * 10), max_rows=10)
