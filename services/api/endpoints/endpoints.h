/*
 * endpoints.h - saved queries by name (docs/endpoints.md): the routes of
 * /api/projects/{id}/endpoints/ and the materializer that keeps the
 * tables of materialized versions. Inside the folder, endpoints_int.h.
 *
 * The materializer (materializer.c, docs/endpoints.md, Materialization):
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
#ifndef API_ENDPOINTS_H
#define API_ENDPOINTS_H

#include <stdint.h>

#include "api.h"
#include "http/http.h"

typedef struct api_materializer api_materializer_t;

/* crud.c, write.c, run.c, openapi.c: /api/projects/{id}/endpoints/ */
void api_endpoints_list(api_call_t *call);
void api_endpoints_create(api_call_t *call);
void api_endpoints_retrieve(api_call_t *call);
void api_endpoints_update(api_call_t *call); /* PATCH, PUT; ?version=N */
void api_endpoints_delete(api_call_t *call);
void api_endpoints_versions(api_call_t *call);               /* versions/ and versions/{version}/ */
void api_endpoints_run(api_call_t *call);                    /* GET or POST .../{name}/run */
void api_endpoints_openapi(api_call_t *call);                /* .../{name}/openapi.json */
void api_endpoints_materialization_status(api_call_t *call); /* .../{name}/materialization_status */

/* run_hogql.c: the memo of compiled runs (a run's cache key without its
 * compile) is the process's; main frees it at exit. */
void api_endpoints_memo_free(void);

api_materializer_t *api_materializer_new(api_ctx_t *ctx, uint64_t every_ms);
/* Look now (a version was made materialized); cheap when busy. */
void api_materializer_kick(api_materializer_t *m);
/* Lets the version in progress finish, then done(ud). */
void api_materializer_close(api_materializer_t *m, void (*done)(void *ud), void *ud);

/* The period of a sync_frequency ("15min", "30min", "1hour", "6hour",
 * "12hour", "24hour", "7day") in ms; 0 for anything else. */
int64_t api_endpoints_period_ms(const char *sync_frequency);

#endif
