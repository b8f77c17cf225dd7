/*
 * db_cache.c - the read cache of cm_db_run (see db.h, "Read cache").
 *
 * A cached answer is a cm_db_res_t moved out of the job that read it,
 * shared by reference: the cache holds one reference and every callback it
 * answers holds another while it runs, so a callback that writes (and so
 * empties the cache) never has its result freed under it.
 *
 * Why generations: a read submitted before a write but completed after it
 * saw the store before the write; cm_db_run's order guarantees nothing
 * about when its answer arrives relative to the write's submission, so an
 * answer is kept only when no job that may write was submitted since the
 * read was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/strset.h"
#include "db_internal.h"

#define CACHE_MAX_ENTRIES 1024
#define CACHE_MAX_BYTES   (8u << 20) /* all answers together */
#define ENTRY_MAX_BYTES   (64u << 10)

typedef struct {
    int refs;
    uint64_t expires; /* loop time, ms; unused with a version */
    bool has_version; /* kept while the store's data version is this */
    uint64_t version;
    size_t bytes;
    cm_db_res_t res;
} cached_t;

struct cm__db_hit {
    struct cm__db_hit *next;
    cached_t *entry;
    cm_db_done_cb cb;
    void *ud;
};

static void unref(void *p)
{
    cached_t *e = p;
    if (e && --e->refs == 0) {
        cm__db_res_clear_tables(&e->res);
        cm_buf_free(&e->res.error);
        free(e);
    }
}

void cm__db_cache_invalidate(cm_db_t *db)
{
    db->cache_gen++;
    if (db->cache) {
        cm_strset_free_with(db->cache, unref);
        db->cache = NULL;
        db->cache_bytes = 0;
    }
}

/* The statement's SQL, binding types and parameters, unambiguously. */
static void key_of(const cm_db_stmt_t *s, cm_buf_t *k)
{
    cm_buf_append(k, s->sql, strlen(s->sql) + 1);
    if (s->types)
        cm_buf_append_cstr(k, s->types);
    cm_buf_putc(k, '\0');
    for (int i = 0; i < s->nparams; i++) {
        /* a length, then the bytes; SIZE_MAX for NULL */
        size_t n = s->params[i] ? strlen(s->params[i]) : SIZE_MAX;
        cm_buf_append(k, &n, sizeof(n));
        if (s->params[i])
            cm_buf_append(k, s->params[i], n);
    }
}

void cm__db_cache_key(cm__db_job_t *job)
{
    key_of(&job->stmts[0], &job->cache_key);
}

bool cm__db_cache_lookup(cm_db_t *db, cm__db_job_t *job)
{
    cm__db_cache_key(job);
    uint64_t now = uv_now(db->loop);
    /* read before the lookup: if it matches the kept answer's, nothing was
     * committed between that read's submission and now */
    uint64_t version = 0;
    bool has_version = job->stmts[0].until_changed && db->ops->data_version &&
                       db->ops->data_version(db, &version) == 0;
    cached_t *e = db->cache ? cm_strset_get(db->cache, cm_buf_slice(&job->cache_key)) : NULL;
    bool fresh = e && (e->has_version ? has_version && version == e->version : now < e->expires);
    if (fresh) {
        cm__db_hit_t *hit = cm_xcalloc(1, sizeof(*hit));
        hit->entry = e;
        e->refs++;
        hit->cb = job->cb;
        hit->ud = job->ud;
        if (db->hits_tail)
            db->hits_tail->next = hit;
        else
            db->hits = hit;
        db->hits_tail = hit;
        cm__db_job_free(job);
        return true;
    }
    job->keep = true;
    job->cache_gen = db->cache_gen;
    job->cache_since = now;
    job->cache_ms = job->stmts[0].cache_ms;
    job->cache_has_version = has_version;
    job->cache_version = version;
    return false;
}

static size_t res_bytes(const cm_db_res_t *res)
{
    size_t n = 0;
    for (size_t i = 0; i < res->ntables; i++)
        n += res->tables[i].text.len + res->tables[i].ncells * sizeof(size_t);
    return n;
}

void cm__db_cache_complete(cm_db_t *db, cm__db_job_t *job)
{
    size_t bytes = job->status == 0 ? res_bytes(&job->res) : 0;
    if (job->status != 0 || job->cache_gen != db->cache_gen || db->closing ||
        bytes > ENTRY_MAX_BYTES || (!job->cache_has_version && job->cache_ms == 0)) {
        cm__db_job_answer(job, job->status, &job->res);
        return;
    }
    if (db->cache && (cm_strset_count(db->cache) >= CACHE_MAX_ENTRIES ||
                      db->cache_bytes + bytes > CACHE_MAX_BYTES)) {
        /* full: start again rather than track ages (entries live a second,
         * or until the store changes) */
        cm_strset_free_with(db->cache, unref);
        db->cache = NULL;
        db->cache_bytes = 0;
    }
    if (db->cache == NULL)
        db->cache = cm_strset_new(64);
    cached_t *e = cm_xcalloc(1, sizeof(*e));
    e->refs = 2; /* the cache's and this callback's */
    e->expires = job->cache_since + job->cache_ms;
    e->has_version = job->cache_has_version;
    e->version = job->cache_version;
    e->bytes = bytes;
    e->res.tables = job->res.tables;
    e->res.ntables = job->res.ntables;
    cm_buf_init(&e->res.error);
    job->res.tables = NULL;
    job->res.ntables = 0;
    cached_t *old = cm_strset_put(db->cache, cm_buf_slice(&job->cache_key), e);
    if (old) {
        db->cache_bytes -= old->bytes;
        unref(old);
    }
    db->cache_bytes += bytes;
    cm__db_job_answer(job, 0, &e->res);
    unref(e);
}

void cm__db_cache_deliver(cm_db_t *db)
{
    cm__db_hit_t *h = db->hits;
    db->hits = db->hits_tail = NULL; /* callbacks may queue more: next kick */
    while (h) {
        cm__db_hit_t *next = h->next;
        h->cb(0, &h->entry->res, h->ud);
        unref(h->entry);
        free(h);
        h = next;
    }
}

void cm__db_cache_free(cm_db_t *db)
{
    cm__db_cache_deliver(db);
    if (db->cache)
        cm_strset_free_with(db->cache, unref);
    db->cache = NULL;
}
