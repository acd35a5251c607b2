"""The bot store's tables (`Store`), as both back ends create them."""

from agent.memory.storage import Tables

SCHEMA = """
CREATE TABLE IF NOT EXISTS bot_events (
    event_id TEXT PRIMARY KEY,
    seen_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_events_seen_at ON bot_events (seen_at);
CREATE TABLE IF NOT EXISTS bot_proposals (
    proposal_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    sql_sha256 TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    status TEXT NOT NULL,
    approved INTEGER,
    decided_by TEXT,
    edited_by TEXT,
    proposal TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_proposals_thread ON bot_proposals (thread_id, status);
CREATE INDEX IF NOT EXISTS bot_proposals_requester ON bot_proposals (requested_by, created_at);
CREATE INDEX IF NOT EXISTS bot_proposals_status ON bot_proposals (status, created_at);
CREATE TABLE IF NOT EXISTS bot_questions (
    channel TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    started_at REAL NOT NULL,
    PRIMARY KEY (channel, message_ts)
);
CREATE TABLE IF NOT EXISTS bot_feedback (
    proposal_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    warehouse TEXT NOT NULL,
    rating TEXT NOT NULL,
    reason TEXT NOT NULL,
    question TEXT NOT NULL,
    sql TEXT NOT NULL,
    rated_at REAL NOT NULL,
    PRIMARY KEY (proposal_id, user_id)
);
"""
TABLES = Tables(
    "bot_store",
    SCHEMA,
    SCHEMA.replace(" REAL NOT NULL", " DOUBLE PRECISION NOT NULL"),
    # columns added after the first release, for stores created before them
    added={"bot_proposals": {"edited_by": "TEXT", "claimed_by": "TEXT", "outcome": "TEXT"}},
)
