/*
 * tables.c - the stored tables a query may read, with HogQL's column names
 * and the event store's (proto/event_store/). Anything else in FROM
 * must be the query's own CTE or subquery.
 */
#include <string.h>

#include "query/resolve.h"

static const q_col_t event_cols[] = {
    {"uuid", "uuid", Q_T_UUID, false, false},
    {"event", "event", Q_T_STRING, false, false},
    {"properties", "properties", Q_T_JSON, false, false},
    {"timestamp", "timestamp", Q_T_DATETIME, false, false},
    {"distinct_id", "distinct_id", Q_T_STRING, false, false},
    {"person_id", "person_id", Q_T_UUID, false, false},
    {"created_at", "created_at", Q_T_DATETIME, false, false},
    {"$session_id", "session_id", Q_T_STRING, false, false},
    /* persons-on-events: person.properties.x and person.id (resolve.c) */
    {"person_properties", "person_properties", Q_T_JSON, false, true},
};

static const q_col_t person_cols[] = {
    {"id", "id", Q_T_UUID, false, false},
    {"properties", "properties", Q_T_JSON, false, false},
    {"created_at", "created_at", Q_T_DATETIME, false, false},
    {"is_identified", "is_identified", Q_T_BOOL, false, false},
};

static const q_col_t group_cols[] = {
    {"group_type", "group_type", Q_T_STRING, false, false},
    {"key", "group_key", Q_T_STRING, false, false},
    {"properties", "properties", Q_T_JSON, false, false},
    {"created_at", "created_at", Q_T_DATETIME, false, false},
};

/* PostHog's person_distinct_ids: which person a distinct id belongs to */
static const q_col_t pdi_cols[] = {
    {"distinct_id", "distinct_id", Q_T_STRING, false, false},
    {"person_id", "person_id", Q_T_UUID, false, false},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const q_table_t tables[] = {
    {"events", "events", event_cols, N(event_cols), true, false},
    {"persons", "persons", person_cols, N(person_cols), true, true},
    {"groups", "groups", group_cols, N(group_cols), true, false},
    {"person_distinct_ids", "person_distinct_ids", pdi_cols, N(pdi_cols), true, true},
};

const q_table_t *q_table_lookup(cm_slice_t name)
{
    for (size_t i = 0; i < N(tables); i++)
        if (cm_slice_eq_cstr(name, tables[i].name))
            return &tables[i];
    return NULL;
}

const q_col_t *q_table_col(const q_table_t *t, cm_slice_t name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (cm_slice_eq_cstr(name, t->cols[i].name))
            return &t->cols[i];
    return NULL;
}
