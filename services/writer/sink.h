/*
 * sink.h - where a batch ends up once its persons are settled: the event
 * store (events, and the persons, distinct ids and groups that changed),
 * then the Redis copies the flags service reads (persons:<project>:<id>,
 * groups:<project>:<type>:<key>, proto/redis-keys.md).
 */
#ifndef WR_SINK_H
#define WR_SINK_H

#include <stddef.h>

#include "event.h"
#include "persons.h"
#include "writer.h"

/* status 0 once everything is written; otherwise the first failure (err is
 * valid during the call). inserted: events the store did not have yet. */
typedef void (*wr_sink_cb)(int status, const char *err, size_t inserted, void *ud);

/* events, n and st must stay alive until done runs. */
void wr_sink_write(wr_ctx_t *ctx, const wr_event_t *events, size_t n, const wr_state_t *st,
                   int64_t now_ms, wr_sink_cb done, void *ud);

#endif
