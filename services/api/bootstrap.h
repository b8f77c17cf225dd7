/* bootstrap.h - `api bootstrap`: a first organization, user, project and key. */
#ifndef API_BOOTSTRAP_H
#define API_BOOTSTRAP_H

#include <stdbool.h>

#include "api.h"

/* The command line's arguments, main.c's (they outlive the run). */
typedef struct {
    const char *new_user_email; /* `api adduser EMAIL` */
    const char *verify_client;  /* `api oauth-verify|oauth-unverify CLIENT_ID` */
    bool verify_value;
} api_bootstrap_args_t;

/* After the migrations: seeds an empty store or summarises a populated one
 * on stdout (or adds the user, or marks the client), then calls
 * finish(NULL) to end the process's loop. */
void api_bootstrap_run(api_ctx_t *ctx, const api_bootstrap_args_t *args, void (*finish)(void *ud));
/* The exit status: 0, or 1 when the store refused. */
int api_bootstrap_status(void);

#endif
