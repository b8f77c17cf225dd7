/*
 * registry.h - what ingest knows about projects, from Redis.
 *
 * Two lists, each re-read whole every refresh interval and swapped in
 * (proto/redis-keys.md has the layout):
 *   - known project tokens (hash `projects:tokens`, token -> project id),
 *     written by the API service; while it is empty or unreadable every
 *     well-formed token is accepted (fail open), as PostHog capture does;
 *   - quota-limited tokens (sorted set `@posthog/quota-limits/events`,
 *     score = unix seconds until which the limit holds): their events are
 *     dropped and counted, and the client still gets 200.
 * Both are also re-read at once when the api announces a change on
 * `flags:changed` (a project made, a token reset), so a reset token is
 * refused as soon as the api has published it.
 *
 * Lookups never wait on Redis. A token the list does not hold may be newer
 * than the list (the api answers a project's creation before it publishes
 * the token): ing_registry_recheck() asks Redis for it before the caller
 * refuses it (see recheck.c).
 */
#ifndef ING_REGISTRY_H
#define ING_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "recheck.h"

typedef struct ing_registry ing_registry_t;

typedef enum { ING_TOKEN_KNOWN, ING_TOKEN_UNKNOWN, ING_TOKEN_UNCHECKED } ing_token_state_t;

typedef struct {
    cm_redis_t *redis;     /* commands; NULL: nothing is known and nothing is limited */
    const char *redis_url; /* for the subscriber to flags:changed */
    uint64_t refresh_ms;
    uint64_t recheck_wait_ms; /* how long an unknown token may wait to appear */
    cm_metrics_t *metrics;    /* may be NULL */
} ing_registry_opts_t;

ing_registry_t *ing_registry_new(uv_loop_t *loop, const ing_registry_opts_t *o);
ing_token_state_t ing_registry_token(const ing_registry_t *r, cm_slice_t token);
bool ing_registry_quota_limited(const ing_registry_t *r, cm_slice_t token);

/*
 * Asks Redis whether a token the registry does not know is a project's
 * now. The token waits, never on the loop, until Redis has it (known), or
 * until a read made after recheck_wait_ms has passed still lacks it
 * (unknown); a change notice from the api re-reads at once. Reads are
 * shared: at most one HMGET is in flight, for every waiting token. A token
 * found unknown is answered at once for the next few seconds (a negative
 * cache, emptied by every change notice). cb may run before this returns
 * (a cached answer, Redis not connected).
 */
void ing_registry_recheck(ing_registry_t *r, cm_slice_t token, ing_recheck_cb cb, void *ud);

/* Stops refreshing; frees once its handles are closed and no reply is
 * pending. Tokens still waiting are answered unknown. */
void ing_registry_close(ing_registry_t *r);

#endif
