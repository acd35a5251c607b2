"""`querybot`: run the Slack bot, ask questions in the terminal, or check SQL with the gate."""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
import uuid
from typing import TYPE_CHECKING

# Only light modules here (a test checks): `querybot --help` must not wait for LangChain,
# LangGraph or DuckDB; each command imports what it runs once arguments are parsed.
from bot.commands.evaluate_arguments import add_arguments as add_eval_arguments
from bot.commands.feedback_arguments import add_arguments as add_feedback_arguments

if TYPE_CHECKING:
    from agent.conversation import Agent
    from bot.settings import Settings

log = logging.getLogger("querybot")

#: Said when the y/N prompt reads the end of standard input (closed, or Ctrl-D).
NO_REPLY = (
    "No reply at the prompt (standard input is closed), so the query was not run; "
    "use --yes to approve without being asked."
)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    slack = "SLACK_SIGNING_SECRET" if args.http else "SLACK_APP_TOKEN"
    settings.require("SLACK_BOT_TOKEN", slack, *settings.model_secrets())
    from bot.app import build_app, serve_http, serve_socket_mode
    from bot.wiring import serving

    # closes the sandboxes, then every warehouse (waiting for catalog refreshes) on the way out
    with serving(settings) as served:
        app = build_app(settings, served.router, served.store, sandboxes=served.sandboxes)
        if args.http:
            serve_http(app, args.port, settings)
        else:
            log.info("querybot connecting to Slack in Socket Mode")
            serve_socket_mode(app, settings.slack_app_token, ping_s=settings.socket_ping_s)
    return 0


def _ask(args: argparse.Namespace, settings: Settings) -> int:
    from bot.commands.demo import DEMO_LABEL
    from bot.commands.interrupts import interruptible
    from bot.commands.terminal_deployment import terminal_deployment

    deployment = terminal_deployment(settings, demo=args.demo)
    if args.demo:
        print(DEMO_LABEL, file=sys.stderr)
    try:
        agent = deployment.open_warehouse(deployment.config.pick(args.warehouse))
        with interruptible():  # Ctrl-C at the y/N prompt, whichever thread takes it
            return _converse(agent, args, settings)
    finally:
        deployment.close()


def _converse(agent: Agent, args: argparse.Namespace, settings: Settings) -> int:
    from bot.commands.terminal import outcome_text
    from bot.commands.terminal_deployment import refusal

    if args.thread and not agent.has_thread(args.thread):
        print(_unknown_thread(args.thread, settings), file=sys.stderr)
        return 2
    refused = refusal(agent, args.question)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    thread_id = args.thread or f"cli:{uuid.uuid4().hex}"
    user = getpass.getuser()
    outcome = agent.ask(thread_id, args.question, user=user)
    approved_sql = None  # the SQL just printed and approved: its answer need not print it again
    while outcome.kind == "proposal" and outcome.proposal:
        print(outcome_text(outcome, approved_sql=approved_sql))
        approved = args.yes or _approved()
        shown = outcome.proposal  # the decision names the SQL just printed
        approved_sql = shown.sql if approved else None
        outcome = agent.decide(
            thread_id, shown.proposal_id, approved=approved, user=user, sql_sha256=shown.sql_sha256
        )
    print(outcome_text(outcome, shown=settings.display_rows, approved_sql=approved_sql))
    print(f"\n(thread {thread_id}: continue with --thread {thread_id})", file=sys.stderr)
    return 0 if outcome.kind in {"answer", "clarify", "rejected"} else 1


def _approved() -> bool:
    """The person's y/N; the end of standard input is a no, said on stderr."""
    try:
        reply = input("\nRun this query? [y/N] ")
    except EOFError:
        print(flush=True)  # end the prompt's line
        print(NO_REPLY, file=sys.stderr)
        return False
    return reply.strip().lower() in {"y", "yes"}


def _unknown_thread(thread_id: str, settings: Settings) -> str:
    where = "QUERYBOT_STATE_URL" if settings.state_url else str(settings.state_db)
    return (
        f"There is no conversation {thread_id!r} in {where}, so nothing was asked: leave out "
        "--thread to start a new one (each `querybot ask` ends by printing its id)."
    )


def _gate(argv: list[str]) -> int:
    from bot.commands.gate import main as gate_main

    return gate_main(argv)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="querybot", description=__doc__)
    p.set_defaults(http=False, port=3000)  # plain `querybot` runs the bot (see main)
    verbose_help = "log INFO messages too (the bot's `run` always does; others log warnings)"
    p.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    # also after the command; SUPPRESS keeps a `querybot -v ask` from being reset by `ask`
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=verbose_help
    )
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser(
        "run", parents=[common], help="run the Slack bot (Socket Mode unless --http)"
    )
    run.add_argument("--http", action="store_true", help="serve Slack's HTTP events API instead")
    run.add_argument("--port", type=int, default=3000, help="port for --http (default 3000)")
    ask = sub.add_parser(
        "ask", parents=[common], help="ask one question in the terminal, approving with y/n"
    )
    ask.add_argument("question")
    ask.add_argument(
        "--thread", metavar="ID", help="continue an earlier conversation (its id was printed)"
    )
    ask.add_argument("--yes", action="store_true", help="approve every proposal without asking")
    chat = sub.add_parser(
        "chat",
        parents=[common],
        help="a terminal session: questions, follow-ups and approvals at the prompt",
    )
    chat.add_argument("--yes", action="store_true", help="approve every proposal without asking")
    for terminal in (ask, chat):
        terminal.add_argument(
            "--warehouse",
            metavar="NAME",
            help="a warehouse of QUERYBOT_CONFIG (default: its default)",
        )
        terminal.add_argument(
            "--demo",
            action="store_true",
            help="the demo warehouse answered from recorded model replies: no key, no model",
        )
    sub.add_parser(
        "gate",
        help="check one SQL statement against the warehouse's tables (see querybot gate --help)",
        add_help=False,
    )
    doctor = sub.add_parser(
        "doctor", parents=[common], help="check every configured warehouse, the model, Slack"
    )
    doctor.add_argument("--warehouse", metavar="NAME", help="check only this warehouse")
    doctor.add_argument(
        "--no-slack", action="store_true", help="leave Slack out (for `ask` and `eval` only)"
    )
    add_eval_arguments(
        sub.add_parser("eval", parents=[common], help="measure answer quality on a golden set")
    )
    add_feedback_arguments(
        sub.add_parser(
            "feedback",
            parents=[common],
            help="list the thumbs down people gave answers in Slack, for review",
        )
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gate"]:
        return _gate(argv[1:])
    args = parser().parse_args(argv)
    # sqlglot warns when it falls back to a Command for SQL the gate then refuses anyway
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    args.command = args.command or "run"  # plain `querybot` runs the bot
    verbose = args.verbose or args.command == "run"  # a service's log is its record
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from agent.memory.postgres import StateDatabaseError
    from agent.model.providers import ModelConfigError
    from bot.config import WarehouseError
    from bot.http_server import CannotListen
    from bot.settings import Settings, SettingsError
    from bot.slack_check import SlackUnusable
    from connectors.base import ConnectorError

    try:
        settings = Settings.from_env()
        if args.command == "ask":
            return _ask(args, settings)
        if args.command == "chat":
            from bot.commands.chat import run as run_chat

            return run_chat(args, settings)
        if args.command == "doctor":
            import os

            from bot.doctor.deployment import run as run_doctor

            return run_doctor(settings, os.environ, only=args.warehouse, slack=not args.no_slack)
        if args.command == "eval":
            from bot.commands.evaluate import run as run_eval

            return run_eval(args, settings)
        if args.command == "feedback":
            from bot.commands.feedback import run as run_feedback

            return run_feedback(args, settings)
        return _run(args, settings)
    except (SettingsError, ModelConfigError, StateDatabaseError) as exc:
        print(str(exc), file=sys.stderr)
    except (SlackUnusable, CannotListen) as exc:
        print(f"querybot cannot start: {exc}", file=sys.stderr)
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
