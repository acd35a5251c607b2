"""The README and the pages under docs/ link to each other and to files of the repository: every
relative link must name a file that exists and, when it has an anchor, a heading of that file, so
that moving or renaming a section cannot leave a dead link behind. Each docs/ page is reachable
from the README, and the README keeps the commands a newcomer runs first."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
# [text](target) and ![alt](target), the target up to an optional "title"
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text without code blocks and inline code, where brackets are not links."""
    return _CODE.sub("", _FENCE.sub("", text))


def links(path: Path) -> list[str]:
    """The targets of the markdown links in `path`, outside code."""
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but `-` and `_`
    removed, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, with GitHub's -1, -2... for repeated ones."""
    seen: dict[str, int] = {}
    found = set()
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    for heading in _HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_slug_follows_github():
    assert slug("Checking a deployment: `querybot doctor`") == (
        "checking-a-deployment-querybot-doctor"
    )
    assert slug('After an answer: empty results, follow-ups, "How did you get this?"') == (
        "after-an-answer-empty-results-follow-ups-how-did-you-get-this"
    )
    assert slug("Looker (Open SQL Interface)") == "looker-open-sql-interface"


def test_links_are_found_outside_code_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        'See [a](a.md#x) and ![b](img/b.png "B").\n\n```sh\necho [c](c.md)\n```\n'
        "Not `[d](d.md)`, and <https://example.com> is no relative link.\n",
        encoding="utf-8",
    )
    assert links(page) == ["a.md#x", "img/b.png"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_existing_files_and_headings(page: Path):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
            continue
        name, _, anchor = target.partition("#")
        file = (page.parent / unquote(name)).resolve() if name else page
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(ROOT)}")
        elif not file.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)} has dead links:\n" + "\n".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {
        (ROOT / target.partition("#")[0]).resolve()
        for target in links(ROOT / "README.md")
        if target.startswith("docs/")
    }
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link to: {unlinked}"


@pytest.mark.slow
def test_readme_starts_with_the_run_and_test_commands():
    """The bot's command and CI's test command (the last line of .ci/run) are in the README's
    first code blocks, with how long the tests take."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    test_command = ci[-1].strip()
    assert test_command.startswith("uv run pytest")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_blocks = re.findall(r"^```sh\n(.*?)^```", readme, re.DOTALL | re.MULTILINE)[:2]
    commands = [line.split("#")[0].strip() for b in first_blocks for line in b.splitlines()]
    assert "uv run querybot" in commands
    assert test_command in commands
    test_line = next(line for line in first_blocks[1].splitlines() if test_command in line)
    assert re.search(r"about \d+( to \d+)? minutes on 2 cores", test_line), test_line
