/*
 * tokens.h - project token -> project id, from the api's `projects:tokens`
 * hash in Redis (proto/redis-keys.md), re-read every TOKENS_REFRESH and on
 * demand when a batch carries a token the copy does not know (a project
 * made a moment ago), at most once a second.
 */
#ifndef WR_TOKENS_H
#define WR_TOKENS_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "cm/redis.h"

typedef struct wr_tokens wr_tokens_t;

wr_tokens_t *wr_tokens_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t refresh_ms);
/* The project id, or 0 for a token the copy does not know. */
long long wr_tokens_get(const wr_tokens_t *t, const char *token);
/* Re-reads the hash now, unless that happened less than a second ago;
 * done(ok, ud) runs once either way (never from inside this call). ok is
 * false when Redis could not be read. */
void wr_tokens_refresh(wr_tokens_t *t, void (*done)(bool ok, void *ud), void *ud);
void wr_tokens_close(wr_tokens_t *t); /* pending done() calls run first with ok = false */

#endif
