/*
 * password.c - user passwords as argon2id (libargon2), in its encoded form
 * ($argon2id$v=19$m=19456,t=2,p=1$salt$hash), which carries its own
 * parameters so they can be raised later without breaking stored hashes.
 * 19 MiB and 2 passes is OWASP's current minimum for argon2id. Hashing
 * takes tens of milliseconds: request paths call it on the thread pool.
 *
 * Off the loop, hashes take at most PASSWORD_HASHES of libuv's threads at a
 * time (1 by default; the pool has 4): the metadata store's jobs share that
 * pool, and a crowd signing in would otherwise hold every thread and stall
 * every tenant's reads. The rest wait in a FIFO on the loop of at most
 * PASSWORD_QUEUE; past it the caller is told at once (busy) and answers
 * 503 with Retry-After. The queue is the process's, as the pool is: one
 * loop per process.
 */
#include <argon2.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/err.h"
#include "cm/uuid.h"
#include "http/http.h"

#define T_COST   2
#define M_COST   19456
#define PARALLEL 1
#define SALT_LEN 16
#define HASH_LEN 32

int api_password_hash(const char *password, char *out, size_t size)
{
    uint8_t salt[SALT_LEN];
    cm_random_bytes(salt, sizeof(salt));
    int rc = argon2id_hash_encoded(T_COST, M_COST, PARALLEL, password, strlen(password), salt,
                                   sizeof(salt), HASH_LEN, out, size);
    return rc == ARGON2_OK ? CM_OK : CM_EINVAL;
}

bool api_password_check(const char *encoded, const char *password)
{
    return argon2id_verify(encoded, password, strlen(password)) == ARGON2_OK;
}

/* ---- off the loop ---------------------------------------------------------- */

typedef struct job {
    uv_work_t work;
    struct job *next; /* waiting in the queue */
    api_call_t *call;
    char *stored, *current, *fresh; /* copies; the passwords are wiped before free */
    bool current_ok;
    char hash[128];
    bool hashed;
    api_password_done_cb done;
} job_t;

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void job_work(uv_work_t *w)
{
    job_t *j = w->data;
    j->current_ok = j->stored == NULL || (j->current && api_password_check(j->stored, j->current));
    if (j->current_ok && j->fresh)
        j->hashed = api_password_hash(j->fresh, j->hash, sizeof(j->hash)) == CM_OK;
}

/* The jobs waiting for a thread, and how many run: loop thread only. */
static struct {
    job_t *head, *tail;
    size_t waiting, running;
} Q;

static void job_after(uv_work_t *w, int status);

static void start_next(uv_loop_t *loop, size_t max_running)
{
    while (Q.head && Q.running < max_running) {
        job_t *j = Q.head;
        Q.head = j->next;
        if (Q.head == NULL)
            Q.tail = NULL;
        Q.waiting--;
        Q.running++;
        uv_queue_work(loop, &j->work, job_work, job_after);
    }
}

static void job_after(uv_work_t *w, int status)
{
    job_t *j = w->data;
    api_call_t *call = j->call;
    uv_loop_t *loop = call->ctx->loop;
    size_t max_running = (size_t)call->ctx->cfg.password_hashes;
    Q.running--;
    bool ok = status == 0 && j->current_ok;
    j->done(call, ok, ok && j->hashed ? j->hash : NULL);
    wipe_free(j->current);
    wipe_free(j->fresh);
    free(j->stored);
    explicit_bzero(j->hash, sizeof(j->hash));
    free(j);
    start_next(loop, max_running); /* call may be gone: what it needed was read first */
}

bool api_password_try(api_call_t *call, const char *stored, const char *current, const char *fresh,
                      api_password_done_cb done)
{
    const api_config_t *cfg = &call->ctx->cfg;
    if (Q.running >= (size_t)cfg->password_hashes && Q.waiting >= (size_t)cfg->password_queue)
        return false;
    job_t *j = cm_xcalloc(1, sizeof(*j));
    j->call = call;
    j->stored = stored ? cm_xstrdup(stored) : NULL;
    j->current = current ? cm_xstrdup(current) : NULL;
    j->fresh = fresh ? cm_xstrdup(fresh) : NULL;
    j->done = done;
    j->work.data = j;
    if (Q.tail)
        Q.tail->next = j;
    else
        Q.head = j;
    Q.tail = j;
    Q.waiting++;
    start_next(call->ctx->loop, (size_t)cfg->password_hashes);
    return true;
}

void api_password_busy(api_call_t *call)
{
    cm_api_error_t e;
    cm_api_error_set(&e, 503, "password_busy", NULL,
                     "Too many passwords are being checked right now; try again in a moment.");
    cm_http_res_header(call->req, "Retry-After", "1");
    api_respond_error(call, &e);
}

void api_password_job(api_call_t *call, const char *stored, const char *current, const char *fresh,
                      api_password_done_cb done)
{
    if (!api_password_try(call, stored, current, fresh, done))
        api_password_busy(call);
}
