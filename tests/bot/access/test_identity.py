"""Who a Slack user is in a warehouse (bot/access/identity.py): the `run_as` rules of the config
file, checked with messages naming the key, and applied through the real WebClient against the Slack
stand-in (users.info for emails, usergroups.users.list for groups)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.access.identity import REFUSED, Directory, RunAs, RunAsRules
from bot.config import load_config
from bot.settings import SettingsError
from tests.support.standin import SlackStandin

ANA, BO, CY, DEE = "U0ANA0001", "U0BO00001", "U0CY00001", "U0DEE0001"
SALES = "S0SALES01"


def config(tmp_path: Path, run_as: str) -> RunAsRules | None:
    path = tmp_path / "querybot.toml"
    path.write_text(f'[warehouses.pg]\nspec = "demo"\n{run_as}', encoding="utf-8")
    return load_config(path, {}).warehouses["pg"].run_as


def refused_by(tmp_path: Path, run_as: str) -> str:
    with pytest.raises(SettingsError) as caught:
        config(tmp_path, run_as)
    return str(caught.value)


def test_rules_parse_and_unmapped_defaults_to_refuse(tmp_path: Path) -> None:
    rules = config(
        tmp_path,
        "[warehouses.pg.run_as]\n"
        f'users = {{ {ANA} = "ana_role" }}\n'
        'emails = { "Bo@Example.com" = "bo role", "@example.com" = "staff" }\n'
        f'groups = {{ {SALES} = "sales" }}\n',
    )
    assert rules == RunAsRules(
        users={ANA: "ana_role"},
        emails={"bo@example.com": "bo role", "@example.com": "staff"},
        groups=((SALES, "sales"),),
        unmapped=None,
    )
    assert rules.roles() == ["ana_role", "bo role", "sales", "staff"]
    assert config(tmp_path, "") is None  # no run_as: the bot's own login, as before


@pytest.mark.parametrize(
    ("run_as", "key", "says"),
    [
        ('run_as = "ana"', "warehouses.pg.run_as", "write it as a table"),
        ("[warehouses.pg.run_as]\nwho = 1", "warehouses.pg.run_as.who", "unknown setting"),
        ('[warehouses.pg.run_as]\nusers = { ana = "r" }', "run_as.users.ana", "Slack user id"),
        ('[warehouses.pg.run_as]\ngroups = { U0X1 = "r" }', "run_as.groups.U0X1", "group id"),
        ('[warehouses.pg.run_as]\nemails = { "bo" = "r" }', "run_as.emails.bo", "email"),
        (f"[warehouses.pg.run_as]\nusers = {{ {ANA} = 3 }}", f"users.{ANA}", "role name"),
        # 128: a BigQuery service account's email; PostgreSQL's 63 bytes are its connector's
        (f'[warehouses.pg.run_as]\nusers = {{ {ANA} = "{"r" * 129}" }}', ANA, "1-128"),
        ("[warehouses.pg.run_as]\nunmapped = ''", "run_as.unmapped", "role name"),
    ],
)
def test_bad_rules_say_which_key_and_what_to_write(
    tmp_path: Path, run_as: str, key: str, says: str
) -> None:
    message = refused_by(tmp_path, run_as)
    assert key in message and says in message


@pytest.fixture
def directory() -> Iterator[tuple[Directory, SlackStandin]]:
    with SlackStandin() as slack:
        client = WebClient(token="xoxb-standin", base_url=slack.url)
        yield Directory(client), slack


def test_people_are_found_by_id_then_email_then_domain_then_group(
    directory: tuple[Directory, SlackStandin],
) -> None:
    found, slack = directory
    slack.emails.update(
        {ANA: "ana@example.com", BO: "BO@example.com", CY: "cy@example.com", DEE: "dee@else.org"}
    )
    slack.usergroups[SALES] = [CY, DEE]
    rules = RunAsRules(
        users={ANA: "listed"},
        emails={
            "ana@example.com": "ana_mail",
            "bo@example.com": "bo_mail",
            "@example.com": "staff",
        },
        groups=((SALES, "sales"),),
    )
    assert found.run_as(rules, ANA) == RunAs("listed", "listed")
    assert found.run_as(rules, BO) == RunAs("bo_mail", "email")
    assert found.run_as(rules, CY) == RunAs("staff", "email domain")
    assert found.run_as(rules, DEE) == RunAs("sales", f"group {SALES}")
    # nobody names this person, and unmapped is "refuse"
    outsider = found.run_as(rules, "U0OUT0001")
    assert outsider.role == "" and outsider.refusal == REFUSED
    assert "nothing ran" in REFUSED and "run_as" in REFUSED
    # unmapped may name a role instead
    assert found.run_as(RunAsRules(unmapped="guest"), "U0OUT0001") == RunAs("guest", "unmapped")
    # no rules: the connector's own login
    assert found.run_as(None, ANA) == RunAs(how="login")


def test_slack_is_asked_once_per_person_and_group_and_fails_closed(
    directory: tuple[Directory, SlackStandin],
) -> None:
    found, slack = directory
    slack.emails[BO] = "bo@example.com"
    slack.usergroups[SALES] = [BO]
    groups = ((SALES, "sales"), ("S0GONE001", "x"))
    rules = RunAsRules(emails={"@other.org": "other"}, groups=groups)
    for _ in range(3):
        assert found.run_as(rules, BO).role == "sales"
    methods = [c.method for c in slack.calls]
    assert methods.count("users.info") == 1 and methods.count("usergroups.users.list") == 1
    # a group Slack does not know, and a user Slack does not know: no role from them
    gone = RunAsRules(groups=(("S0GONE001", "x"),))
    assert found.run_as(gone, BO).refusal == REFUSED
    assert found.run_as(RunAsRules(emails={"@example.com": "staff"}), "U0NOBODY1").refusal
