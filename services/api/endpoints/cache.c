/*
 * cache.c - what the run (run.c) and its sources share: a cached answer
 * in Redis (the time it was computed, a newline, then the page, a whole
 * JSON object; proto/redis-keys.md)
 * under a key that is a hash of a canonical encoding of what the answer
 * depends on, kept only when it is small (ENDPOINT_CACHE_MAX_BYTES: the
 * same Redis holds the queue and the flags' data), and how a failed query
 * on the event store is answered (never with the store's own text).
 */
#include <stdio.h>
#include <string.h>

#include "cm/digest.h"
#include "cm/err.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "endpoints/endpoints_int.h"
#include "http/admit.h"

/* Length-prefixed, so that fields cannot run into each other: "x\ntq",
 * "z" and "x", "q\ntz" joined by newlines would be the same text. */
void api_endpoints__key_field(cm_buf_t *b, const char *p, size_t len)
{
    if (p == NULL) {
        cm_buf_append_cstr(b, "-;");
        return;
    }
    cm_buf_appendf(b, "%zu:", len);
    cm_buf_append(b, p, len);
    cm_buf_putc(b, ';');
}

void api_endpoints__key_field_c(cm_buf_t *b, const char *s)
{
    api_endpoints__key_field(b, s, s ? strlen(s) : 0);
}

void api_endpoints__key_name(const cm_buf_t *fields, const char *project_id, char out[96])
{
    char hex[CM_SHA256_HEX_LEN + 1];
    cm_sha256_hex(fields->p, fields->len, hex);
    cm_buf_t b = CM_BUF_INIT;
    cm_rediskeys_endpoint_cache(&b, cm_slice_from_cstr(project_id), (cm_slice_t){hex, 40});
    snprintf(out, 96, "%s", cm_buf_cstr(&b));
    cm_buf_free(&b);
}

static void on_cache_set(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    (void)reply;
    (void)ud;
    if (err != NULL)
        cm_log(CM_LOG_WARN, NULL, "endpoint cache: %s", err);
}

void api_endpoints__cache_entry(cm_buf_t *entry, const char *when, const cm_buf_t *page)
{
    cm_buf_appendf(entry, "%s\n", when);
    cm_buf_append(entry, page->p, page->len);
    cm_json_writer_t w; /* the page's object, closed in the entry */
    cm_json_writer_resume(&w, entry);
    cm_json_end_object(&w);
}

void api_endpoints__cache_put(api_call_t *call, const char *key, const char *when,
                              const cm_buf_t *page, int age_s)
{
    /* a big answer is served but not kept: computed again next time (the
     * bound counts the page's members, as it always has) */
    size_t members = page->len - 1;
    if (members > call->ctx->cfg.cache_max_bytes) {
        cm_log(CM_LOG_DEBUG, cm_http_req_id(call->req),
               "endpoint cache: an answer of %zu bytes is not kept (ENDPOINT_CACHE_MAX_BYTES %zu)",
               members, call->ctx->cfg.cache_max_bytes);
        return;
    }
    cm_buf_t entry = CM_BUF_INIT;
    api_endpoints__cache_entry(&entry, when, page);
    char age[16];
    snprintf(age, sizeof(age), "%d", age_s);
    const char *argv[] = {"SET", key, cm_buf_cstr(&entry), "EX", age};
    size_t lens[] = {3, strlen(key), entry.len, 2, strlen(age)};
    cm_redis_command_argv(call->ctx->redis, on_cache_set, NULL, 5, argv, lens);
    cm_buf_free(&entry);
}

bool api_endpoints__cache_hit(const redisReply *reply, const char *err, char when[48],
                              cm_slice_t *page)
{
    if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_STRING)
        return false;
    const char *nl = memchr(reply->str, '\n', reply->len);
    if (nl == NULL || nl - reply->str >= 40)
        return false;
    cm_slice_t obj = {nl + 1, reply->len - (size_t)(nl + 1 - reply->str)};
    /* an entry of the format before whole objects: a miss, computed again */
    if (obj.len < 2 || obj.p[0] != '{' || obj.p[obj.len - 1] != '}')
        return false;
    snprintf(when, 48, "%.*s", (int)(nl - reply->str), reply->str);
    *page = obj;
    return true;
}

/* "64 MiB", "1.5 MiB", "4096 bytes": a bound as people read it. */
static void size_text(size_t n, char out[32])
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(out, 32, "%zu MiB", n >> 20);
    else if (n >= (1u << 20))
        snprintf(out, 32, "%.1f MiB", (double)n / (1u << 20));
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(out, 32, "%zu KiB", n >> 10);
    else
        snprintf(out, 32, "%zu bytes", n);
}

/* 400: the answer is past ENDPOINT_MAX_ANSWER_BYTES. */
static void answer_too_big(api_call_t *call)
{
    char cap[32];
    size_text(call->ctx->cfg.answer_max_bytes, cap);
    api_respond_invalid(call, NULL,
                        "Query execution failed: the answer is larger than %s "
                        "(ENDPOINT_MAX_ANSWER_BYTES). Ask for fewer rows (limit) or columns, "
                        "or smaller values.",
                        cap);
}

/* The store's text may hold its SQL and the compiler's internal names:
 * logged with the request id, which the answer gives instead. */
bool api_endpoints__query_failed(api_call_t *call, int status, const char *err, unsigned timeout_ms)
{
    if (status == 0)
        return false;
    if (api_query_refused(call, status))
        return true;
    const char *id = cm_http_req_id(call->req);
    if (status == CM_ETIMEDOUT) {
        api_respond_invalid(call, NULL, "Query execution failed: the query took longer than %u s.",
                            timeout_ms / 1000);
    } else if (status == CM_ETOOBIG) {
        answer_too_big(call);
    } else if (status == CM_EINVAL) {
        const api_endpoints__store_error_t *m = api_endpoints__store_error(err);
        cm_log(CM_LOG_WARN, id, "endpoint query refused by the event store: answered=%s store=%s",
               m ? m->code : "refused", err ? err : "");
        cm_api_error_t e;
        if (m != NULL)
            cm_api_error_set(&e, m->status, m->code, NULL, "Query execution failed: %s", m->detail);
        else
            cm_api_error_set(&e, 400, "invalid", NULL,
                             "Query execution failed: the event store refused the query "
                             "(request %s).",
                             id);
        api_respond_error(call, &e);
    } else {
        cm_log(CM_LOG_ERROR, id, "endpoint query failed: %s", err ? err : "");
        cm_api_error_t e;
        cm_api_error_set(&e, 503, "unavailable", NULL,
                         "The event store cannot be reached (request %s).", id);
        api_respond_error(call, &e);
    }
    return true;
}
