/*
 * event_store.h - where captured events, persons and groups are kept for
 * queries: SQLite or ClickHouse behind one interface.
 *
 *   cm_evstore_open(loop, &(cm_evstore_opts_t){.url = "sqlite:var/events.db"}, &es);
 *   cm_evstore_write(es, &rows, on_written, ud);      (one batch, all or nothing)
 *   cm_evstore_query(es, "SELECT ...", on_rows, ud);  (reads, in the store's dialect)
 *
 * The tables are a contract written in proto/event_store/ (one DDL file per
 * backend) and explained in proto/event-store.md; opening a store creates
 * them when they are missing.
 *
 * Backends (one file each, behind evstore.c):
 *   "sqlite:<path>"  evstore_sqlite.c: cm_db on threads of its own, WAL;
 *                    writes (and DDL) on one connection, one transaction
 *                    per write; reads on opts.readers read-only connections
 *                    at once, the oldest waiting read first;
 *   "http://..."     evstore_clickhouse.c: ClickHouse's HTTP interface
 *   "https://..."    (JSONEachRow inserts); the URL may carry database,
 *                    user and password as query parameters.
 *
 * Writes are idempotent for events: an event whose uuid is already stored
 * in its project is skipped (redelivered messages are the normal case, see
 * proto/queue.md), so a write can simply be repeated after a failure. The
 * same uuid in another project is another event.
 * Persons, distinct ids and groups carry a version: a row replaces the
 * stored one only when its version is higher.
 *
 * Callbacks run exactly once, on the loop, never from inside the call that
 * started them. Status: 0, CM_EUNAVAIL (the store cannot be reached or
 * failed mid-way: nothing or everything may be stored; repeat the write),
 * CM_EINVAL (the store refused the SQL or the rows). Loop-thread only.
 */
#ifndef CM_EVENT_STORE_H
#define CM_EVENT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "cm/buf.h"
#include "cm/evstore_sql.h"
#include "cm/json.h"
#include "cm/metrics.h"

typedef struct cm_evstore cm_evstore_t;

typedef enum { CM_EVSTORE_SQLITE = 1, CM_EVSTORE_CLICKHOUSE = 2 } cm_evstore_kind_t;

typedef struct {
    const char *url;  /* see above */
    const char *name; /* for logs; default "events" */
    int timeout_ms;   /* ClickHouse: one request's limit; default 30000 */
    /* SQLite: reads run on this many read-only connections at once, each
     * on a dedicated thread (not libuv's pool); default 4, at most 64 */
    unsigned readers;
    /* Optional: store_operation_duration_seconds{store=name,op=query|insert},
     * from the call to the callback, whichever backend. */
    cm_metrics_t *metrics;
    /* ClickHouse: the cluster's name (remote_servers) for cluster mode:
     * replicated tables ON CLUSTER, events through a Distributed table
     * (docs/deploy.md); NULL or "": one server */
    const char *cluster;
} cm_evstore_opts_t;

/* Rows to write. Text is borrowed for the duration of cm_evstore_write. */
typedef struct {
    const char *uuid; /* lowercase canonical */
    long long project_id;
    cm_slice_t event;
    cm_slice_t distinct_id;
    const char *person_id;        /* uuid */
    cm_slice_t properties;        /* a JSON object */
    cm_slice_t person_properties; /* a JSON object, "{}" when none */
    int64_t timestamp_ms;         /* event time, epoch ms (UTC) */
    int64_t created_at_ms;        /* when it was written */
    cm_slice_t session_id;        /* properties.$session_id, empty when none */
} cm_evstore_event_t;

typedef struct {
    const char *id; /* uuid */
    long long project_id;
    cm_slice_t properties; /* a JSON object */
    bool is_identified;
    bool is_deleted;
    int64_t created_at_ms;
    long long version;
} cm_evstore_person_t;

typedef struct {
    long long project_id;
    cm_slice_t distinct_id;
    const char *person_id;
    long long version;
    bool is_deleted;
} cm_evstore_distinct_id_t;

typedef struct {
    long long project_id;
    cm_slice_t group_type; /* the type's name ("company") */
    cm_slice_t group_key;
    cm_slice_t properties; /* a JSON object */
    int64_t created_at_ms;
    long long version;
} cm_evstore_group_t;

typedef struct {
    const cm_evstore_event_t *events;
    size_t nevents;
    const cm_evstore_person_t *persons;
    size_t npersons;
    const cm_evstore_distinct_id_t *distinct_ids;
    size_t ndistinct_ids;
    const cm_evstore_group_t *groups;
    size_t ngroups;
} cm_evstore_rows_in_t;

/* inserted: events newly stored (the others were there already). */
typedef void (*cm_evstore_write_cb)(int status, const char *err, size_t inserted, void *ud);

/* A query's answer: every value as text (NULL for SQL NULL), valid only
 * during the callback. */
typedef struct cm_evstore_rows cm_evstore_rows_t;
typedef void (*cm_evstore_query_cb)(int status, const char *err, const cm_evstore_rows_t *rows,
                                    void *ud);
typedef void (*cm_evstore_closed_cb)(void *ud);

/* CM_EINVAL for a URL of no known scheme (nothing opened). The tables are
 * created in the background; until then cm_evstore_ready is false and
 * writes wait for it. */
int cm_evstore_open(uv_loop_t *loop, const cm_evstore_opts_t *opts, cm_evstore_t **out);
cm_evstore_kind_t cm_evstore_kind(const cm_evstore_t *es);
/* The server's version() ("18.16.1"), "" until it answered (and on SQLite). */
const char *cm_evstore_server_version(const cm_evstore_t *es);

/* ClickHouse in cluster mode (CLICKHOUSE_CLUSTER): the cluster's name, and
 * in *database the database its tables are in; NULL for one server and
 * SQLite (database untouched). */
const char *cm_evstore_cluster(const cm_evstore_t *es, const char **database);

/* The SQL a query for this store is printed in (cm/evstore_sql.h). */
cm_evstore_dialect_t cm_evstore_dialect(const cm_evstore_t *es);
bool cm_evstore_ready(cm_evstore_t *es, cm_buf_t *why);

/* Copies what it needs before returning. */
void cm_evstore_write(cm_evstore_t *es, const cm_evstore_rows_in_t *rows, cm_evstore_write_cb cb,
                      void *ud);

/* One SELECT in the store's dialect; values go in as literals made by
 * cm_evstore_quote (ClickHouse 18.16's HTTP interface has no bound
 * parameters). */
void cm_evstore_query(cm_evstore_t *es, const char *sql, cm_evstore_query_cb cb, void *ud);
/* A query the caller did not write itself (the endpoints' compiled HogQL):
 * SQLite binds the parameters (typed: 't' text, 'i' integer, 'f' real, as
 * cm_db_stmt_t) and stops the query after timeout_ms; ClickHouse runs it
 * with readonly = 2, max_execution_time and join_use_nulls = 1 (a LEFT
 * JOIN's misses are NULL, as in SQL), max_threads = 1 (one read takes one
 * of the server's cores, so a few heavy ones leave room for the others)
 * and ignores the parameters (its text carries escaped literals); its
 * HTTP request is given up 1 s past timeout_ms, since ClickHouse checks
 * the limit only between blocks. A time-out fails with CM_ETIMEDOUT, a query
 * the store refused with CM_EINVAL and its message, an answer past
 * max_bytes with CM_ETOOBIG. On SQLite timeout_ms counts from this call: a
 * read still waiting for a free connection when it passes fails with
 * CM_ETIMEDOUT and never runs. */
typedef struct {
    const char *sql;
    const char *const *params;
    const char *types;
    int nparams;
    unsigned timeout_ms; /* 0: none */
    /* The answer's size bound (0: none), counted as the rows arrive so
     * that no more than about this much is ever held: on SQLite the
     * values' bytes (no single value may grow past it either), on
     * ClickHouse the response's bytes (and the server's max_result_bytes,
     * so it stops too). Past it the query stops with CM_ETOOBIG. */
    size_t max_bytes;
    /* A statement that changes the store (CREATE TABLE ... AS SELECT, DROP
     * TABLE: the api's materialized tables) rather than a read: ClickHouse
     * runs it without readonly and without a result format; no rows. */
    bool ddl;
    /* About a table every node of a cluster holds whole (the api's
     * materialized tables, docs/deploy.md): in cluster mode a write waits
     * until a second replica has it (insert_quorum=2) and a read answers
     * only from a replica holding every such write, else fails
     * (select_sequential_consistency=1): a replica behind never answers
     * short. Nothing on one server or SQLite. */
    bool replicated;
} cm_evstore_select_t;
void cm_evstore_select(cm_evstore_t *es, const cm_evstore_select_t *q, cm_evstore_query_cb cb,
                       void *ud);

/* Appends s as a string literal of es's dialect, quotes included
 * (cm_evstore_sql_quote with cm_evstore_dialect(es)). */
void cm_evstore_quote(const cm_evstore_t *es, cm_buf_t *out, cm_slice_t s);

size_t cm_evstore_nrows(const cm_evstore_rows_t *rows);
size_t cm_evstore_ncols(const cm_evstore_rows_t *rows);
const char *cm_evstore_colname(const cm_evstore_rows_t *rows, size_t col);
const char *cm_evstore_value(const cm_evstore_rows_t *rows, size_t row, size_t col);

/* evstore_value.c: one value of an answer (text as a store gave it, NULL
 * for a SQL NULL) written as JSON by its column's type (a HogQL type name,
 * maybe Nullable(...)), so that both stores answer alike: Int64 and UInt8
 * as integers (a float the store kept in one as a number), Float64 as a
 * number or null (nan, inf), DateTime as ISO 8601 UTC, and ClickHouse
 * 18.16's zero dates as the epoch they stand for; Array(T) as a JSON array
 * of such values (evstore_array.c); anything else a string. */
void cm_evstore_write_value(cm_json_writer_t *w, const char *type, const char *text);
/* The same, a DateTime (UTC text) written in zone (a type such as
 * "DateTime('America/New_York')"): ISO 8601 with the zone's offset at that
 * instant, "2024-03-01T00:00:00-05:00" ("Z" where the offset is 0), as
 * PostHog's answers carry a DateTime of the team's zone. zone NULL: UTC. */
struct cm_tzone;
void cm_evstore_write_value_tz(cm_json_writer_t *w, const char *type, const char *text,
                               const struct cm_tzone *zone);
/* The zone a type names ("DateTime('X')", maybe Nullable): X into out
 * (cap bytes); false when it names none. */
bool cm_evstore_type_zone(const char *type, char *out, size_t cap);

/* evstore_retention.c: deleting for retention and erasure requests.
 * Events matching every condition given (project_id 0: any project;
 * person_id NULL: any person; before_ms 0: any time): SQLite deletes them in
 * slices of `batch` rows (default 1000), one short statement each on the
 * write connection, so inserts and readers are never held for long, and
 * `deleted` counts them; ClickHouse counts them and, when there are any,
 * submits one ALTER TABLE events DELETE mutation (on a cluster: on the
 * shards' events_local, ON CLUSTER), which the server applies
 * in the background: `pending` is then true and `deleted` is the count
 * matched. cm_evstore_delete_person deletes a person's rows and its
 * distinct ids the same way (DELETE on SQLite; mutations, pending, on
 * ClickHouse, which leave the rows marked is_deleted: the caller's
 * tombstones). person_id must be a canonical uuid. */
typedef struct {
    long long project_id;
    const char *person_id;
    /* with person_id: also the events of these distinct ids, whatever
     * person they were written with (events keep the person of their
     * time: those from before a merge name the merged-away one) */
    const char *const *distinct_ids;
    size_t ndistinct_ids;
    int64_t before_ms;
    unsigned batch;
    /* the retention prune: before_ms is now minus this many days. On a
     * server with table TTL (ClickHouse 19.6+) the events' TTL is set to
     * it instead of a DELETE (once per store, and again when it changes;
     * merges then drop the rows): the answer is pending, deleted 0. 18.16
     * and SQLite delete as above. 0: no TTL. */
    unsigned ttl_days;
} cm_evstore_delete_t;
typedef void (*cm_evstore_deleted_cb)(int status, const char *err, uint64_t deleted, bool pending,
                                      void *ud);
void cm_evstore_delete_events(cm_evstore_t *es, const cm_evstore_delete_t *q,
                              cm_evstore_deleted_cb cb, void *ud);
void cm_evstore_delete_person(cm_evstore_t *es, long long project_id, const char *person_id,
                              cm_evstore_deleted_cb cb, void *ud);
/* ClickHouse: appends a SELECT of one value, the number of mutations on
 * the events still pending (on a cluster: those of every shard's local
 * table), for a caller that waits for deletes to finish. */
void cm_evstore_pending_deletes_sql(const cm_evstore_t *es, cm_buf_t *out);

/* Work already submitted finishes (its callbacks run), then everything is
 * released and done(ud) runs. es must not be used after this call. */
void cm_evstore_close(cm_evstore_t *es, cm_evstore_closed_cb done, void *ud);

#endif
