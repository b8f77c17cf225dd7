/*
 * materialize.h - the tables of materialized endpoint versions
 * (docs/endpoints.md, Materialization).
 *
 * Every MATERIALIZE_CHECK the materializer reads the versions to look at
 * (api_store_mat_work). One that is due (never built, or its
 * sync_frequency past since the last build) is claimed (Running; one api
 * process wins), its table's query (query/materialize.c) printed for the
 * event store without a page and written as a new table (CREATE TABLE
 * ... AS SELECT, on the store's own thread or server, never the loop);
 * the version then points at it (Completed, with what a read needs to
 * know) and the previous table is dropped. A failure leaves the version
 * Failed with the store's message, tried again a period later; reads fall
 * back to running the query. A version no longer materialized has its
 * table dropped. One version at a time.
 */
#ifndef API_MATERIALIZE_H
#define API_MATERIALIZE_H

#include <stdint.h>

#include "api.h"

typedef struct api_materializer api_materializer_t;

api_materializer_t *api_materializer_new(api_ctx_t *ctx, uint64_t every_ms);
/* Look now (a version was made materialized); cheap when busy. */
void api_materializer_kick(api_materializer_t *m);
/* Lets the version in progress finish, then done(ud). */
void api_materializer_close(api_materializer_t *m, void (*done)(void *ud), void *ud);

/* The period of a sync_frequency ("15min", "30min", "1hour", "6hour",
 * "12hour", "24hour", "7day") in ms; 0 for anything else. */
int64_t api_materialize_period_ms(const char *sync_frequency);

#endif
