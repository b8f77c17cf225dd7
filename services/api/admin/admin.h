/*
 * admin.h - `api admin ...`: an operator's way back in, on the store the
 * service uses (docs/admin.md). The same configuration as the service, the
 * same store code (store/), the migrations applied first as the service
 * applies them; no HTTP, no Redis: the serving api publishes what changed
 * through the outbox.
 *
 *   api admin keys list EMAIL
 *   api admin keys create EMAIL [--scope SCOPE]... [--label LABEL]
 *   api admin keys revoke KEY          (its id, the start of its id, or the key)
 *   api admin password EMAIL           (the new password on stdin, never argv)
 *   api admin org add-member ORG EMAIL member|admin|owner
 *   api admin bootstrap-info
 *
 * Each takes --json. main.c calls parse (before the configuration),
 * prepare (before the loop: reading stdin and hashing block), then run
 * once the store is migrated, and status for the exit code.
 */
#ifndef API_ADMIN_H
#define API_ADMIN_H

#include <stddef.h>

#include "api.h"

/* argv after "admin". 0, or 2 after printing the usage to stderr. */
int api_admin_parse(int argc, char **argv);
/* What must happen before the loop (the password command reads and hashes
 * the new password). 0, or 1 after saying why on stderr. */
int api_admin_prepare(void);
/* Runs the parsed command, then calls finish(NULL). */
void api_admin_run(api_ctx_t *ctx, void (*finish)(void *ud));
/* 0, or 1 when the command failed (said on stderr). */
int api_admin_status(void);

/* store_name.c: DATABASE_URL as it may be shown: the SQLite file's absolute
 * path, or PostgreSQL's user, host, port and database, never a password
 * nor the query string (which may hold one). */
void api_admin_store_name(const char *url, char *out, size_t size);

#endif
