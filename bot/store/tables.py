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
CREATE TABLE IF NOT EXISTS bot_schedules (
    schedule_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    proposal_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    question TEXT NOT NULL,
    sql TEXT NOT NULL,
    sql_sha256 TEXT NOT NULL,
    run_as TEXT NOT NULL,
    post_channel TEXT NOT NULL,
    post_thread_ts TEXT NOT NULL,
    cron TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    alert TEXT NOT NULL,
    status TEXT NOT NULL,
    paused_reason TEXT NOT NULL,
    failures INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bot_schedule_runs (
    schedule_id TEXT NOT NULL,
    due_at TEXT NOT NULL,
    status TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    result TEXT NOT NULL,
    note TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (schedule_id, due_at)
);
CREATE INDEX IF NOT EXISTS bot_schedule_runs_status ON bot_schedule_runs (status);
"""
TABLES = Tables(
    "bot_store",
    SCHEMA,
    SCHEMA.replace(" REAL NOT NULL", " DOUBLE PRECISION NOT NULL").replace(
        "finished_at REAL", "finished_at DOUBLE PRECISION"
    ),
    # columns added after the first release, for stores created before them
    added={"bot_proposals": {"edited_by": "TEXT", "claimed_by": "TEXT", "outcome": "TEXT"}},
)
