/* service.c - shared start and end of a service's main() (see service.h). */
#include "cm/service.h"

#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "cm/alloc.h"
#include "cm/log.h"

int cm_service_config(const char *name, int argc, char **argv, const cm_cfg_key_t *keys,
                      size_t nkeys, void *cfg)
{
    char err[256];
    if (cm_config_load(keys, nkeys, cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: configuration: %s\n", name, err);
        return 2;
    }
    if (argc > 1 && strcmp(argv[1], "--print-config") == 0) {
        cm_config_print(keys, nkeys, cfg, stdout);
        cm_config_free(keys, nkeys, cfg);
        return 0;
    }
    return -1;
}

int cm_service_init(const char *name, const char *log_level)
{
    cm_log_level_t level = CM_LOG_INFO;
    if (cm_log_level_parse(log_level, &level) != 0) {
        fprintf(stderr, "%s: configuration: LOG_LEVEL: unknown level \"%s\"\n", name, log_level);
        return 2;
    }
    cm_log_init(name, level);
    cm_alloc_tune_for_server();
    return -1;
}

void cm_service_announce(const char *host, int port)
{
    cm_log(CM_LOG_INFO, NULL, "listening on %s:%d", host, port);
    printf("{\"listening\":%d}\n", port);
    fflush(stdout);
}

int cm_service_finish(uv_loop_t *loop, const cm_cfg_key_t *keys, size_t nkeys, void *cfg)
{
    int rc = uv_loop_close(loop);
    if (rc != 0)
        cm_log(CM_LOG_ERROR, NULL, "loop closed with live handles");
    cm_config_free(keys, nkeys, cfg);
    return rc == 0 ? 0 : 3;
}
