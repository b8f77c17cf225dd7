/*
 * redis_uv.c - drives a hiredis async context from a libuv loop, writing
 * each loop iteration's commands in one go.
 *
 * Why not hiredis's own adapter (adapters/libuv.h):
 *   - it asks for a write event for every command: uv_poll_start() with
 *     UV_WRITABLE, then again without it once the output is written. In
 *     libuv every change of a uv_poll_t's events is an EPOLL_CTL_DEL plus
 *     an EPOLL_CTL_ADD, so a service issuing one command per HTTP request
 *     paid four epoll_ctl calls per request for nothing: a connected socket
 *     is nearly always writable.
 *   - it drops poll errors (see on_poll below).
 *
 * Here, once the context is connected, a command only starts a uv_idle
 * handle. Its callback runs early in the next loop iteration (or in this
 * one, for a command issued from a timer), after all the I/O callbacks
 * that issued commands, and writes everything hiredis has buffered with
 * one write(). An idle handle rather than a prepare one because an active
 * idle handle keeps the loop from blocking: a command issued from inside
 * another prepare callback would otherwise wait for unrelated I/O.
 * Only when the kernel takes less than all of it (hiredis then asks for a
 * write event from inside that write) do we really poll for writability,
 * until hiredis says the output is gone.
 * Reading stays on for the life of the connection.
 *
 * Ownership: hiredis owns the context and calls cleanup when it frees it;
 * from then on the adapter never touches the context, closes its two
 * handles and frees itself when both are closed.
 */
#include "redis_uv.h"

#include <stdbool.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/common.h"

typedef struct {
    redisAsyncContext *ac; /* NULL once hiredis cleaned up */
    uv_poll_t poll;
    uv_idle_t flush;
    int want;      /* UV_READABLE / UV_WRITABLE asked for by hiredis */
    int polling;   /* what the poll handle watches now */
    bool flushing; /* inside redisAsyncHandleWrite() from the idle callback */
    int handles_open;
} uvev_t;

/* libuv reports POLLERR (a refused connect, a reset, a failed keepalive) as
 * a callback with an error status and no events. Treated as a read, it lets
 * hiredis meet the socket error itself (SO_ERROR while connecting, read()
 * after) and tear the context down through its usual callbacks. */
static void poll_apply(uvev_t *p);

static void on_poll(uv_poll_t *h, int status, int events)
{
    uvev_t *p = h->data;
    if (status < 0) {
        /* libuv has stopped the handle itself: remember that, so the next
         * poll_apply() starts it again if the context lives on (a reply
         * and the reset can arrive in the same wake-up). */
        p->polling = 0;
        events = UV_READABLE;
    }
    if (p->ac != NULL && (events & UV_READABLE))
        redisAsyncHandleRead(p->ac);
    if (p->ac != NULL && (events & UV_WRITABLE))
        redisAsyncHandleWrite(p->ac);
    poll_apply(p);
}

/* Changes the poll handle only when what it should watch changed. */
static void poll_apply(uvev_t *p)
{
    if (p->ac == NULL || p->want == p->polling)
        return;
    p->polling = p->want;
    if (p->want != 0)
        uv_poll_start(&p->poll, p->want, on_poll);
    else
        uv_poll_stop(&p->poll);
}

static void on_flush(uv_idle_t *h)
{
    uvev_t *p = h->data;
    uv_idle_stop(h);
    if (p->ac == NULL)
        return;
    p->flushing = true;
    redisAsyncHandleWrite(p->ac); /* may free the context: p stays valid */
    p->flushing = false;
}

static void add_read(void *privdata)
{
    uvev_t *p = privdata;
    p->want |= UV_READABLE;
    poll_apply(p);
}

static void del_read(void *privdata)
{
    uvev_t *p = privdata;
    p->want &= ~UV_READABLE;
    poll_apply(p);
}

static void add_write(void *privdata)
{
    uvev_t *p = privdata;
    /* Connecting (the first writable event completes the connect) or a
     * kernel buffer that was full just now: wait for a real write event. */
    if (!(p->ac->c.flags & REDIS_CONNECTED) || p->flushing) {
        uv_idle_stop(&p->flush);
        p->want |= UV_WRITABLE;
        poll_apply(p);
        return;
    }
    if (!(p->want & UV_WRITABLE))
        uv_idle_start(&p->flush, on_flush);
}

static void del_write(void *privdata)
{
    uvev_t *p = privdata;
    uv_idle_stop(&p->flush);
    p->want &= ~UV_WRITABLE;
    poll_apply(p);
}

static void on_closed(uv_handle_t *h)
{
    uvev_t *p = h->data;
    if (--p->handles_open == 0)
        free(p);
}

static void cleanup(void *privdata)
{
    uvev_t *p = privdata;
    p->ac = NULL;
    uv_close((uv_handle_t *)&p->poll, on_closed);
    uv_close((uv_handle_t *)&p->flush, on_closed);
}

int cm__redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    if (ac->ev.data != NULL)
        return REDIS_ERR;
    uvev_t *p = cm_xcalloc(1, sizeof(*p));
    if (uv_poll_init(loop, &p->poll, ac->c.fd) != 0) {
        free(p);
        return REDIS_ERR;
    }
    uv_idle_init(loop, &p->flush);
    p->poll.data = p;
    p->flush.data = p;
    p->handles_open = 2;
    p->ac = ac;
    ac->ev.data = p;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    return REDIS_OK;
}
