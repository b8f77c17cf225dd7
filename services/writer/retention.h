/*
 * retention.h - the writer's upkeep of what it stores: the event
 * retention prune (EVENT_RETENTION_DAYS, every EVENT_RETENTION_INTERVAL)
 * and the api's person erasure requests (Redis person_erasures, every
 * PERSON_ERASURE_POLL) applied to the persons store. docs/backups.md.
 */
#ifndef WR_RETENTION_H
#define WR_RETENTION_H

#include "writer.h"

typedef struct wr_retention wr_retention_t;

/* Starts both timers (the prune only when EVENT_RETENTION_DAYS > 0). */
wr_retention_t *wr_retention_start(wr_ctx_t *ctx);
/* Stops the timers; done(ud) runs once nothing of it is in flight (call
 * before closing the stores: a step under way finishes on them). */
void wr_retention_close(wr_retention_t *r, void (*done)(void *ud), void *ud);

#endif
