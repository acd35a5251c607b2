"""How soon a question shows life in its Slack thread: the real bot process with thread statuses
and the streamed plan on, driven by signed channel mentions against the Web API stand-in.

    uv run python -m bench.slack_surface_report [--questions 20] [--warmup 1]
        [--model instant | --model openai:http://127.0.0.1:PORT/v1] [--json PATH]
    uv run python -m bench.slack_surface_report --short     # CI: 3 questions, instant model

One question at a time, each a top-level mention in a channel (the bot answers in its thread),
timed from the signed `app_mention` leaving the client to the stand-in answering the first
`assistant.threads.setStatus` with a status, the first `chat.startStream` (the plan appears),
the first stream call carrying text (a `markdown_text` chunk: the proposal's explanation, sent
with the plan's last pieces, in `chat.appendStream` or `chat.stopStream`), and the chat.update
that turns "Working on it…" into the proposal card: median, p95 and max, the first WARMUP
questions left out.

- instant: the scripted model replying the demo golden set's gold SQL at once, as
  bench/load_report.py does; the figures are the bot's own overhead.
- openai:URL: a real model on an OpenAI-compatible server (`bench.local_model --serve` prints
  the URL), the model named by the server's `/models`; a question it does not turn into a
  proposal still counts for the steps it showed.

The machine's 1-minute load average is noted before and after. The exit status is 1 when a
question showed no status or no plan, or the stand-in refused a call; timings never fail it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from bench.load_measures import spread_ms
from bench.load_run import Run
from bench.load_script import asked
from bench.load_slack import Call, ask, is_proposal, shown_at
from connectors.demo.build import ensure_demo

#: The measured steps: (key, what the line says).
STEPS = [
    ("status", "first status"),
    ("plan", "plan streamed (chat.startStream)"),
    ("text", "first streamed text"),
    ("proposal", "proposal card"),
]
ON = {"QUERYBOT_SLACK_STREAM": "true", "QUERYBOT_SLACK_STATUS": "true"}
STREAM_CALLS = {"chat.startStream", "chat.appendStream", "chat.stopStream"}


def model_env(model: str) -> dict[str, str]:
    """The bot's variables for `openai:URL`, naming the server's (first) model; {} for instant."""
    if model == "instant":
        return {}
    url = model.removeprefix("openai:").rstrip("/")
    with urllib.request.urlopen(f"{url}/models", timeout=10) as response:
        name = json.load(response)["data"][0]["id"]
    return {"QUERYBOT_MODEL": f"openai:{name}", "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "local"}


def has_text(call: Call) -> bool:
    chunks = call.params.get("chunks") or []
    return call.params.get("markdown_text") is not None or any(
        isinstance(c, dict) and c.get("type") == "markdown_text" for c in chunks
    )


def one_question(run: Run, question: str, timeout: float) -> dict[str, float]:
    """Ask `question`; seconds from the mention to each step the thread showed."""
    root, mention = ask(run.bot, run.channel, question)
    slack = run.slack

    def in_thread(call: Call) -> bool:
        return call.ok and call.params.get("thread_ts") == root

    def started(call: Call) -> bool:
        return in_thread(call) and call.method == "chat.startStream"

    def stopped() -> Call | None:
        begun = next((c for c in slack.calls_to("chat.startStream") if started(c)), None)
        ts = begun.answer.get("ts") if begun else None
        return next(
            (c for c in slack.calls_to("chat.stopStream") if ts and c.params.get("ts") == ts),
            None,
        )

    try:  # the stream stops when the job ends, whatever it came to
        stream = slack.wait_for(stopped, timeout=timeout, what="the stream stopped").params["ts"]
    except AssertionError:
        run.problems.append(f"no stream stopped for {question!r} within {timeout:g} s")
        stream = ""
    found = {
        "status": slack.first_call(
            lambda c: (
                in_thread(c) and c.method == "assistant.threads.setStatus" and c.params["status"]
            )
        ),
        "plan": slack.first_call(started),
        "text": slack.first_call(
            lambda c: (
                c.ok
                and c.method in STREAM_CALLS
                and (started(c) or c.params.get("ts") == stream)
                and has_text(c)
            )
        ),
    }
    proposal = run.wait([root], is_proposal, "proposal", 5).get(root)
    if proposal is not None:
        found["proposal"] = shown_at(slack, proposal, is_proposal)
    for key in ("status", "plan"):
        if found[key] is None:
            run.problems.append(f"no {key} shown for {question!r}")
    return {key: at - mention.at for key, at in found.items() if at is not None}


def measure(root: Path, demo: Path, model: str, count: int, warmup: int) -> dict[str, Any]:
    questions, script = asked(warmup + count)
    timeout = 30 if model == "instant" else 600
    env = model_env(model)
    run = Run(root / "surface", demo, script, {**ON, **env})
    load_before = os.getloadavg()[0]
    try:
        run.start()
        timings = [one_question(run, q, timeout) for q in questions][warmup:]
    finally:
        run.stop()
    out: dict[str, Any] = {
        "model": env.get("QUERYBOT_MODEL", "instant"),
        "questions": count,
        "warmup": warmup,
        "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "problems": run.problems,
    }
    for key, _ in STEPS:
        out[key] = spread_ms([t[key] for t in timings if key in t])
    return out


def render(out: dict[str, Any]) -> str:
    lines = [
        f"model {out['model']}: {out['questions']} questions one at a time "
        f"(after {out['warmup']} left out); load {out['load_1min'][0]} -> {out['load_1min'][1]}"
    ]
    for key, what in STEPS:
        f = out[key]
        figures = (
            f"median {f['median_ms']} ms, p95 {f['p95_ms']} ms, max {f['max_ms']} ms"
            if f["n"]
            else "never"
        )
        lines.append(f"mention -> {what}: {figures} (n={f['n']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--short", action="store_true", help="CI: 3 questions, the instant model")
    p.add_argument("--questions", type=int, default=20)
    p.add_argument("--warmup", type=int, default=1, help="first questions left out")
    p.add_argument("--model", default="instant", help="instant, or openai:URL (.../v1)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    if args.short:
        args.questions, args.warmup, args.model = 3, 1, "instant"
    with tempfile.TemporaryDirectory(prefix="querybot-surface-") as tmp:
        demo = ensure_demo(Path(tmp) / "demo")
        out = measure(Path(tmp), demo, args.model, args.questions, args.warmup)
    print(render(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    for problem in out["problems"]:
        print(f"PROBLEM: {problem}")
    return 1 if out["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
