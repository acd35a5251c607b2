"""`querybot chat`: an interactive terminal session on the same graph as Slack and `ask`.

One warehouse is opened for the whole session and every question goes to one thread, so a
follow-up ("and by month?") reads the answers before it. Each proposal waits at the prompt for
y (run it), n (reject it) or e (replace its SQL: the edit is checked like any draft and comes
back as a proposal of its own). Suggested follow-ups are numbered: typing the number asks it.
`/csv FILE` saves the whole last result (up to the row cap) and `/quit`, Ctrl-D or Ctrl-C end the
session. Input history is kept in the data directory (`chat_history`, the last HISTORY_LINES
lines), read back by the next session.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import getpass
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agent.conversation import Agent
from agent.model.recorded import RecordedChatModel
from agent.outcome import Answer, Outcome
from bot.commands.demo import DEMO_LABEL
from bot.commands.interrupts import interruptible
from bot.commands.terminal import outcome_text
from bot.commands.terminal_deployment import refusal, terminal_deployment
from bot.settings import Settings
from connectors.units import counted

#: Lines of input history kept between sessions.
HISTORY_LINES = 1000

HELP = """Type a question about the data, or paste a SQL statement, and press Enter.
  N            ask suggested follow-up number N
  /csv FILE    save the whole last result as CSV (up to the row cap)
  /help        this help
  /quit        end the session (or Ctrl-D, Ctrl-C)
At a proposal: y runs it, n rejects it, e lets you type or paste replacement SQL."""

APPROVE_PROMPT = "\nRun this query? [y]es / [n]o / [e]dit: "
EDIT_PROMPT = "Type or paste the SQL to run instead; an empty line ends it (nothing: keep it):"


class Ended(Exception):
    """The person ended the session (Ctrl-D or Ctrl-C at a prompt)."""


def read(prompt: str) -> str:
    """One line from the person; the end of input and Ctrl-C end the session."""
    try:
        return input(prompt)
    except (EOFError, KeyboardInterrupt):
        print(flush=True)  # end the prompt's line
        raise Ended from None


class Chat:
    """One session: its agent, thread, the last answer and the follow-ups on offer."""

    def __init__(
        self, agent: Agent, settings: Settings, *, yes: bool, samples: list[str] | None = None
    ) -> None:
        self.agent = agent
        self.settings = settings
        self.yes = yes
        self.thread_id = f"cli:{uuid.uuid4().hex}"
        self.user = getpass.getuser()
        self.answer: Answer | None = None
        #: In demo mode the recorded questions, offered whenever no follow-up is.
        self.samples = samples or []
        self.picks: list[str] = list(self.samples)

    def handle(self, line: str) -> bool:
        """Act on one line of input; False when the session should end."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("/"):
            return self.command(text)
        if text.isdigit():
            number = int(text)
            if not 1 <= number <= len(self.picks):
                offered = f"1 to {len(self.picks)}" if self.picks else "none now"
                print(f"There is no suggestion {number} ({offered}); type a question or /help.")
                return True
            text = self.picks[number - 1]
            print(f"> {text}")
        self.ask(text)
        return True

    def command(self, text: str) -> bool:
        name, _, rest = text.partition(" ")
        if name in {"/quit", "/exit"}:
            return False
        if name == "/help":
            print(HELP)
        elif name == "/csv":
            self.save_csv(rest.strip())
        else:
            print(f"Unknown command {name}; /help lists what there is.")
        return True

    def ask(self, question: str) -> None:
        refused = refusal(self.agent, question)
        if refused:
            print(refused)
            return
        outcome = self.agent.ask(self.thread_id, question, user=self.user)
        approved_sql = None  # the SQL just approved: its answer need not print it again
        while outcome.proposal and outcome.kind in {"proposal", "failed"}:
            print(outcome_text(outcome) if outcome.kind == "proposal" else outcome.message)
            if outcome.kind == "failed":  # a refused edit: the proposal waits on
                print("\n" + outcome_text(replace(outcome, kind="proposal")))
            outcome, approved_sql = self.decide(outcome)
        self.show(outcome, approved_sql)

    def decide(self, outcome: Outcome) -> tuple[Outcome, str | None]:
        """The person's decision on the proposal `outcome` shows, and what came of it."""
        shown = outcome.proposal
        assert shown is not None
        while True:
            choice = "y" if self.yes else read(APPROVE_PROMPT).strip().lower()
            if choice in {"e", "edit"}:
                sql = read_sql()
                if not sql:
                    continue
                edited = self.agent.edit(self.thread_id, shown.proposal_id, sql, user=self.user)
                return edited, None
            approved = choice in {"y", "yes"}
            decided = self.agent.decide(
                self.thread_id,
                shown.proposal_id,
                approved=approved,
                user=self.user,
                sql_sha256=shown.sql_sha256,
            )
            return decided, shown.sql if approved else None

    def show(self, outcome: Outcome, approved_sql: str | None) -> None:
        """Print `outcome`, its follow-ups numbered (outcome_text's own lines left out)."""
        answer = outcome.answer if outcome.kind == "answer" else None
        plain = replace(outcome, answer=replace(answer, follow_ups=[])) if answer else outcome
        print(outcome_text(plain, shown=self.settings.display_rows, approved_sql=approved_sql))
        if answer is not None:
            self.answer = answer
        self.picks = (answer.follow_ups if answer else []) or self.samples
        self.offer("Follow up" if answer and answer.follow_ups else "Demo questions")

    def offer(self, title: str) -> None:
        """List the questions a number picks."""
        if self.picks:
            print(f"\n{title} (type its number):")
            print("\n".join(f"  {n}. {q}" for n, q in enumerate(self.picks, 1)))

    def save_csv(self, name: str) -> None:
        if not name:
            print("Say where: /csv FILE (e.g. /csv revenue.csv).")
            return
        if self.answer is None:
            print("There is no result to save yet: ask a question first.")
            return
        path = Path(name).expanduser()
        try:
            with path.open("w", newline="", encoding="utf-8") as out:
                writer = csv.writer(out)
                writer.writerow(self.answer.columns)
                writer.writerows(self.answer.rows)
        except OSError as exc:
            print(f"Could not write {path}: {exc.strerror or exc}. Nothing was saved.")
            return
        written = counted(len(self.answer.rows), "row")
        capped = (
            f"; the query stopped at the row cap (QUERYBOT_ROW_LIMIT={self.settings.row_limit}), "
            "so more rows may exist"
            if self.answer.capped
            else ""
        )
        print(f"Wrote {written} to {path}{capped}.")


def read_sql() -> str:
    """Lines of SQL the person types or pastes, up to an empty line."""
    print(EDIT_PROMPT)
    lines: list[str] = []
    while line := read("... " if lines else "sql> ").rstrip():
        lines.append(line)
    return "\n".join(lines)


def history(path: Path) -> Callable[[], None]:
    """Load the input history from `path` (readline, where Python has it); returns what saves
    it back, bounded to HISTORY_LINES."""
    try:
        import readline
    except ImportError:  # Windows' Python has no readline: no history, the session still runs
        return lambda: None
    readline.set_history_length(HISTORY_LINES)
    with contextlib.suppress(OSError):  # none yet, or unreadable: start without
        readline.read_history_file(path)

    def save() -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError as exc:
            print(f"(input history not saved to {path}: {exc.strerror or exc})", file=sys.stderr)

    return save


def run(args: argparse.Namespace, settings: Settings) -> int:
    """`querybot chat`: open the warehouse once, then answer until the person ends it."""
    deployment = terminal_deployment(settings, demo=args.demo)
    try:
        agent = deployment.open_warehouse(deployment.config.pick(args.warehouse))
        model = deployment.model
        samples = model.questions if isinstance(model, RecordedChatModel) else None
        chat = Chat(agent, settings, yes=args.yes, samples=samples)
        save_history = history(settings.data_dir / "chat_history")
        if samples is not None:
            print(DEMO_LABEL)
        print(f"querybot chat on {agent.deps.connector.name}: /help for commands, /quit to end.")
        chat.offer("Demo questions")
        try:
            with interruptible():
                while chat.handle(read("\nquerybot> ")):
                    pass
        except Ended:  # Ctrl-D or Ctrl-C at a prompt
            pass
        finally:
            save_history()
        print(f"(thread {chat.thread_id}: continue with querybot ask --thread {chat.thread_id})")
        return 0
    finally:
        deployment.close()
