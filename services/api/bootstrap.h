/* bootstrap.h - `api bootstrap`: a first organization, user, project and key. */
#ifndef API_BOOTSTRAP_H
#define API_BOOTSTRAP_H

#include <stdbool.h>

#include "api.h"

/* After the migrations: seeds an empty store or summarises a populated one
 * on stdout, then calls finish(NULL) to end the process's loop. */
void api_bootstrap_run(api_ctx_t *ctx, void (*finish)(void *ud));
/* The exit status: 0, or 1 when the store refused. */
int api_bootstrap_status(void);

#endif
