"""What a question asked as a warehouse identity is told about a table outside its view: the
same words whether the identity may not read the table or the warehouse has none by that name
(agent.screen.judge.outside_access)."""

from __future__ import annotations

#: Follows the name, as written, in "Answering this needs NAME, …".
NOT_AMONG = "which is not among the tables your access may read"


def needs(name: str) -> str:
    """The start of the message ending a question whose query names `name`, outside the view."""
    return f"Answering this needs {name}, {NOT_AMONG}"
