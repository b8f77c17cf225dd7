/*
 * persons_store.c - the persons store's SQL (see persons_store.h).
 *
 * A batch is one transaction of two jobs: cm_db_begin with the loads, then
 * cm_db_txn_commit with the writes. On PostgreSQL the loads lock what they
 * read (FOR UPDATE at REPEATABLE READ): a concurrent writer that changed
 * one of those persons, or inserted one of the same distinct ids, makes
 * this transaction fail with CM_ECONFLICT, and the batch is done again
 * from the load. SQLite's BEGIN IMMEDIATE serialises writers outright.
 * Lists of ids travel as one JSON array parameter, so each statement's
 * text is fixed and stays prepared.
 */
#include "persons_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/json.h"

const cm_db_migration_t wr_persons_migrations[] = {
    {1,
     "CREATE TABLE persons (uuid TEXT PRIMARY KEY, project_id INTEGER NOT NULL,"
     " properties TEXT NOT NULL, is_identified INTEGER NOT NULL, version INTEGER NOT NULL,"
     " created_at INTEGER NOT NULL);"
     "CREATE TABLE person_distinct_ids (project_id INTEGER NOT NULL, distinct_id TEXT NOT NULL,"
     " person_uuid TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (project_id, distinct_id));"
     "CREATE INDEX person_distinct_ids_person ON person_distinct_ids (person_uuid);"
     "CREATE TABLE groups (project_id INTEGER NOT NULL, group_type TEXT NOT NULL,"
     " group_key TEXT NOT NULL, properties TEXT NOT NULL, version INTEGER NOT NULL,"
     " created_at INTEGER NOT NULL, PRIMARY KEY (project_id, group_type, group_key));"
     "CREATE TABLE events_seen (uuid TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);"
     "CREATE INDEX events_seen_at ON events_seen (seen_at)",
     "CREATE TABLE persons (uuid TEXT PRIMARY KEY, project_id BIGINT NOT NULL,"
     " properties TEXT NOT NULL, is_identified BOOLEAN NOT NULL, version BIGINT NOT NULL,"
     " created_at BIGINT NOT NULL);"
     "CREATE TABLE person_distinct_ids (project_id BIGINT NOT NULL, distinct_id TEXT NOT NULL,"
     " person_uuid TEXT NOT NULL, version BIGINT NOT NULL, PRIMARY KEY (project_id, distinct_id));"
     "CREATE INDEX person_distinct_ids_person ON person_distinct_ids (person_uuid);"
     "CREATE TABLE groups (project_id BIGINT NOT NULL, group_type TEXT NOT NULL,"
     " group_key TEXT NOT NULL, properties TEXT NOT NULL, version BIGINT NOT NULL,"
     " created_at BIGINT NOT NULL, PRIMARY KEY (project_id, group_type, group_key));"
     "CREATE TABLE events_seen (uuid TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);"
     "CREATE INDEX events_seen_at ON events_seen (seen_at)"},
    /* When each property last changed, and how (props.h): events taken out
     * of order still end as in time order. */
    {2,
     "ALTER TABLE persons ADD COLUMN properties_ts TEXT NOT NULL DEFAULT '{}';"
     "ALTER TABLE groups ADD COLUMN properties_ts TEXT NOT NULL DEFAULT '{}'",
     "ALTER TABLE persons ADD COLUMN properties_ts TEXT NOT NULL DEFAULT '{}';"
     "ALTER TABLE groups ADD COLUMN properties_ts TEXT NOT NULL DEFAULT '{}'"},
    /* Event uuids are unique per project only: the seen record is keyed
     * by (uuid, project) (uuid first: the load looks uuids up). Records
     * made before carry project 0, "any project", so an event seen before
     * the upgrade and redelivered after it is still recognised. */
    {3,
     "CREATE TABLE events_seen_v3 (uuid TEXT NOT NULL, project_id INTEGER NOT NULL,"
     " seen_at INTEGER NOT NULL, PRIMARY KEY (uuid, project_id));"
     "INSERT INTO events_seen_v3 (uuid, project_id, seen_at) SELECT uuid, 0, seen_at"
     " FROM events_seen;"
     "DROP TABLE events_seen;"
     "ALTER TABLE events_seen_v3 RENAME TO events_seen;"
     "CREATE INDEX events_seen_at ON events_seen (seen_at)",
     "CREATE TABLE events_seen_v3 (uuid TEXT NOT NULL, project_id BIGINT NOT NULL,"
     " seen_at BIGINT NOT NULL, PRIMARY KEY (uuid, project_id));"
     "INSERT INTO events_seen_v3 (uuid, project_id, seen_at) SELECT uuid, 0, seen_at"
     " FROM events_seen;"
     "DROP TABLE events_seen;"
     "ALTER TABLE events_seen_v3 RENAME TO events_seen;"
     "CREATE INDEX events_seen_at ON events_seen (seen_at)"},
};
const size_t wr_persons_nmigrations =
    sizeof(wr_persons_migrations) / sizeof(wr_persons_migrations[0]);

/* Every distinct id of every person one of the listed distinct ids has. */
static const char load_persons_sqlite[] =
    "SELECT d.distinct_id, d.version, p.uuid, p.properties, p.is_identified, p.version,"
    " p.created_at, p.properties_ts FROM person_distinct_ids d JOIN persons p ON p.uuid = d.person_uuid"
    " WHERE d.project_id = $1 AND d.person_uuid IN (SELECT person_uuid FROM person_distinct_ids"
    " WHERE project_id = $1 AND distinct_id IN (SELECT value FROM json_each($2)))";
static const char load_persons_pg[] =
    "SELECT d.distinct_id, d.version, p.uuid, p.properties, CASE WHEN p.is_identified THEN 1"
    " ELSE 0 END, p.version, p.created_at, p.properties_ts FROM person_distinct_ids d JOIN persons p"
    " ON p.uuid = d.person_uuid WHERE d.project_id = $1 AND d.person_uuid IN (SELECT person_uuid"
    " FROM person_distinct_ids WHERE project_id = $1 AND distinct_id IN"
    " (SELECT jsonb_array_elements_text(CAST($2 AS jsonb)))) FOR UPDATE";
static const char load_seen_sqlite[] = "SELECT uuid, project_id FROM events_seen WHERE uuid IN"
                                       " (SELECT value FROM json_each($1))";
static const char load_seen_pg[] = "SELECT uuid, project_id FROM events_seen WHERE uuid IN"
                                   " (SELECT jsonb_array_elements_text(CAST($1 AS jsonb)))";
static const char load_group_sqlite[] =
    "SELECT project_id, group_type, group_key, properties, version, created_at, properties_ts"
    " FROM groups WHERE project_id = $1 AND group_type = $2 AND group_key = $3";
static const char load_group_pg[] =
    "SELECT project_id, group_type, group_key, properties, version, created_at, properties_ts"
    " FROM groups WHERE project_id = $1 AND group_type = $2 AND group_key = $3 FOR UPDATE";

static const char ins_person_sqlite[] =
    "INSERT INTO persons (uuid, project_id, properties, is_identified, version, created_at,"
    " properties_ts) VALUES ($1, $2, $3, $4, $5, $6, $7)";
static const char ins_person_pg[] =
    "INSERT INTO persons (uuid, project_id, properties, is_identified, version, created_at,"
    " properties_ts) VALUES ($1, $2, $3, CAST($4 AS INTEGER) <> 0, $5, $6, $7)";
static const char upd_person_sqlite[] =
    "UPDATE persons SET properties = $2, is_identified = $3, version = $4, created_at = $5,"
    " properties_ts = $6 WHERE uuid = $1";
static const char upd_person_pg[] =
    "UPDATE persons SET properties = $2, is_identified = CAST($3 AS INTEGER) <> 0,"
    " version = $4, created_at = $5, properties_ts = $6 WHERE uuid = $1";
static const char del_person[] = "DELETE FROM persons WHERE uuid = $1";
static const char ins_pdi[] = "INSERT INTO person_distinct_ids (project_id, distinct_id,"
                              " person_uuid, version) VALUES ($1, $2, $3, $4)";
static const char upd_pdi[] = "UPDATE person_distinct_ids SET person_uuid = $3, version = $4"
                              " WHERE project_id = $1 AND distinct_id = $2";
static const char ins_group[] =
    "INSERT INTO groups (project_id, group_type, group_key, properties, version, properties_ts,"
    " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
static const char upd_group[] =
    "UPDATE groups SET properties = $4, version = $5, properties_ts = $6"
    " WHERE project_id = $1 AND group_type = $2 AND group_key = $3";
static const char ins_seen[] = "INSERT INTO events_seen (uuid, project_id, seen_at)"
                               " VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
static const char prune_seen[] = "DELETE FROM events_seen WHERE seen_at < $1";
/* An erasure request (retention.c): the person and every distinct id of it. */
static const char erase_distinct_ids[] =
    "DELETE FROM person_distinct_ids WHERE project_id = $1 AND person_uuid = $2";
static const char erase_person[] = "DELETE FROM persons WHERE project_id = $1 AND uuid = $2";

/* ---- building statements ------------------------------------------------------------ */

void wr_stmts_free(wr_stmts_t *s)
{
    free(s->stmts);
    cm_buf_free(&s->text);
    free(s->offsets);
    free(s->params);
    free(s->person_tables);
    free(s->projects);
    memset(s, 0, sizeof(*s));
}

static void p_bytes(wr_stmts_t *s, const char *p, size_t len)
{
    if (s->nparams == s->pcap) {
        s->pcap = s->pcap ? s->pcap * 2 : 64;
        s->offsets = cm_xrealloc(s->offsets, s->pcap * sizeof(*s->offsets));
    }
    s->offsets[s->nparams++] = s->text.len;
    cm_buf_append(&s->text, p, len);
    cm_buf_putc(&s->text, '\0');
}

static void p_str(wr_stmts_t *s, const char *v)
{
    p_bytes(s, v, strlen(v));
}

static void p_int(wr_stmts_t *s, long long v)
{
    char n[24];
    p_bytes(s, n, (size_t)snprintf(n, sizeof(n), "%lld", v));
}

/* A statement whose parameters are the last nparams recorded. */
static void add(wr_stmts_t *s, const char *sql, int nparams)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->stmts = cm_xrealloc(s->stmts, s->cap * sizeof(*s->stmts));
    }
    size_t first = s->nparams - (size_t)nparams;
    s->stmts[s->n++] = (cm_db_stmt_t){sql, (const char *const *)(uintptr_t)first, nparams};
}

static void finish(wr_stmts_t *s)
{
    s->params = cm_xmalloc((s->nparams ? s->nparams : 1) * sizeof(char *));
    for (size_t i = 0; i < s->nparams; i++)
        s->params[i] = s->text.p + s->offsets[i];
    for (size_t i = 0; i < s->n; i++)
        s->stmts[i].params = s->params + (uintptr_t)s->stmts[i].params;
}

static bool usable(const wr_event_t *e)
{
    return e->fate == WR_EVENT_OK && e->project_id > 0;
}

/* ---- loading ------------------------------------------------------------------------ */

void wr_persons_load_stmts(cm_db_dialect_t d, wr_event_t *events, size_t n, wr_stmts_t *out)
{
    bool pg = d == CM_DB_POSTGRES;
    memset(out, 0, sizeof(*out));
    cm_buf_init(&out->text);
    cm_buf_t arr;
    cm_buf_init(&arr);
    for (size_t i = 0; i < n; i++) { /* each project once, in order of appearance */
        if (!usable(&events[i]))
            continue;
        bool known = false;
        for (size_t j = 0; j < out->nprojects && !known; j++)
            known = out->projects[j] == events[i].project_id;
        if (known)
            continue;
        out->projects = cm_xrealloc(out->projects, (out->nprojects + 1) * sizeof(long long));
        out->person_tables = cm_xrealloc(out->person_tables, (out->nprojects + 1) * sizeof(size_t));
        long long project = events[i].project_id;
        out->projects[out->nprojects] = project;
        out->person_tables[out->nprojects++] = out->n;
        cm_buf_reset(&arr);
        cm_buf_putc(&arr, '[');
        for (size_t k = i; k < n; k++) {
            if (!usable(&events[k]) || events[k].project_id != project)
                continue;
            if (arr.len > 1)
                cm_buf_putc(&arr, ',');
            cm_json_quote(&arr, cm_slice_from_cstr(events[k].distinct_id));
            if (events[k].other_id) {
                cm_buf_putc(&arr, ',');
                cm_json_quote(&arr, cm_slice_from_cstr(events[k].other_id));
            }
        }
        cm_buf_putc(&arr, ']');
        p_int(out, project);
        p_bytes(out, arr.p, arr.len);
        add(out, pg ? load_persons_pg : load_persons_sqlite, 2);
    }
    cm_buf_reset(&arr);
    cm_buf_putc(&arr, '[');
    for (size_t i = 0; i < n; i++) {
        if (!usable(&events[i]))
            continue;
        if (arr.len > 1)
            cm_buf_putc(&arr, ',');
        cm_json_quote(&arr, cm_slice_from_cstr(events[i].uuid));
    }
    cm_buf_putc(&arr, ']');
    out->seen_table = out->n;
    p_bytes(out, arr.p, arr.len);
    add(out, pg ? load_seen_pg : load_seen_sqlite, 1);
    out->first_group_table = out->n;
    for (size_t i = 0; i < n; i++) /* a repeated group is loaded twice: harmless */
        if (usable(&events[i]) && events[i].kind == WR_KIND_GROUP_IDENTIFY) {
            p_int(out, events[i].project_id);
            p_str(out, events[i].group_type);
            p_str(out, events[i].group_key);
            add(out, pg ? load_group_pg : load_group_sqlite, 3);
        }
    cm_buf_free(&arr);
    finish(out);
}

static long long num(const char *s)
{
    return s ? atoll(s) : 0;
}

cm_slice_t wr_seen_key(long long project_id, const char *uuid, char out[WR_SEEN_KEY_MAX])
{
    int len = snprintf(out, WR_SEEN_KEY_MAX, "%lld:%s", project_id, uuid ? uuid : "");
    return (cm_slice_t){out, len < 0 ? 0 : CM_MIN((size_t)len, (size_t)WR_SEEN_KEY_MAX - 1)};
}

void wr_persons_load_result(const cm_db_res_t *res, const wr_stmts_t *s, wr_event_t *events,
                            size_t n, wr_state_t *st, bool *seen)
{
    for (size_t j = 0; j < s->nprojects; j++) {
        size_t t = s->person_tables[j];
        for (size_t r = 0; r < cm_db_nrows(res, t); r++) {
            const char *props = cm_db_value(res, t, r, 3), *times = cm_db_value(res, t, r, 7);
            wr_state_person(st, s->projects[j], cm_db_value(res, t, r, 2),
                            cm_slice_from_cstr(props ? props : "{}"),
                            cm_slice_from_cstr(times ? times : ""),
                            num(cm_db_value(res, t, r, 4)) != 0, num(cm_db_value(res, t, r, 5)),
                            num(cm_db_value(res, t, r, 6)));
            wr_state_distinct_id(st, s->projects[j], cm_db_value(res, t, r, 0),
                                 cm_db_value(res, t, r, 2), num(cm_db_value(res, t, r, 1)));
        }
    }
    char key[WR_SEEN_KEY_MAX];
    cm_strset_t *done = cm_strset_new(cm_db_nrows(res, s->seen_table) + 1);
    for (size_t r = 0; r < cm_db_nrows(res, s->seen_table); r++)
        cm_strset_add(done, wr_seen_key(num(cm_db_value(res, s->seen_table, r, 1)),
                                        cm_db_value(res, s->seen_table, r, 0), key));
    for (size_t i = 0; i < n; i++)
        seen[i] = cm_strset_has(done, wr_seen_key(events[i].project_id, events[i].uuid, key)) ||
                  cm_strset_has(done, wr_seen_key(0, events[i].uuid, key)); /* before v3 */
    cm_strset_free(done);
    cm_strset_t *groups = cm_strset_new(8);
    cm_buf_t k;
    cm_buf_init(&k);
    for (size_t t = s->first_group_table; t < cm_db_ntables(res); t++)
        for (size_t r = 0; r < cm_db_nrows(res, t); r++) {
            cm_buf_reset(&k);
            for (size_t c = 0; c < 3; c++)
                cm_buf_appendf(&k, "%s\n", cm_db_value(res, t, r, c));
            if (!cm_strset_add(groups, (cm_slice_t){k.p, k.len}))
                continue;
            const char *props = cm_db_value(res, t, r, 3), *times = cm_db_value(res, t, r, 6);
            wr_state_group(st, num(cm_db_value(res, t, r, 0)), cm_db_value(res, t, r, 1),
                           cm_db_value(res, t, r, 2), cm_slice_from_cstr(props ? props : "{}"),
                           cm_slice_from_cstr(times ? times : ""), num(cm_db_value(res, t, r, 4)),
                           num(cm_db_value(res, t, r, 5)));
        }
    cm_buf_free(&k);
    cm_strset_free(groups);
}

/* ---- saving ------------------------------------------------------------------------- */

void wr_persons_save_stmts(cm_db_dialect_t d, const wr_state_t *st, const wr_event_t *events,
                           size_t n, const bool *seen, int64_t now_ms, wr_stmts_t *out)
{
    bool pg = d == CM_DB_POSTGRES;
    memset(out, 0, sizeof(*out));
    cm_buf_init(&out->text);
    cm_buf_t b;
    cm_buf_init(&b);
    for (size_t i = 0; i < st->npersons; i++) {
        const wr_person_t *p = st->persons[i];
        if (!p->dirty || (p->is_new && p->deleted))
            continue;
        if (p->deleted) {
            p_str(out, p->uuid);
            add(out, del_person, 1);
            continue;
        }
        cm_buf_reset(&b);
        wr_props_write(&p->props, &b);
        p_str(out, p->uuid);
        if (p->is_new)
            p_int(out, p->project_id);
        p_bytes(out, b.p, b.len);
        p_int(out, p->is_identified);
        p_int(out, p->version);
        p_int(out, p->created_at_ms);
        cm_buf_reset(&b);
        wr_props_write_times(&p->props, &b);
        p_bytes(out, b.p, b.len);
        if (p->is_new)
            add(out, pg ? ins_person_pg : ins_person_sqlite, 7);
        else
            add(out, pg ? upd_person_pg : upd_person_sqlite, 6);
    }
    for (size_t i = 0; i < st->npdis; i++) {
        const wr_pdi_t *x = st->pdi_list[i];
        if (!x->is_new && !x->moved)
            continue;
        p_int(out, x->project_id);
        p_str(out, x->distinct_id);
        p_str(out, x->person->uuid);
        p_int(out, x->version);
        add(out, x->is_new ? ins_pdi : upd_pdi, 4);
    }
    for (size_t i = 0; i < st->ngroups; i++) {
        const wr_group_t *g = st->group_list[i];
        if (!g->dirty)
            continue;
        cm_buf_reset(&b);
        wr_props_write(&g->props, &b);
        p_int(out, g->project_id);
        p_str(out, g->type);
        p_str(out, g->key);
        p_bytes(out, b.p, b.len);
        p_int(out, g->version);
        cm_buf_reset(&b);
        wr_props_write_times(&g->props, &b);
        p_bytes(out, b.p, b.len);
        if (g->is_new) {
            p_int(out, g->created_at_ms);
            add(out, ins_group, 7);
        } else
            add(out, upd_group, 6);
    }
    /* Only events that changed something, or were warned about, need
     * recognising when they come again: the others change nothing the
     * second time either (the change times of props.h make a repeated $set
     * a no-op), and a refused merge redelivered (a rebalance) must not be
     * warned about twice. */
    for (size_t i = 0; i < n; i++)
        if (usable(&events[i]) && !seen[i] && (events[i].changed || events[i].warning)) {
            p_str(out, events[i].uuid);
            p_int(out, events[i].project_id);
            p_int(out, now_ms);
            add(out, ins_seen, 3);
        }
    cm_buf_free(&b);
    finish(out);
}

void wr_persons_prune_stmt(int64_t before_ms, wr_stmts_t *out)
{
    memset(out, 0, sizeof(*out));
    cm_buf_init(&out->text);
    p_int(out, before_ms);
    add(out, prune_seen, 1);
    finish(out);
}

void wr_persons_erase_stmts(long long project_id, const char *person_uuid, wr_stmts_t *out)
{
    memset(out, 0, sizeof(*out));
    cm_buf_init(&out->text);
    p_int(out, project_id);
    p_str(out, person_uuid);
    add(out, erase_distinct_ids, 2);
    p_int(out, project_id);
    p_str(out, person_uuid);
    add(out, erase_person, 2);
    finish(out);
}
