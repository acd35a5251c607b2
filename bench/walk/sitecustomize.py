"""The longest walk of a question through the project's own code, in the real bot process.

Not imported by querybot: put this folder on PYTHONPATH and Python's `site` loads it into every
process; only a `querybot run --http` process traces. It records the deepest chain of frames in
bot/, agent/ and connectors/ (import-time frames left out) that reaches connectors/ ("down"),
the deepest that passes the execute node on its way there ("execute"), and the deepest that
reaches a Slack Web API call ("back"), and writes them as JSON to WALK_OUT at exit:

    PYTHONPATH=bench/walk WALK_ROOT=$PWD WALK_OUT=/tmp/walk.json \
        uv run pytest -n 0 tests/e2e/test_answers.py -k single_value

The hook needs nothing from the project, so the same file measures an older checkout too.
"""

import atexit
import json
import os
import sys
import threading
from types import FrameType
from typing import Any

ROOT = os.environ.get("WALK_ROOT", "")
OUT = os.environ.get("WALK_OUT", "")
PACKAGES = ("bot", "agent", "connectors")
best: dict[str, list[str]] = {"down": [], "execute": [], "back": []}
lock = threading.Lock()


def _chain(frame: FrameType | None) -> list[str]:
    chain = []
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(ROOT + "/") and frame.f_code.co_name != "<module>":
            rel = name[len(ROOT) + 1 :]
            if rel.split("/", 1)[0] in PACKAGES:
                chain.append(f"{rel}:{frame.f_code.co_name}")
        frame = frame.f_back
    return chain[::-1]


def _profile(frame: FrameType, event: str, _arg: Any) -> None:
    if event != "call":
        return
    name = frame.f_code.co_filename
    if name.startswith(ROOT + "/connectors/"):
        kinds = ["down"]
    elif name.endswith("slack_sdk/web/base_client.py") and frame.f_code.co_name == "api_call":
        kinds = ["back"]
    else:
        return
    chain = _chain(frame)
    if not chain or not chain[0].startswith("bot/"):
        return
    if kinds == ["down"] and any(":execute" in step for step in chain):
        kinds.append("execute")
    with lock:
        for kind in kinds:
            if len(chain) > len(best[kind]):
                best[kind] = chain


def _write() -> None:
    sys.setprofile(None)
    with open(OUT, "w") as out:
        json.dump(best, out, indent=1)


if ROOT and OUT and "run" in sys.argv and "--http" in sys.argv:
    threading.setprofile(_profile)
    sys.setprofile(_profile)
    atexit.register(_write)
