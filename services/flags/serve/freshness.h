/*
 * freshness.h - how old the definitions the flags service serves may be.
 *
 * A regional flags fleet reads a Redis replica (FLAGS_REDIS_URL). When the
 * replica restarts, or loses its link to the primary, flags keeps serving
 * the last definitions it has; what it must not do is stay ready forever
 * on data nobody confirms. "Fresh" is measured here, on the loop:
 *
 *   the definitions were current at a moment when the store was loaded,
 *   subscribed to flags:changed and owed no full re-read (flg_store_current),
 *   AND the server it reads answered INFO replication as a primary
 *   (role:master) or as a replica whose master_link_status is up.
 *
 * A probe asks that every tick (a quarter of the bound, 50 ms to 1 s). The
 * staleness is the time since the last tick that found both; past
 * FLAGS_MAX_STALENESS /_ready answers not ready with the reason (the
 * definitions are still served). A server refusing INFO (renamed command)
 * counts as in sync: only our own subscription and reads can be judged.
 */
#ifndef FLG_FRESHNESS_H
#define FLG_FRESHNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cm/buf.h"
#include "cm/metrics.h"
#include "cm/redis.h"
#include "serve/store.h"

typedef struct flg_fresh flg_fresh_t;

/* Reads INFO replication's text: false when the server is a replica whose
 * master_link_status is not "up" (*link then gets the status, "" when the
 * field is missing); true for a primary. Shared by the store's full reads. */
bool flg_info_in_sync(const char *text, size_t len, cm_slice_t *link);

/* cmd: a command client on the server the store reads; max_ms: the bound
 * (0 = none: no probe, always fresh). The clock starts now. Each probe sets
 * the gauge flags_definitions_age_seconds. */
flg_fresh_t *flg_fresh_new(uv_loop_t *loop, cm_redis_t *cmd, const flg_store_t *store,
                           uint64_t max_ms, cm_metrics_t *metrics);
/* True within the bound; why gets the age, the bound and the last reason. */
bool flg_fresh_ok(const flg_fresh_t *f, cm_buf_t *why);
/* Milliseconds since definitions were last confirmed current. */
uint64_t flg_fresh_age_ms(const flg_fresh_t *f);
/* Asynchronous; done(ud) runs once the timer and any probe are finished.
 * Call before the command client is closed. */
void flg_fresh_close(flg_fresh_t *f, void (*done)(void *ud), void *ud);

#endif
