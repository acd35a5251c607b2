"""How long each test file took in a recorded run, so that `pytest -n N --dist loadfile` can
start the dearest files first (tests/conftest.py) instead of leaving a long one to run alone at
the end while the other workers idle.

The record (`file_seconds.json` beside this module) only orders files: a stale or missing entry
makes a run slower, never wrong. Refresh it from a whole run's JUnit report:

    uv run pytest -n 3 --junitxml=/tmp/run.xml
    uv run python -m tests.support.file_seconds /tmp/run.xml
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

RECORD = Path(__file__).with_name("file_seconds.json")
ROOT = Path(__file__).resolve().parents[2]

#: Seconds assumed for a test file the record does not name, by whether the test is marked slow.
SLOW_S, FAST_S = 5.0, 0.05


def recorded() -> dict[str, float]:
    """Seconds per test file (its path from the project root), as last recorded."""
    if not RECORD.is_file():
        return {}
    seconds: dict[str, float] = json.loads(RECORD.read_text())
    return seconds


def from_junit(report: Path) -> dict[str, float]:
    """Seconds per test file in a JUnit report (setup, call and teardown of each test)."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        module = next(
            (parts[: i + 1] for i, part in enumerate(parts) if part.startswith("test_")), None
        )
        if module:
            seconds["/".join(module) + ".py"] += float(case.get("time") or 0.0)
    return {path: round(s, 1) for path, s in sorted(seconds.items())}


def main() -> None:
    seconds = from_junit(Path(sys.argv[1]))
    RECORD.write_text(json.dumps(seconds, indent=0, sort_keys=True) + "\n")
    print(f"{len(seconds)} files, {sum(seconds.values()):.0f} s in all -> {RECORD}")


if __name__ == "__main__":
    main()
