/* signals.c - SIGTERM/SIGINT to a loop callback (see signals.h). */
#include "cm/signals.h"

#include <signal.h>
#include <stdlib.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/log.h"

struct cm_signals {
    uv_signal_t term;
    uv_signal_t intr;
    void (*on_term)(void *ud);
    void *ud;
    int fired;
    int open;
};

static void on_signal(uv_signal_t *h, int signum)
{
    cm_signals_t *s = h->data;
    if (s->fired++) {
        cm_log(CM_LOG_WARN, NULL, "second signal %d: exiting now", signum);
        _Exit(1);
    }
    cm_log(CM_LOG_INFO, NULL, "signal %d: draining", signum);
    s->on_term(s->ud);
}

cm_signals_t *cm_signals_start(uv_loop_t *loop, void (*on_term)(void *ud), void *ud)
{
    signal(SIGPIPE, SIG_IGN);
    cm_signals_t *s = cm_xcalloc(1, sizeof(*s));
    s->on_term = on_term;
    s->ud = ud;
    uv_signal_init(loop, &s->term);
    uv_signal_init(loop, &s->intr);
    s->term.data = s->intr.data = s;
    uv_signal_start(&s->term, on_signal, SIGTERM);
    uv_signal_start(&s->intr, on_signal, SIGINT);
    s->open = 2;
    return s;
}

static void closed(uv_handle_t *h)
{
    cm_signals_t *s = h->data;
    if (--s->open == 0)
        free(s);
}

void cm_signals_close(cm_signals_t *s)
{
    uv_close((uv_handle_t *)&s->term, closed);
    uv_close((uv_handle_t *)&s->intr, closed);
}
