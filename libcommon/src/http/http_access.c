/*
 * http_access.c - one access line per request (see cm_http_req_log_field).
 *
 * The line is written when the response is queued, through cm/log.h: one
 * write(2) of a line formatted in a static buffer, no allocation. Its
 * fields name the route's pattern ("/api/projects/{project_id}/flags/"),
 * never the raw path: ids in paths would make every line unique to a log
 * index and may carry what the client sent (tokens in query strings).
 *
 * Sampling (opts.access_log_sample): a request under 400 gets a line with
 * that probability, decided by a xorshift generator per server (loop
 * thread only, so no locking and no syscall). A status of 400 or more is
 * always written: refusals and failures are what an operator looks for,
 * and the first a client's flood would otherwise hide. Level: info, warn
 * for 5xx (so LOG_LEVEL=warn keeps only server failures).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cm/log.h"
#include "http_internal.h"

#define MAX_EXTRA 16

void cm_http_req_log_field(cm_http_req_t *req, const char *key, const char *value)
{
    if (req->nlog_extra >= MAX_EXTRA || key == NULL)
        return;
    cm_buf_append(&req->log_extra, key, strlen(key) + 1);
    if (value)
        cm_buf_append(&req->log_extra, value, strlen(value) + 1);
    else
        cm_buf_append(&req->log_extra, "", 1);
    req->nlog_extra++;
}

/* xorshift64*: a uniform double in [0, 1). */
static double next_uniform(cm_http_server_t *srv)
{
    uint64_t x = srv->sample_state;
    if (x == 0)
        x = uv_hrtime() | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    srv->sample_state = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static bool sampled(cm_http_server_t *srv, int status)
{
    double rate = srv->opts.access_log_sample;
    if (status >= 400 || rate >= 1.0)
        return true;
    if (!(rate > 0.0)) /* 0, negative or NaN: errors only */
        return false;
    return next_uniform(srv) < rate;
}

void cm__access_log(cm_http_req_t *req, int status, size_t bytes_out)
{
    cm_log_level_t level = status >= 500 ? CM_LOG_WARN : CM_LOG_INFO;
    if (level < cm_log_min_level || !sampled(req->srv, status))
        return;
    uint64_t ns = req->start_ns ? uv_hrtime() - req->start_ns : 0;
    char status_s[16], ms_s[32], bytes_s[32];
    snprintf(status_s, sizeof(status_s), "%d", status);
    snprintf(ms_s, sizeof(ms_s), "%.3f", (double)ns / 1e6);
    snprintf(bytes_s, sizeof(bytes_s), "%zu", bytes_out);
    const cm_log_field_t nums[] = {
        {"status", status_s}, {"duration_ms", ms_s}, {"bytes_out", bytes_s}};

    cm_log_field_t fields[3 + MAX_EXTRA];
    int n = 0;
    /* The method is known once the headers are (a request cut short before
     * them, by a timeout or a parse error, has none). */
    fields[n++] = (cm_log_field_t){"method", req->in_body ? cm_http_req_method_name(req) : NULL};
    fields[n++] = (cm_log_field_t){"route", req->route ? req->route->pattern : "unmatched"};
    fields[n++] = (cm_log_field_t){"peer", req->peer};
    const char *p = req->log_extra.p;
    for (uint8_t i = 0; i < req->nlog_extra; i++) {
        const char *key = p;
        const char *value = key + strlen(key) + 1;
        p = value + strlen(value) + 1;
        fields[n++] = (cm_log_field_t){key, value};
    }
    cm_log_record(level, cm_http_req_id(req), fields, n, nums, (int)CM_ARRAY_LEN(nums), "access");
}
