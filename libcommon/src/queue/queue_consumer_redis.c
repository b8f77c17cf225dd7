/*
 * queue_consumer_redis.c - the Redis Streams consumer (see queue_consumer.h).
 *
 * One fetch is one of these, tried in order:
 *   1. XGROUP CREATE <stream> <group> 0 MKSTREAM for every stream not yet
 *      known to have the group (BUSYGROUP counts as done). "0": a new group
 *      reads what ingest queued before any writer ran.
 *   2. Every claim_idle_ms / 2: XAUTOCLAIM <stream> <group> <me> <idle>
 *      <cursor> COUNT n, stream after stream, to take over what a consumer
 *      that died (kill -9, a lost pod) left pending.
 *   3. Our own pending entries, XREADGROUP ... STREAMS <stream> 0, for a
 *      stream flagged "pending first": at start (a consumer that restarts
 *      under the same name finds what it had), after a retry (the batch
 *      comes again, in order) and after a failed XACK.
 *   4. New entries, XREADGROUP ... STREAMS <stream> >, stream by stream in
 *      priority order without blocking; when all are empty, one XREADGROUP
 *      BLOCK block_ms over all of them.
 * Entries that were trimmed while pending come back without fields: they
 * are acknowledged and skipped.
 *
 * With a depth above one, steps 1-3 wait until no batch is outstanding (a
 * commit or retry wakes the fetch): reading the pending list from "0", or
 * claiming, would deliver a batch the caller still holds a second time.
 * Under a steady load that makes the depth one for a batch every
 * claim_idle_ms / 2.
 *
 * Commit is one XACK of the batch's ids, written before the next fetch on
 * the same connection, so Redis applies it first (with a depth above one,
 * a blocking read may already be waiting ahead of it: the XACK then goes
 * when that read is answered, at most block_ms later). Every TRIM_EVERY_MS, when
 * ours is the stream's only group, the stream is trimmed below the oldest
 * entry still needed (XTRIM MINID ~ the smallest pending id, else the last
 * delivered one): acknowledged entries do not pile up in Redis's memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "queue_consumer_internal.h"

#define RETRY_MS      500  /* after an error or while disconnected */
#define TRIM_EVERY_MS 5000 /* per stream, at most */
#define LAG_EVERY_MS  5000 /* XINFO GROUPS for the lag gauges, at most */
#define MAX_HEADERS   64

typedef struct {
    bool created;
    bool pending_first;
    bool claim_done; /* this claim round reached the end of the stream's PEL */
    char cursor[48];
    uint64_t next_trim;
    char trim_last[48];     /* the group's last-delivered-id, from XINFO GROUPS */
    char trim_smallest[48]; /* the smallest pending id, "" for none */
    bool trim_single;       /* ours is the only group */
} rtopic_t;

typedef struct {
    struct cm_consumer base; /* first */
    cm_redis_t *client;
    rtopic_t *t;
    size_t creating; /* XGROUP CREATE replies still to come */
    uint64_t next_claim;
    uint64_t next_lag;  /* the next XINFO GROUPS round (lag gauges) */
    size_t claim_topic; /* the stream the current claim round is on */
    size_t probe;       /* step 4: the stream being read without blocking */
    size_t in_flight;   /* commands whose reply has not come (XACK, trims) */
    size_t count;       /* COUNT of the next read: grows from 64 while batches stay small */
    bool shutting;
    char idtext[48];
    uint64_t last_log;
} rc_t;

typedef struct {
    rc_t *rc;
    size_t topic;
} cmd_ud_t;

static void fetch(cm_consumer_t *c);
static void ask_lag(rc_t *rc);

static void log_err(rc_t *rc, const char *what, const redisReply *reply, const char *err)
{
    uint64_t now = uv_now(rc->base.loop);
    if (now - rc->last_log < 1000 && rc->last_log)
        return;
    rc->last_log = now;
    cm_log(CM_LOG_WARN, NULL, "queue consumer: %s failed: %s", what,
           err                                         ? err
           : reply && reply->type == REDIS_REPLY_ERROR ? reply->str
                                                       : "unexpected reply");
}

static cmd_ud_t *cmd_ud(rc_t *rc, size_t topic)
{
    cmd_ud_t *u = cm_xmalloc(sizeof(*u));
    u->rc = rc;
    u->topic = topic;
    rc->in_flight++;
    return u;
}

/* The reply of a command that outlives a fetch (XACK, trims): once none is
 * left, a closing consumer may go. */
static rc_t *cmd_done(cmd_ud_t *u, size_t *topic)
{
    rc_t *rc = u->rc;
    if (topic)
        *topic = u->topic;
    free(u);
    rc->in_flight--;
    if (rc->shutting && rc->in_flight == 0) {
        cm__consumer_shutdown_done(&rc->base);
        return NULL;
    }
    return rc;
}

/* ---- reading entries -------------------------------------------------------- */

static bool is_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS);
}

/* Adds one [id, [field, value...]] entry to b; entries without fields
 * (trimmed while pending) go to *gone instead. */
static void add_entry(cm_consumer_batch_t *b, const redisReply *e, bool redelivered,
                      const char **gone, size_t *ngone)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 2 || !is_str(e->element[0]))
        return;
    const redisReply *f = e->element[1];
    if (f->type != REDIS_REPLY_ARRAY) {
        gone[(*ngone)++] = e->element[0]->str;
        return;
    }
    cm_slice_t key = CM_SLICE_NULL, value = CM_SLICE_NULL;
    cm_queue_header_t hs[MAX_HEADERS];
    size_t nh = 0;
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        const redisReply *n = f->element[i], *v = f->element[i + 1];
        if (!is_str(n) || !is_str(v))
            continue;
        cm_slice_t name = {n->str, n->len}, val = {v->str, v->len};
        if (cm_slice_eq_cstr(name, "key"))
            key = val;
        else if (cm_slice_eq_cstr(name, "value"))
            value = val;
        else if (name.len >= 2 && !memcmp(name.p, "h:", 2) && nh < MAX_HEADERS)
            hs[nh++] = (cm_queue_header_t){{name.p + 2, name.len - 2}, val};
    }
    cm__consumer_batch_add(b, e->element[0]->str, key, value, hs, nh, redelivered);
}

static void on_ack_gone(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    (void)r;
    (void)reply;
    (void)err;
    cmd_done(ud, NULL);
}

/* XACKs ids of entries that no longer exist. */
static void ack_ids(rc_t *rc, size_t topic, const char *const *ids, size_t n, cm_redis_cb cb,
                    void *ud)
{
    const char **argv = cm_xmalloc((n + 3) * sizeof(char *));
    argv[0] = "XACK";
    argv[1] = rc->base.topics[topic];
    argv[2] = rc->base.group;
    for (size_t i = 0; i < n; i++)
        argv[3 + i] = ids[i];
    cm_redis_command_argv(rc->client, cb, ud, (int)(n + 3), argv, NULL);
    free(argv);
}

/* entries: an array of entries of stream `topic`. Delivers them as a batch
 * (true) or returns false when none had fields. */
static bool deliver_entries(rc_t *rc, size_t topic, const redisReply *entries, bool redelivered)
{
    if (entries == NULL || entries->type != REDIS_REPLY_ARRAY || entries->elements == 0)
        return false;
    cm_consumer_batch_t *b = cm__consumer_batch_new(&rc->base, topic);
    const char **gone = cm_xmalloc(entries->elements * sizeof(char *));
    size_t ngone = 0;
    for (size_t i = 0; i < entries->elements; i++)
        add_entry(b, entries->element[i], redelivered, gone, &ngone);
    if (ngone)
        ack_ids(rc, topic, gone, ngone, on_ack_gone, cmd_ud(rc, topic));
    free(gone);
    if (cm_consumer_batch_len(b) == 0) {
        cm__consumer_batch_free(b);
        return ngone > 0; /* fetch again: there may be more */
    }
    /* The next COUNT: double while the average message leaves room in
     * max_batch_bytes, shrink when it does not (Redis answers by count). */
    size_t bytes = 0, n = cm_consumer_batch_len(b);
    for (size_t i = 0; i < n; i++)
        bytes += cm_consumer_batch_msg(b, i)->value.len + 64;
    size_t fit = rc->base.max_batch_bytes / (bytes / n + 1);
    size_t next = rc->count * 2 < fit ? rc->count * 2 : fit;
    rc->count = next < 1 ? 1 : next > rc->base.max_batch ? rc->base.max_batch : next;
    cm__consumer_deliver(&rc->base, b);
    return true;
}

/* ---- the fetch steps ---------------------------------------------------------- */

static bool failed(rc_t *rc, const char *what, const redisReply *reply, const char *err)
{
    if (err == NULL && reply && reply->type != REDIS_REPLY_ERROR)
        return false;
    log_err(rc, what, reply, err);
    cm__consumer_idle(&rc->base, RETRY_MS);
    return true;
}

static void on_create(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    cmd_ud_t *u = ud;
    rc_t *rc = u->rc;
    size_t topic = u->topic;
    (void)r;
    free(u);
    if (err == NULL && (reply->type != REDIS_REPLY_ERROR || !strncmp(reply->str, "BUSYGROUP", 9)))
        rc->t[topic].created = true;
    else
        log_err(rc, "XGROUP CREATE", reply, err);
    if (--rc->creating > 0)
        return;
    for (size_t i = 0; i < rc->base.ntopics; i++)
        if (!rc->t[i].created) {
            cm__consumer_idle(&rc->base, RETRY_MS);
            return;
        }
    fetch(&rc->base);
}

static void on_claim(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    cmd_ud_t *u = ud;
    rc_t *rc = u->rc;
    size_t topic = u->topic;
    (void)r;
    free(u);
    if (failed(rc, "XAUTOCLAIM", reply, err))
        return;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 || !is_str(reply->element[0])) {
        failed(rc, "XAUTOCLAIM", NULL, "unexpected reply");
        return;
    }
    rtopic_t *t = &rc->t[topic];
    snprintf(t->cursor, sizeof(t->cursor), "%s", reply->element[0]->str);
    if (!strcmp(t->cursor, "0-0"))
        t->claim_done = true;
    if (!deliver_entries(rc, topic, reply->element[1], true))
        fetch(&rc->base);
}

static void on_pending(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    cmd_ud_t *u = ud;
    rc_t *rc = u->rc;
    size_t topic = u->topic;
    (void)r;
    free(u);
    if (failed(rc, "XREADGROUP (pending)", reply, err))
        return;
    /* [[stream, [entries]]] */
    const redisReply *entries = NULL;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
        reply->element[0]->type == REDIS_REPLY_ARRAY && reply->element[0]->elements == 2)
        entries = reply->element[0]->element[1];
    if (entries == NULL || entries->elements == 0)
        rc->t[topic].pending_first = false;
    if (!deliver_entries(rc, topic, entries, true))
        fetch(&rc->base);
}

static size_t topic_index(rc_t *rc, const redisReply *name)
{
    for (size_t i = 0; i < rc->base.ntopics; i++)
        if (is_str(name) && strlen(rc->base.topics[i]) == name->len &&
            !memcmp(rc->base.topics[i], name->str, name->len))
            return i;
    return SIZE_MAX;
}

/* A reply to XREADGROUP ... > : [[stream, [entries]], ...] or nil. */
static void on_new(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    cmd_ud_t *u = ud;
    rc_t *rc = u->rc;
    bool blocking = u->topic == SIZE_MAX;
    (void)r;
    free(u);
    if (failed(rc, "XREADGROUP", reply, err))
        return;
    size_t best = SIZE_MAX;
    const redisReply *best_entries = NULL;
    if (reply->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < reply->elements; i++) {
            const redisReply *s = reply->element[i];
            if (s->type != REDIS_REPLY_ARRAY || s->elements != 2)
                continue;
            size_t ti = topic_index(rc, s->element[0]);
            if (ti == SIZE_MAX || s->element[1]->type != REDIS_REPLY_ARRAY ||
                s->element[1]->elements == 0)
                continue;
            if (best == SIZE_MAX || ti < best) {
                if (best != SIZE_MAX)
                    rc->t[best].pending_first = true; /* in our PEL now: read it from there */
                best = ti;
                best_entries = s->element[1];
            } else
                rc->t[ti].pending_first = true;
        }
    if (best != SIZE_MAX && deliver_entries(rc, best, best_entries, false)) {
        rc->probe = 0; /* the next fetch looks at the first stream first again */
        return;
    }
    if (blocking) {
        rc->probe = 0;
        cm__consumer_idle(&rc->base, 0);
        return;
    }
    rc->probe++;
    fetch(&rc->base);
}

static void send_read(rc_t *rc, size_t topic, const char *from, bool block, cm_redis_cb cb)
{
    size_t n = rc->base.ntopics;
    const char **argv = cm_xmalloc((10 + 2 * n) * sizeof(char *));
    char count[24], blockms[24];
    int argc = 0;
    snprintf(count, sizeof(count), "%zu", rc->count);
    snprintf(blockms, sizeof(blockms), "%d", rc->base.block_ms);
    argv[argc++] = "XREADGROUP";
    argv[argc++] = "GROUP";
    argv[argc++] = rc->base.group;
    argv[argc++] = rc->base.consumer;
    argv[argc++] = "COUNT";
    argv[argc++] = count;
    if (block) {
        argv[argc++] = "BLOCK";
        argv[argc++] = blockms;
    }
    argv[argc++] = "STREAMS";
    if (topic == SIZE_MAX) {
        for (size_t i = 0; i < n; i++)
            argv[argc++] = rc->base.topics[i];
        for (size_t i = 0; i < n; i++)
            argv[argc++] = from;
    } else {
        argv[argc++] = rc->base.topics[topic];
        argv[argc++] = from;
    }
    cmd_ud_t *u = cm_xmalloc(sizeof(*u));
    u->rc = rc;
    u->topic = topic;
    cm_redis_command_argv(rc->client, cb, u, argc, argv, NULL);
    free(argv);
}

static bool pending_first(const rc_t *rc)
{
    for (size_t i = 0; i < rc->base.ntopics; i++)
        if (rc->t[i].pending_first)
            return true;
    return false;
}

static void fetch(cm_consumer_t *c)
{
    rc_t *rc = (rc_t *)c;
    if (c->closing) {
        cm__consumer_idle(c, 0);
        return;
    }
    if (!cm_redis_connected(rc->client)) {
        cm__consumer_idle(c, RETRY_MS);
        return;
    }
    for (size_t i = 0; i < c->ntopics; i++)
        if (!rc->t[i].created)
            rc->creating++;
    if (rc->creating) {
        size_t n = rc->creating;
        for (size_t i = 0; i < c->ntopics && n; i++)
            if (!rc->t[i].created) {
                n--;
                cmd_ud_t *u = cm_xmalloc(sizeof(*u));
                u->rc = rc;
                u->topic = i;
                cm_redis_command(rc->client, on_create, u, "XGROUP CREATE %s %s 0 MKSTREAM",
                                 c->topics[i], c->group);
            }
        return;
    }
    ask_lag(rc);
    uint64_t now = uv_now(c->loop);
    if (c->nout > 0 && (now >= rc->next_claim || pending_first(rc))) {
        cm__consumer_idle(c, RETRY_MS); /* a commit or retry wakes it sooner */
        return;
    }
    if (now >= rc->next_claim) {
        while (rc->claim_topic < c->ntopics && rc->t[rc->claim_topic].claim_done)
            rc->claim_topic++;
        if (rc->claim_topic < c->ntopics) {
            rtopic_t *t = &rc->t[rc->claim_topic];
            char idle[24], count[24];
            snprintf(idle, sizeof(idle), "%d", c->claim_idle_ms);
            snprintf(count, sizeof(count), "%zu", rc->count);
            const char *argv[] = {"XAUTOCLAIM", c->topics[rc->claim_topic],
                                  c->group,     c->consumer,
                                  idle,         t->cursor,
                                  "COUNT",      count};
            cmd_ud_t *u = cm_xmalloc(sizeof(*u));
            u->rc = rc;
            u->topic = rc->claim_topic;
            cm_redis_command_argv(rc->client, on_claim, u, 8, argv, NULL);
            return;
        }
        /* The round is over: the next one in half the idle time. */
        for (size_t i = 0; i < c->ntopics; i++) {
            rc->t[i].claim_done = false;
            strcpy(rc->t[i].cursor, "0-0");
        }
        rc->claim_topic = 0;
        rc->next_claim = now + (uint64_t)c->claim_idle_ms / 2;
    }
    for (size_t i = 0; i < c->ntopics; i++)
        if (rc->t[i].pending_first) {
            send_read(rc, i, "0", false, on_pending);
            return;
        }
    if (rc->probe < c->ntopics) {
        send_read(rc, rc->probe, ">", false, on_new);
        return;
    }
    send_read(rc, SIZE_MAX, ">", true, on_new);
}

/* ---- lag --------------------------------------------------------------------- */

/* XINFO GROUPS <stream>: our group's "lag" (Redis 7: entries not yet
 * delivered to the group; nil when Redis cannot tell) and "pending". */
static void on_lag_info(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    size_t topic;
    (void)r;
    rc_t *rc = cmd_done(ud, &topic);
    if (rc == NULL || err || reply->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *g = reply->element[i];
        if (g->type != REDIS_REPLY_ARRAY)
            continue;
        bool ours = false;
        const redisReply *lag = NULL, *pending = NULL;
        for (size_t k = 0; k + 1 < g->elements; k += 2) {
            const redisReply *name = g->element[k], *v = g->element[k + 1];
            if (!is_str(name))
                continue;
            if (!strcmp(name->str, "name"))
                ours = is_str(v) && !strcmp(v->str, rc->base.group);
            else if (!strcmp(name->str, "lag"))
                lag = v;
            else if (!strcmp(name->str, "pending"))
                pending = v;
        }
        if (!ours)
            continue;
        if (lag && lag->type == REDIS_REPLY_INTEGER)
            cm__consumer_note_lag(&rc->base, rc->base.topics[topic], 0, (double)lag->integer);
        if (pending && pending->type == REDIS_REPLY_INTEGER)
            cm__consumer_note_pending(&rc->base, rc->base.topics[topic], (double)pending->integer);
    }
}

/* Queued before a read, at most every LAG_EVERY_MS: a writer that is
 * stuck still fetches (a batch handed back comes through here again). */
static void ask_lag(rc_t *rc)
{
    uint64_t now = uv_now(rc->base.loop);
    if (rc->base.metrics == NULL || now < rc->next_lag)
        return;
    rc->next_lag = now + LAG_EVERY_MS;
    for (size_t i = 0; i < rc->base.ntopics; i++)
        cm_redis_command(rc->client, on_lag_info, cmd_ud(rc, i), "XINFO GROUPS %s",
                         rc->base.topics[i]);
}

/* ---- commit, rewind, trim ------------------------------------------------------- */

static void trim_step(rc_t *rc, size_t topic);

static void on_ack(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    size_t topic;
    (void)r;
    rc_t *rc = ((cmd_ud_t *)ud)->rc;
    bool bad = err || reply->type != REDIS_REPLY_INTEGER;
    if (bad) {
        log_err(rc, "XACK", reply, err);
        cm__consumer_commit_failed(&rc->base);
    }
    if ((rc = cmd_done(ud, &topic)) == NULL)
        return;
    if (bad)
        rc->t[topic].pending_first = true;
    else if (!rc->base.closing && uv_now(rc->base.loop) >= rc->t[topic].next_trim)
        trim_step(rc, topic);
}

static void on_trim_info(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    size_t topic;
    (void)r;
    rc_t *rc = cmd_done(ud, &topic);
    if (rc == NULL || err || reply->type != REDIS_REPLY_ARRAY)
        return;
    rtopic_t *t = &rc->t[topic];
    t->trim_single = reply->elements == 1;
    t->trim_last[0] = '\0';
    if (!t->trim_single || reply->element[0]->type != REDIS_REPLY_ARRAY)
        return;
    const redisReply *g = reply->element[0];
    for (size_t i = 0; i + 1 < g->elements; i += 2)
        if (is_str(g->element[i]) && !strcmp(g->element[i]->str, "last-delivered-id") &&
            is_str(g->element[i + 1]))
            snprintf(t->trim_last, sizeof(t->trim_last), "%s", g->element[i + 1]->str);
}

static void on_trim_pending(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    size_t topic;
    (void)r;
    rc_t *rc = cmd_done(ud, &topic);
    if (rc == NULL || err || reply->type != REDIS_REPLY_ARRAY || reply->elements < 2)
        return;
    rtopic_t *t = &rc->t[topic];
    const char *minid = is_str(reply->element[1]) ? reply->element[1]->str : t->trim_last;
    if (!t->trim_single || !minid[0] || rc->base.closing)
        return;
    cm_redis_command(rc->client, on_ack_gone, cmd_ud(rc, topic), "XTRIM %s MINID ~ %s",
                     rc->base.topics[topic], minid);
}

/* XINFO GROUPS and XPENDING are answered in order, so the pending reply
 * finds the info reply's findings in place. */
static void trim_step(rc_t *rc, size_t topic)
{
    rc->t[topic].next_trim = uv_now(rc->base.loop) + TRIM_EVERY_MS;
    cm_redis_command(rc->client, on_trim_info, cmd_ud(rc, topic), "XINFO GROUPS %s",
                     rc->base.topics[topic]);
    cm_redis_command(rc->client, on_trim_pending, cmd_ud(rc, topic), "XPENDING %s %s",
                     rc->base.topics[topic], rc->base.group);
}

static void commit(cm_consumer_t *c, cm_consumer_batch_t *b)
{
    rc_t *rc = (rc_t *)c;
    const char **ids = cm_xmalloc(b->n * sizeof(char *));
    for (size_t i = 0; i < b->n; i++)
        ids[i] = b->msgs[i].id;
    ack_ids(rc, b->source, ids, b->n, on_ack, cmd_ud(rc, b->source));
    free(ids);
}

static void rewind_batch(cm_consumer_t *c, cm_consumer_batch_t *b)
{
    rc_t *rc = (rc_t *)c;
    rc->t[b->source].pending_first = true;
}

static bool ready(cm_consumer_t *c, cm_buf_t *why)
{
    rc_t *rc = (rc_t *)c;
    if (!cm_redis_connected(rc->client)) {
        if (why)
            cm_buf_append_cstr(why, "redis: not connected");
        return false;
    }
    for (size_t i = 0; i < c->ntopics; i++)
        if (!rc->t[i].created) {
            if (why)
                cm_buf_appendf(why, "redis: consumer group not created on %s", c->topics[i]);
            return false;
        }
    return true;
}

static void shutdown_consumer(cm_consumer_t *c)
{
    rc_t *rc = (rc_t *)c;
    rc->shutting = true;
    if (rc->in_flight == 0)
        cm__consumer_shutdown_done(c);
}

static void free_consumer(cm_consumer_t *c)
{
    rc_t *rc = (rc_t *)c;
    free(rc->t);
    free(rc);
}

static const cm__consumer_ops_t redis_consumer_ops = {
    .name = "redis",
    .fetch = fetch,
    .commit = commit,
    .rewind = rewind_batch,
    .ready = ready,
    .shutdown = shutdown_consumer,
    .free = free_consumer,
};

int cm_consumer_redis_new(uv_loop_t *loop, cm_redis_t *client, const cm_consumer_opts_t *opts,
                          cm_consumer_batch_cb on_batch, void *ud, cm_consumer_t **out)
{
    if (client == NULL || opts == NULL || out == NULL)
        return CM_EINVAL;
    rc_t *rc = cm_xcalloc(1, sizeof(*rc));
    if (cm__consumer_init(&rc->base, &redis_consumer_ops, loop, opts, on_batch, ud) != CM_OK) {
        free(rc);
        return CM_EINVAL;
    }
    rc->client = client;
    rc->count = rc->base.max_batch < 64 ? rc->base.max_batch : 64;
    rc->t = cm_xcalloc(rc->base.ntopics, sizeof(*rc->t));
    for (size_t i = 0; i < rc->base.ntopics; i++) {
        rc->t[i].pending_first = true;
        strcpy(rc->t[i].cursor, "0-0");
    }
    cm__consumer_start(&rc->base);
    *out = &rc->base;
    return CM_OK;
}
