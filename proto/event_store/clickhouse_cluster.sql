-- The event store's tables on a ClickHouse cluster (CLICKHOUSE_CLUSTER set):
-- the same tables, columns and migrations as clickhouse.sql (read that
-- file's header for how migrations run and why they are safe without
-- transactions), spelled for a cluster. $CLUSTER and $DATABASE are
-- replaced by the store (the cluster's name and the URL's database);
-- {shard} and {replica} are each server's macros, which ClickHouse fills.
--
-- events: a ReplicatedReplacingMergeTree per shard (events_local) and the
-- Distributed table events over it, sharded by sipHash64(distinct_id): the
-- one key every event carries when it is written (person_id is the
-- writer's resolution, which can change when persons merge), so one
-- distinct id's events, and so most of a person's, sit on one shard, as
-- PostHog shards them. Reads keep reading "events".
-- persons, person_distinct_ids, groups: small next to events and joined
-- to them on every shard, so not sharded: one replicated table whose
-- copies live on every node (one ZooKeeper path for all shards), so a
-- shard joins locally.
-- Every name is qualified with $DATABASE: a DDL ON CLUSTER runs on each
-- node, where the unqualified name would mean that node's default.

-- migration 1: events, persons, person_distinct_ids, groups
CREATE TABLE IF NOT EXISTS $DATABASE.events_local ON CLUSTER $CLUSTER (
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
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/$DATABASE.events_local', '{replica}')
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(toString(uuid)));

CREATE TABLE IF NOT EXISTS $DATABASE.events ON CLUSTER $CLUSTER AS $DATABASE.events_local
ENGINE = Distributed($CLUSTER, $DATABASE, events_local, sipHash64(distinct_id));

CREATE TABLE IF NOT EXISTS $DATABASE.persons ON CLUSTER $CLUSTER (
    id UUID,
    project_id Int64,
    properties String,
    properties_keys Array(String),
    properties_values Array(String),
    is_identified UInt8,
    is_deleted UInt8,
    created_at DateTime('UTC'),
    version Int64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/$DATABASE.persons', '{shard}-{replica}', version)
ORDER BY (project_id, id);

CREATE TABLE IF NOT EXISTS $DATABASE.person_distinct_ids ON CLUSTER $CLUSTER (
    project_id Int64,
    distinct_id String,
    person_id UUID,
    version Int64,
    is_deleted UInt8
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/$DATABASE.person_distinct_ids', '{shard}-{replica}', version)
ORDER BY (project_id, distinct_id);

CREATE TABLE IF NOT EXISTS $DATABASE.groups ON CLUSTER $CLUSTER (
    project_id Int64,
    group_type String,
    group_key String,
    properties String,
    properties_keys Array(String),
    properties_values Array(String),
    created_at DateTime('UTC'),
    version Int64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/$DATABASE.groups', '{shard}-{replica}', version)
ORDER BY (project_id, group_type, group_key);
