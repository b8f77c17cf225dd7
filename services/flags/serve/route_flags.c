/*
 * route_flags.c - POST /flags: evaluate every flag of a project for one person.
 *
 * Steps: decode and parse the body; token -> project (401 when unknown);
 * quota check (200 with quotaLimited); then one pipelined read of the
 * person and the request's groups from Redis; hand evaluation the property
 * sources as layers (request over GeoIP over stored: each parsed once, none
 * merged); evaluate against the project's current snapshot; answer v=2
 * (`flags`) or legacy (`featureFlags`) JSON.
 *
 * If the person read fails or times out, evaluation goes on with the
 * request's properties only and errorsWhileComputingFlags is true, so the
 * SDKs know the answer may be partial.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "cm/api_error.h"
#include "cm/common.h"
#include "cm/form.h"
#include "cm/gzip.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/rediskeys.h"
#include "cm/timefmt.h"
#include "cm/uuid.h"
#include "flags.h"
#include "serve/request.h"
#include "serve/response.h"

#define MAX_DISTINCT_ID_CHARS 200
#define MAX_GROUPS            16

typedef struct {
    flg_ctx_t *ctx;
    cm_http_req_t *req;
    cm_buf_t decoded;   /* decoded body bytes (when it was encoded) */
    cm_json_doc_t *doc; /* the request body */
    cm_json_t body;
    flg_project_t *project;
    cm_buf_t distinct_id;
    bool v2, config;
    int pending;
    bool person_failed;
    cm_buf_t person;                /* stored person record, JSON (empty: none) */
    cm_buf_t group_raw[MAX_GROUPS]; /* stored group properties per request group */
    cm_slice_t group_type[MAX_GROUPS];
    size_t ngroups;
} flags_req_t;

static void reject(cm_http_req_t *req, int status, const char *code, const char *detail,
                   const char *attr)
{
    cm_api_error_t e;
    cm_api_error_set(&e, status, code, attr, "%s", detail);
    cm_http_respond_api_error(req, &e);
}

static void free_flags_req(flags_req_t *f)
{
    cm_buf_free(&f->decoded);
    cm_json_doc_free(f->doc);
    flg_project_release(f->project);
    cm_buf_free(&f->distinct_id);
    cm_buf_free(&f->person);
    for (size_t i = 0; i < f->ngroups; i++)
        cm_buf_free(&f->group_raw[i]);
    free(f);
}

/* ---- building the evaluation context ---------------------------------------- */

/* Parses a stored JSON text; a none handle when absent or malformed. */
static cm_json_t parse_stored(cm_buf_t *raw, cm_json_doc_t **doc)
{
    *doc = NULL;
    if (raw->len == 0 || cm_json_parse(raw->p, raw->len, NULL, doc, NULL) != 0)
        return CM_JSON_NONE_VALUE;
    return cm_json_root(*doc);
}

/* The $geoip_* properties of the client address, written into text and
 * parsed into *doc (which points into text: both live until evaluation is
 * over); none when GeoIP is off (no GEOIP_DB, or the request's
 * geoip_disable: true) or the address gives nothing. */
static cm_json_t geoip_layer(flags_req_t *f, cm_buf_t *text, cm_json_doc_t **doc)
{
    *doc = NULL;
    bool geoip_disable = false;
    cm_json_as_bool(cm_json_get(f->body, "geoip_disable"), &geoip_disable);
    if (f->ctx->geoip == NULL || geoip_disable)
        return CM_JSON_NONE_VALUE;
    char ip[CM_IP_BUFLEN];
    const char *addr =
        cm_client_ip(cm_http_req_header(f->req, "X-Forwarded-For"), cm_http_req_peer(f->req),
                     f->ctx->cfg.svc.trusted_proxies, ip, sizeof(ip));
    cm_json_writer_t w;
    cm_json_writer_init(&w, text);
    cm_json_begin_object(&w);
    int n = flg_geoip_lookup(f->ctx->geoip, addr, &w);
    cm_json_end_object(&w);
    if (n > 0 && cm_json_parse(text->p, text->len, NULL, doc, NULL) == 0)
        return cm_json_root(*doc);
    return CM_JSON_NONE_VALUE;
}

static void write_config(cm_json_writer_t *w)
{
    cm_json_key(w, "config");
    cm_json_begin_object(w);
    cm_json_key(w, "enable_collect_everything");
    cm_json_boolean(w, true);
    cm_json_end_object(w);
    cm_json_key(w, "toolbarParams");
    cm_json_begin_object(w);
    cm_json_end_object(w);
    cm_json_key(w, "isAuthenticated");
    cm_json_boolean(w, false);
    cm_json_key(w, "supportedCompression");
    cm_json_begin_array(w);
    cm_json_str_cstr(w, "gzip");
    cm_json_str_cstr(w, "gzip-js");
    cm_json_str_cstr(w, "lz64");
    cm_json_end_array(w);
}

static void write_envelope_end(flags_req_t *f, cm_json_writer_t *w, bool quota_limited)
{
    char id[CM_UUID_STR_LEN + 1];
    cm_uuid_v4(id);
    if (quota_limited) {
        cm_json_key(w, "quotaLimited");
        cm_json_begin_array(w);
        cm_json_str_cstr(w, "feature_flags");
        cm_json_end_array(w);
    }
    cm_json_key(w, "requestId");
    cm_json_str_cstr(w, id);
    cm_json_key(w, "evaluatedAt");
    cm_json_int(w, cm_now_us() / 1000);
    if (f->config)
        write_config(w);
    cm_json_end_object(w);
}

/* "In no static cohort": one parsed [] for the life of the process. */
static cm_json_t empty_list(void)
{
    static cm_json_doc_t doc = CM_JSON_DOC_INIT;
    if (doc.n == 0)
        cm_json_parse_into(&doc, "[]", 2, NULL, NULL);
    return cm_json_root(&doc);
}

/* The first MAX_DISTINCT_ID_CHARS characters (UTF-8) of the id. */
static cm_slice_t stored_person_id(const flags_req_t *f)
{
    cm_slice_t s = cm_buf_slice(&f->distinct_id);
    size_t chars = 0, i = 0;
    while (i < s.len && chars < MAX_DISTINCT_ID_CHARS) {
        unsigned char c = (unsigned char)s.p[i];
        i += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        chars++;
    }
    return (cm_slice_t){s.p, CM_MIN(i, s.len)};
}

/* The key of everything the answer's flags part depends on (answer_cache.h),
 * in *key; false when this answer may not be reused: no answer cache, no
 * definitions, definitions that read the clock, or a failed person read. */
static bool answer_key(const flags_req_t *f, flg_runtime_t runtime, const cm_buf_t *geo_text,
                       cm_buf_t *key)
{
    if (f->ctx->answers == NULL || f->project == NULL || !f->project->clock_free ||
        f->person_failed)
        return false;
    char head[2] = {f->v2 ? '2' : '1', (char)('0' + (int)runtime)};
    flg_answer_key_add(key, cm_slice_from_cstr(f->project->etag));
    flg_answer_key_add(key, cm_slice_from_cstr(f->project->project_id));
    flg_answer_key_add(key, (cm_slice_t){head, sizeof(head)});
    flg_answer_key_add(key, cm_json_raw(f->body));
    flg_answer_key_add(key, cm_buf_slice(&f->person));
    for (size_t i = 0; i < f->ngroups; i++) {
        flg_answer_key_add(key, f->group_type[i]);
        flg_answer_key_add(key, cm_buf_slice(&f->group_raw[i]));
    }
    flg_answer_key_add(key, cm_buf_slice(geo_text));
    return true;
}

/* Evaluates and writes the answer's flags part into out (the object left
 * open for the envelope); true when it may be reused (no errors). */
static bool evaluate_into(flags_req_t *f, flg_runtime_t runtime, cm_json_t geo, cm_buf_t *out)
{
    cm_json_doc_t *person_doc, *group_docs[MAX_GROUPS];
    flg_group_props_t stored_groups[MAX_GROUPS];
    cm_json_t stored = parse_stored(&f->person, &person_doc);
    for (size_t i = 0; i < f->ngroups; i++) {
        stored_groups[i].type = f->group_type[i];
        stored_groups[i].properties = parse_stored(&f->group_raw[i], &group_docs[i]);
    }

    cm_json_t statics = cm_json_get(stored, "static_cohorts");
    flg_context_t ctx = {
        .distinct_id = cm_buf_slice(&f->distinct_id),
        .device_id = cm_json_str_inner(cm_json_get_either(f->body, "$device_id", "device_id")),
        .anon_distinct_id =
            cm_json_str_inner(cm_json_get_either(f->body, "$anon_distinct_id", "anon_distinct_id")),
        .groups = cm_json_get_either(f->body, "groups", "$groups"),
        .person_properties = cm_json_get_either(f->body, "person_properties", "$properties"),
        .geoip_properties = geo,
        .stored_person_properties = cm_json_get(stored, "properties"),
        .group_properties = cm_json_get_either(f->body, "group_properties", "$group_properties"),
        .stored_groups = stored_groups,
        .nstored_groups = (uint32_t)f->ngroups,
        .hash_key_overrides = cm_json_get(stored, "hash_key_overrides"),
        /* Redis answered: the person is in the listed static cohorts, or none.
         * Redis failed: membership is unknown and such flags are errors. */
        .static_cohorts = f->person_failed ? CM_JSON_NONE_VALUE : statics,
        .flag_keys = cm_json_get_either(f->body, "flag_keys_to_evaluate", "flag_keys"),
        .evaluation_contexts =
            cm_json_get_either(f->body, "evaluation_contexts", "evaluation_environments"),
        .runtime = runtime,
        .now_us = cm_now_us(),
        .tz = f->project ? flg_store_timezone(f->ctx->store, f->project->project_id) : NULL,
        .regex_budget_ns = (uint64_t)f->ctx->cfg.regex_budget_ms * 1000000u,
    };
    if (!f->person_failed && !cm_json_exists(statics))
        ctx.static_cohorts = empty_list();
    flg_eval_t ev = {0};
    if (f->project)
        flg_evaluate(f->project->snap, &ctx, &ev);
    ev.errors = ev.errors || f->person_failed;
    if (ev.errors)
        cm_counter_inc(f->ctx->flag_errors);
    if (ev.regex_budget_spent)
        cm_counter_inc(f->ctx->regex_budget_spent);

    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    if (f->v2)
        flg_write_v2(&w, &ev, f->project ? f->project->v2 : NULL);
    else
        flg_write_legacy(&w, &ev);
    bool reusable = !ev.errors && !ev.regex_budget_spent;

    if (f->project)
        flg_eval_free(&ev);
    cm_json_doc_free(person_doc);
    for (size_t i = 0; i < f->ngroups; i++)
        cm_json_doc_free(group_docs[i]);
    return reusable;
}

/* Sends the answer, part then tail, gzipped. The part's compressed head is
 * kept in the answer cache under the answer's key plus "gzip" when the part
 * itself may be reused (key != NULL), so a repeated answer costs a copy and
 * the tail's CRC, not a deflate. */
static void respond_gzip(flags_req_t *f, cm_slice_t part, cm_slice_t tail, const cm_buf_t *key)
{
    cm_buf_t gz_key = CM_BUF_INIT, head_buf = CM_BUF_INIT, gz = CM_BUF_INIT;
    cm_slice_t head = CM_SLICE_NULL;
    if (key != NULL) {
        cm_buf_append_slice(&gz_key, cm_buf_slice(key));
        flg_answer_key_add(&gz_key, cm_slice_from_cstr("gzip"));
        head = flg_answer_cache_get(f->ctx->answers, cm_buf_slice(&gz_key));
    }
    if (head.p == NULL) {
        if (cm_gzip_head(part.p, part.len, 1, &head_buf) != 0)
            goto plain;
        head = cm_buf_slice(&head_buf);
    }
    if (cm_gzip_tail(head, tail.p, tail.len, &gz) != 0)
        goto plain;
    if (key != NULL && head_buf.len > 0)
        flg_answer_cache_put(f->ctx->answers, cm_buf_slice(&gz_key), head);
    cm_http_res_header(f->req, "Content-Encoding", "gzip");
    cm_http_res_header(f->req, "Vary", "Accept-Encoding");
    cm_http_respond_json(f->req, 200, &gz);
    goto done;
plain:
    cm_http_res_header(f->req, "Vary", "Accept-Encoding");
    cm_http_respond_parts(f->req, 200, "application/json", (cm_slice_t[]){part, tail}, 2);
done:
    cm_buf_free(&gz_key);
    cm_buf_free(&head_buf);
    cm_buf_free(&gz);
}

/* The answer is the flags part (evaluated now, or a cached one's bytes
 * where the cache keeps them: never copied) and a tail written for this
 * request: the part's last byte, then the envelope's end (request id, time).
 * The tail starts with that byte so the writer knows whether a comma is due. */
static void evaluate_and_respond(flags_req_t *f)
{
    cm_json_doc_t *geo_doc;
    cm_buf_t out = CM_BUF_INIT, tail = CM_BUF_INIT, geo_text = CM_BUF_INIT, key = CM_BUF_INIT;
    cm_json_t geo = geoip_layer(f, &geo_text, &geo_doc);
    flg_runtime_t runtime = flg_request_runtime(f->req, cm_json_get(f->body, "evaluation_runtime"));
    cm_counter_inc(f->ctx->evaluations);

    bool keyed = answer_key(f, runtime, &geo_text, &key), reusable = true;
    cm_slice_t part =
        keyed ? flg_answer_cache_get(f->ctx->answers, cm_buf_slice(&key)) : CM_SLICE_NULL;
    if (part.p == NULL) {
        reusable = evaluate_into(f, runtime, geo, &out);
        if (reusable && keyed)
            flg_answer_cache_put(f->ctx->answers, cm_buf_slice(&key), cm_buf_slice(&out));
        part = cm_buf_slice(&out);
    }
    /* evaluate_into always opens the answer object: part is never empty */
    cm_buf_putc(&tail, part.p[part.len - 1]);
    part.len--;

    cm_json_writer_t w; /* the flags part ends inside the open answer object */
    cm_json_writer_resume(&w, &tail);
    write_envelope_end(f, &w, false);
    size_t gzip_min = f->ctx->cfg.gzip_min_bytes;
    if (gzip_min > 0 && part.len + tail.len >= gzip_min && flg_request_accepts_gzip(f->req))
        respond_gzip(f, part, cm_buf_slice(&tail), keyed && reusable ? &key : NULL);
    else
        cm_http_respond_parts(f->req, 200, "application/json",
                              (cm_slice_t[]){part, cm_buf_slice(&tail)}, 2);

    cm_json_doc_free(geo_doc);
    cm_buf_free(&geo_text);
    cm_buf_free(&key);
    cm_buf_free(&out);
    cm_buf_free(&tail);
    free_flags_req(f);
}

/* ---- stored person and groups ---------------------------------------------- */

static void one_done(flags_req_t *f)
{
    if (--f->pending == 0)
        evaluate_and_respond(f);
}

static void store_reply(flags_req_t *f, cm_buf_t *dst, const redisReply *reply, const char *err)
{
    if (err != NULL || reply == NULL ||
        (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_NIL)) {
        if (!f->person_failed)
            cm_log(CM_LOG_WARN, cm_http_req_id(f->req), "person read failed: %s",
                   err ? err : "unexpected reply");
        f->person_failed = true;
        cm_counter_inc(f->ctx->person_errors);
    } else if (reply->type == REDIS_REPLY_STRING) {
        cm_buf_append(dst, reply->str, (size_t)reply->len);
    }
}

static void on_person(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    flags_req_t *f = ud;
    (void)r;
    store_reply(f, &f->person, reply, err);
    one_done(f);
}

typedef struct {
    flags_req_t *f;
    size_t i;
} group_ref_t;

static void on_group(cm_redis_t *r, const redisReply *reply, const char *err, void *ud)
{
    group_ref_t *g = ud;
    (void)r;
    store_reply(g->f, &g->f->group_raw[g->i], reply, err);
    flags_req_t *f = g->f;
    free(g);
    one_done(f);
}

static void fetch_stored(flags_req_t *f)
{
    const char *pid = f->project ? f->project->project_id : "";
    cm_json_t groups = cm_json_get_either(f->body, "groups", "$groups");
    cm_buf_t key = CM_BUF_INIT;
    f->pending = 1; /* held until every command is issued */
    cm_rediskeys_person(&key, cm_slice_from_cstr(pid), stored_person_id(f));
    f->pending++;
    cm_redis_command(f->ctx->redis, on_person, f, "GET %b", key.p, key.len);
    cm_json_iter_t it = cm_json_iter(groups);
    cm_json_t k, v;
    cm_buf_t scratch = CM_BUF_INIT;
    while (f->ngroups < MAX_GROUPS && cm_json_next(&it, &k, &v)) {
        cm_slice_t gkey;
        cm_buf_reset(&scratch);
        if (cm_json_type(v) == CM_JSON_STRING)
            cm_json_as_str(v, &scratch, &gkey);
        else
            gkey = cm_json_raw(v); /* numbers as written */
        size_t i = f->ngroups++;
        f->group_type[i] = cm_json_str_inner(k);
        group_ref_t *g = cm_xcalloc(1, sizeof(*g));
        g->f = f;
        g->i = i;
        cm_rediskeys_group(&key, cm_slice_from_cstr(pid), f->group_type[i], gkey);
        f->pending++;
        cm_redis_command(f->ctx->redis, on_group, g, "GET %b", key.p, key.len);
    }
    cm_buf_free(&scratch);
    cm_buf_free(&key);
    one_done(f);
}

/* ---- the request ------------------------------------------------------------------ */

/* distinct_id | $distinct_id: a string, or a number as written, whole.
 * Decision (docs/flags.md, rule 1): conditions hash exactly the id
 * posthog-node hashes, the whole of it; only the stored person is looked up
 * by the first 200 characters, the key ingest stores it under. */
static bool read_distinct_id(flags_req_t *f)
{
    cm_json_t v = cm_json_get_either(f->body, "distinct_id", "$distinct_id");
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s = CM_SLICE_NULL;
    if (cm_json_type(v) == CM_JSON_STRING)
        cm_json_as_str(v, &scratch, &s);
    else if (cm_json_type(v) == CM_JSON_NUMBER)
        s = cm_json_raw(v);
    cm_buf_append(&f->distinct_id, s.p, s.len);
    cm_buf_free(&scratch);
    return f->distinct_id.len > 0;
}

static void respond_quota_limited(flags_req_t *f)
{
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "errorsWhileComputingFlags");
    cm_json_boolean(&w, false);
    cm_json_key(&w, f->v2 ? "flags" : "featureFlags");
    cm_json_begin_object(&w);
    cm_json_end_object(&w);
    if (!f->v2) {
        cm_json_key(&w, "featureFlagPayloads");
        cm_json_begin_object(&w);
        cm_json_end_object(&w);
    }
    write_envelope_end(f, &w, true);
    cm_counter_inc(f->ctx->quota_limited);
    cm_http_respond_json(f->req, 200, &out);
    cm_buf_free(&out);
    free_flags_req(f);
}

/* Parses what every request needs; answers the error itself on failure. */
static flags_req_t *parse_request(flg_ctx_t *ctx, cm_http_req_t *req)
{
    flags_req_t *f = cm_xcalloc(1, sizeof(*f));
    f->ctx = ctx;
    f->req = req;
    cm_slice_t q = cm_http_req_query(req), json;
    cm_buf_t v = CM_BUF_INIT;
    if (cm_form_get(q.p, q.len, "v", &v) == 0)
        f->v2 = v.len > 0 && cm_buf_cstr(&v)[0] >= '2';
    cm_buf_reset(&v);
    f->config =
        cm_form_get(q.p, q.len, "config", &v) == 0 &&
        (cm_slice_eq_cstr(cm_buf_slice(&v), "true") || cm_slice_eq_cstr(cm_buf_slice(&v), "1"));
    cm_buf_free(&v);

    cm_api_error_t err;
    if (flg_request_body(req, ctx->cfg.svc.max_body * 10, &f->decoded, &json, &err) != 0) {
        cm_http_respond_api_error(req, &err);
        goto fail;
    }
    cm_json_error_t jerr;
    if (cm_json_parse(json.p, json.len, NULL, &f->doc, &jerr) != 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Malformed JSON at byte %zu: %s.", jerr.offset, jerr.msg);
        reject(req, 400, "invalid_json", msg, NULL);
        goto fail;
    }
    f->body = cm_json_root(f->doc);
    if (cm_json_type(f->body) != CM_JSON_OBJECT) {
        reject(req, 400, "invalid_payload", "The body must be a JSON object.", NULL);
        goto fail;
    }
    return f;
fail:
    free_flags_req(f);
    return NULL;
}

static void on_flags(cm_http_req_t *req, void *ud)
{
    flg_ctx_t *ctx = ud;
    flags_req_t *f = parse_request(ctx, req);
    if (f == NULL)
        return;
    cm_slice_t token = cm_json_str_inner(cm_json_get(f->body, "token"));
    if (token.p == NULL)
        token = cm_json_str_inner(cm_json_get_either(f->body, "api_key", "$token"));
    if (token.len == 0) {
        reject(req, 401, "missing_token", "No project token: set token (or api_key) in the body.",
               "token");
        free_flags_req(f);
        return;
    }
    const char *pid = flg_store_project_for_token(ctx->store, token);
    if (pid != NULL)
        cm_http_req_log_field(req, "project_id", pid); /* the access line */
    if (pid == NULL && flg_store_unloaded(ctx->store, req)) {
        free_flags_req(f);
        return;
    }
    if (pid == NULL) {
        /* PostHog's flags service: a token no project holds is its
         * TokenValidationError (capture names the same case unknown_token) */
        reject(req, 401, "invalid_token",
               "API key does not belong to any project. Check the project API key: "
               "api_token in GET /api/projects/.",
               "token");
        free_flags_req(f);
        return;
    }
    if (!read_distinct_id(f)) {
        reject(req, 400, "missing_distinct_id", "distinct_id is required and must not be empty.",
               "distinct_id");
        free_flags_req(f);
        return;
    }
    if (flg_store_quota_limited(ctx->store, token)) {
        respond_quota_limited(f);
        return;
    }
    f->project = flg_store_definitions(ctx->store, pid);
    fetch_stored(f);
}

void flg_flags_routes(flg_ctx_t *ctx)
{
    cm_http_server_route(ctx->http, CM_HTTP_POST, "/flags", on_flags, ctx);
    cm_http_server_route(ctx->http, CM_HTTP_POST, "/flags/", on_flags, ctx);
}
