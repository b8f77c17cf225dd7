/*
 * endpoint_cache.c - what a HogQL run (endpoint_run.c) and an insight run
 * (endpoint_insight.c) share: a cached answer in Redis (the time it was
 * computed, a newline, then the answer's members; proto/redis-keys.md),
 * and how a failed query on the event store is answered.
 */
#include <stdio.h>
#include <string.h>

#include "cm/err.h"
#include "cm/log.h"
#include "resources/endpoints.h"
#include "resources/query_admit.h"

static void on_cache_set(cm_redis_t *rd, const redisReply *reply, const char *err, void *ud)
{
    (void)rd;
    (void)reply;
    (void)ud;
    if (err != NULL)
        cm_log(CM_LOG_WARN, NULL, "endpoint cache: %s", err);
}

void api_endpoint_cache_put(api_call_t *call, const char *key, const char *when, cm_slice_t page,
                            int age_s)
{
    cm_buf_t entry = CM_BUF_INIT;
    cm_buf_appendf(&entry, "%s\n", when);
    cm_buf_append(&entry, page.p, page.len);
    char age[16];
    snprintf(age, sizeof(age), "%d", age_s);
    const char *argv[] = {"SET", key, cm_buf_cstr(&entry), "EX", age};
    size_t lens[] = {3, strlen(key), entry.len, 2, strlen(age)};
    cm_redis_command_argv(call->ctx->redis, on_cache_set, NULL, 5, argv, lens);
    cm_buf_free(&entry);
}

bool api_endpoint_cache_hit(const redisReply *reply, const char *err, char when[48],
                            cm_slice_t *page)
{
    if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_STRING)
        return false;
    const char *nl = memchr(reply->str, '\n', reply->len);
    if (nl == NULL || nl - reply->str >= 40)
        return false;
    snprintf(when, 48, "%.*s", (int)(nl - reply->str), reply->str);
    *page = (cm_slice_t){nl + 1, reply->len - (size_t)(nl + 1 - reply->str)};
    return true;
}

bool api_endpoint_query_failed(api_call_t *call, int status, const char *err, unsigned timeout_ms)
{
    if (status == 0)
        return false;
    if (api_query_refused(call, status))
        return true;
    if (status == CM_ETIMEDOUT) {
        api_respond_invalid(call, NULL, "Query execution failed: the query took longer than %u s.",
                            timeout_ms / 1000);
    } else if (status == CM_EINVAL) {
        api_respond_invalid(call, NULL, "Query execution failed: %s", err ? err : "");
    } else {
        cm_api_error_t e;
        cm_api_error_set(&e, 503, "unavailable", NULL, "The event store cannot be reached: %s",
                         err ? err : "");
        api_respond_error(call, &e);
    }
    return true;
}
