/* store.c - project tables from Redis, refreshed and swapped (see store.h). */
#include "serve/store.h"

#include <nettle/sha1.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cm/alloc.h"
#include "cm/api_error.h"
#include "cm/digest.h"
#include "cm/hex.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/strset.h"
#include "core/tzone.h"
#include "serve/freshness.h"

/* The replies of one read, collected before anything is swapped. A full
 * read takes every table; a table read (on flags:changed) all but the
 * definitions, which that message reloads for its one project. */
typedef struct {
    flg_store_t *s;
    int pending;
    bool failed;
    bool full;
    bool unsynced; /* a replica cut from its primary answered: nothing is swapped */
    unsigned gen;  /* the store's want_gen when the read started */
    cm_strset_t *tokens, *secrets, *keys, *projects, *limited, *timezones;
} refresh_t;

/* Stands in the zone cache for a name ICU does not know (logged once). */
static char unknown_zone;

struct flg_store {
    uv_loop_t *loop;
    uv_timer_t timer;
    cm_redis_t *cmd;
    cm_redis_t *sub;
    uint64_t refresh_ms;
    cm_strset_t *tokens;    /* token -> project id (char *) */
    cm_strset_t *secrets;   /* hex sha256 -> project id (char *) */
    cm_strset_t *keys;      /* hex sha256 of a personal key -> "id,id,..." (char *) */
    cm_strset_t *projects;  /* project id -> flg_project_t * */
    cm_strset_t *limited;   /* tokens */
    cm_strset_t *timezones; /* project id -> flg_tzone_t * (owned by zones) */
    cm_strset_t *zones;     /* zone name -> flg_tzone_t *, or &unknown_zone */
    refresh_t *inflight;    /* a full read under way */
    int one_offs;           /* single-project reloads and table reads under way */
    /* A full read is owed while have_gen < want_gen: a change notice may
     * have been missed (the subscriber came back, or a notice's reload
     * failed, while the command client was down). want_gen counts those
     * moments; a full read that started after the last of them and
     * succeeded settles them. */
    unsigned want_gen, have_gen;
    bool loaded;
    bool closing;
    bool timer_closed;
    bool sub_closed;
    void (*done)(void *ud);
    void *done_ud;
    cm_counter_t *reloads;
    cm_counter_t *load_errors;
    cm_gauge_t *nprojects;
};

/* ---- projects ------------------------------------------------------------- */

static void project_unref(void *v)
{
    flg_project_t *p = v;
    if (--p->refs > 0)
        return;
    flg_v2_cache_free(p->v2);
    flg_snapshot_unref(p->snap);
    free(p->project_id);
    free(p->raw);
    free(p);
}

void flg_project_release(flg_project_t *p)
{
    if (p)
        project_unref(p);
}

/* True when no operator in the envelope can be a date operator (the only
 * conditions that read the clock). Read from the text, not the parsed
 * conditions, so it holds for cohorts too; an escape (\u) anywhere could
 * spell an operator this search does not see, so it counts as a date. */
static bool clock_free(cm_slice_t raw)
{
    static const char needle[] = "is_date";
    const size_t n = sizeof(needle) - 1;
    for (size_t i = 0; i + 1 < raw.len; i++) {
        if (raw.p[i] == '\\' && raw.p[i + 1] == 'u')
            return false;
        if (i + n <= raw.len && strncasecmp(raw.p + i, needle, n) == 0)
            return false;
    }
    return true;
}

/* Builds a project from its envelope; NULL (logged) when it does not load. */
static flg_project_t *project_new(flg_store_t *s, cm_slice_t id, cm_slice_t raw)
{
    flg_snapshot_t *snap = NULL;
    cm_json_error_t err;
    if (flg_snapshot_load(raw.p, raw.len, &snap, &err) != 0) {
        cm_counter_inc(s->load_errors);
        cm_log(CM_LOG_ERROR, NULL, "project %.*s: definitions rejected at byte %zu: %s",
               (int)id.len, id.p, err.offset, err.msg);
        return NULL;
    }
    flg_project_t *p = cm_xcalloc(1, sizeof(*p));
    p->project_id = cm_xmemdup(id.p, id.len);
    p->raw = cm_xmemdup(raw.p, raw.len);
    p->raw_len = raw.len;
    p->snap = snap;
    p->v2 = flg_v2_cache_new(snap);
    p->clock_free = clock_free(raw);
    p->refs = 1;
    uint8_t h[SHA1_DIGEST_SIZE];
    struct sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, raw.len, (const uint8_t *)raw.p);
    sha1_digest(&c, sizeof(h), h);
    p->etag[0] = '"';
    cm_hex_encode(h, SHA1_DIGEST_SIZE, p->etag + 1);
    p->etag[1 + 2 * SHA1_DIGEST_SIZE] = '"';
    p->etag[2 + 2 * SHA1_DIGEST_SIZE] = '\0';
    return p;
}

/* Reuses the current project when its envelope did not change: reloading a
 * thousand unchanged projects every refresh would be wasted work. */
static flg_project_t *project_for(flg_store_t *s, cm_slice_t id, cm_slice_t raw)
{
    flg_project_t *cur = cm_strset_get(s->projects, id);
    if (cur && cur->raw_len == raw.len && memcmp(cur->raw, raw.p, raw.len) == 0) {
        cur->refs++;
        return cur;
    }
    flg_project_t *p = project_new(s, id, raw);
    if (p == NULL && cur) /* keep serving the last good definitions */
        cur->refs++, p = cur;
    return p;
}

/* ---- lookups -------------------------------------------------------------- */

const char *flg_store_project_for_token(const flg_store_t *s, cm_slice_t token)
{
    return cm_strset_get(s->tokens, token);
}

/* Is project_id in ids ("2,7,12")? */
static bool id_listed(const char *ids, const char *project_id)
{
    size_t want = strlen(project_id);
    for (const char *at = ids; at && *at;) {
        size_t n = strcspn(at, ",");
        if (n == want && memcmp(at, project_id, n) == 0)
            return true;
        at += n + (at[n] == ',');
    }
    return false;
}

bool flg_store_bearer_reads(const flg_store_t *s, cm_slice_t bearer, const char *project_id)
{
    char hex[65];
    if (bearer.len == 0)
        return false;
    cm_sha256_hex(bearer.p, bearer.len, hex);
    cm_slice_t h = {hex, 64};
    const char *owner = cm_strset_get(s->secrets, h); /* the secret first, as PostHog */
    if (owner)
        return strcmp(owner, project_id) == 0;
    return id_listed(cm_strset_get(s->keys, h), project_id);
}

flg_project_t *flg_store_definitions(flg_store_t *s, const char *project_id)
{
    flg_project_t *p = cm_strset_get(s->projects, cm_slice_from_cstr(project_id));
    if (p)
        p->refs++;
    return p;
}

bool flg_store_quota_limited(const flg_store_t *s, cm_slice_t token)
{
    return cm_strset_has(s->limited, token);
}

const flg_tz_t *flg_store_timezone(const flg_store_t *s, const char *project_id)
{
    const flg_tzone_t *z = cm_strset_get(s->timezones, cm_slice_from_cstr(project_id));
    return z ? flg_tzone_tz(z) : NULL;
}

int flg_store_put_project(flg_store_t *s, const char *token, const char *project_id,
                          const char *envelope, size_t len)
{
    cm_slice_t id = cm_slice_from_cstr(project_id);
    flg_project_t *p = project_new(s, id, (cm_slice_t){envelope, len});
    if (p == NULL)
        return CM_EINVAL;
    if (s->tokens == NULL)
        s->tokens = cm_strset_new(4);
    if (s->projects == NULL)
        s->projects = cm_strset_new(4);
    free(cm_strset_put(s->tokens, cm_slice_from_cstr(token), cm_xstrdup(project_id)));
    flg_project_t *old = cm_strset_put(s->projects, id, p);
    if (old)
        project_unref(old);
    s->loaded = true;
    return CM_OK;
}

bool flg_store_ready(const flg_store_t *s, cm_buf_t *why)
{
    if (!s->loaded && why)
        cm_buf_append_cstr(why, "project definitions not loaded from Redis yet");
    return s->loaded;
}

bool flg_store_current(const flg_store_t *s, cm_buf_t *why)
{
    const char *no = !s->loaded                               ? "definitions not loaded yet"
                     : !s->sub || !cm_redis_connected(s->sub) ? "not subscribed to flags:changed"
                     : s->have_gen < s->want_gen ? "a full re-read is owed (a notice may be missed)"
                                                 : NULL;
    if (no && why)
        cm_buf_append_cstr(why, no);
    return no == NULL;
}

bool flg_store_unloaded(const flg_store_t *s, cm_http_req_t *req)
{
    if (s->loaded)
        return false;
    cm_api_error_t e;
    cm_api_error_set(&e, 503, "not_ready", NULL,
                     "Project tokens are not loaded from Redis yet; retry shortly.");
    cm_http_res_header(req, "Retry-After", "1");
    cm_http_respond_api_error(req, &e);
    return true;
}

/* ---- full refresh --------------------------------------------------------- */

static void maybe_finish_close(flg_store_t *s);

static cm_strset_t *pairs_to_map(const redisReply *r)
{
    cm_strset_t *m = cm_strset_new(r->elements / 2);
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING)
            free(cm_strset_put(m, (cm_slice_t){k->str, (size_t)k->len},
                               cm_xmemdup(v->str, (size_t)v->len)));
    }
    return m;
}

static void on_timer(uv_timer_t *t);

static void refresh_done(refresh_t *r)
{
    flg_store_t *s = r->s;
    if (r->full)
        s->inflight = NULL;
    else
        s->one_offs--;
    /* A table read before the first full one has nothing to complete. */
    if (r->failed || r->unsynced || s->closing || (!r->full && !s->loaded)) {
        cm_strset_free_with(r->tokens, free);
        cm_strset_free_with(r->secrets, free);
        cm_strset_free_with(r->keys, free);
        cm_strset_free_with(r->projects, project_unref);
        cm_strset_free(r->limited);
        cm_strset_free(r->timezones);
    } else {
        cm_strset_free_with(s->tokens, free);
        cm_strset_free_with(s->secrets, free);
        cm_strset_free_with(s->keys, free);
        cm_strset_free(s->limited);
        cm_strset_free(s->timezones);
        s->tokens = r->tokens;
        s->secrets = r->secrets;
        s->keys = r->keys;
        s->limited = r->limited;
        s->timezones = r->timezones;
        if (r->full) {
            cm_strset_free_with(s->projects, project_unref);
            s->projects = r->projects;
            s->loaded = true;
            if (r->gen > s->have_gen)
                s->have_gen = r->gen;
            cm_counter_inc(s->reloads);
            cm_gauge_set(s->nprojects, (double)cm_strset_count(s->projects));
        }
    }
    bool owed = r->full && !s->closing && (s->have_gen < s->want_gen || !s->loaded);
    uint64_t again = r->unsynced ? 1000 : 100; /* a replica resyncs in seconds, not ms */
    free(r);
    if (owed) /* failed, or a notice was missed while it ran: again soon */
        uv_timer_start(&s->timer, on_timer, again, s->refresh_ms);
    maybe_finish_close(s);
}

static bool reply_ok(refresh_t *r, const redisReply *reply, const char *err, const char *what)
{
    if (reply && reply->type == REDIS_REPLY_ARRAY)
        return true;
    if (!r->failed)
        cm_log(CM_LOG_WARN, NULL, "refresh of %s failed: %s", what,
               err ? err : (reply && reply->str ? reply->str : "unexpected reply"));
    r->failed = true;
    return false;
}

/* A full read starts with INFO replication, pipelined before the tables:
 * a replica whose link to its primary is down (restarted, still syncing,
 * cut off) may hold nothing or an old copy, and the last definitions are
 * better than those. A server refusing INFO is read as it is. */
static void on_role(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (err) {
        r->failed = true;
    } else if (reply->type == REDIS_REPLY_STRING &&
               !flg_info_in_sync(reply->str, (size_t)reply->len, NULL)) {
        if (!r->unsynced)
            cm_log(CM_LOG_WARN, NULL,
                   "full read skipped: the replica is not in sync with its primary");
        r->unsynced = true;
    }
    if (--r->pending == 0)
        refresh_done(r);
}

static void on_tokens(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_PROJECT_TOKENS))
        r->tokens = pairs_to_map(reply);
    if (--r->pending == 0)
        refresh_done(r);
}

static void on_secrets(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_PROJECT_SECRET_TOKENS))
        r->secrets = pairs_to_map(reply);
    if (--r->pending == 0)
        refresh_done(r);
}

static void on_keys(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_PERSONAL_KEYS))
        r->keys = pairs_to_map(reply);
    if (--r->pending == 0)
        refresh_done(r);
}

static void on_definitions(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_FLAG_DEFINITIONS) && !r->s->closing) {
        r->projects = cm_strset_new(reply->elements / 2);
        for (size_t i = 0; i + 1 < reply->elements; i += 2) {
            const redisReply *k = reply->element[i], *v = reply->element[i + 1];
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
                continue;
            cm_slice_t id = {k->str, (size_t)k->len};
            flg_project_t *p = project_for(r->s, id, (cm_slice_t){v->str, (size_t)v->len});
            if (p)
                cm_strset_put(r->projects, id, p);
        }
    }
    if (--r->pending == 0)
        refresh_done(r);
}

static void on_limited(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_QUOTA_FLAGS)) {
        r->limited = cm_strset_new(reply->elements);
        for (size_t i = 0; i < reply->elements; i++)
            if (reply->element[i]->type == REDIS_REPLY_STRING)
                cm_strset_add(r->limited,
                              (cm_slice_t){reply->element[i]->str, (size_t)reply->element[i]->len});
    }
    if (--r->pending == 0)
        refresh_done(r);
}

/* A zone by name, opened once per process: projects share them. */
static flg_tzone_t *zone_named(flg_store_t *s, cm_slice_t name)
{
    void *z = cm_strset_get(s->zones, name);
    if (z == NULL) {
        z = flg_tzone_open(name);
        if (z == NULL) {
            cm_log(CM_LOG_WARN, NULL, "unknown time zone %.*s: its projects use UTC", (int)name.len,
                   name.p);
            z = &unknown_zone;
        }
        cm_strset_put(s->zones, name, z);
    }
    return z == &unknown_zone ? NULL : z;
}

static void on_timezones(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    refresh_t *r = ud;
    (void)c;
    if (reply_ok(r, reply, err, CM_REDISKEY_PROJECT_TIMEZONES) && !r->s->closing) {
        r->timezones = cm_strset_new(reply->elements / 2);
        for (size_t i = 0; i + 1 < reply->elements; i += 2) {
            const redisReply *k = reply->element[i], *v = reply->element[i + 1];
            if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
                continue;
            flg_tzone_t *z = zone_named(r->s, (cm_slice_t){v->str, (size_t)v->len});
            if (z)
                cm_strset_put(r->timezones, (cm_slice_t){k->str, (size_t)k->len}, z);
        }
    }
    if (--r->pending == 0)
        refresh_done(r);
}

/* full: every table (the timer, a subscriber reconnect); otherwise all but
 * the definitions (flags:changed, which reloads its project's itself). */
static void read_tables(flg_store_t *s, bool full)
{
    if (s->closing || (full && s->inflight))
        return;
    refresh_t *r = cm_xcalloc(1, sizeof(*r));
    r->s = s;
    r->full = full;
    r->gen = s->want_gen;
    r->pending = full ? 8 : 6; /* the commands plus this function's own hold */
    if (full)
        s->inflight = r;
    else
        s->one_offs++;
    char now[32];
    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    if (full)
        cm_redis_command(s->cmd, on_role, r, "INFO replication");
    cm_redis_command(s->cmd, on_tokens, r, "HGETALL %s", CM_REDISKEY_PROJECT_TOKENS);
    cm_redis_command(s->cmd, on_secrets, r, "HGETALL %s", CM_REDISKEY_PROJECT_SECRET_TOKENS);
    cm_redis_command(s->cmd, on_keys, r, "HGETALL %s", CM_REDISKEY_PERSONAL_KEYS);
    if (full)
        cm_redis_command(s->cmd, on_definitions, r, "HGETALL %s", CM_REDISKEY_FLAG_DEFINITIONS);
    cm_redis_command(s->cmd, on_limited, r, "ZRANGEBYSCORE %s %s +inf", CM_REDISKEY_QUOTA_FLAGS,
                     now);
    cm_redis_command(s->cmd, on_timezones, r, "HGETALL %s", CM_REDISKEY_PROJECT_TIMEZONES);
    if (--r->pending == 0)
        refresh_done(r);
}

static void refresh_all(flg_store_t *s)
{
    read_tables(s, true);
}

static void on_timer(uv_timer_t *t)
{
    flg_store_t *s = t->data;
    if (!cm_redis_connected(s->cmd)) {
        if (!s->loaded || s->have_gen < s->want_gen) /* a read is owed: try again soon */
            uv_timer_start(&s->timer, on_timer, 100, s->refresh_ms);
        return;
    }
    refresh_all(s);
}

/* A change notice may have been missed: owe a full read, done at once when
 * the command client is up, else as soon as it is (on_timer). */
static void owe_full_read(flg_store_t *s)
{
    s->want_gen++;
    if (s->closing)
        return;
    if (cm_redis_connected(s->cmd) && s->inflight == NULL)
        refresh_all(s);
    else /* down, or a read under way that may predate the miss */
        uv_timer_start(&s->timer, on_timer, 100, s->refresh_ms);
}

/* ---- one project, on flags:changed ------------------------------------------ */

typedef struct {
    flg_store_t *s;
    char *id;
} one_t;

static void on_one(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    one_t *o = ud;
    flg_store_t *s = o->s;
    (void)c;
    cm_slice_t id = cm_slice_from_cstr(o->id);
    if (s->closing || s->projects == NULL) {
        /* nothing to update */
    } else if (reply && reply->type == REDIS_REPLY_STRING) {
        flg_project_t *p = project_for(s, id, (cm_slice_t){reply->str, (size_t)reply->len});
        if (p) {
            flg_project_t *old = cm_strset_put(s->projects, id, p);
            if (old)
                project_unref(old);
            cm_counter_inc(s->reloads);
        }
    } else if (reply && reply->type == REDIS_REPLY_NIL) {
        flg_project_t *old = cm_strset_put(s->projects, id, NULL); /* definitions deleted */
        if (old)
            project_unref(old);
    } else {
        cm_log(CM_LOG_WARN, NULL, "reload of project %s failed: %s", o->id, err ? err : "reply");
        owe_full_read(s); /* the change it announced is still to be read */
    }
    free(o->id);
    free(o);
    s->one_offs--;
    maybe_finish_close(s);
}

static void on_changed(cm_redis_t *r, cm_slice_t channel, cm_slice_t msg, void *ud)
{
    flg_store_t *s = ud;
    (void)r;
    (void)channel;
    if (s->closing || msg.len == 0 || msg.len > 64)
        return;
    if (cm_slice_eq_cstr(msg, CM_REDISKEY_PERSONAL_KEYS)) { /* no project's definitions changed */
        read_tables(s, false);
        return;
    }
    one_t *o = cm_xcalloc(1, sizeof(*o));
    o->s = s;
    o->id = cm_xmemdup(msg.p, msg.len);
    s->one_offs++;
    cm_redis_command(s->cmd, on_one, o, "HGET %s %b", CM_REDISKEY_FLAG_DEFINITIONS, msg.p, msg.len);
    /* The change may be a new project (its token), a new secret, a time
     * zone or a quota: the small tables are re-read with it. */
    read_tables(s, false);
}

/* Subscribed (again): anything published while we were away is unknown,
 * so a full read is owed, even when the command client is not back yet (it
 * is then done when it is, not at the next periodic refresh). */
static void on_sub_connect(cm_redis_t *r, void *ud)
{
    (void)r;
    owe_full_read(ud);
}

/* ---- life cycle ------------------------------------------------------------------ */

flg_store_t *flg_store_new(uv_loop_t *loop, cm_redis_t *cmd, const cm_redis_opts_t *sub_opts,
                           uint64_t refresh_ms, cm_metrics_t *metrics)
{
    flg_store_t *s = cm_xcalloc(1, sizeof(*s));
    s->loop = loop;
    s->cmd = cmd;
    s->refresh_ms = refresh_ms;
    s->reloads = cm_metrics_counter(metrics, "flags_definitions_reloads_total",
                                    "Project definition tables read from Redis", NULL);
    s->load_errors = cm_metrics_counter(metrics, "flags_definitions_rejected_total",
                                        "Project definitions that did not load", NULL);
    s->nprojects = cm_metrics_gauge(metrics, "flags_projects", "Projects with definitions", NULL);
    s->zones = cm_strset_new(16);
    uv_timer_init(loop, &s->timer);
    s->timer.data = s;
    uv_timer_start(&s->timer, on_timer, 10, refresh_ms);
    cm_redis_opts_t so = *sub_opts;
    so.subscriber = true;
    so.name = "redis-sub";
    so.on_connect = on_sub_connect;
    so.ud = s;
    if (cm_redis_new(loop, &so, &s->sub) == 0)
        cm_redis_subscribe(s->sub, CM_REDISKEY_FLAGS_CHANGED, on_changed, s);
    else
        s->sub_closed = true;
    return s;
}

static void free_zone(void *z)
{
    if (z != &unknown_zone)
        flg_tzone_free(z);
}

static void maybe_finish_close(flg_store_t *s)
{
    if (!s->closing || !s->timer_closed || !s->sub_closed || s->inflight || s->one_offs > 0)
        return;
    cm_strset_free_with(s->tokens, free);
    cm_strset_free_with(s->secrets, free);
    cm_strset_free_with(s->keys, free);
    cm_strset_free_with(s->projects, project_unref);
    cm_strset_free(s->limited);
    cm_strset_free(s->timezones);
    cm_strset_free_with(s->zones, free_zone);
    void (*done)(void *) = s->done;
    void *ud = s->done_ud;
    free(s);
    if (done)
        done(ud);
}

static void timer_closed(uv_handle_t *h)
{
    flg_store_t *s = h->data;
    s->timer_closed = true;
    maybe_finish_close(s);
}

static void sub_closed(void *ud)
{
    flg_store_t *s = ud;
    s->sub_closed = true;
    maybe_finish_close(s);
}

void flg_store_close(flg_store_t *s, void (*done)(void *ud), void *ud)
{
    s->closing = true;
    s->done = done;
    s->done_ud = ud;
    uv_close((uv_handle_t *)&s->timer, timer_closed);
    if (s->sub)
        cm_redis_close(s->sub, sub_closed, s);
    maybe_finish_close(s);
}
