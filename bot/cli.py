"""`querybot`: run the Slack bot, ask a question in the terminal, or check SQL with the gate."""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
import uuid
from typing import TYPE_CHECKING

from agent.models import ModelConfigError
from agent.postgres import StateDatabaseError
from bot.config import WarehouseError
from bot.settings import Settings, SettingsError
from bot.terminal import outcome_text
from connectors.base import ConnectorError

if TYPE_CHECKING:
    from agent.conversation import Agent

log = logging.getLogger("querybot")


def _run(args: argparse.Namespace, settings: Settings) -> int:
    slack = "SLACK_SIGNING_SECRET" if args.http else "SLACK_APP_TOKEN"
    settings.require("SLACK_BOT_TOKEN", slack, *settings.model_secrets())
    from bot.app import build_app, serve_http, serve_socket_mode
    from bot.routing import Router
    from bot.sandboxes import for_deployment
    from bot.store import open_store
    from bot.wiring import Deployment

    deployment = Deployment(settings)
    # files shared in a thread: that thread's own sandbox answers it (bot/sandboxes.py)
    sandboxes = for_deployment(deployment)
    try:
        router = Router(deployment.open_warehouses(), deployment.config, override=sandboxes.lookup)
        app = build_app(settings, router, open_store(settings), sandboxes=sandboxes)
        if args.http:
            log.info("querybot listening on http://0.0.0.0:%d/slack/events", args.port)
            serve_http(app, args.port, settings)
        else:
            log.info("querybot connecting to Slack in Socket Mode")
            serve_socket_mode(app, settings.slack_app_token)
    finally:
        sandboxes.close()
        deployment.close()  # waits for catalog refreshes, closes every warehouse
    return 0


def _ask(args: argparse.Namespace, settings: Settings) -> int:
    from bot.wiring import Deployment

    deployment = Deployment(settings)
    try:
        agent = deployment.open_warehouse(deployment.config.pick(args.warehouse))
        return _converse(agent, args, settings)
    finally:
        deployment.close()


def _converse(agent: Agent, args: argparse.Namespace, settings: Settings) -> int:
    thread_id = args.thread or f"cli:{uuid.uuid4().hex}"
    user = getpass.getuser()
    outcome = agent.ask(thread_id, args.question, user=user)
    while outcome.kind == "proposal" and outcome.proposal:
        print(outcome_text(outcome))
        if args.yes:
            approved = True
        else:
            reply = input("\nRun this query? [y/N] ").strip().lower()
            approved = reply in {"y", "yes"}
        shown = outcome.proposal  # the decision names the SQL just printed
        outcome = agent.decide(
            thread_id, shown.proposal_id, approved=approved, user=user, sql_sha256=shown.sql_sha256
        )
    print(outcome_text(outcome, shown=settings.display_rows))
    print(f"\n(thread {thread_id}: continue with --thread {thread_id})", file=sys.stderr)
    return 0 if outcome.kind in {"answer", "clarify", "rejected"} else 1


def _gate(argv: list[str]) -> int:
    from agent.gate.command import main as gate_main

    return gate_main(argv)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="querybot", description=__doc__)
    p.set_defaults(command="run", http=False, port=3000)  # plain `querybot` runs the bot
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run the Slack bot (Socket Mode unless --http)")
    run.add_argument("--http", action="store_true", help="serve Slack's HTTP events API instead")
    run.add_argument("--port", type=int, default=3000, help="port for --http (default 3000)")
    ask = sub.add_parser("ask", help="ask one question in the terminal, approving with y/n")
    ask.add_argument("question")
    ask.add_argument("--thread", help="continue an earlier terminal conversation")
    ask.add_argument("--yes", action="store_true", help="approve every proposal without asking")
    ask.add_argument(
        "--warehouse", metavar="NAME", help="a warehouse of QUERYBOT_CONFIG (default: its default)"
    )
    sub.add_parser(
        "gate", help="check one SQL text from stdin (see querybot gate --help)", add_help=False
    )
    doctor = sub.add_parser("doctor", help="check every configured warehouse, the model, Slack")
    doctor.add_argument("--warehouse", metavar="NAME", help="check only this warehouse")
    from bot.eval_command import add_arguments

    add_arguments(sub.add_parser("eval", help="measure answer quality on a golden set"))
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gate"]:
        return _gate(argv[1:])
    args = parser().parse_args(argv)
    # sqlglot warns when it falls back to a Command for SQL the gate then refuses anyway
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = Settings.from_env()
        if args.command == "ask":
            return _ask(args, settings)
        if args.command == "doctor":
            import os

            from bot.doctor import run as run_doctor

            return run_doctor(settings, os.environ, only=args.warehouse)
        if args.command == "eval":
            from bot.eval_command import run as run_eval

            return run_eval(args, settings)
        return _run(args, settings)
    except (SettingsError, ModelConfigError, StateDatabaseError) as exc:
        print(str(exc), file=sys.stderr)
    except WarehouseError as exc:  # names the warehouse itself
        print(f"{exc.message} {exc.hint}".strip(), file=sys.stderr)
    except ConnectorError as exc:
        print(f"The warehouse cannot be used: {exc.message} {exc.hint}".strip(), file=sys.stderr)
    except ValueError as exc:  # e.g. an unsupported QUERYBOT_WAREHOUSE
        print(str(exc), file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
