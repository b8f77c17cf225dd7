/*
 * redis.c - the self-healing asynchronous Redis client (see redis.h).
 *
 * Design
 * ------
 * One hiredis async context at a time, driven by our libuv adapter
 * (redis_uv.c: one write per loop iteration), plus two timers of our own, because hiredis 0.14 has
 * neither a connect timeout nor a command timeout: conn_timer  IDLE: waits out the backoff;
 * connecting: the deadline of resolve + connect + handshake (AUTH, SELECT, PING) and, for
 *               subscribers, of the SUBSCRIBE confirmations;
 *   cmd_timer   set for the deadline of the OLDEST pending command. Replies
 *               come back in order, so when it fires it only looks at the
 *               head of the pending list and re-arms for the new head if the
 *               old one was answered meanwhile (no per-command timer).
 *
 * The connection walks the states below. Only READY takes commands: any
 * other state fails them at once, nothing is queued while disconnected.
 *
 *   IDLE -> RESOLVING -> CONNECTING -> HANDSHAKE [-> SUBSCRIBING] -> READY
 *     ^        |             |             |             |            |
 *     +--------+-------------+-------------+-------------+------------+
 *                 failure / timeout / lost: back to IDLE, retry later
 *
 * rediss:// adds a step between RESOLVING and CONNECTING: TLS, where the
 * relay of redis_tls.c connects to the server and does the handshake, then
 * hiredis connects to the relay's unix socket (hiredis 0.14 has no TLS).
 * The relay is owned like the context: made per attempt, closed whenever
 * the context is released or the attempt is lost (conn_release, conn_lost),
 * and a relay failure is handled like a lost connection. unix:// skips
 * RESOLVING and hands the path to redisAsyncConnectUnix.
 *
 * Host names are resolved with uv_getaddrinfo and hiredis only ever sees a
 * numeric address: redisAsyncConnect() calls getaddrinfo() itself, which
 * would block the loop on DNS.
 *
 * Every command gets exactly one callback. hiredis guarantees that a callback
 * it accepted runs once, with a NULL reply when the context goes away; we
 * turn that NULL into an error string, and answer synchronously whatever we
 * refuse before it reaches hiredis.
 *
 * Re-entrancy rules learnt from hiredis 0.14 (async.c):
 *   - redisAsyncFree() inside a reply callback is deferred until the callback
 *     returns; elsewhere it is immediate and runs every pending callback
 *     with NULL, then onDisconnect (only if the context had connected).
 *   - it is NOT safe inside onConnect (redisAsyncHandleWrite touches the
 *     context after onConnect returns) nor inside onDisconnect (double
 *     free). So no user code runs from onConnect at all (on_connect runs
 *     from a reply callback: the handshake PING or the last SUBSCRIBE
 *     confirmation), and on_disconnect runs from onDisconnect only after
 *     r->ac was cleared, so nothing the owner calls can reach that context.
 *   - when we free the context ourselves we first set r->ac = NULL, which is
 *     how its late callbacks (onDisconnect, handshake replies) know they
 *     belong to a context that is gone.
 *   - hiredis's own libuv adapter drops poll errors; ours does not
 *     (redis_uv.c).
 * The client memory is freed only from the close callbacks of our timers,
 * which the loop runs after any deferred context free has completed.
 */
#include "cm/redis.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <async.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"
#include "cm/log.h"
#include "redis_tls.h"
#include "redis_uv.h"

const char cm_redis_err_not_connected[] = "not connected";
const char cm_redis_err_connection_lost[] = "connection lost";
const char cm_redis_err_timeout[] = "timeout";
const char cm_redis_err_closed[] = "client closed";
const char cm_redis_err_invalid[] = "invalid command";

#define DEFAULT_CONNECT_TIMEOUT_MS 1000
#define DEFAULT_COMMAND_TIMEOUT_MS 1000
#define DEFAULT_BACKOFF_MIN_MS     50
#define DEFAULT_BACKOFF_MAX_MS     5000

typedef enum {
    ST_IDLE,        /* no context; conn_timer waits out the backoff */
    ST_RESOLVING,   /* uv_getaddrinfo in flight */
    ST_TLS,         /* rediss://: the relay's TCP connect and TLS handshake in flight */
    ST_CONNECTING,  /* hiredis's connect in flight */
    ST_HANDSHAKE,   /* AUTH / SELECT / PING in flight */
    ST_SUBSCRIBING, /* subscriber: waiting for the SUBSCRIBE confirmations */
    ST_READY,       /* commands accepted */
    ST_LOST,        /* the context is being torn down, callbacks failing */
    ST_CLOSING      /* cm_redis_close() was called */
} conn_state_t;

/* A command in flight: hiredis's privdata, linked oldest first. */
typedef struct cmd {
    struct cmd *prev, *next;
    cm_redis_t *r;
    cm_redis_cb cb;
    void *ud;
    uint64_t issued_at; /* uv_now() when written */
} cmd_t;

typedef struct sub {
    struct sub *next;
    cm_redis_t *r;
    char *channel;
    size_t len;
    cm_redis_msg_cb cb;
    void *ud;
} sub_t;

/* Separate from the client so that an abandoned resolution (timeout, close)
 * can finish on its own: the callback sees r == NULL and just frees. */
typedef struct {
    uv_getaddrinfo_t req;
    cm_redis_t *r;
} resolve_t;

struct cm_redis {
    uv_loop_t *loop;
    conn_state_t state;
    redisAsyncContext *ac;        /* the context we own; NULL when none */
    resolve_t *resolve;           /* the resolution in flight, if any */
    cm__redis_tls_relay_t *relay; /* rediss://: this attempt's relay; NULL when none */
    uv_timer_t conn_timer;
    uv_timer_t cmd_timer;
    int handles_open;

    /* configuration */
    char *name, *host, *username, *password;
    char *path;              /* unix://: the socket; host is NULL then */
    char *where;             /* host:port or the path, for log lines */
    cm_tls_conf_t *tls_conf; /* rediss:// only */
    int port, db;
    uint64_t connect_timeout, command_timeout; /* ms; command_timeout 0: none */
    uint64_t backoff_min, backoff_max;
    bool subscriber;
    cm_redis_event_cb on_connect, on_disconnect;
    void *ud;

    /* connection bookkeeping */
    uint64_t backoff; /* the next retry delay, before jitter */
    uint64_t rng;
    int handshake_pending;
    int subs_pending;
    bool was_ready; /* the current connection reached READY */
    bool attempted; /* the first connection attempt was made */
    bool closing;
    unsigned fail_streak;
    cmd_t *head, *tail;
    sub_t *subs, *subs_tail;
    cm_redis_stats_t stats;

    cm_redis_closed_cb on_closed;
    void *closed_ud;
};

static void conn_start(cm_redis_t *r);
static void on_conn_timer(uv_timer_t *t);

/* ---- backoff ------------------------------------------------------------- */

static uint64_t rng_next(cm_redis_t *r)
{
    uint64_t x = r->rng; /* xorshift64*: jitter only, not security */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* "Equal jitter": between half and all of the current delay, so that many
 * clients of a restarted server spread out but none retries too eagerly. */
static void schedule_retry(cm_redis_t *r)
{
    uint64_t half = r->backoff / 2;
    uint64_t delay = half + rng_next(r) % (r->backoff - half + 1);
    r->backoff = CM_MIN(r->backoff * 2, r->backoff_max);
    uv_timer_start(&r->conn_timer, on_conn_timer, delay, 0);
}

/* ---- connection life ------------------------------------------------------- */

/* rediss://: closes this attempt's relay, if any (no callback of it runs
 * any more). */
static void relay_drop(cm_redis_t *r)
{
    cm__redis_tls_relay_t *t = r->relay;
    r->relay = NULL;
    cm__redis_tls_relay_close(t);
}

/* Frees the context we own, and the relay under it. Its pending callbacks
 * run now (or right after the current hiredis callback returns) with NULL
 * replies; r->ac is already NULL then, which marks them as belonging to a
 * dead context. */
static void conn_release(cm_redis_t *r)
{
    redisAsyncContext *ac = r->ac;
    r->ac = NULL;
    if (ac != NULL)
        redisAsyncFree(ac);
    relay_drop(r);
}

static void resolve_abandon(cm_redis_t *r)
{
    if (r->resolve == NULL)
        return;
    r->resolve->r = NULL;
    uv_cancel((uv_req_t *)&r->resolve->req); /* fails if already running: fine */
    r->resolve = NULL;
}

/* The connection (or the attempt) is over and the context released: count,
 * log, schedule the retry and tell the owner if it had been ready. */
static void conn_lost(cm_redis_t *r, const char *why)
{
    bool was_ready = r->was_ready;

    relay_drop(r); /* whatever ended the attempt, its relay goes with it */
    r->was_ready = false;
    if (r->closing)
        return;
    r->state = ST_IDLE;
    uv_timer_stop(&r->cmd_timer);
    if (was_ready) {
        r->stats.disconnects++;
        cm_log(CM_LOG_WARN, NULL, "redis %s: connection to %s lost: %s", r->name, r->where, why);
    } else {
        r->stats.connect_failures++;
        /* One warning per streak of failures: retries run every few seconds. */
        if (r->fail_streak++ == 0)
            cm_log(CM_LOG_WARN, NULL, "redis %s: cannot connect to %s: %s (retrying)", r->name,
                   r->where, why);
        else
            cm_log(CM_LOG_DEBUG, NULL, "redis %s: cannot connect to %s: %s", r->name, r->where,
                   why);
    }
    schedule_retry(r);
    if (was_ready && r->on_disconnect != NULL)
        r->on_disconnect(r, r->ud);
}

static void become_ready(cm_redis_t *r)
{
    uv_timer_stop(&r->conn_timer);
    r->state = ST_READY;
    r->was_ready = true;
    r->backoff = r->backoff_min;
    r->stats.connects++;
    cm_log(CM_LOG_INFO, NULL, "redis %s: connected to %s", r->name, r->where);
    r->fail_streak = 0;
    if (r->on_connect != NULL)
        r->on_connect(r, r->ud);
}

/* ---- pub/sub ----------------------------------------------------------------- */

static void on_sub_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    sub_t *s = privdata;
    cm_redis_t *r = s->r;
    const redisReply *rep = reply;

    /* NULL: the context is going away; the subscription is replayed later. */
    if (rep == NULL || ac != r->ac || rep->type != REDIS_REPLY_ARRAY || rep->elements < 3)
        return;
    const redisReply *kind = rep->element[0], *ch = rep->element[1], *msg = rep->element[2];
    if (kind->type != REDIS_REPLY_STRING)
        return;
    if (strcasecmp(kind->str, "message") == 0 && msg->type == REDIS_REPLY_STRING) {
        r->stats.messages++;
        s->cb(r, (cm_slice_t){ch->str, ch->len}, (cm_slice_t){msg->str, msg->len}, s->ud);
    } else if (strcasecmp(kind->str, "subscribe") == 0 && r->state == ST_SUBSCRIBING) {
        /* Ready once every channel is confirmed: a message published after
         * on_connect's refresh cannot be missed. */
        if (--r->subs_pending == 0)
            become_ready(r);
    }
}

static bool send_subscribe(cm_redis_t *r, sub_t *s)
{
    return redisAsyncCommand(r->ac, on_sub_reply, s, "SUBSCRIBE %b", s->channel, s->len) ==
           REDIS_OK;
}

/* ---- connecting ---------------------------------------------------------------- */

static void handshake_done(cm_redis_t *r)
{
    if (r->subscriber && r->subs != NULL) {
        r->state = ST_SUBSCRIBING;
        r->subs_pending = 0;
        for (sub_t *s = r->subs; s != NULL; s = s->next)
            r->subs_pending += send_subscribe(r, s);
        if (r->subs_pending > 0)
            return;
    }
    become_ready(r);
}

/* AUTH, SELECT and the final PING. The PING makes READY wait for a server
 * that answers, and puts the on_connect hook in a reply callback, the one
 * place where hiredis lets user code free the context. */
static void on_handshake_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    cm_redis_t *r = privdata;
    const redisReply *rep = reply;

    if (rep == NULL || ac != r->ac || r->state != ST_HANDSHAKE)
        return;
    if (rep->type == REDIS_REPLY_ERROR) {
        char why[160];
        snprintf(why, sizeof(why), "handshake: %s", rep->str);
        conn_release(r); /* deferred by hiredis until we return */
        conn_lost(r, why);
        return;
    }
    if (--r->handshake_pending == 0)
        handshake_done(r);
}

static void send_handshake(cm_redis_t *r)
{
    redisAsyncContext *ac = r->ac;

    r->state = ST_HANDSHAKE;
    r->handshake_pending = 0;
    if (r->password != NULL && r->username != NULL)
        r->handshake_pending += redisAsyncCommand(ac, on_handshake_reply, r, "AUTH %s %s",
                                                  r->username, r->password) == REDIS_OK;
    else if (r->password != NULL)
        r->handshake_pending +=
            redisAsyncCommand(ac, on_handshake_reply, r, "AUTH %s", r->password) == REDIS_OK;
    if (r->db != 0)
        r->handshake_pending +=
            redisAsyncCommand(ac, on_handshake_reply, r, "SELECT %d", r->db) == REDIS_OK;
    r->handshake_pending += redisAsyncCommand(ac, on_handshake_reply, r, "PING") == REDIS_OK;
}

/* No user code here: freeing the context from onConnect is a use after free
 * in hiredis 0.14 (see the top comment). */
static void on_hiredis_connect(const redisAsyncContext *c, int status)
{
    cm_redis_t *r = c->data;

    if (c != r->ac)
        return;
    if (status != REDIS_OK) {
        r->ac = NULL; /* hiredis frees it when we return */
        conn_lost(r, c->c.errstr);
        return;
    }
    /* Notices a silent peer on idle subscribers. TCP only: on a unix socket
     * it fails and leaves an error in the context (the TLS relay keeps its
     * own TCP connection alive). */
    if (r->path == NULL && r->tls_conf == NULL)
        redisEnableKeepAlive(&r->ac->c);
    send_handshake(r);
}

/* Called by hiredis after the pending callbacks failed, before the context
 * is freed. Ours only if we did not release the context ourselves. */
static void on_hiredis_disconnect(const redisAsyncContext *c, int status)
{
    cm_redis_t *r = c->data;

    CM_UNUSED(status);
    if (c != r->ac)
        return;
    r->ac = NULL;
    conn_lost(r, c->c.errstr[0] ? c->c.errstr : "connection closed");
}

/* Takes the context hiredis just made (TCP or unix socket). */
static void hiredis_attach(cm_redis_t *r, redisAsyncContext *ac)
{
    char why[160];

    if (ac == NULL || ac->err) {
        snprintf(why, sizeof(why), "%s", ac ? ac->errstr : "out of memory");
        if (ac != NULL)
            redisAsyncFree(ac);
        conn_lost(r, why);
        return;
    }
    ac->data = r;
    if (cm__redis_uv_attach(ac, r->loop) != REDIS_OK) {
        redisAsyncFree(ac);
        conn_lost(r, "cannot poll the socket");
        return;
    }
    r->ac = ac;
    r->state = ST_CONNECTING;
    /* Order matters: setting the connect callback is what asks the (already
     * attached) event library for the first write event. */
    redisAsyncSetConnectCallback(ac, on_hiredis_connect);
    redisAsyncSetDisconnectCallback(ac, on_hiredis_disconnect);
}

/* The relay's TLS session is up: hiredis talks to it as to a server. */
static void on_relay_ready(void *ud, const char *path)
{
    cm_redis_t *r = ud;
    hiredis_attach(r, redisAsyncConnectUnix(path));
}

/* The TLS connection failed or ended: like a lost connection. Not inside a
 * hiredis callback, so the context is freed now and new commands from the
 * failing callbacks must see a state that refuses them. */
static void on_relay_failed(void *ud, const char *why)
{
    cm_redis_t *r = ud;
    char copy[600];

    snprintf(copy, sizeof(copy), "%s", why); /* why lives in the relay */
    r->state = ST_LOST;
    conn_release(r);
    conn_lost(r, copy);
}

static void conn_open(cm_redis_t *r, const char *ip)
{
    char why[300];

    if (r->tls_conf == NULL) {
        hiredis_attach(r, redisAsyncConnect(ip, r->port));
        return;
    }
    cm__redis_tls_cbs_t cbs = {.ready = on_relay_ready, .failed = on_relay_failed, .ud = r};
    if (cm__redis_tls_relay_start(r->loop, r->tls_conf, ip, r->port, r->host, &cbs, &r->relay, why,
                                  sizeof(why)) != CM_OK) {
        conn_lost(r, why);
        return;
    }
    r->state = ST_TLS;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    resolve_t *rs = CM_CONTAINER_OF(req, resolve_t, req);
    cm_redis_t *r = rs->r;
    const struct addrinfo *pick = NULL;
    char ip[INET6_ADDRSTRLEN] = "";

    free(rs);
    if (r == NULL) { /* abandoned */
        uv_freeaddrinfo(res);
        return;
    }
    r->resolve = NULL;
    /* Prefer IPv4: "localhost" often lists ::1 first and servers commonly
     * bind 127.0.0.1 only. */
    for (const struct addrinfo *ai = status == 0 ? res : NULL; ai != NULL; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
        if (ai->ai_family == AF_INET6 && pick == NULL)
            pick = ai;
    }
    if (pick != NULL && pick->ai_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)(const void *)pick->ai_addr, ip, sizeof(ip));
    else if (pick != NULL)
        uv_ip6_name((const struct sockaddr_in6 *)(const void *)pick->ai_addr, ip, sizeof(ip));
    uv_freeaddrinfo(res);
    if (ip[0] == '\0') {
        conn_lost(r, status != 0 ? uv_strerror(status) : "no address");
        return;
    }
    conn_open(r, ip);
}

static bool is_numeric_host(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

static void conn_start(cm_redis_t *r)
{
    if (r->attempted)
        r->stats.reconnects++;
    r->attempted = true;
    uv_timer_start(&r->conn_timer, on_conn_timer, r->connect_timeout, 0);
    if (r->path != NULL) {
        hiredis_attach(r, redisAsyncConnectUnix(r->path));
        return;
    }
    if (is_numeric_host(r->host)) {
        conn_open(r, r->host);
        return;
    }
    resolve_t *rs = cm_xmalloc(sizeof(*rs));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    rs->r = r;
    r->resolve = rs;
    r->state = ST_RESOLVING;
    int rc = uv_getaddrinfo(r->loop, &rs->req, on_resolved, r->host, NULL, &hints);
    if (rc != 0) {
        free(rs);
        r->resolve = NULL;
        conn_lost(r, uv_strerror(rc));
    }
}

/* IDLE: time to retry. Any connecting state: the attempt took too long. */
static void on_conn_timer(uv_timer_t *t)
{
    cm_redis_t *r = t->data;

    switch (r->state) {
    case ST_IDLE: conn_start(r); break;
    case ST_RESOLVING:
        resolve_abandon(r);
        conn_lost(r, "connect timeout (resolving)");
        break;
    case ST_TLS:
    case ST_CONNECTING:
    case ST_HANDSHAKE:
    case ST_SUBSCRIBING:
        conn_release(r);
        conn_lost(r, "connect timeout");
        break;
    default: break;
    }
}

/* ---- commands -------------------------------------------------------------------- */

static void cmd_unlink(cm_redis_t *r, cmd_t *c)
{
    *(c->prev ? &c->prev->next : &r->head) = c->next;
    *(c->next ? &c->next->prev : &r->tail) = c->prev;
}

/* Why a command accepted by hiredis got a NULL reply. */
static const char *cmd_error(const cm_redis_t *r, const cmd_t *c)
{
    if (r->closing)
        return cm_redis_err_closed;
    if (r->command_timeout != 0 && uv_now(r->loop) - c->issued_at >= r->command_timeout)
        return cm_redis_err_timeout;
    return cm_redis_err_connection_lost;
}

static void on_cmd_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    cmd_t *c = privdata;
    cm_redis_t *r = c->r;
    const redisReply *rep = reply;
    const char *err = NULL;

    cmd_unlink(r, c);
    if (rep == NULL) {
        /* hiredis is tearing down the context it found dead: from now on,
         * new commands (from this very callback, say) must fail fast. */
        if (ac == r->ac && r->state == ST_READY)
            r->state = ST_LOST;
        err = cmd_error(r, c);
        r->stats.errors++;
        r->stats.timeouts += err == cm_redis_err_timeout;
    } else if (rep->type == REDIS_REPLY_ERROR) {
        r->stats.error_replies++;
    }
    c->cb(r, rep, err, c->ud);
    free(c);
    if (r->head == NULL && !r->closing)
        uv_timer_stop(&r->cmd_timer);
}

static void on_cmd_timer(uv_timer_t *t)
{
    cm_redis_t *r = t->data;
    cmd_t *c = r->head;

    if (c == NULL || r->state != ST_READY)
        return;
    uint64_t age = uv_now(r->loop) - c->issued_at;
    if (age < r->command_timeout) { /* the old head was answered: re-arm */
        uv_timer_start(&r->cmd_timer, on_cmd_timer, r->command_timeout - age, 0);
        return;
    }
    /* Replies are ordered: the only way past a stuck command is a new
     * connection. Its pending callbacks fail here, synchronously. */
    r->state = ST_LOST;
    conn_release(r);
    conn_lost(r, "command timeout");
}

static int fail_fast(cm_redis_t *r, cm_redis_cb cb, void *ud, const char *err, int code)
{
    r->stats.errors++;
    cb(r, NULL, err, ud);
    return code;
}

static int precheck(cm_redis_t *r, cm_redis_cb cb, void *ud)
{
    if (r->closing)
        return fail_fast(r, cb, ud, cm_redis_err_closed, CM_ERR);
    if (r->subscriber)
        return fail_fast(r, cb, ud, cm_redis_err_invalid, CM_EINVAL);
    if (r->state != ST_READY)
        return fail_fast(r, cb, ud, cm_redis_err_not_connected, CM_EAGAIN);
    return CM_OK;
}

/* One "$<len>\r\n<bytes>\r\n" argument of a formatted command. */
static bool resp_arg(const char **p, const char *end, cm_slice_t *arg)
{
    const char *q = *p;
    size_t n = 0;

    if (q >= end || *q++ != '$')
        return false;
    while (q < end && *q >= '0' && *q <= '9')
        n = n * 10 + (size_t)(*q++ - '0');
    if ((size_t)(end - q) < n + 4)
        return false;
    *arg = (cm_slice_t){q + 2, n};
    *p = q + 2 + n + 2;
    return true;
}

/* Commands that would break the one-reply-per-command contract (pub/sub,
 * MONITOR, CLIENT REPLY, RESP3 via HELLO) or change connection state that a
 * reconnect would silently drop (SELECT, AUTH, RESET: use the options). */
static bool cmd_refused(const char *cmd, size_t len)
{
    static const char *const refused[] = {
        "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
        "monitor",   "hello",      "reset",      "select",      "auth",
    };
    const char *end = cmd + len, *p = memchr(cmd, '\n', len);
    cm_slice_t a0, a1;

    if (p == NULL || (++p, !resp_arg(&p, end, &a0)))
        return true;
    for (size_t i = 0; i < CM_ARRAY_LEN(refused); i++)
        if (cm_slice_eq_nocase(a0, refused[i]))
            return true;
    return cm_slice_eq_nocase(a0, "client") && resp_arg(&p, end, &a1) &&
           cm_slice_eq_nocase(a1, "reply");
}

/* Takes a formatted command and hands it to hiredis. */
static int submit(cm_redis_t *r, cm_redis_cb cb, void *ud, const char *cmd, size_t len)
{
    if (cmd_refused(cmd, len))
        return fail_fast(r, cb, ud, cm_redis_err_invalid, CM_EINVAL);

    cmd_t *c = cm_xmalloc(sizeof(*c));
    *c = (cmd_t){.prev = r->tail, .r = r, .cb = cb, .ud = ud, .issued_at = uv_now(r->loop)};
    *(r->tail ? &r->tail->next : &r->head) = c;
    r->tail = c;
    if (redisAsyncFormattedCommand(r->ac, on_cmd_reply, c, cmd, len) != REDIS_OK) {
        cmd_unlink(r, c);
        free(c);
        return fail_fast(r, cb, ud, cm_redis_err_not_connected, CM_EAGAIN);
    }
    r->stats.commands++;
    if (r->command_timeout != 0 && !uv_is_active((uv_handle_t *)&r->cmd_timer))
        uv_timer_start(&r->cmd_timer, on_cmd_timer, r->command_timeout, 0);
    return CM_OK;
}

int cm_redis_command(cm_redis_t *r, cm_redis_cb cb, void *ud, const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;

    int rc = precheck(r, cb, ud);
    if (rc != CM_OK)
        return rc;
    va_start(ap, fmt);
    int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len <= 0)
        return fail_fast(r, cb, ud, cm_redis_err_invalid, CM_EINVAL);
    rc = submit(r, cb, ud, cmd, (size_t)len);
    redisFreeCommand(cmd);
    return rc;
}

/* RESP for argv, in one allocation and without printf: hiredis's own
 * formatter sprintf()s every argument's length, which showed up as a fifth
 * of ingest's time (an XADD per event has about twenty arguments). */
static char *format_argv(int argc, const char **argv, const size_t *argvlen, size_t *out_len)
{
    size_t total = 1 + 20 + 2 + 1; /* + NUL: hiredis strchr()s the command */
    for (int i = 0; i < argc; i++)
        total += 1 + 20 + 2 + (argvlen ? argvlen[i] : strlen(argv[i])) + 2;
    char *cmd = cm_xmalloc(total), *p = cmd;
    *p++ = '*';
    p += cm_fmt_uint64(p, (uint64_t)argc);
    *p++ = '\r';
    *p++ = '\n';
    for (int i = 0; i < argc; i++) {
        size_t n = argvlen ? argvlen[i] : strlen(argv[i]);
        *p++ = '$';
        p += cm_fmt_uint64(p, n);
        *p++ = '\r';
        *p++ = '\n';
        if (n)
            memcpy(p, argv[i], n);
        p += n;
        *p++ = '\r';
        *p++ = '\n';
    }
    *p = '\0';
    *out_len = (size_t)(p - cmd);
    return cmd;
}

int cm_redis_command_argv(cm_redis_t *r, cm_redis_cb cb, void *ud, int argc, const char **argv,
                          const size_t *argvlen)
{
    int rc = precheck(r, cb, ud);
    if (rc != CM_OK)
        return rc;
    if (argc <= 0 || argv == NULL)
        return fail_fast(r, cb, ud, cm_redis_err_invalid, CM_EINVAL);
    size_t len;
    char *cmd = format_argv(argc, argv, argvlen, &len);
    rc = submit(r, cb, ud, cmd, len);
    free(cmd);
    return rc;
}

/* ---- public life cycle -------------------------------------------------------------- */

int cm_redis_subscribe(cm_redis_t *r, const char *channel, cm_redis_msg_cb cb, void *ud)
{
    if (!r->subscriber || r->closing || channel == NULL || cb == NULL)
        return CM_EINVAL;
    size_t len = strlen(channel);
    for (sub_t *s = r->subs; s != NULL; s = s->next)
        if (s->len == len && memcmp(s->channel, channel, len) == 0)
            return CM_EINVAL;

    sub_t *s = cm_xcalloc(1, sizeof(*s));
    *s = (sub_t){.r = r, .channel = cm_xmemdup(channel, len), .len = len, .cb = cb, .ud = ud};
    *(r->subs_tail ? &r->subs_tail->next : &r->subs) = s;
    r->subs_tail = s;
    /* Before the handshake is done, handshake_done() will send it. */
    if ((r->state == ST_READY || r->state == ST_SUBSCRIBING) && send_subscribe(r, s) &&
        r->state == ST_SUBSCRIBING)
        r->subs_pending++;
    return CM_OK;
}

static char *dup_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? cm_xstrdup(s) : NULL;
}

static uint64_t ms_opt(int v, int def)
{
    return (uint64_t)(v > 0 ? v : def);
}

int cm_redis_new(uv_loop_t *loop, const cm_redis_opts_t *opts, cm_redis_t **out)
{
    cm_redis_url_t u = {0};

    if (loop == NULL || opts == NULL || opts->port < 0 || opts->port > 65535 || opts->db < 0)
        return CM_EINVAL;
    const char *why = NULL;
    if (opts->url != NULL && cm_redis_url_parse_why(opts->url, &u, &why) != CM_OK) {
        cm_log(CM_LOG_ERROR, NULL, "redis %s: bad URL: %s", opts->name ? opts->name : "redis", why);
        return CM_EINVAL;
    }
    cm_tls_conf_t *tls = NULL;
    char tls_why[400];
    cm_tls_conf_opts_t to = {.ca_file = u.tls_ca_file ? u.tls_ca_file : CM_REDIS_TLS_CA_FILE,
                             .cert_file = u.tls_cert_file,
                             .key_file = u.tls_key_file,
                             .insecure = u.tls_insecure,
                             .purpose = "cm_redis_tls"};
    if (u.tls && cm_tls_conf_new(&to, &tls, tls_why, sizeof(tls_why)) != CM_OK) {
        cm_log(CM_LOG_ERROR, NULL, "redis %s: %s", opts->name ? opts->name : "redis", tls_why);
        cm_redis_url_free(&u);
        return CM_EINVAL;
    }
    if (opts->url == NULL) {
        u.host = cm_xstrdup(opts->host != NULL && opts->host[0] ? opts->host : "127.0.0.1");
        u.port = opts->port ? opts->port : 6379;
        u.password = dup_or_null(opts->password);
        u.username = u.password ? dup_or_null(opts->username) : NULL;
        u.db = opts->db;
    }

    cm_redis_t *r = cm_xcalloc(1, sizeof(*r));
    r->loop = loop;
    r->state = ST_IDLE;
    r->name = cm_xstrdup(opts->name ? opts->name : "redis");
    r->host = u.host;
    r->port = u.port;
    r->username = u.username;
    r->password = u.password;
    r->db = u.db;
    r->path = u.path;
    r->tls_conf = tls;
    if (r->path != NULL)
        r->where = cm_xstrdup(r->path);
    else {
        size_t n = strlen(r->host) + 16;
        r->where = cm_xmalloc(n);
        if (strchr(r->host, ':') != NULL)
            snprintf(r->where, n, "[%s]:%d", r->host, r->port);
        else
            snprintf(r->where, n, "%s:%d", r->host, r->port);
    }
    u.host = u.path = NULL;
    u.username = u.password = NULL;
    cm_redis_url_free(&u); /* the TLS file names, read already */
    r->connect_timeout = ms_opt(opts->connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT_MS);
    r->command_timeout = opts->command_timeout_ms < 0
                             ? 0
                             : ms_opt(opts->command_timeout_ms, DEFAULT_COMMAND_TIMEOUT_MS);
    r->backoff_min = ms_opt(opts->backoff_min_ms, DEFAULT_BACKOFF_MIN_MS);
    r->backoff_max = CM_MAX(ms_opt(opts->backoff_max_ms, DEFAULT_BACKOFF_MAX_MS), r->backoff_min);
    r->backoff = r->backoff_min;
    r->subscriber = opts->subscriber;
    r->on_connect = opts->on_connect;
    r->on_disconnect = opts->on_disconnect;
    r->ud = opts->ud;
    r->rng = (uv_hrtime() ^ (uint64_t)(uintptr_t)r) | 1;
    uv_timer_init(loop, &r->conn_timer);
    uv_timer_init(loop, &r->cmd_timer);
    r->conn_timer.data = r->cmd_timer.data = r;
    r->handles_open = 2;
    *out = r;
    conn_start(r); /* may fail synchronously: that only schedules a retry */
    return CM_OK;
}

bool cm_redis_connected(const cm_redis_t *r)
{
    return r->state == ST_READY;
}

const cm_redis_stats_t *cm_redis_stats(const cm_redis_t *r)
{
    return &r->stats;
}

static void on_handle_closed(uv_handle_t *h)
{
    cm_redis_t *r = h->data;

    if (--r->handles_open > 0)
        return;
    /* Every context callback ran before this point (see the top comment),
     * so nothing in hiredis refers to the commands or subscriptions. */
    for (sub_t *s = r->subs, *next; s != NULL; s = next) {
        next = s->next;
        free(s->channel);
        free(s);
    }
    cm_redis_closed_cb cb = r->on_closed;
    void *ud = r->closed_ud;
    free(r->name);
    free(r->host);
    free(r->path);
    free(r->where);
    cm_tls_conf_free(r->tls_conf);
    free(r->username);
    free(r->password);
    free(r);
    if (cb != NULL)
        cb(ud);
}

void cm_redis_close(cm_redis_t *r, cm_redis_closed_cb on_closed, void *ud)
{
    if (r == NULL || r->closing)
        return;
    r->closing = true;
    r->state = ST_CLOSING;
    r->on_closed = on_closed;
    r->closed_ud = ud;
    resolve_abandon(r);
    conn_release(r); /* pending commands fail with cm_redis_err_closed */
    uv_close((uv_handle_t *)&r->conn_timer, on_handle_closed);
    uv_close((uv_handle_t *)&r->cmd_timer, on_handle_closed);
}
