/*
 * fuzz_request.c - libFuzzer target for the flags service's request path:
 * POST /flags with an arbitrary body (JSON, gzip, base64 form), through
 * body decoding, field extraction, property merging, evaluation and the
 * response writer, in a real in-process server (fuzz_net.h).
 *
 * The first input byte picks the query string and headers; the rest is the
 * body. The project's definitions are installed directly in the store; the
 * Redis client points at a closed port, so every person read fails fast and
 * the degraded path (request properties only) is what runs, as it would
 * while Redis is down. Every answer must be well-formed HTTP with a JSON
 * body and one of the statuses the service documents.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "cm/json.h"
#include "cm/log.h"
#include "../fuzz_net.h"

static uv_loop_t *loop;
static flg_ctx_t ctx;

static const char envelope[] = "{\"flags\":["
                               "{\"id\":1,\"key\":\"on\",\"active\":true,\"filters\":{\"groups\":[{"
                               "\"properties\":[],\"rollout_percentage\":50}]}},"
                               "{\"id\":2,\"key\":\"pro\",\"active\":true,\"filters\":{\"groups\":["
                               "{\"properties\":[{\"key\":\"plan\",\"type\":\"person\","
                               "\"value\":[\"pro\"],\"operator\":\"exact\"},{\"key\":\"n\","
                               "\"type\":\"person\",\"value\":\"5\",\"operator\":\"gt\"}],"
                               "\"rollout_percentage\":100}]}},"
                               "{\"id\":3,\"key\":\"mv\",\"active\":true,\"evaluation_runtime\":"
                               "\"client\",\"evaluation_contexts\":[\"web\"],"
                               "\"filters\":{\"groups\":[{\"properties\":[{\"key\":\"email\","
                               "\"type\":\"person\",\"value\":\"@x\\\\.com$\","
                               "\"operator\":\"regex\"}],\"rollout_percentage\":100}],"
                               "\"multivariate\":{\"variants\":[{\"key\":\"a\","
                               "\"rollout_percentage\":50},{\"key\":\"b\",\"rollout_percentage\":"
                               "50}]},\"payloads\":{\"a\":\"{\\\"x\\\":1}\"}}},"
                               "{\"id\":4,\"key\":\"grp\",\"active\":true,\"filters\":{"
                               "\"aggregation_group_type_index\":0,\"groups\":[{\"properties\":"
                               "[{\"key\":\"size\",\"type\":\"group\",\"group_type_index\":0,"
                               "\"value\":10,\"operator\":\"gte\"}],\"rollout_percentage\":100}]}},"
                               "{\"id\":5,\"key\":\"dates\",\"active\":true,\"filters\":{"
                               "\"groups\":[{\"properties\":[{\"key\":\"seen\",\"type\":\"person\","
                               "\"value\":\"-7d\",\"operator\":\"is_date_after\"},{\"key\":\"v\","
                               "\"type\":\"person\",\"value\":\"1.2.0\","
                               "\"operator\":\"semver_gte\"}],\"rollout_percentage\":100}]}}"
                               "],\"group_type_mapping\":{\"0\":\"company\"},\"cohorts\":{}}";

static void setup(void)
{
    cm_log_init("fuzz", CM_LOG_OFF);
    loop = uv_default_loop();
    ctx.loop = loop;
    ctx.cfg.svc.max_body = 1 << 20;
    ctx.metrics = cm_metrics_new();
    ctx.evaluations = cm_metrics_counter(ctx.metrics, "e", "e", NULL);
    ctx.quota_limited = cm_metrics_counter(ctx.metrics, "q", "q", NULL);
    ctx.person_errors = cm_metrics_counter(ctx.metrics, "p", "p", NULL);
    ctx.flag_errors = cm_metrics_counter(ctx.metrics, "f", "f", NULL);
    /* Port 1 on loopback: connection refused, so reads fail fast. */
    cm_redis_opts_t ro = {.host = "127.0.0.1", .port = 1, .backoff_min_ms = 60000};
    if (cm_redis_new(loop, &ro, &ctx.redis) != 0)
        abort();
    ctx.store = flg_store_new(loop, ctx.redis, &ro, 3600 * 1000, ctx.metrics);
    if (flg_store_put_project(ctx.store, "phc_fuzz", "1", envelope, sizeof(envelope) - 1) != 0)
        abort();
    cm_http_server_opts_t o;
    cm_http_server_opts_init(&o);
    o.max_body_bytes = ctx.cfg.svc.max_body;
    o.cors = true;
    ctx.http = cm_http_server_new(loop, &o);
    flg_flags_routes(&ctx);
    flg_definitions_routes(&ctx);
    if (cm_http_server_listen(ctx.http, "127.0.0.1", 0) != 0)
        abort();
}

static const char *variants[] = {
    "POST /flags?v=2 HTTP/1.1\r\nContent-Type: application/json\r\n",
    "POST /flags/?v=2&config=true HTTP/1.1\r\nUser-Agent: posthog-node/5.70.0\r\n",
    "POST /flags HTTP/1.1\r\nContent-Type: text/plain\r\nOrigin: https://a.test\r\n",
    "POST /flags/?v=2&compression=base64 HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n",
    "POST /flags?v=2&compression=gzip HTTP/1.1\r\nContent-Encoding: gzip\r\n",
    "POST /flags?v=2 HTTP/1.1\r\nX-Forwarded-For: 203.0.113.9\r\nUser-Agent: Mozilla/5.0\r\n",
};

static void check_answer(const char *out, size_t n)
{
    fuzz_check_responses(out, n);
    int status = atoi(out + 9);
    if (status != 200 && status != 400 && status != 401 && status != 413)
        abort();
    const char *body = memmem(out, n, "\r\n\r\n", 4) + 4;
    cm_json_doc_t *doc = NULL;
    if (cm_json_parse(body, (size_t)(out + n - body), NULL, &doc, NULL) != 0)
        abort();
    cm_json_t root = cm_json_root(doc);
    if (status == 200 && !cm_json_exists(cm_json_get(root, "requestId")))
        abort();
    if (status != 200 && cm_json_type(cm_json_get(root, "code")) != CM_JSON_STRING)
        abort();
    cm_json_doc_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (loop == NULL)
        setup();
    if (size == 0)
        return 0;
    const char *head = variants[data[0] % (sizeof(variants) / sizeof(variants[0]))];
    char len[64];
    int ln = snprintf(len, sizeof(len), "Content-Length: %zu\r\n\r\n", size - 1);
    size_t total = strlen(head) + (size_t)ln + size - 1;
    uint8_t *req = malloc(total);
    memcpy(req, head, strlen(head));
    memcpy(req + strlen(head), len, (size_t)ln);
    memcpy(req + strlen(head) + (size_t)ln, data + 1, size - 1);
    size_t n;
    char *out = fuzz_exchange(loop, cm_http_server_port(ctx.http), req, total, &n);
    if (out != NULL && n > 0)
        check_answer(out, n);
    free(out);
    free(req);
    return 0;
}
