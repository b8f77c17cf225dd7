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
 * Lookups never wait on Redis.
 */
#ifndef ING_REGISTRY_H
#define ING_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/redis.h"

typedef struct ing_registry ing_registry_t;

typedef enum { ING_TOKEN_KNOWN, ING_TOKEN_UNKNOWN, ING_TOKEN_UNCHECKED } ing_token_state_t;

/* redis may be NULL: then nothing is known and nothing is limited. */
ing_registry_t *ing_registry_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t refresh_ms,
                                 cm_metrics_t *metrics);
ing_token_state_t ing_registry_token(const ing_registry_t *r, cm_slice_t token);
bool ing_registry_quota_limited(const ing_registry_t *r, cm_slice_t token);
/* Stops refreshing; frees once the timer is closed and no reply is pending. */
void ing_registry_close(ing_registry_t *r);

#endif
