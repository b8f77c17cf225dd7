-- The event store's tables on ClickHouse, in a spelling both ClickHouse
-- 18.16 and current releases accept. proto/event-store.md gives each
-- column's meaning and the reasons. One statement per ';'.
--
-- Versioned migrations: each "-- migration N: ..." line starts migration N
-- (N rising). At start the store creates schema_migrations, reads
-- max(version) and runs the statements of every later migration in order,
-- inserting the row (N) after the last of N's statements succeeded. There
-- are no transactions, so every statement must be idempotent (IF NOT
-- EXISTS and the like): a starter that died half way or a second starter
-- racing the first re-runs a step harmlessly, and a duplicate version row
-- is ignored (max). Never edit a released migration; add the next one.
-- Migration 1 is the schema from before migrations existed, so a database
-- of that time upgrades in place (its tables are found, only the row is
-- added).

-- migration 1: events, persons, person_distinct_ids, groups

CREATE TABLE IF NOT EXISTS events (
    uuid UUID,
    project_id Int64,
    event String,
    distinct_id String,
    person_id UUID,
    properties String,
    person_properties String,
    properties_keys Array(String),
    properties_values Array(String),
    person_properties_keys Array(String),
    person_properties_values Array(String),
    timestamp DateTime('UTC'),
    timestamp_ms Int64,
    created_at DateTime('UTC'),
    session_id String
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(toString(uuid)));

CREATE TABLE IF NOT EXISTS persons (
    id UUID,
    project_id Int64,
    properties String,
    properties_keys Array(String),
    properties_values Array(String),
    is_identified UInt8,
    is_deleted UInt8,
    created_at DateTime('UTC'),
    version Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, id);

CREATE TABLE IF NOT EXISTS person_distinct_ids (
    project_id Int64,
    distinct_id String,
    person_id UUID,
    version Int64,
    is_deleted UInt8
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, distinct_id);

CREATE TABLE IF NOT EXISTS groups (
    project_id Int64,
    group_type String,
    group_key String,
    properties String,
    properties_keys Array(String),
    properties_values Array(String),
    created_at DateTime('UTC'),
    version Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, group_type, group_key);
