"""The deployment config file (QUERYBOT_CONFIG): good files, `${VAR}` expansion, and every kind
of mistake turned into one message naming the file, the key and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import SINGLE, deployment_config, load_config
from bot.settings import Settings, SettingsError

GOOD = """
default = "shop"

[warehouses.shop]
spec = "demo"
description = "The demo shop"

[warehouses.finance]
spec = "postgresql://querybot:${FINANCE_PASSWORD}@db.internal:5432/finance"
row_limit = 500
query_timeout_s = 12.5

[warehouses.files]
spec = "sqlite:///srv/data/${FILE_NAME}.db"

[channels]
C0FINANCE1 = "finance"
G0PRIVATE1 = "files"
"""

ENV = {"FINANCE_PASSWORD": "s3cr$t", "FILE_NAME": "survey"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "querybot.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD), ENV)
    assert list(config.warehouses) == ["shop", "finance", "files"]
    finance = config.warehouses["finance"]
    assert finance.spec == "postgresql://querybot:s3cr$t@db.internal:5432/finance"
    # what people are shown keeps the variable, not the secret
    assert (
        finance.shown_spec == "postgresql://querybot:${FINANCE_PASSWORD}@db.internal:5432/finance"
    )
    assert (finance.row_limit, finance.query_timeout_s) == (500, 12.5)
    assert config.warehouses["files"].spec == "sqlite:///srv/data/survey.db"
    assert config.warehouses["shop"].description == "The demo shop"
    assert config.warehouses["shop"].row_limit is None
    assert config.warehouse_for("C0FINANCE1") == "finance"
    assert config.warehouse_for("G0PRIVATE1") == "files"
    assert config.warehouse_for("C0ELSEWHERE") == "shop"
    assert config.warehouse_for("D0DIRECT01") == "shop"
    assert config.pick(None).name == "shop" and config.pick("files").name == "files"


def test_without_a_default_unmapped_channels_have_no_warehouse(tmp_path: Path) -> None:
    text = GOOD.replace('default = "shop"\n', "")
    config = load_config(write(tmp_path, text), ENV)
    assert config.default is None
    assert config.warehouse_for("C0ELSEWHERE") is None
    assert config.warehouse_for("C0FINANCE1") == "finance"
    with pytest.raises(SettingsError, match=r"several warehouses and no default.*--warehouse"):
        config.pick(None)


def test_one_warehouse_without_default_is_the_one_picked(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[warehouses.only]\nspec = "demo"\n'), {})
    assert config.pick(None).name == "only"
    assert config.warehouse_for("C0ANY00001") is None  # still no default for channels


def test_without_a_config_file_the_single_warehouse_answers_everywhere() -> None:
    settings = Settings.from_env({"QUERYBOT_WAREHOUSE": "sqlite:///x.db"}, dotenv=False)
    assert settings.config_file is None
    config = deployment_config(settings, {})
    assert list(config.warehouses) == [SINGLE]
    assert config.warehouses[SINGLE].spec == "sqlite:///x.db"
    assert config.warehouse_for("C0ANY00001") == SINGLE and config.path is None


def test_a_dbt_project_per_warehouse_relative_to_the_file(tmp_path: Path) -> None:
    text = GOOD.replace('description = "The demo shop"', 'dbt_project = "analytics/shop"')
    config = load_config(write(tmp_path, text), ENV)
    assert config.warehouses["shop"].dbt_project == tmp_path / "analytics" / "shop"
    assert config.warehouses["finance"].dbt_project is None
    settings = Settings.from_env({"QUERYBOT_DBT_PROJECT": "/srv/dbt"}, dotenv=False)
    assert deployment_config(settings, {}).warehouses[SINGLE].dbt_project == Path("/srv/dbt")


def test_settings_read_the_config_path(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    settings = Settings.from_env({"QUERYBOT_CONFIG": str(path)}, dotenv=False)
    assert settings.config_file == path
    assert list(deployment_config(settings, ENV).warehouses) == ["shop", "finance", "files"]


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        pytest.param(
            GOOD,
            {"FILE_NAME": "x"},
            r"warehouses\.finance\.spec: \$\{FINANCE_PASSWORD\} "
            r"is used but the environment variable FINANCE_PASSWORD is not set",
            id="unset-var",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "x${1BAD}"\n',
            {},
            r"warehouses\.a\.spec: \$\{1BAD\} is not "
            "an environment variable name",
            id="bad-var-name",
        ),
        pytest.param('default = "shop"\n', {}, r"warehouses: no warehouse is defined", id="none"),
        pytest.param(
            '[warehouses.a]\ndescription = "x"\n', {}, r"warehouses\.a\.spec: missing", id="no-spec"
        ),
        pytest.param(
            '[warehouses.a]\nspec = ""\n', {}, r"warehouses\.a\.spec: missing", id="empty-spec"
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nrow_limt = 5\n',
            {},
            r"warehouses\.a\.row_limt: unknown setting; a warehouse takes dbt_project, "
            "description, query_timeout_s, row_limit, run_as, spec",
            id="typo",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nrow_limit = 0\n',
            {},
            r"warehouses\.a\.row_limit: should be a whole number from 1 to 100000, not 0\.",
            id="row-limit",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nrow_limit = "ten"\n',
            {},
            r"warehouses\.a\.row_limit",
            id="row-limit-text",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nquery_timeout_s = -1\n',
            {},
            r"warehouses\.a\.query_timeout_s: should be a number above 0, at most 86400, not -1\.",
            id="timeout",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nrow_limit = 100001\n',
            {},
            r"warehouses\.a\.row_limit: should be a whole number from 1 to 100000, not 100001\.",
            id="row-limit-over",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nrow_limit = true\n',
            {},
            r"warehouses\.a\.row_limit: should be a whole number from 1 to 100000, not True\.",
            id="row-limit-bool",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\nquery_timeout_s = 1e9\n',
            {},
            r"warehouses\.a\.query_timeout_s: should be a number above 0, at most 86400",
            id="timeout-over",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\ndescription = 3\n',
            {},
            r"warehouses\.a\.description: should be text",
            id="description",
        ),
        pytest.param(
            '[warehouses."a b"]\nspec = "demo"\n',
            {},
            r"warehouses\.a b: a warehouse name",
            id="bad-name",
        ),
        pytest.param(
            'warehouses = "demo"\n', {}, r"warehouses: no warehouse is defined", id="flat"
        ),
        pytest.param(
            '[warehouses]\na = "demo"\n',
            {},
            r"warehouses\.a: write it as a table",
            id="not-a-table",
        ),
        pytest.param(
            'default = "nope"\n[warehouses.a]\nspec = "demo"\n',
            {},
            r"default: 'nope' is not a warehouse of this file; use one of: a",
            id="bad-default",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\n[channels]\nC0123ABCD = "b"\n',
            {},
            r"channels\.C0123ABCD: 'b' is not a warehouse of this file; use one of: a",
            id="bad-target",
        ),
        pytest.param(
            '[warehouses.a]\nspec = "demo"\n[channels]\ngeneral = "a"\n',
            {},
            r"channels\.general: not a Slack channel id; use the id",
            id="channel-name",
        ),
        pytest.param(
            'channels = ["C0123ABCD"]\n[warehouses.a]\nspec = "demo"\n',
            {},
            r"channels: write it as a table",
            id="channels-list",
        ),
        pytest.param('warehouse = "demo"\n', {}, r"warehouse: unknown key", id="unknown-top"),
        pytest.param('[warehouses.a\nspec = "demo"\n', {}, r"is not valid TOML", id="toml"),
    ],
)
def test_mistakes_name_the_file_and_the_key(
    tmp_path: Path, text: str, env: dict[str, str], expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SettingsError, match=expected) as caught:
        load_config(path, env)
    assert str(caught.value).startswith(str(path))


def test_a_missing_file_says_how_to_go_on(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"there is no such file.*unset QUERYBOT_CONFIG"):
        load_config(tmp_path / "nope.toml", {})


def test_pick_an_unknown_name(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD), ENV)
    with pytest.raises(SettingsError, match=r"no warehouse named 'hr'.*shop, finance, files"):
        config.pick("hr")


def test_a_channel_may_send_its_answers_only_to_asker_and_approver(tmp_path: Path) -> None:
    text = GOOD.replace(
        'G0PRIVATE1 = "files"',
        'G0PRIVATE1 = { warehouse = "files", answers = "private" }\n'
        'C0THREAD01 = { warehouse = "shop", answers = "thread" }\n'
        'C0PLAIN001 = { warehouse = "shop" }',
    )
    config = load_config(write(tmp_path, text), ENV)
    assert config.warehouse_for("G0PRIVATE1") == "files"
    assert config.warehouse_for("C0THREAD01") == config.warehouse_for("C0PLAIN001") == "shop"
    assert config.answers_private("G0PRIVATE1")
    for channel in ("C0FINANCE1", "C0THREAD01", "C0PLAIN001", "C0ELSEWHERE", "D0DIRECT01"):
        assert not config.answers_private(channel)


@pytest.mark.parametrize(
    ("entry", "key", "problem"),
    [
        ('{ warehouse = "files", answers = "dm" }', "channels.G0PRIVATE1.answers", '"thread"'),
        ('{ warehouse = "files", post = "x" }', "channels.G0PRIVATE1.post", "unknown setting"),
        ('{ answers = "private" }', "channels.G0PRIVATE1", "is not a warehouse"),
    ],
)
def test_a_channel_table_with_a_mistake_says_what_to_write(
    tmp_path: Path, entry: str, key: str, problem: str
) -> None:
    text = GOOD.replace('G0PRIVATE1 = "files"', f"G0PRIVATE1 = {entry}")
    with pytest.raises(SettingsError) as raised:
        load_config(write(tmp_path, text), ENV)
    assert f"querybot.toml: {key}: " in str(raised.value) and problem in str(raised.value)


ALLOWLISTED = """
[warehouses.files]
spec = "sqlite:///srv/data/shop.db"

[warehouses.files.run_as]
users = { U0ANA0001 = "sales" }
unmapped = "staff"

[warehouses.files.run_as.tables]
sales = ["orders", "main.customers"]
staff = ["products"]
"""


def test_table_allowlists_per_identity(tmp_path: Path) -> None:
    rules = load_config(write(tmp_path, ALLOWLISTED), {}).warehouses["files"].run_as
    assert rules is not None
    assert rules.tables == {"sales": ("orders", "main.customers"), "staff": ("products",)}
    assert rules.roles() == ["sales", "staff"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            ('staff = ["products"]', ""),
            r"warehouses\.files\.run_as\.tables: 'staff' \(named by the rules\) has no "
            r'allowlist; add staff = \["table", \.\.\.\]',
            id="missing-identity",
        ),
        pytest.param(
            ('staff = ["products"]', 'staff = ["products"]\nnobody = ["x"]'),
            r"warehouses\.files\.run_as\.tables\.nobody: no rule names this identity",
            id="unnamed-identity",
        ),
        pytest.param(
            ('staff = ["products"]', "staff = []"),
            r"warehouses\.files\.run_as\.tables\.staff: should be a list of table names",
            id="empty-list",
        ),
        pytest.param(
            ('staff = ["products"]', 'staff = "products"'),
            r"warehouses\.files\.run_as\.tables\.staff: should be a list of table names",
            id="not-a-list",
        ),
        pytest.param(
            ('staff = ["products"]', 'staff = ["products", " "]'),
            r"warehouses\.files\.run_as\.tables\.staff: should be a list of table names",
            id="blank-name",
        ),
    ],
)
def test_allowlist_mistakes_name_the_key(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    path = write(tmp_path, ALLOWLISTED.replace(*change))
    with pytest.raises(SettingsError, match=expected):
        load_config(path, {})


def test_run_as_tables_must_be_a_table(tmp_path: Path) -> None:
    text = '[warehouses.a]\nspec = "demo"\n[warehouses.a.run_as]\nunmapped = "x"\ntables = 3\n'
    with pytest.raises(SettingsError, match=r"warehouses\.a\.run_as\.tables: write it as a table"):
        load_config(write(tmp_path, text), {})
