"""What a signed request to /slack/events must hold before Bolt reads it: the one place a
request's body is checked, so no listener (and no part of Bolt) meets a shape it does not expect.

A valid signature says only that the sender knows the signing secret, not that the body is one
Slack would send. Bolt parses the body and reads ids out of it (slack_bolt/request/internals.py)
before any middleware runs, and the listeners index into it (`body["actions"][0]`,
`event["channel"]`): a form field that is not JSON, a JSON list, a number where an id belongs or
a missing `user` once ended in a traceback and HTTP 500 (issue 36). Here the body is parsed the
way Bolt parses it, then validated against pydantic models of every part Bolt or a listener
reads, with the types and lengths Slack documents. Only the requests the bot serves are models:
`url_verification`, `event_callback` with the events it subscribes to, `block_actions` on its
own buttons (whose values must parse as the bot wrote them: a proposal id, a card's hash) and
`view_submission` of its own modals. Anything else is `Malformed`, answered 400 with the reason.
Extra fields are allowed: Slack adds fields over time, and nothing reads them.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from slack_bolt.request.internals import parse_body

from bot import blocks
from bot.blocks.feedback import FEEDBACK_ACTION, VERIFY_ACTION, WRONG_VIEW, feedback_of
from bot.blocks.messages import card_of
from bot.blocks.views import EDIT_VIEW, METADATA, edited_proposal

#: An id or timestamp Slack sends (`U0123`, `C0123`, `1700000000.000100`, a trigger id).
Id = Annotated[str, StringConstraints(min_length=1, max_length=255)]
#: Slack's bound on a button's value and on a view's `private_metadata`.
Value = Annotated[str, StringConstraints(max_length=2000)]
Metadata = Annotated[str, StringConstraints(min_length=1, max_length=METADATA)]
#: A proposal id as the bot writes it (a uuid's hex; a little wider, for ids of older versions).
_PROPOSAL_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_FOLLOW_UP = re.compile(rf"{re.escape(blocks.FOLLOW_UP_PREFIX)}\d+")
_DECISIONS = {blocks.APPROVE_ACTION, blocks.REJECT_ACTION, blocks.EDIT_ACTION}
_PROPOSALS = {blocks.CANCEL_ACTION, blocks.EXPLAIN_ACTION, VERIFY_ACTION}
_JSON_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "true/false"}
#: What a reason quotes of the request (a 400's body and its log line).
_REASON = 300
#: What a reason shows escaped: all but printable ASCII.
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


class Malformed(ValueError):
    """A signed request the bot will not take: the message says what is wrong with it."""


class _Part(BaseModel):
    """Strict types (a number is not an id), other fields allowed and left unread."""

    model_config = ConfigDict(strict=True, extra="allow")


class Named(_Part):
    """`{"id": ...}`: a user, team, channel or enterprise as interactivity payloads send it."""

    id: Id


class _Authorization(_Part):
    team_id: Id | None = None
    enterprise_id: Id | None = None
    user_id: Id | None = None
    is_enterprise_install: bool | None = None


class _ResponseUrl(_Part):
    response_url: str | None = None


class _Carrier(_Part):
    """The ids Bolt looks for in a body, an event and an event's message (its context)."""

    enterprise: Id | Named | None = None
    enterprise_id: Id | None = None
    team: Id | Named | None = None
    team_id: Id | None = None
    user: Id | Named | None = None
    user_id: Id | None = None
    user_team: Id | None = None
    channel: Id | Named | None = None
    channel_id: Id | None = None
    thread_ts: Id | None = None
    authorizations: list[_Authorization] | None = None
    is_enterprise_install: bool | None = None
    is_ext_shared_channel: bool | None = None
    response_url: str | None = None
    response_urls: list[_ResponseUrl] | None = None
    message: _Carrier | None = None
    previous_message: _Carrier | None = None
    item: _Carrier | None = None


class _File(_Part):
    id: Id | None = None


class _Event(_Carrier):
    """What the message listeners read of any event they take."""

    ts: Id | None = None
    event_ts: Id | None = None
    text: str | None = None
    subtype: str | None = None
    bot_id: Id | None = None
    channel_type: str | None = None
    files: list[_File] | None = None


class _Mention(_Event):
    type: Literal["app_mention"]
    user: Id
    ts: Id
    channel: Id


class _Message(_Event):
    type: Literal["message"]
    channel: Id

    @model_validator(mode="after")
    def _a_person_says_who(self) -> _Message:
        """A person's message (no subtype, a broadcast reply, a file share) names them."""
        person = self.subtype in {None, "thread_broadcast", "file_share"} and not self.bot_id
        if person and (not isinstance(self.user, str) or not self.ts):
            raise ValueError("a person's message needs its `user` and `ts`")
        return self


class _HomeOpened(_Event):
    type: Literal["app_home_opened"]
    user: Id
    tab: str | None = None


class _AssistantThread(_Part):
    user_id: Id
    channel_id: Id
    thread_ts: Id


class _ThreadStarted(_Event):
    """A thread of the older assistant view opened, or the channel beside it changed."""

    type: Literal["assistant_thread_started", "assistant_thread_context_changed"]
    assistant_thread: _AssistantThread


class EventCallback(_Carrier):
    type: Literal["event_callback"]
    team_id: Id
    event_id: Id
    event: _Mention | _Message | _HomeOpened | _ThreadStarted = Field(discriminator="type")


class UrlVerification(_Part):
    type: Literal["url_verification"]
    challenge: Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class _Action(_Part):
    action_id: Id
    value: Value

    @model_validator(mode="after")
    def _the_bots_own(self) -> _Action:
        """One of the bot's buttons, with a value as the bot wrote it."""
        if self.action_id in _DECISIONS:
            pid, sha = card_of(self.value)
            if not (pid and sha):
                raise ValueError(f"{self.action_id}'s value is not a proposal card's")
        elif self.action_id in _PROPOSALS:
            if not _PROPOSAL_ID.fullmatch(self.value):
                raise ValueError(f"{self.action_id}'s value is not a proposal id")
        elif self.action_id == FEEDBACK_ACTION:
            rated = feedback_of(self.value)
            if rated is None or not _PROPOSAL_ID.fullmatch(rated[1]):
                raise ValueError(f"{self.action_id}'s value is not a rated answer's")
        elif _FOLLOW_UP.fullmatch(self.action_id):
            if blocks.follow_up_of(self.value) is None:
                raise ValueError(f"{self.action_id}'s value is not a follow-up question")
        else:
            raise ValueError(f"querybot has no button {self.action_id[:80]!r}")
        return self


class BlockActions(_Carrier):
    type: Literal["block_actions"]
    user: Named
    team: Named | None = None
    channel: Named | None = None
    container: dict[str, Any]
    trigger_id: Id
    #: Slack sends the one button that was pressed.
    actions: list[_Action] = Field(min_length=1, max_length=1)


class _Input(_Part):
    value: str | None = None


class _State(_Part):
    values: dict[Id, dict[Id, _Input]]


class _View(_Carrier):
    callback_id: Id
    private_metadata: Metadata
    state: _State
    app_installed_team_id: Id | None = None

    @model_validator(mode="after")
    def _opened_by_the_bot(self) -> _View:
        """The edit modal or the "What was wrong?" one, with the metadata the bot gave it."""
        if self.callback_id == WRONG_VIEW:
            if not _PROPOSAL_ID.fullmatch(self.private_metadata):
                raise ValueError("private_metadata is not the feedback modal's")
            return self
        if self.callback_id != EDIT_VIEW:
            raise ValueError(f"querybot has no modal {self.callback_id[:80]!r}")
        if edited_proposal(self.private_metadata) == ("", ""):
            raise ValueError("private_metadata is not the edit modal's")
        return self


class ViewSubmission(_Carrier):
    type: Literal["view_submission"]
    user: Named
    team: Named | None = None
    view: _View


_SERVED: dict[str, type[BaseModel]] = {
    "url_verification": UrlVerification,
    "event_callback": EventCallback,
    "block_actions": BlockActions,
    "view_submission": ViewSubmission,
}


def check(raw: str, content_type: str | None) -> dict[str, Any]:
    """The body Bolt will read, parsed as Bolt parses it; raises Malformed unless it is a
    request the bot serves, in the shape Slack sends. The reason is printable ASCII: it is
    logged and sent back, and a key of the body (which pydantic's reasons name) may hold a line
    break that would forge a log line, or a lone surrogate that UTF-8 cannot encode."""
    try:
        return _checked(raw, content_type)
    except Malformed as exc:
        raise Malformed(_UNPRINTABLE.sub(_escaped, str(exc))) from None


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def _checked(raw: str, content_type: str | None) -> dict[str, Any]:
    try:
        body = parse_body(raw, content_type)
    except (ValueError, RecursionError) as exc:  # JSON that does not parse, or nests too deep
        raise Malformed(f"the body is not JSON (nor a form with a JSON `payload`): {exc}") from None
    if not isinstance(body, dict):
        raise Malformed(f"the body is a JSON {_JSON_NAMES.get(type(body), 'data')}, not an object")
    try:  # JSON's \ud800 escapes decode to lone surrogates, which no store or log can encode
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Malformed(f"the body holds {exc.object[exc.start : exc.end]!r}, not text") from None
    kind = body.get("type")
    if "command" in body and kind is None:
        raise Malformed("querybot serves no slash commands")
    model = _SERVED.get(kind) if isinstance(kind, str) else None
    if model is None:
        served = ", ".join(_SERVED)
        raise Malformed(f"type {str(kind)[:80]!r} is not one querybot serves ({served})")
    try:
        model.model_validate(body)
    except ValidationError as exc:
        raise Malformed(f"{kind}: {_first_error(exc)}") from None
    return body


def _first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as `where: what` (without the input it quotes)."""
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "body"
    return f"{where}: {error['msg']}"[:_REASON]
