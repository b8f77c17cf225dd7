-- The event store's tables on SQLite (version 1). proto/event-store.md
-- gives each column's meaning and the reasons; the writer creates them, the
-- api reads them. Timestamps are UTC: `timestamp` and `created_at` as text
-- 'YYYY-MM-DD HH:MM:SS' (what ClickHouse prints for a DateTime, and what
-- SQLite's date functions read), `timestamp_ms` as epoch milliseconds.

CREATE TABLE IF NOT EXISTS events (
    uuid TEXT NOT NULL,
    project_id INTEGER NOT NULL,
    event TEXT NOT NULL,
    distinct_id TEXT NOT NULL,
    person_id TEXT NOT NULL,
    properties TEXT NOT NULL,
    person_properties TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    session_id TEXT NOT NULL
);
-- Deduplication: a redelivered event is ignored by INSERT OR IGNORE. Per
-- project: the same uuid in another project is another event. (Stores made
-- before this had events_uuid on uuid alone: version 2 of the migrations,
-- in evstore_sqlite.c, replaces it.)
CREATE UNIQUE INDEX IF NOT EXISTS events_project_uuid ON events (project_id, uuid);
CREATE INDEX IF NOT EXISTS events_project_time ON events (project_id, timestamp_ms);

CREATE TABLE IF NOT EXISTS persons (
    id TEXT PRIMARY KEY,
    project_id INTEGER NOT NULL,
    properties TEXT NOT NULL,
    is_identified INTEGER NOT NULL,
    is_deleted INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    version INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS persons_project ON persons (project_id, created_at);

CREATE TABLE IF NOT EXISTS person_distinct_ids (
    project_id INTEGER NOT NULL,
    distinct_id TEXT NOT NULL,
    person_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    is_deleted INTEGER NOT NULL,
    PRIMARY KEY (project_id, distinct_id)
);
CREATE INDEX IF NOT EXISTS person_distinct_ids_person ON person_distinct_ids (person_id);

CREATE TABLE IF NOT EXISTS groups (
    project_id INTEGER NOT NULL,
    group_type TEXT NOT NULL,
    group_key TEXT NOT NULL,
    properties TEXT NOT NULL,
    created_at TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (project_id, group_type, group_key)
);
