/*
 * remote_config.c - the remote config posthog-js asks for at start, public
 * (the project token is in the path, as PostHog serves it):
 *   GET /array/{token}/config     JSON
 *   GET /array/{token}/config.js  a script that files the same object under
 *                                 window._POSTHOG_REMOTE_CONFIG[token]
 * PostHog's shape, with the features this service does not run (session
 * recording, surveys, heatmaps, site apps...) off. The two that matter:
 * supportedCompression keeps posthog-js on gzip (without a remote config it
 * falls back to plain JSON), and analytics.endpoint is the capture path it
 * then uses. An unknown token is a 404, as PostHog's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "resources/resources.h"
#include "store/store.h"

typedef struct {
    char *token;
    bool script;
} rc_state_t;

static void rc_free(void *p)
{
    rc_state_t *s = p;
    free(s->token);
    free(s);
}

static void write_config(cm_json_writer_t *w, const char *token, bool has_flags)
{
    cm_json_begin_object(w);
    cm_json_key(w, "token");
    cm_json_str_cstr(w, token);
    cm_json_key(w, "supportedCompression");
    cm_json_begin_array(w);
    cm_json_str_cstr(w, "gzip");
    cm_json_str_cstr(w, "gzip-js");
    cm_json_end_array(w);
    cm_json_key(w, "hasFeatureFlags");
    cm_json_boolean(w, has_flags);
    cm_json_key(w, "analytics");
    cm_json_begin_object(w);
    cm_json_key(w, "endpoint");
    cm_json_str_cstr(w, "/i/v0/e/");
    cm_json_end_object(w);
    cm_json_key(w, "elementsChainAsString");
    cm_json_boolean(w, true);
    static const char *const off[] = {"captureDeadClicks",
                                      "capturePerformance",
                                      "autocapture_opt_out",
                                      "autocaptureExceptions",
                                      "sessionRecording",
                                      "heatmaps",
                                      "surveys"};
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        cm_json_key(w, off[i]);
        cm_json_boolean(w, false);
    }
    cm_json_key(w, "defaultIdentifiedOnly");
    cm_json_boolean(w, true);
    cm_json_key(w, "siteApps");
    cm_json_begin_array(w);
    cm_json_end_array(w);
    cm_json_end_object(w);
}

static void on_project(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    rc_state_t *s = call->state;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) {
        api_respond_not_found(call);
        return;
    }
    bool has_flags = atoll(cm_db_value(res, 0, 0, 1)) > 0;
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    if (!s->script) {
        cm_json_writer_init(&w, &out);
        write_config(&w, s->token, has_flags);
        api_respond_json(call, 200, &out);
        return;
    }
    cm_buf_append_cstr(&out,
                       "(function() {\n  window._POSTHOG_REMOTE_CONFIG = "
                       "window._POSTHOG_REMOTE_CONFIG || {};\n  window._POSTHOG_REMOTE_CONFIG[");
    cm_json_quote(&out, cm_slice_from_cstr(s->token));
    cm_buf_append_cstr(&out, "] = {\n    config: ");
    cm_json_writer_init(&w, &out);
    write_config(&w, s->token, has_flags);
    cm_buf_append_cstr(&out, ",\n    siteApps: []\n  };\n})();\n");
    api_respond_text(call, 200, "application/javascript", &out);
}

static void remote_config(api_call_t *call, bool script)
{
    cm_slice_t token = cm_http_req_param(call->req, "token");
    rc_state_t *s = cm_xcalloc(1, sizeof(*s));
    s->token = cm_xmemdup(token.p, token.len);
    s->script = script;
    call->state = s;
    call->state_free = rc_free;
    if (token.len == 0 || token.len > 64 || memchr(token.p, '\0', token.len)) {
        api_respond_not_found(call);
        return;
    }
    api_store_remote_config(call->ctx->db, s->token, on_project, call);
}

void api_remote_config_json(api_call_t *call)
{
    remote_config(call, false);
}

void api_remote_config_js(api_call_t *call)
{
    remote_config(call, true);
}
