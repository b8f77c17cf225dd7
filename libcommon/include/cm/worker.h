/*
 * worker.h - a pool of dedicated threads for slow blocking jobs, completed
 * on the loop.
 *
 *   cm_worker_t *w;
 *   cm_worker_open(loop, "events-read", 4, &w);
 *   job->work = run_query;   (on one of the pool's threads)
 *   job->done = answer;      (later, on the loop)
 *   cm_worker_submit(w, job);
 *
 * Why not libuv's thread pool (uv_queue_work): it is shared by the whole
 * process (4 threads by default) and carries the metadata store's SQLite
 * jobs, password hashing and DNS; a job that may run for 30 s (an event
 * store query) would hold one of its threads for that long, and a few of
 * them would stall everything else. A pool of its own bounds what such
 * jobs can take to its own threads.
 *
 * Jobs start in the order they were submitted, as threads come free. The
 * threads are started by the first submit (a process that never submits
 * costs no thread). done runs exactly once per job, on the loop, never from
 * inside cm_worker_submit. The job belongs to the caller (embed it in the
 * caller's own structure); it must live until done runs. Loop-thread only,
 * except that work runs on a pool thread.
 */
#ifndef CM_WORKER_H
#define CM_WORKER_H

#include <uv.h>

typedef struct cm_worker cm_worker_t;
typedef struct cm_worker_job cm_worker_job_t;

struct cm_worker_job {
    void (*work)(cm_worker_job_t *job); /* on a pool thread */
    void (*done)(cm_worker_job_t *job); /* on the loop */
    void *data;                         /* the caller's */
    cm_worker_job_t *next;              /* the pool's */
};

/* nthreads: at least 1. name: for logs. */
int cm_worker_open(uv_loop_t *loop, const char *name, unsigned nthreads, cm_worker_t **out);
void cm_worker_submit(cm_worker_t *w, cm_worker_job_t *job);
/* Jobs already submitted run and complete (their done runs), then the
 * threads are joined (they are idle by then, so the loop does not wait on
 * a job), the pool is released and closed(ud) runs. w must not be used
 * after this call. */
void cm_worker_close(cm_worker_t *w, void (*closed)(void *ud), void *ud);

#endif
