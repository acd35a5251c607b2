"""Conversations in Slack threads: the work, its progress, outcomes and answers."""
