/*
 * evstore_retention.c - deleting from the event store: events by age or by
 * person (EVENT_RETENTION_DAYS, an erasure request) and a person's rows
 * (see event_store.h, cm_evstore_delete_events and cm_evstore_delete_person).
 *
 * SQLite deletes events in slices, each one statement of `batch` rows on the
 * store's write connection: a long DELETE would hold the one write lock
 * while the writer's inserts wait, and the slices let those inserts (and
 * the readers' WAL checkpoints) in between. ClickHouse has no DELETE
 * statement in 18.16: ALTER TABLE ... DELETE is a mutation the server
 * applies in the background, so the answer says "pending". A count comes
 * first, so that a condition matching nothing submits no mutation (18.16
 * rewrites every part a mutation covers, matches or not); by age (the
 * periodic prune), none is submitted while the last one is still pending
 * in system.mutations, so a prune cycle shorter than a mutation neither
 * queues mutations behind each other nor counts the same rows twice.
 *
 * A cluster (CLICKHOUSE_CLUSTER): events is a Distributed table, which
 * takes no mutation (code 48), so the DELETE goes to the shards' local
 * table ON CLUSTER: every node runs it, and on a replicated table 18.16
 * submits it once per shard, which the shard's replicas then apply. The
 * count still reads events (every shard); the pending mutations are read
 * through cluster() over system.mutations, one replica of each shard
 * (clusterAllReplicas came after 18.16; a replica lists its shard's
 * replicated mutations, so one per shard sees them all). persons and
 * person_distinct_ids are one replicated table on every node (one
 * ZooKeeper path): a plain ALTER on the node reached is replicated to all
 * of them, so a person's statements are the same as on one server. *
 * Table TTL (ClickHouse 19.6+; version() read at start): the prune sets the
 * events' TTL to the retention instead (`MODIFY TTL timestamp + INTERVAL N
 * DAY`, on a cluster on events_local ON CLUSTER), once per store and again
 * when the days change, and merges drop old rows without mutations. 18.16
 * has no TTL and keeps the mutation; only 18.16 runs here, so the choice
 * is pinned by a golden unit test.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "evstore_internal.h"

#define DEFAULT_BATCH 1000

typedef struct {
    cm_evstore_t *es;
    cm_buf_t where; /* the condition, literals in the store's dialect */
    unsigned batch;
    uint64_t deleted;
    /* the statements still to run (a person's rows), NULL-terminated */
    char *stmts[4];
    size_t next;
    bool counting; /* ClickHouse: the count's answer is awaited */
    /* ClickHouse, by age: no new mutation while one on events is pending
     * (the count also reads system.mutations) */
    bool one_at_a_time;
    unsigned ttl_days; /* the TTL being set (19.6+) */
    cm_evstore_deleted_cb cb;
    void *ud;
} del_t;

static void del_free(del_t *d)
{
    cm_buf_free(&d->where);
    for (size_t i = 0; i < CM_ARRAY_LEN(d->stmts); i++)
        free(d->stmts[i]);
    free(d);
}

static void finish(del_t *d, int status, const char *err, bool pending)
{
    d->cb(status, err, d->deleted, pending, d->ud);
    del_free(d);
}

static void run(del_t *d, const char *sql, cm_evstore_query_cb cb)
{
    cm_evstore_select(d->es, &(cm_evstore_select_t){.sql = sql, .ddl = !d->counting}, cb, d);
}

/* ---- events ----------------------------------------------------------------------- */

static void sqlite_slice(del_t *d);

static void on_slice(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    del_t *d = ud;
    if (status != 0) {
        finish(d, status, err, false);
        return;
    }
    size_t n = cm_evstore_nrows(rows);
    d->deleted += n;
    /* A short slice was the last; a closing store takes no more work. */
    if (n < d->batch || d->es->closing) {
        finish(d, 0, NULL, false);
        return;
    }
    sqlite_slice(d);
}

static void sqlite_slice(del_t *d)
{
    cm_buf_t sql = CM_BUF_INIT;
    cm_buf_appendf(&sql,
                   "DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE %s LIMIT %u)"
                   " RETURNING 1",
                   cm_buf_cstr(&d->where), d->batch);
    run(d, cm_buf_cstr(&sql), on_slice);
    cm_buf_free(&sql);
}

static void on_mutation(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    (void)rows;
    finish(ud, status, err, status == 0);
}

static void on_count(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    del_t *d = ud;
    const char *v = cm_evstore_value(rows, 0, 0);
    if (status != 0 || v == NULL) {
        finish(d, status ? status : CM_EINVAL, status ? err : "no count", false);
        return;
    }
    d->deleted = strtoull(v, NULL, 10);
    const char *running = d->one_at_a_time ? cm_evstore_value(rows, 0, 1) : NULL;
    if (running != NULL && strtoull(running, NULL, 10) > 0) {
        /* The last cycle's mutation is still being applied: its rows are
         * counted again here, and another mutation would only queue behind
         * it (18.16 applies them one by one, each rewriting every part). */
        d->deleted = 0;
        finish(d, 0, NULL, true);
        return;
    }
    if (d->deleted == 0 || d->es->closing) {
        finish(d, 0, NULL, false);
        return;
    }
    d->counting = false;
    cm_buf_t sql = CM_BUF_INIT;
    const char *db = NULL;
    const char *cluster = cm_evstore_cluster(d->es, &db);
    cm__ch_delete_events_sql(&sql, cluster, db, cm_buf_cstr(&d->where));
    run(d, cm_buf_cstr(&sql), on_mutation);
    cm_buf_free(&sql);
}

void cm__ch_delete_events_sql(cm_buf_t *out, const char *cluster, const char *database,
                              const char *where)
{
    if (cluster)
        cm_buf_appendf(out, "ALTER TABLE %s.events_local ON CLUSTER %s DELETE WHERE %s", database,
                       cluster, where);
    else
        cm_buf_appendf(out, "ALTER TABLE events DELETE WHERE %s", where);
}

void cm__ch_pending_deletes_sql(cm_buf_t *out, const char *cluster, const char *database)
{
    if (cluster)
        cm_buf_appendf(out,
                       "SELECT count() FROM cluster('%s', system, mutations) WHERE database = '%s'"
                       " AND table = 'events_local' AND is_done = 0",
                       cluster, database);
    else
        cm_buf_append_cstr(out, "SELECT count() FROM system.mutations WHERE database = "
                                "currentDatabase() AND table = 'events' AND is_done = 0");
}

bool cm__ch_has_ttl(const char *version)
{
    char *end;
    long major = strtol(version ? version : "", &end, 10);
    long minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return major > 19 || (major == 19 && minor >= 6);
}

bool cm__ch_retention_sql(cm_buf_t *out, const char *version, const char *cluster,
                          const char *database, unsigned days, const char *where)
{
    if (days == 0 || !cm__ch_has_ttl(version)) {
        cm__ch_delete_events_sql(out, cluster, database, where);
        return false;
    }
    if (cluster)
        cm_buf_appendf(out, "ALTER TABLE %s.events_local ON CLUSTER %s", database, cluster);
    else
        cm_buf_append_cstr(out, "ALTER TABLE events");
    cm_buf_appendf(out, " MODIFY TTL timestamp + INTERVAL %u DAY", days);
    return true;
}

static void on_ttl(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    (void)rows;
    del_t *d = ud;
    if (status == 0) {
        d->es->ttl_days = d->ttl_days;
        cm_log(CM_LOG_INFO, NULL, "%s: events' TTL set to %u days (ClickHouse %s)", d->es->name,
               d->ttl_days, cm_evstore_server_version(d->es));
    }
    finish(d, status, err, status == 0);
}

void cm_evstore_pending_deletes_sql(const cm_evstore_t *es, cm_buf_t *out)
{
    const char *db = NULL;
    const char *cluster = cm_evstore_cluster(es, &db);
    cm__ch_pending_deletes_sql(out, cluster, db);
}

void cm_evstore_delete_events(cm_evstore_t *es, const cm_evstore_delete_t *q,
                              cm_evstore_deleted_cb cb, void *ud)
{
    bool ch = cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE;
    del_t *d = cm_xcalloc(1, sizeof(*d));
    d->es = es;
    d->cb = cb;
    d->ud = ud;
    d->batch = q->batch ? q->batch : DEFAULT_BATCH;
    cm_buf_init(&d->where);
    cm_buf_append_cstr(&d->where, "1 = 1");
    if (q->project_id)
        cm_buf_appendf(&d->where, " AND project_id = %lld", q->project_id);
    if (q->person_id) {
        cm_buf_append_cstr(&d->where, ch ? " AND (person_id = toUUID(" : " AND (person_id = ");
        cm_evstore_quote(es, &d->where, cm_slice_from_cstr(q->person_id));
        if (ch)
            cm_buf_putc(&d->where, ')');
        if (q->ndistinct_ids > 0) {
            cm_buf_append_cstr(&d->where, " OR distinct_id IN (");
            for (size_t i = 0; i < q->ndistinct_ids; i++) {
                if (i)
                    cm_buf_putc(&d->where, ',');
                cm_evstore_quote(es, &d->where, cm_slice_from_cstr(q->distinct_ids[i]));
            }
            cm_buf_putc(&d->where, ')');
        }
        cm_buf_putc(&d->where, ')');
    }
    if (q->before_ms > 0)
        cm_buf_appendf(&d->where, " AND timestamp_ms < %" PRId64, q->before_ms);
    if (!ch) {
        sqlite_slice(d);
        return;
    }
    if (q->ttl_days > 0 && q->person_id == NULL && cm__ch_has_ttl(cm_evstore_server_version(es))) {
        /* the server drops old rows itself: set its TTL when this store
         * has not, or set another */
        if (es->ttl_days == q->ttl_days) {
            finish(d, 0, NULL, true);
            return;
        }
        d->ttl_days = q->ttl_days;
        const char *db = NULL;
        const char *cluster = cm_evstore_cluster(es, &db);
        cm_buf_t sql = CM_BUF_INIT;
        cm__ch_retention_sql(&sql, cm_evstore_server_version(es), cluster, db, q->ttl_days,
                             cm_buf_cstr(&d->where));
        run(d, cm_buf_cstr(&sql), on_ttl);
        cm_buf_free(&sql);
        return;
    }
    d->counting = true;
    d->one_at_a_time = q->person_id == NULL; /* an erasure is always submitted */
    cm_buf_t sql = CM_BUF_INIT;
    cm_buf_append_cstr(&sql, "SELECT count()");
    if (d->one_at_a_time) {
        const char *db = NULL;
        const char *cluster = cm_evstore_cluster(es, &db);
        cm_buf_append_cstr(&sql, ", (");
        cm__ch_pending_deletes_sql(&sql, cluster, db);
        cm_buf_putc(&sql, ')');
    }
    cm_buf_appendf(&sql, " FROM events WHERE %s", cm_buf_cstr(&d->where));
    run(d, cm_buf_cstr(&sql), on_count);
    cm_buf_free(&sql);
}

/* ---- a person's rows -------------------------------------------------------------- */

static void on_person_stmt(int status, const char *err, const cm_evstore_rows_t *rows, void *ud)
{
    (void)rows;
    del_t *d = ud;
    bool ch = cm_evstore_kind(d->es) == CM_EVSTORE_CLICKHOUSE;
    if (status != 0 || d->stmts[d->next] == NULL || d->es->closing) {
        finish(d, status, err, status == 0 && ch);
        return;
    }
    const char *sql = d->stmts[d->next++];
    run(d, sql, on_person_stmt);
}

void cm_evstore_delete_person(cm_evstore_t *es, long long project_id, const char *person_id,
                              cm_evstore_deleted_cb cb, void *ud)
{
    bool ch = cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE;
    del_t *d = cm_xcalloc(1, sizeof(*d));
    d->es = es;
    d->cb = cb;
    d->ud = ud;
    cm_buf_init(&d->where);
    cm_buf_t id = CM_BUF_INIT;
    if (ch)
        cm_buf_append_cstr(&id, "toUUID(");
    cm_evstore_quote(es, &id, cm_slice_from_cstr(person_id));
    if (ch)
        cm_buf_putc(&id, ')');
    /* The statements differ by their verb only: SQLite's DELETE FROM t,
     * ClickHouse's ALTER TABLE t DELETE. */
    static const char *const tables[][2] = {{"person_distinct_ids", "person_id"},
                                            {"persons", "id"}};
    for (size_t i = 0; i < 2; i++) {
        cm_buf_t s = CM_BUF_INIT;
        if (ch)
            cm_buf_appendf(&s, "ALTER TABLE %s DELETE", tables[i][0]);
        else
            cm_buf_appendf(&s, "DELETE FROM %s", tables[i][0]);
        cm_buf_appendf(&s, " WHERE project_id = %lld AND %s = %s", project_id, tables[i][1],
                       cm_buf_cstr(&id));
        /* ClickHouse keeps the tombstones (is_deleted, no properties): a
         * mutation rewrites parts one at a time, and one that took a
         * tombstone before the older rows would show the person again. */
        if (ch)
            cm_buf_append_cstr(&s, " AND is_deleted = 0");
        d->stmts[i] = cm_xstrdup(cm_buf_cstr(&s));
        cm_buf_free(&s);
    }
    cm_buf_free(&id);
    d->next = 1;
    run(d, d->stmts[0], on_person_stmt);
}
