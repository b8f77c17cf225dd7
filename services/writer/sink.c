/*
 * sink.c - the event store write and the Redis mirror (see sink.h), at the
 * same time: the persons they carry are committed in the persons store
 * already, and both are written again whole if either fails (the batch
 * comes back, and its events already seen set `resend` on their persons),
 * so neither needs to wait for the other: the mirror's round trips overlap
 * the store's insert instead of following it (bench writer: within its
 * noise on SQLite, where the insert's disk writes were the wait).
 *
 * A person's Redis copy carries its version, and is replaced only by a
 * higher one (a small script on the server), so two writers finishing out
 * of order never leave the older state behind. A merge gives the surviving
 * person a version above both, so the moved distinct ids follow it.
 */
#include "sink.h"

#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/rediskeys.h"

static const char cas_script[] =
    "local cur = redis.call('GET', KEYS[1])\n"
    "if cur then\n"
    "  local ok, v = pcall(cjson.decode, cur)\n"
    "  if ok and type(v) == 'table' and tonumber(v['version']) ~= nil and\n"
    "     tonumber(v['version']) >= tonumber(ARGV[1]) then return 0 end\n"
    "end\n"
    "redis.call('SET', KEYS[1], ARGV[2])\n"
    "return 1\n";

/* A group's copy is its bare properties (what flags reads), so its version
 * lives beside it, in the hash groups:versions. */
static const char group_cas_script[] =
    "local v = tonumber(redis.call('HGET', KEYS[2], KEYS[1]) or '-1')\n"
    "if v >= tonumber(ARGV[1]) then return 0 end\n"
    "redis.call('SET', KEYS[1], ARGV[2])\n"
    "redis.call('HSET', KEYS[2], KEYS[1], ARGV[1])\n"
    "return 1\n";

typedef struct {
    wr_ctx_t *ctx;
    const wr_event_t *events;
    size_t n;
    const wr_state_t *st;
    wr_sink_cb done;
    void *ud;
    size_t inserted;
    size_t pending; /* the store's answer and Redis replies to come, + 1 while issuing */
    int status;
    char err[200];
} sink_t;

static void finish(sink_t *s)
{
    s->done(s->status, s->status ? s->err : NULL, s->inserted, s->ud);
    free(s);
}

static void done_one(sink_t *s)
{
    if (--s->pending == 0)
        finish(s);
}

static void on_mirrored(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    sink_t *s = ud;
    (void)r;
    if (s->status == 0 && (err || reply->type == REDIS_REPLY_ERROR)) {
        s->status = CM_EUNAVAIL;
        snprintf(s->err, sizeof(s->err), "redis: %s", err ? err : reply->str);
    }
    done_one(s);
}

static void mirror(sink_t *s)
{
    const wr_state_t *st = s->st;
    cm_buf_t key, val;
    char version[24];
    cm_buf_init(&key);
    cm_buf_init(&val);
    for (size_t i = 0; i < st->npersons; i++) {
        const wr_person_t *p = st->persons[i];
        if (!(p->dirty || p->resend) || p->deleted)
            continue;
        cm_buf_reset(&val);
        cm_buf_append_cstr(&val, "{\"properties\":");
        wr_props_write(&p->props, &val);
        cm_buf_appendf(&val, ",\"version\":%lld}", p->version);
        snprintf(version, sizeof(version), "%lld", p->version);
        char project[24];
        snprintf(project, sizeof(project), "%lld", p->project_id);
        for (size_t j = 0; j < p->ndids; j++) {
            cm_rediskeys_person(&key, cm_slice_from_cstr(project), cm_slice_from_cstr(p->dids[j]));
            s->pending++;
            cm_redis_command(s->ctx->redis, on_mirrored, s, "EVAL %s 1 %b %s %b", cas_script, key.p,
                             key.len, version, val.p, val.len);
        }
    }
    for (size_t i = 0; i < st->ngroups; i++) {
        const wr_group_t *g = st->group_list[i];
        if (!g->dirty && !g->resend)
            continue;
        char project[24];
        snprintf(project, sizeof(project), "%lld", g->project_id);
        cm_rediskeys_group(&key, cm_slice_from_cstr(project), cm_slice_from_cstr(g->type),
                           cm_slice_from_cstr(g->key));
        cm_buf_reset(&val);
        wr_props_write(&g->props, &val);
        snprintf(version, sizeof(version), "%lld", g->version);
        s->pending++;
        cm_redis_command(s->ctx->redis, on_mirrored, s, "EVAL %s 2 %b %s %s %b", group_cas_script,
                         key.p, key.len, CM_REDISKEY_GROUP_VERSIONS, version, val.p, val.len);
    }
    cm_buf_free(&key);
    cm_buf_free(&val);
}

static void on_stored(int status, const char *err, size_t inserted, void *ud)
{
    sink_t *s = ud;
    if (status != 0) {
        s->status = status; /* the store's failure is the one reported */
        snprintf(s->err, sizeof(s->err), "event store: %s", err ? err : "failed");
    } else {
        s->inserted = inserted;
    }
    done_one(s);
}

void wr_sink_write(wr_ctx_t *ctx, const wr_event_t *events, size_t n, const wr_state_t *st,
                   int64_t now_ms, wr_sink_cb done, void *ud)
{
    sink_t *s = cm_xcalloc(1, sizeof(*s));
    s->ctx = ctx;
    s->events = events;
    s->n = n;
    s->st = st;
    s->done = done;
    s->ud = ud;

    cm_evstore_event_t *ev = cm_xcalloc(n + 1, sizeof(*ev));
    /* Every event's properties text in one buffer (one allocation that
     * grows a few times, not one per event); the slices are set once it
     * stops moving. */
    cm_buf_t props = CM_BUF_INIT;
    size_t *ends = cm_xcalloc(n + 1, sizeof(*ends));
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        const wr_event_t *e = &events[i];
        if (e->fate != WR_EVENT_OK || e->project_id <= 0)
            continue;
        wr_event_properties_json(e, &props);
        ends[ne] = props.len;
        ev[ne] = (cm_evstore_event_t){
            .uuid = e->uuid,
            .project_id = e->project_id,
            .event = cm_slice_from_cstr(e->event),
            .distinct_id = cm_slice_from_cstr(e->distinct_id),
            .person_id = e->person_id,
            .person_properties =
                cm_slice_from_cstr(e->person_properties ? e->person_properties : "{}"),
            .timestamp_ms = e->timestamp_ms,
            .created_at_ms = now_ms,
            .session_id = cm_slice_from_cstr(e->session_id ? e->session_id : ""),
        };
        ne++;
    }
    for (size_t i = 0; i < ne; i++) {
        size_t start = i ? ends[i - 1] : 0;
        ev[i].properties = (cm_slice_t){props.p + start, ends[i] - start};
    }
    size_t np = 0, nd = 0, ng = 0;
    cm_evstore_person_t *persons = cm_xcalloc(st->npersons + 1, sizeof(*persons));
    cm_buf_t *pprops = cm_xcalloc(st->npersons + 1, sizeof(*pprops));
    for (size_t i = 0; i < st->npersons; i++) {
        const wr_person_t *p = st->persons[i];
        if (!(p->dirty || p->resend) || (p->is_new && p->deleted))
            continue;
        cm_buf_init(&pprops[np]);
        wr_props_write(&p->props, &pprops[np]);
        persons[np] =
            (cm_evstore_person_t){p->uuid,          p->project_id, {pprops[np].p, pprops[np].len},
                                  p->is_identified, p->deleted,    p->created_at_ms,
                                  p->version};
        np++;
    }
    cm_evstore_distinct_id_t *dids = cm_xcalloc(st->npdis + 1, sizeof(*dids));
    for (size_t i = 0; i < st->npdis; i++) {
        const wr_pdi_t *d = st->pdi_list[i];
        if (d->is_new || d->moved || d->resend)
            dids[nd++] =
                (cm_evstore_distinct_id_t){d->project_id, cm_slice_from_cstr(d->distinct_id),
                                           d->person->uuid, d->version, false};
    }
    cm_evstore_group_t *groups = cm_xcalloc(st->ngroups + 1, sizeof(*groups));
    cm_buf_t *gprops = cm_xcalloc(st->ngroups + 1, sizeof(*gprops));
    for (size_t i = 0; i < st->ngroups; i++) {
        const wr_group_t *g = st->group_list[i];
        if (!g->dirty && !g->resend)
            continue;
        cm_buf_init(&gprops[ng]);
        wr_props_write(&g->props, &gprops[ng]);
        groups[ng] = (cm_evstore_group_t){g->project_id,
                                          cm_slice_from_cstr(g->type),
                                          cm_slice_from_cstr(g->key),
                                          {gprops[ng].p, gprops[ng].len},
                                          g->created_at_ms,
                                          g->version};
        ng++;
    }
    cm_evstore_rows_in_t rows = {ev, ne, persons, np, dids, nd, groups, ng};
    s->pending = 2; /* the store's answer, and a hold until both are under way */
    cm_evstore_write(ctx->events, &rows, on_stored, s); /* copies what it needs */
    mirror(s);
    cm_buf_free(&props);
    free(ends);
    for (size_t i = 0; i < np; i++)
        cm_buf_free(&pprops[i]);
    for (size_t i = 0; i < ng; i++)
        cm_buf_free(&gprops[i]);
    free(pprops);
    free(gprops);
    free(ev);
    free(persons);
    free(dids);
    free(groups);
    done_one(s);
}
