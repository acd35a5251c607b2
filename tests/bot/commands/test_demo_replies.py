"""The recorded replies demo mode ships: they load, and every follow-up follows a question."""

from __future__ import annotations

from bot.commands.demo import demo_model


def test_the_shipped_recordings_load_and_each_follow_up_follows_a_question() -> None:
    model = demo_model()
    questions = set(model.questions)
    assert "Which region had the most revenue last month?" in questions
    assert all(r.after in questions for r in model.recordings if r.after)
    assert all(r.reply["sql"] for r in model.recordings)
