/* service.c - shared start and end of a service's main() (see service.h). */
#include "cm/service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/client_ip.h"
#include "cm/buf.h"
#include "cm/err.h"
#include "cm/json.h"
#include "cm/log.h"
#include "cm/timefmt.h"

/* The name cm_service_init was given, for the announcement line. */
static char service_name[64];

int cm_service_parse_trusted_proxies(const char *text, int *out)
{
    bool b;
    if (text == NULL || strcasecmp(text, "all") == 0) {
        *out = CM_TRUST_ALL_PROXIES;
        return CM_OK;
    }
    char *end;
    long n = strtol(text, &end, 10);
    if (end != text && *end == '\0' && n >= 0 && n <= 64) {
        *out = (int)n;
        return CM_OK;
    }
    if (cm_parse_bool(text, &b) == CM_OK) {
        *out = b ? CM_TRUST_ALL_PROXIES : 0;
        return CM_OK;
    }
    return CM_EINVAL;
}

int cm_service_parse_sample(const char *text, double *out)
{
    if (text == NULL || text[0] == '\0') {
        *out = 1.0;
        return CM_OK;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0.0 && v <= 1.0))
        return CM_EINVAL;
    *out = v;
    return CM_OK;
}

int cm_service_config(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                      size_t nkeys, void *cfg, cm_service_cfg_t *common, bool *printed)
{
    char err[256];
    *printed = false;
    if (cm_config_load(keys, nkeys, cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: configuration: %s\n", name, err);
        return CM_EINVAL;
    }
    if (common && cm_service_parse_trusted_proxies(common->trusted_proxies_text,
                                                   &common->trusted_proxies) != CM_OK) {
        fprintf(stderr,
                "%s: configuration: trusted proxies: \"%s\" is not all, a count "
                "(0-64) or a boolean\n",
                name, common->trusted_proxies_text);
        cm_config_free(keys, nkeys, cfg);
        return CM_EINVAL;
    }
    if (common && cm_service_parse_sample(common->access_log_sample_text,
                                          &common->access_log_sample) != CM_OK) {
        fprintf(stderr,
                "%s: configuration: ACCESS_LOG_SAMPLE: \"%s\" is not a number from 0 to 1\n", name,
                common->access_log_sample_text);
        cm_config_free(keys, nkeys, cfg);
        return CM_EINVAL;
    }
    if (argc > 1 && strcmp(argv[1], "--print-config") == 0) {
        cm_config_print(keys, nkeys, cfg, stdout);
        cm_config_free(keys, nkeys, cfg);
        *printed = true;
        return CM_OK;
    }
    if (cm_service_init(name, common ? common->log_level : "info") != CM_OK) {
        cm_config_free(keys, nkeys, cfg);
        return CM_EINVAL;
    }
    return CM_OK;
}

int cm_service_configure(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                         size_t nkeys, void *cfg, cm_service_cfg_t *common)
{
    bool printed;
    if (cm_service_config(name, argc, argv, keys, nkeys, cfg, common, &printed) != CM_OK)
        return 2;
    return printed ? 0 : -1;
}

int cm_service_init(const char *name, const char *log_level)
{
    cm_log_level_t level = CM_LOG_INFO;
    if (cm_log_level_parse(log_level, &level) != 0) {
        fprintf(stderr, "%s: configuration: LOG_LEVEL: unknown level \"%s\"\n", name, log_level);
        return CM_EINVAL;
    }
    cm_log_init(name, level);
    snprintf(service_name, sizeof(service_name), "%s", name);
    cm_alloc_tune_for_server();
    return CM_OK;
}

/* One line on stdout, whatever LOG_LEVEL says: the log line of the start
 * (the shape of cm/log.h's lines, so a file that takes both stdout and
 * stderr, as `make run`'s, reads alike) with "listening" first, the key
 * tests and scripts wait for. No second line on stderr: it said the same. */
void cm_service_announce(const char *host, int port)
{
    char ts[CM_ISO8601_MAX];
    cm_iso8601_format(cm_now_us(), 3, ts);
    cm_buf_t address = CM_BUF_INIT, line = CM_BUF_INIT;
    cm_buf_appendf(&address, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    cm_json_writer_t w;
    cm_json_writer_init(&w, &line);
    cm_json_begin_object(&w);
    cm_json_key(&w, "listening");
    cm_json_int(&w, port);
    cm_json_key(&w, "ts");
    cm_json_str_cstr(&w, ts);
    cm_json_key(&w, "level");
    cm_json_str_cstr(&w, "info");
    cm_json_key(&w, "service");
    cm_json_str_lossy(&w, cm_slice_from_cstr(service_name[0] ? service_name : "unknown"));
    cm_json_key(&w, "address");
    cm_json_str_lossy(&w, cm_buf_slice(&address));
    cm_json_key(&w, "msg");
    cm_json_str_cstr(&w, "listening");
    cm_json_end_object(&w);
    printf("%s\n", cm_buf_cstr(&line));
    fflush(stdout);
    cm_buf_free(&line);
    cm_buf_free(&address);
}

cm_http_server_t *cm_service_http_new(uv_loop_t *loop, const char *name,
                                      const cm_service_cfg_t *svc, cm_metrics_t *metrics,
                                      cm_ready_fn ready, void *ud)
{
    cm_http_server_opts_t ho;
    cm_http_server_opts_init(&ho);
    ho.max_body_bytes = svc->max_body;
    ho.cors = true;
    ho.service = name;
    ho.metrics = metrics;
    ho.access_log_sample = svc->access_log_sample;
    cm_http_server_t *srv = cm_http_server_new(loop, &ho);
    cm_http_ops_routes(srv, metrics, ready, ud);
    return srv;
}

int cm_service_http_listen(cm_http_server_t *srv, const cm_service_cfg_t *svc)
{
    if (cm_http_server_listen(srv, svc->host, (int)svc->port) != 0)
        return CM_EIO;
    cm_service_announce(svc->host, cm_http_server_port(srv));
    return CM_OK;
}

int cm_service_finish(uv_loop_t *loop, const cm_cfg_key_t *keys, size_t nkeys, void *cfg)
{
    int rc = uv_loop_close(loop);
    if (rc != 0)
        cm_log(CM_LOG_ERROR, NULL, "loop closed with live handles");
    /* the last line of a drained service: a supervisor stopping several
     * (scripts/run) can tell from the logs which ended when */
    cm_log(CM_LOG_INFO, NULL, "stopped");
    cm_config_free(keys, nkeys, cfg);
    return rc == 0 ? 0 : 3;
}
