/* worker.c - a pool of dedicated threads, completed on the loop (see worker.h). */
#include "cm/worker.h"

#include <stdbool.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/log.h"

struct cm_worker {
    uv_loop_t *loop;
    char *name;
    unsigned nthreads;
    uv_thread_t *threads; /* NULL until the first submit */
    uv_mutex_t mu;
    uv_cond_t cond;
    /* under mu: jobs to run, jobs run (done not called yet), the stop sign */
    cm_worker_job_t *todo, *todo_tail, *ran, *ran_tail;
    bool stop;
    uv_async_t async; /* a pool thread -> the loop: some jobs ran */
    size_t pending;   /* loop only: submitted, done not run yet */
    bool closing, finishing;
    void (*closed)(void *ud);
    void *closed_ud;
};

static void push(cm_worker_job_t **head, cm_worker_job_t **tail, cm_worker_job_t *job)
{
    job->next = NULL;
    if (*tail)
        (*tail)->next = job;
    else
        *head = job;
    *tail = job;
}

static void thread_main(void *arg)
{
    cm_worker_t *w = arg;
    uv_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && w->todo == NULL)
            uv_cond_wait(&w->cond, &w->mu);
        if (w->todo == NULL) /* stopping, and nothing left */
            break;
        cm_worker_job_t *job = w->todo;
        w->todo = job->next;
        if (w->todo == NULL)
            w->todo_tail = NULL;
        uv_mutex_unlock(&w->mu);
        job->work(job);
        uv_mutex_lock(&w->mu);
        push(&w->ran, &w->ran_tail, job);
        uv_async_send(&w->async);
    }
    uv_mutex_unlock(&w->mu);
}

static void on_async_closed(uv_handle_t *h)
{
    cm_worker_t *w = h->data;
    void (*closed)(void *) = w->closed;
    void *ud = w->closed_ud;
    uv_cond_destroy(&w->cond);
    uv_mutex_destroy(&w->mu);
    free(w->threads);
    free(w->name);
    free(w);
    if (closed)
        closed(ud);
}

/* Nothing pending: the threads only wait, so joining them is immediate. */
static void finish_close(cm_worker_t *w)
{
    if (w->finishing)
        return;
    w->finishing = true;
    uv_mutex_lock(&w->mu);
    w->stop = true;
    uv_cond_broadcast(&w->cond);
    uv_mutex_unlock(&w->mu);
    for (unsigned i = 0; w->threads && i < w->nthreads; i++)
        uv_thread_join(&w->threads[i]);
    uv_close((uv_handle_t *)&w->async, on_async_closed);
}

static void on_async(uv_async_t *a)
{
    cm_worker_t *w = a->data;
    uv_mutex_lock(&w->mu);
    cm_worker_job_t *job = w->ran;
    w->ran = w->ran_tail = NULL;
    uv_mutex_unlock(&w->mu);
    while (job) {
        cm_worker_job_t *next = job->next;
        w->pending--;
        job->done(job); /* may free job */
        job = next;
    }
    if (w->closing && w->pending == 0)
        finish_close(w);
}

int cm_worker_open(uv_loop_t *loop, const char *name, unsigned nthreads, cm_worker_t **out)
{
    cm_worker_t *w = cm_xcalloc(1, sizeof(*w));
    w->loop = loop;
    w->name = cm_xstrdup(name ? name : "worker");
    w->nthreads = nthreads ? nthreads : 1;
    if (uv_mutex_init(&w->mu) != 0)
        goto fail_mutex;
    if (uv_cond_init(&w->cond) != 0)
        goto fail_cond;
    if (uv_async_init(loop, &w->async, on_async) != 0)
        goto fail_async;
    w->async.data = w;
    *out = w;
    return CM_OK;
fail_async:
    uv_cond_destroy(&w->cond);
fail_cond:
    uv_mutex_destroy(&w->mu);
fail_mutex:
    free(w->name);
    free(w);
    *out = NULL;
    return CM_ERR;
}

/* The threads, at the first submit. One that cannot start is logged; the
 * pool runs on those that did (at least one, or the process aborts: a job
 * that never runs would hang its caller). */
static void start_threads(cm_worker_t *w)
{
    w->threads = cm_xcalloc(w->nthreads, sizeof(*w->threads));
    unsigned started = 0;
    for (unsigned i = 0; i < w->nthreads; i++)
        if (uv_thread_create(&w->threads[started], thread_main, w) == 0)
            started++;
    if (started < w->nthreads)
        cm_log(CM_LOG_ERROR, NULL, "%s: started %u of %u threads", w->name, started, w->nthreads);
    if (started == 0)
        abort();
    w->nthreads = started;
}

void cm_worker_submit(cm_worker_t *w, cm_worker_job_t *job)
{
    if (w->threads == NULL)
        start_threads(w);
    w->pending++;
    uv_mutex_lock(&w->mu);
    push(&w->todo, &w->todo_tail, job);
    uv_cond_signal(&w->cond);
    uv_mutex_unlock(&w->mu);
}

void cm_worker_close(cm_worker_t *w, void (*closed)(void *ud), void *ud)
{
    w->closing = true;
    w->closed = closed;
    w->closed_ud = ud;
    if (w->pending == 0)
        finish_close(w);
}
