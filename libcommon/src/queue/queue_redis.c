/*
 * queue_redis.c - the Redis Streams backend of the event queue.
 *
 * One message is one command on the borrowed cm_redis_t client:
 *   XADD <topic> [MAXLEN ~ <n>] * key <key> value <value> h:<name> <value>...
 * and the reply to it is the acknowledgement: a stream ID is success; an
 * error reply, a lost connection or the client's command timeout is a
 * failure (proto/queue.md has the encoding). The client pipelines: commands
 * issued in one loop iteration share one write, and Redis answers in order.
 *
 * Nothing is buffered here while the client is disconnected: produce is
 * refused with CM_EAGAIN at once, so the service answers 503 without
 * waiting. The client fails a command synchronously in a few other cases
 * (see redis.h); the common code turns such an answer, which arrives from
 * inside produce, into a refusal, so the "never synchronously" promise
 * holds.
 *
 * Close. Commands still unanswered at the close deadline cannot be taken
 * back from the client; their ops are abandoned and handed to the client's
 * pending callbacks, and whichever reply (or error) comes later frees them.
 * Closing the queue before the client, as queue.h asks, guarantees that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"
#include "queue_internal.h"

#define DEFAULT_MAX_MESSAGE_BYTES 1000000
#define DEFAULT_MAX_IN_FLIGHT     100000
#define FIXED_ARGS                11 /* XADD topic MAXLEN ~ n * key k value v (+1 spare) */
#define ERROR_LOG_INTERVAL_MS     1000

static const char err_reply[] = "redis error reply";
static const char err_unexpected[] = "unexpected reply from redis";

typedef struct {
    cm_queue_t base; /* first: the ops receive &base */
    cm_redis_t *client;
    uint64_t maxlen;
    char maxlen_text[24]; /* formatted once: XADD sends it with every message */
    size_t max_message_bytes;
    size_t max_in_flight;
    uint64_t last_error_log; /* uv_now() of the last logged error reply */
} rq_t;

/* ud is the op; an abandoned op has lost its queue (op->q == NULL), and
 * cm__queue_complete() then only frees it. */
static void on_xadd_reply(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    cm__queue_op_t *op = ud;
    rq_t *rq = (rq_t *)op->q;

    (void)r;
    if (err != NULL) {
        /* The client's error strings are static. */
        cm__queue_complete(op, err == cm_redis_err_timeout ? CM_ETIMEDOUT : CM_EIO, err);
    } else if (reply->type == REDIS_REPLY_ERROR) {
        /* Error replies are not static text: log them (at most once a
         * second, a wrong stream type would fail every message). */
        if (rq != NULL && uv_now(rq->base.loop) - rq->last_error_log >= ERROR_LOG_INTERVAL_MS) {
            rq->last_error_log = uv_now(rq->base.loop);
            cm_log(CM_LOG_WARN, NULL, "queue redis: XADD failed: %.*s", (int)reply->len,
                   reply->str);
        }
        cm__queue_complete(op, CM_EIO, err_reply);
    } else if (reply->type == REDIS_REPLY_STRING) {
        cm__queue_complete(op, 0, NULL);
    } else {
        cm__queue_complete(op, CM_EIO, err_unexpected);
    }
}

static size_t message_bytes(const cm_queue_msg_t *msg)
{
    size_t n = msg->key.len + msg->value.len;
    for (size_t i = 0; i < msg->nheaders; i++)
        n += msg->headers[i].name.len + msg->headers[i].value.len;
    return n;
}

static void arg(const char **argv, size_t *argvlen, int *argc, const char *p, size_t len)
{
    argv[*argc] = p != NULL ? p : "";
    argvlen[*argc] = len;
    (*argc)++;
}

static int rq_produce(cm_queue_t *q, const cm_queue_msg_t *msg, cm__queue_op_t *op)
{
    rq_t *rq = (rq_t *)q;

    if (!cm_redis_connected(rq->client) || q->in_flight > rq->max_in_flight)
        return CM_EAGAIN;
    if (message_bytes(msg) > rq->max_message_bytes)
        return CM_ETOOBIG;

    /* One allocation holds the argument vectors and the "h:<name>" fields,
     * whose addresses therefore never move while they are being filled. */
    size_t nargs = FIXED_ARGS + 2 * msg->nheaders, names = 0;
    for (size_t i = 0; i < msg->nheaders; i++)
        names += 2 + msg->headers[i].name.len;
    char *mem = cm_xmalloc(nargs * (sizeof(char *) + sizeof(size_t)) + names + 1);
    const char **argv = (const char **)(void *)mem;
    size_t *argvlen = (size_t *)(void *)(mem + nargs * sizeof(char *));
    char *fields = mem + nargs * (sizeof(char *) + sizeof(size_t));
    int argc = 0;

    arg(argv, argvlen, &argc, "XADD", 4);
    arg(argv, argvlen, &argc, msg->topic, strlen(msg->topic));
    if (rq->maxlen > 0) {
        arg(argv, argvlen, &argc, "MAXLEN", 6);
        arg(argv, argvlen, &argc, "~", 1);
        arg(argv, argvlen, &argc, rq->maxlen_text, strlen(rq->maxlen_text));
    }
    arg(argv, argvlen, &argc, "*", 1);
    arg(argv, argvlen, &argc, "key", 3);
    arg(argv, argvlen, &argc, msg->key.p, msg->key.len);
    arg(argv, argvlen, &argc, "value", 5);
    arg(argv, argvlen, &argc, msg->value.p, msg->value.len);
    for (size_t i = 0; i < msg->nheaders; i++) {
        const cm_queue_header_t *h = &msg->headers[i];
        memcpy(fields, "h:", 2);
        if (h->name.len > 0)
            memcpy(fields + 2, h->name.p, h->name.len);
        arg(argv, argvlen, &argc, fields, 2 + h->name.len);
        arg(argv, argvlen, &argc, h->value.p, h->value.len);
        fields += 2 + h->name.len;
    }

    /* The client copies the command before returning. A negative return
     * means on_xadd_reply already ran (marked early by the common code). */
    int rc = cm_redis_command_argv(rq->client, on_xadd_reply, op, argc, argv, argvlen);
    free(mem);
    if (rc == CM_EINVAL)
        return CM_EINVAL;
    return rc < 0 ? CM_EAGAIN : 0;
}

static bool rq_ready(cm_queue_t *q, cm_buf_t *why)
{
    rq_t *rq = (rq_t *)q;

    if (cm_redis_connected(rq->client))
        return true;
    if (why != NULL)
        cm_buf_append_cstr(why, "redis: not connected");
    return false;
}

static bool rq_down(cm_queue_t *q)
{
    return !cm_redis_connected(((rq_t *)q)->client);
}

/* The client owns the abandoned ops from now on (see the top comment). */
static void rq_shutdown(cm_queue_t *q)
{
    q->abandoned = NULL;
    cm__queue_shutdown_done(q);
}

static void rq_free(cm_queue_t *q)
{
    free(q);
}

static const cm__queue_ops_t redis_ops = {
    .name = "redis",
    .produce = rq_produce,
    .ready = rq_ready,
    .down = rq_down,
    .shutdown = rq_shutdown,
    .free = rq_free,
};

int cm_queue_redis_new(uv_loop_t *loop, cm_redis_t *client, const cm_queue_redis_opts_t *opts,
                       cm_queue_t **out)
{
    static const cm_queue_redis_opts_t defaults = {0};

    if (loop == NULL || client == NULL || out == NULL)
        return CM_EINVAL;
    if (opts == NULL)
        opts = &defaults;
    rq_t *rq = cm_xcalloc(1, sizeof(*rq));
    rq->client = client;
    rq->maxlen = opts->maxlen;
    cm_fmt_uint64(rq->maxlen_text, rq->maxlen);
    rq->max_message_bytes =
        opts->max_message_bytes > 0 ? opts->max_message_bytes : DEFAULT_MAX_MESSAGE_BYTES;
    rq->max_in_flight = opts->max_in_flight > 0 ? opts->max_in_flight : DEFAULT_MAX_IN_FLIGHT;
    cm__queue_init(&rq->base, &redis_ops, loop, opts->metrics);
    cm__queue_set_window(&rq->base, rq->max_in_flight, opts->batch_window, opts->batch_backlog);
    *out = &rq->base;
    return 0;
}
