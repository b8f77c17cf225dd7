/*
 * person_erasure.c - the event store's read that an erasure starts from
 * (resources/person_erasure.c): the live person of a project and its live
 * distinct ids, with the versions a ClickHouse tombstone must pass. One
 * SELECT, rows (kind 'p' or 'd', id or distinct id, version, created_at):
 * none of kind 'p' means the project has no such person.
 */
#include <stdlib.h>

#include "store/store.h"

void api_store_person_erasure_sql(cm_evstore_t *es, const char *project_id, const char *person_id,
                                  cm_buf_t *out)
{
    long long project = atoll(project_id);
    cm_buf_t id = CM_BUF_INIT;
    if (cm_evstore_kind(es) == CM_EVSTORE_CLICKHOUSE) {
        cm_buf_append_cstr(&id, "toUUID(");
        cm_evstore_quote(es, &id, cm_slice_from_cstr(person_id));
        cm_buf_putc(&id, ')');
        /* The newest version of each row decides, as the persons list reads. */
        cm_buf_appendf(out,
                       "SELECT 'p' AS k, toString(id) AS key, max(version) AS v,"
                       " toString(argMax(created_at, version)) AS c FROM persons"
                       " WHERE project_id = %lld AND id = %s GROUP BY id"
                       " HAVING argMax(is_deleted, version) = 0"
                       " UNION ALL SELECT 'd', distinct_id, pv, '' FROM (SELECT distinct_id,"
                       " argMax(person_id, version) AS pid, argMax(is_deleted, version) AS gone,"
                       " max(version) AS pv FROM person_distinct_ids WHERE project_id = %lld"
                       " GROUP BY distinct_id) WHERE gone = 0 AND pid = %s",
                       project, cm_buf_cstr(&id), project, cm_buf_cstr(&id));
    } else {
        cm_evstore_quote(es, &id, cm_slice_from_cstr(person_id));
        cm_buf_appendf(out,
                       "SELECT 'p', id, version, created_at FROM persons WHERE project_id = %lld"
                       " AND id = %s AND is_deleted = 0 UNION ALL SELECT 'd', distinct_id,"
                       " version, '' FROM person_distinct_ids WHERE project_id = %lld AND"
                       " person_id = %s AND is_deleted = 0",
                       project, cm_buf_cstr(&id), project, cm_buf_cstr(&id));
    }
    cm_buf_free(&id);
}
