/* deadletter.c - see deadletter.h. */
#include "deadletter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/timefmt.h"

typedef struct {
    size_t pending;
    int status;
    void (*done)(int status, void *ud);
    void *ud;
    uv_timer_t later; /* for a batch with nothing to send */
} dl_t;

static void on_later_closed(uv_handle_t *h)
{
    dl_t *d = h->data;
    d->done(d->status, d->ud);
    free(d);
}

static void finish(dl_t *d)
{
    uv_close((uv_handle_t *)&d->later, on_later_closed); /* done runs from the close callback */
}

static void on_acked(int status, const char *err, void *ud)
{
    dl_t *d = ud;
    (void)err;
    if (status != 0 && d->status == 0)
        d->status = status;
    if (--d->pending == 0)
        finish(d);
}

void wr_dead_letters(wr_ctx_t *ctx, const cm_consumer_batch_t *b, const wr_event_t *events,
                     size_t n, void (*done)(int status, void *ud), void *ud)
{
    dl_t *d = cm_xcalloc(1, sizeof(*d));
    d->done = done;
    d->ud = ud;
    uv_timer_init(ctx->loop, &d->later);
    d->later.data = d;
    d->pending = 1; /* held while producing */
    char now[24];
    snprintf(now, sizeof(now), "%lld", (long long)(cm_now_us() / 1000));
    for (size_t i = 0; i < n; i++) {
        if (events[i].fate != WR_EVENT_DEAD)
            continue;
        const cm_consumed_t *m = cm_consumer_batch_msg(b, i);
        bool cut = m->value.len > DEAD_LETTER_MAX_VALUE;
        cm_queue_header_t hs[5] = {
            {CM_SLICE_LIT("error"), cm_slice_from_cstr(events[i].reason)},
            {CM_SLICE_LIT("source_topic"), cm_slice_from_cstr(m->topic)},
            {CM_SLICE_LIT("source_id"), cm_slice_from_cstr(m->id)},
            {CM_SLICE_LIT("writer_time"), cm_slice_from_cstr(now)},
            {CM_SLICE_LIT("truncated"), CM_SLICE_LIT("true")},
        };
        cm_queue_msg_t msg = {
            .topic = ctx->cfg.topic_dead_letter,
            .key = m->key,
            .value = {m->value.p, cut ? DEAD_LETTER_MAX_VALUE : m->value.len},
            .headers = hs,
            .nheaders = cut ? 5 : 4,
        };
        d->pending++;
        int rc = cm_queue_produce(ctx->dead_letters, &msg, on_acked, d);
        if (rc != 0) { /* refused: the callback never runs */
            d->pending--;
            if (d->status == 0)
                d->status = rc;
        }
    }
    if (--d->pending == 0)
        finish(d);
}
