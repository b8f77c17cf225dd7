/*
 * events.c - the api's reads of the event store the writer fills
 * (proto/event-store.md): recent events, persons and their distinct ids.
 * The text is written for the store's dialect; values go in as literals
 * (ClickHouse 18.16's HTTP interface binds no parameters), numbers as
 * numbers and strings through cm_evstore_quote.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "store/store.h"

static void quote(cm_evstore_t *es, cm_buf_t *sql, const char *s)
{
    cm_evstore_quote(es, sql, cm_slice_from_cstr(s));
}

void api_store_events_list_sql(cm_evstore_t *es, const api_events_query_t *q, cm_buf_t *out)
{
    bool ch = cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE;
    cm_buf_t sql = CM_BUF_INIT;
    cm_buf_appendf(&sql,
                   "SELECT %s, event, distinct_id, properties, timestamp_ms, %s FROM events%s"
                   " WHERE project_id = %lld",
                   ch ? "toString(uuid)" : "uuid", ch ? "toString(person_id)" : "person_id",
                   ch ? " FINAL" : "", atoll(q->project_id));
    if (q->event) {
        cm_buf_append_cstr(&sql, " AND event = ");
        quote(es, &sql, q->event);
    }
    if (q->distinct_id) {
        cm_buf_append_cstr(&sql, " AND distinct_id = ");
        quote(es, &sql, q->distinct_id);
    }
    const char *id = ch ? "toString(uuid)" : "uuid";
    if (q->before_ms && q->before_id) {
        cm_buf_appendf(&sql,
                       " AND (timestamp_ms < %" PRId64 " OR (timestamp_ms = %" PRId64 " AND %s < ",
                       q->before_ms, q->before_ms, id);
        quote(es, &sql, q->before_id);
        cm_buf_append_cstr(&sql, "))");
    } else if (q->before_ms)
        cm_buf_appendf(&sql, " AND timestamp_ms < %" PRId64, q->before_ms);
    if (q->after_ms)
        cm_buf_appendf(&sql, " AND timestamp_ms > %" PRId64, q->after_ms);
    cm_buf_appendf(&sql, " ORDER BY timestamp_ms DESC, %s DESC LIMIT %lld", id, q->limit);
    cm_buf_append(out, sql.p, sql.len);
    cm_buf_free(&sql);
}

void api_store_persons_list_sql(cm_evstore_t *es, const char *project_id, const char *distinct_id,
                                long long limit, long long offset, cm_buf_t *out)
{
    long long project = atoll(project_id);
    cm_buf_t sql = CM_BUF_INIT, only = CM_BUF_INIT;
    if (cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE) {
        /* The newest version of each row wins; deleted (merged) persons go. */
        if (distinct_id) {
            cm_buf_appendf(&only,
                           " AND id IN (SELECT argMax(person_id, version) FROM person_distinct_ids"
                           " WHERE project_id = %lld AND distinct_id = ",
                           project);
            quote(es, &only, distinct_id);
            cm_buf_append_cstr(&only,
                               " GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)");
        }
        cm_buf_appendf(&sql,
                       "SELECT toString(id), argMax(properties, version), argMax(created_at, "
                       "version) AS created, argMax(is_identified, version) FROM persons"
                       " WHERE project_id = %lld%s GROUP BY id HAVING argMax(is_deleted, version)"
                       " = 0 ORDER BY created DESC, toString(id) LIMIT %lld OFFSET %lld",
                       project, only.len ? cm_buf_cstr(&only) : "", limit, offset);
    } else {
        if (distinct_id) {
            cm_buf_appendf(&only,
                           " AND id IN (SELECT person_id FROM person_distinct_ids"
                           " WHERE project_id = %lld AND is_deleted = 0 AND distinct_id = ",
                           project);
            quote(es, &only, distinct_id);
            cm_buf_putc(&only, ')');
        }
        cm_buf_appendf(&sql,
                       "SELECT id, properties, created_at, is_identified FROM persons"
                       " WHERE project_id = %lld AND is_deleted = 0%s ORDER BY created_at DESC, id"
                       " LIMIT %lld OFFSET %lld",
                       project, only.len ? cm_buf_cstr(&only) : "", limit, offset);
    }
    cm_buf_append(out, sql.p, sql.len);
    cm_buf_free(&sql);
    cm_buf_free(&only);
}

void api_store_person_distinct_ids_sql(cm_evstore_t *es, const char *project_id,
                                       const char *const *person_ids, size_t n, cm_buf_t *out)
{
    bool ch = cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE;
    cm_buf_t sql = CM_BUF_INIT;
    if (ch)
        cm_buf_appendf(&sql,
                       "SELECT toString(pid), distinct_id FROM (SELECT distinct_id,"
                       " argMax(person_id, version) AS pid, argMax(is_deleted, version) AS gone"
                       " FROM person_distinct_ids WHERE project_id = %lld GROUP BY distinct_id)"
                       " WHERE gone = 0 AND toString(pid) IN (",
                       atoll(project_id));
    else
        cm_buf_appendf(&sql,
                       "SELECT person_id, distinct_id FROM person_distinct_ids WHERE project_id ="
                       " %lld AND is_deleted = 0 AND person_id IN (",
                       atoll(project_id));
    for (size_t i = 0; i < n; i++) {
        if (i)
            cm_buf_putc(&sql, ',');
        quote(es, &sql, person_ids[i]);
    }
    if (n == 0)
        cm_buf_append_cstr(&sql, "''");
    cm_buf_append_cstr(&sql, ") ORDER BY distinct_id");
    cm_buf_append(out, sql.p, sql.len);
    cm_buf_free(&sql);
}
