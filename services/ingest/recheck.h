/*
 * recheck.h - unknown tokens asked of Redis before they are refused (the
 * registry's list may be older than the token: see registry.h).
 *
 * Waiting tokens are read in rounds: one HMGET of `projects:tokens` for
 * every token waiting when it is sent, never two at once. A token is
 * answered known by the first round that finds it; unknown by the first
 * round sent after its wait is over. Rounds are sent when a token starts
 * waiting, when a change notice comes, and when the earliest wait ends. A
 * token answered unknown, or retired from the registry's list (a reset
 * token), is answered so at once for NEGATIVE_TTL, unless a later read of
 * the list has it.
 */
#ifndef ING_RECHECK_H
#define ING_RECHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "cm/strset.h"

typedef struct ing_recheck ing_recheck_t;

/* The answer for one waiting token. */
typedef void (*ing_recheck_cb)(void *ud, bool known);
/* Called with every token a round found, so the registry learns it. */
typedef void (*ing_recheck_found_cb)(void *owner, cm_slice_t token);

ing_recheck_t *ing_recheck_new(uv_loop_t *loop, cm_redis_t *redis, uint64_t wait_ms,
                               cm_metrics_t *metrics, ing_recheck_found_cb found, void *owner);
/* cb may run before this returns (a cached answer, Redis not connected). */
void ing_recheck_ask(ing_recheck_t *c, cm_slice_t token, ing_recheck_cb cb, void *ud);
/* The api announced a change: ask again now for every waiting token. */
void ing_recheck_changed(ing_recheck_t *c);
/* A token the registry's list no longer has: unknown at once, no wait. */
void ing_recheck_retired(ing_recheck_t *c, cm_slice_t token);
/* A new list was read: tokens it has are no longer answered unknown. */
void ing_recheck_forget(ing_recheck_t *c, const cm_strset_t *known);
/* Answers every waiting token unknown; done(ud) once nothing is pending. */
void ing_recheck_close(ing_recheck_t *c, void (*done)(void *ud), void *ud);

#endif
