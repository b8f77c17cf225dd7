/*
 * store.h - what the flags service knows about projects, kept in memory.
 *
 * Everything evaluation needs besides the person is read from Redis
 * (proto/redis-keys.md) into tables that are rebuilt whole and swapped:
 * token -> project, hashed secret token -> project, project -> definitions
 * (raw envelope, ETag and an immutable evaluation snapshot), project -> time
 * zone, and the quota-limited tokens. A timer re-reads everything every
 * refresh interval; a message on `flags:changed` reloads one project's
 * definitions and re-reads the other (small) tables at once; a subscriber
 * reconnect triggers a full re-read (messages may have been missed). A
 * full read from a replica whose link to its primary is down is skipped
 * (it may be empty after a restart): the last tables keep serving.
 *
 * Requests never wait for definitions: they use whatever snapshot is
 * current, taking a reference for as long as they need it. If Redis is
 * down the last tables keep serving.
 */
#ifndef FLG_STORE_H
#define FLG_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/http_server.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "cm/rediskeys.h"
#include "core/dates.h"
#include "core/snapshot.h"
#include "serve/response.h"

typedef struct flg_store flg_store_t;

/* One project's definitions; immutable once published. */
typedef struct {
    char *project_id;
    char *raw; /* the envelope as stored (served by /flags/definitions) */
    size_t raw_len;
    char etag[48]; /* quoted hex SHA-1 of raw */
    flg_snapshot_t *snap;
    flg_v2_cache_t *v2; /* snap's v2 response fragments (serve/response.h) */
    bool clock_free;    /* no date condition: answers do not depend on the time */
    int refs;
} flg_project_t;

/* cmd: a command client; sub_opts: how to make the subscriber client. */
flg_store_t *flg_store_new(uv_loop_t *loop, cm_redis_t *cmd, const cm_redis_opts_t *sub_opts,
                           uint64_t refresh_ms, cm_metrics_t *metrics);
/* Project id for a project token, or NULL. */
const char *flg_store_project_for_token(const flg_store_t *s, cm_slice_t token);
/* May this bearer read project_id's definitions? It is the project's
 * secret API token (or its backup), or a personal API key the api published
 * with project_id among the projects it reaches; both compared by SHA-256,
 * the secret first. */
bool flg_store_bearer_reads(const flg_store_t *s, cm_slice_t bearer, const char *project_id);
/* The project's current definitions with a reference taken, or NULL. */
flg_project_t *flg_store_definitions(flg_store_t *s, const char *project_id);
void flg_project_release(flg_project_t *p);
bool flg_store_quota_limited(const flg_store_t *s, cm_slice_t token);
/* The project's time zone, or NULL for UTC. Valid until control returns to
 * the loop (a refresh may replace the table). */
const flg_tz_t *flg_store_timezone(const flg_store_t *s, const char *project_id);
/* Installs a project directly (tests, fuzzing): token -> project id, and
 * its definitions envelope. Returns 0, or CM_EINVAL if they do not load.
 * A later full refresh from Redis replaces whatever was put here. */
int flg_store_put_project(flg_store_t *s, const char *token, const char *project_id,
                          const char *envelope, size_t len);
/* True once a full read succeeded; why gets the reason otherwise. */
bool flg_store_ready(const flg_store_t *s, cm_buf_t *why);
/* True when nothing is known to be missing from what the store holds: it
 * is loaded, subscribed to flags:changed, and owes no full re-read. Says
 * nothing about the server's own data (a replica may lag: freshness.h).
 * why gets the reason otherwise. */
bool flg_store_current(const flg_store_t *s, cm_buf_t *why);
/* Before the first full read no token is known, valid or not: a token
 * not found then is not a reason for 401. Answers req 503 not_ready (with
 * Retry-After) and returns true in that case; false once loaded. */
bool flg_store_unloaded(const flg_store_t *s, cm_http_req_t *req);
void flg_store_close(flg_store_t *s, void (*done)(void *ud), void *ud);

#endif
