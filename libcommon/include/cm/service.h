/*
 * service.h - the beginning and end every service's main() shares.
 *
 *   int rc = cm_service_config("flags", argc, argv, keys, nkeys, &cfg);
 *   if (rc >= 0) return rc;                  (printed the config, or bad config)
 *   if ((rc = cm_service_init("flags", cfg.log_level)) >= 0) return rc;
 *   ... create handles, listen ...
 *   cm_service_announce(host, port);         ({"listening":PORT} on stdout)
 *   uv_run(loop, UV_RUN_DEFAULT);
 *   return cm_service_finish(loop, keys, nkeys, &cfg);
 *
 * Exit codes: 0 clean, 1 could not start (the caller's), 2 configuration,
 * 3 the loop ended with live handles (a leak of ours).
 */
#ifndef CM_SERVICE_H
#define CM_SERVICE_H

#include <stddef.h>

#include "cm/config.h"

struct uv_loop_s;

/* Loads the table from the environment; with --print-config prints it.
 * Returns -1 to go on, else the code main() should exit with now. */
int cm_service_config(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                      size_t nkeys, void *cfg);
/* JSON logs at log_level ("debug".."error") and the server malloc tuning.
 * Returns -1 to go on, or 2 for an unknown level. */
int cm_service_init(const char *name, const char *log_level);
/* Logs where the service listens and prints {"listening":PORT} on stdout,
 * the line tests and scripts wait for. */
void cm_service_announce(const char *host, int port);
/* After uv_run: closes the loop and frees the configuration. */
int cm_service_finish(struct uv_loop_s *loop, const cm_cfg_key_t *keys, size_t nkeys, void *cfg);

#endif
