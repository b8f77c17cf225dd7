/*
 * service.h - the beginning and end every service's main() shares.
 *
 *   bool printed;
 *   if (cm_service_config("flags", argc, argv, keys, nkeys, &cfg, &cfg.svc, &printed) != 0)
 *       return 2;                            (bad configuration, reported)
 *   if (printed) return 0;                   (--print-config)
 *   srv = cm_service_http_new(loop, "flags", &cfg.svc, metrics, ready, ud);
 *   ... the service's routes on srv ...
 *   if (cm_service_http_listen(srv, &cfg.svc) != 0) return 1;
 *   uv_run(loop, UV_RUN_DEFAULT);
 *   return cm_service_finish(loop, keys, nkeys, &cfg);
 *
 * Exit codes: 0 clean, 1 could not start (the caller's), 2 configuration,
 * 3 the loop ended with live handles (a leak of ours).
 */
#ifndef CM_SERVICE_H
#define CM_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/config.h"
#include "cm/http_ops.h"

struct uv_loop_s;

/*
 * The settings every HTTP service has, one spelling each: <SVC>_HOST,
 * <SVC>_PORT, <SVC>_MAX_BODY and <SVC>_TRUSTED_PROXIES per service, and
 * the shared REDIS_URL, DRAIN_TIMEOUT and LOG_LEVEL. A service embeds this
 * struct in its configuration and puts CM_SERVICE_ROWS in its table.
 */
typedef struct {
    char *host;
    long long port;
    size_t max_body;
    char *trusted_proxies_text; /* as configured: "all", a count, or true/false */
    int trusted_proxies;        /* parsed by cm_service_config (cm/client_ip.h) */
    char *redis_url;
    long long drain_timeout_ms;
    char *log_level;
    char *access_log_sample_text; /* ACCESS_LOG_SAMPLE as configured (CM_SERVICE_ACCESS_LOG_ROW) */
    double access_log_sample;     /* parsed by cm_service_config: 0..1 */
} cm_service_cfg_t;

/*
 * The rows of cm_service_cfg_t for the service whose struct T holds it as
 * member m. P is the variables' prefix ("INGEST"); the defaults are text;
 * old_body / old_proxies name earlier spellings still read (or NULL).
 */
// clang-format off
#define CM_SERVICE_ROWS(T, m, P, port_def, body, body_max, proxies, redis_help, old_body,      \
                        old_proxies)                                                           \
    {P "_HOST", CM_CFG_STR, offsetof(T, m.host), "127.0.0.1", 0, 0,                            \
     "address to listen on", 0, NULL},                                                         \
    {P "_PORT", CM_CFG_INT, offsetof(T, m.port), port_def, 0, 65535,                           \
     "port to listen on (0 = any free port)", 0, NULL},                                        \
    {P "_MAX_BODY", CM_CFG_SIZE, offsetof(T, m.max_body), body, 1024, body_max,                \
     "largest request body on the wire (413 beyond)", 0, old_body},                            \
    {P "_TRUSTED_PROXIES", CM_CFG_STR, offsetof(T, m.trusted_proxies_text), proxies, 0, 0,     \
     "proxies in front whose X-Forwarded-For is believed: 0 (the TCP peer is the client), "    \
     "a count, or all", 0, old_proxies},                                                       \
    {"REDIS_URL", CM_CFG_STR, offsetof(T, m.redis_url), "redis://127.0.0.1:6379/0", 0, 0,      \
     redis_help, CM_CFG_SECRET, NULL},                                                         \
    {"DRAIN_TIMEOUT", CM_CFG_DURATION, offsetof(T, m.drain_timeout_ms), "30s", 0, 600000,      \
     "on SIGTERM, longest wait for requests in progress", 0, NULL},                            \
    {"LOG_LEVEL", CM_CFG_STR, offsetof(T, m.log_level), "info", 0, 0,                          \
     "debug, info, warn or error", 0, NULL}

/* ACCESS_LOG_SAMPLE, the share of requests under 400 given an access line
 * (0..1; errors always get one): def is the service's default as text. A
 * table without this row logs every request. */
#define CM_SERVICE_ACCESS_LOG_ROW(T, m, def)                                                   \
    {"ACCESS_LOG_SAMPLE", CM_CFG_STR, offsetof(T, m.access_log_sample_text), def, 0, 0,        \
     "share of requests under 400 given an access log line, 0 to 1 (status >= 400: always)",   \
     0, NULL}
// clang-format on

/* A sampling rate: a decimal number from 0 to 1. 0 or CM_EINVAL. */
int cm_service_parse_sample(const char *text, double *out);

/* "all" -> CM_TRUST_ALL_PROXIES, a count 0..64, and the old TRUST_PROXY's
 * booleans (true/yes/on -> all, false/no/off -> 0). 0 or CM_EINVAL. */
int cm_service_parse_trusted_proxies(const char *text, int *out);

/*
 * Loads the table from the environment (common: the service's embedded
 * cm_service_cfg_t, checked here, or NULL for a table without those rows); with --print-config
 * prints it, frees it and sets *printed. Otherwise it starts logging at the configured level
 * (cm_service_init). Returns 0, or CM_EINVAL with the reason on stderr.
 */
int cm_service_config(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                      size_t nkeys, void *cfg, cm_service_cfg_t *common, bool *printed);
/* cm_service_config as a main() ends it: 2 for a bad configuration
 * (reported), 0 once --print-config printed it, -1 to go on. */
int cm_service_configure(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                         size_t nkeys, void *cfg, cm_service_cfg_t *common);
/* JSON logs at log_level ("debug".."error") and the server malloc tuning.
 * Returns 0, or CM_EINVAL for an unknown level (reported on stderr). */
int cm_service_init(const char *name, const char *log_level);
/* Prints where the service listens, one JSON line on stdout:
 *   {"listening":PORT,"ts":"...","level":"info","service":"api",
 *    "address":"127.0.0.1:PORT","msg":"listening"}
 * the line tests and scripts wait for ({"listening":PORT first). */
void cm_service_announce(const char *host, int port);
/*
 * The HTTP server every service runs: the body cap from svc, PostHog's
 * permissive CORS, name in logs and metrics, per-route metrics, and the
 * ops routes (/_health, /_ready answered by ready(ud) or always ready when
 * NULL, /metrics). The caller adds its routes, then listens.
 */
cm_http_server_t *cm_service_http_new(struct uv_loop_s *loop, const char *name,
                                      const cm_service_cfg_t *svc, cm_metrics_t *metrics,
                                      cm_ready_fn ready, void *ud);
/* Listens on svc's host and port and announces it. 0, or CM_EIO (logged). */
int cm_service_http_listen(cm_http_server_t *srv, const cm_service_cfg_t *svc);
/* After uv_run: closes the loop and frees the configuration. */
int cm_service_finish(struct uv_loop_s *loop, const cm_cfg_key_t *keys, size_t nkeys, void *cfg);

#endif
