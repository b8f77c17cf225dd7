/* freshness.c - the staleness bound of the served definitions (see freshness.h). */
#include "serve/freshness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/log.h"

struct flg_fresh {
    uv_loop_t *loop;
    uv_timer_t timer;
    cm_redis_t *cmd;
    const flg_store_t *store;
    uint64_t max_ms;
    cm_gauge_t *age;
    uint64_t fresh_at; /* uv_now of the last tick that found everything current */
    bool probing;      /* an INFO is under way (at most one) */
    bool closing;
    bool timer_closed;
    bool was_stale;   /* logged once per stale spell */
    char reason[160]; /* why the last tick did not confirm, "" when it did */
    void (*done)(void *ud);
    void *done_ud;
};

static void maybe_finish_close(flg_fresh_t *f)
{
    if (!f->closing || !f->timer_closed || f->probing)
        return;
    void (*done)(void *) = f->done;
    void *ud = f->done_ud;
    free(f);
    if (done)
        done(ud);
}

/* The value of "field:" in an INFO reply's text, or an empty slice. */
static cm_slice_t info_field(const char *text, size_t len, const char *field)
{
    size_t n = strlen(field);
    for (size_t at = 0; at < len;) {
        const char *line = text + at;
        const char *eol = memchr(line, '\n', len - at);
        size_t ll = eol ? (size_t)(eol - line) : len - at;
        if (ll > n && memcmp(line, field, n) == 0 && line[n] == ':') {
            cm_slice_t v = {line + n + 1, ll - n - 1};
            while (v.len > 0 && (v.p[v.len - 1] == '\r' || v.p[v.len - 1] == ' '))
                v.len--;
            return v;
        }
        at += ll + 1;
    }
    return (cm_slice_t){"", 0};
}

bool flg_info_in_sync(const char *text, size_t len, cm_slice_t *link)
{
    if (!cm_slice_eq_cstr(info_field(text, len, "role"), "slave"))
        return true; /* a primary is its own truth */
    cm_slice_t l = info_field(text, len, "master_link_status");
    if (link)
        *link = l;
    return cm_slice_eq_cstr(l, "up");
}

static void set_reason(flg_fresh_t *f, const char *what, cm_slice_t detail)
{
    int dl = detail.len > 80 ? 80 : (int)detail.len;
    snprintf(f->reason, sizeof(f->reason), "%s%.*s", what, dl, detail.p);
}

/* Is the server in sync with the primary? The reason is set when it is not. */
static bool server_in_sync(flg_fresh_t *f, const redisReply *reply, const char *err)
{
    if (err) {
        set_reason(f, "Redis unreachable: ", cm_slice_from_cstr(err));
        return false;
    }
    if (reply->type != REDIS_REPLY_STRING)
        return true; /* INFO refused (renamed, ACL): the server's state cannot be judged */
    cm_slice_t link;
    if (flg_info_in_sync(reply->str, (size_t)reply->len, &link))
        return true;
    set_reason(f, "the replica's link to its primary is ",
               link.len ? link : cm_slice_from_cstr("?"));
    return false;
}

static void on_info(cm_redis_t *c, const redisReply *reply, const char *err, void *ud)
{
    flg_fresh_t *f = ud;
    (void)c;
    f->probing = false;
    if (f->closing) {
        maybe_finish_close(f);
        return;
    }
    cm_buf_t why = CM_BUF_INIT;
    if (server_in_sync(f, reply, err)) {
        if (flg_store_current(f->store, &why)) {
            f->fresh_at = uv_now(f->loop);
            f->reason[0] = '\0';
        } else {
            set_reason(f, "", cm_buf_slice(&why));
        }
    }
    cm_buf_free(&why);
    cm_gauge_set(f->age, (double)flg_fresh_age_ms(f) / 1000.0);
    bool stale = !flg_fresh_ok(f, NULL);
    if (stale != f->was_stale)
        cm_log(stale ? CM_LOG_WARN : CM_LOG_INFO, NULL,
               stale ? "definitions stale past FLAGS_MAX_STALENESS: %s"
                     : "definitions current again%s",
               f->reason);
    f->was_stale = stale;
}

static void on_tick(uv_timer_t *t)
{
    flg_fresh_t *f = t->data;
    if (f->probing || f->closing)
        return;
    f->probing = true;
    cm_redis_command(f->cmd, on_info, f, "INFO replication"); /* on_info runs either way */
}

flg_fresh_t *flg_fresh_new(uv_loop_t *loop, cm_redis_t *cmd, const flg_store_t *store,
                           uint64_t max_ms, cm_metrics_t *metrics)
{
    flg_fresh_t *f = cm_xcalloc(1, sizeof(*f));
    f->loop = loop;
    f->cmd = cmd;
    f->store = store;
    f->max_ms = max_ms;
    f->age = cm_metrics_gauge(metrics, "flags_definitions_age_seconds",
                              "Seconds since the served definitions were last confirmed current "
                              "(FLAGS_MAX_STALENESS bounds it)",
                              NULL);
    f->fresh_at = uv_now(loop);
    snprintf(f->reason, sizeof(f->reason), "not confirmed since start");
    uv_timer_init(loop, &f->timer);
    f->timer.data = f;
    uint64_t every = max_ms / 4;
    every = every < 50 ? 50 : every > 1000 ? 1000 : every;
    if (max_ms > 0)
        uv_timer_start(&f->timer, on_tick, every, every);
    return f;
}

uint64_t flg_fresh_age_ms(const flg_fresh_t *f)
{
    uint64_t now = uv_now(f->loop);
    return now > f->fresh_at ? now - f->fresh_at : 0;
}

bool flg_fresh_ok(const flg_fresh_t *f, cm_buf_t *why)
{
    uint64_t age = flg_fresh_age_ms(f);
    if (f->max_ms == 0 || age <= f->max_ms)
        return true;
    if (why)
        cm_buf_appendf(why, "definitions unconfirmed for %llu ms (FLAGS_MAX_STALENESS %llu ms): %s",
                       (unsigned long long)age, (unsigned long long)f->max_ms,
                       f->reason[0] ? f->reason : "no probe answered yet");
    return false;
}

static void timer_closed(uv_handle_t *h)
{
    flg_fresh_t *f = h->data;
    f->timer_closed = true;
    maybe_finish_close(f);
}

void flg_fresh_close(flg_fresh_t *f, void (*done)(void *ud), void *ud)
{
    f->closing = true;
    f->done = done;
    f->done_ud = ud;
    uv_close((uv_handle_t *)&f->timer, timer_closed);
}
