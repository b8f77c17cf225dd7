/*
 * admit.h - admission of a project's reads of the event store, so
 * that one tenant cannot hold the store for the others (docs/endpoints.md
 * "Sharing the event store").
 *
 * Every read a request makes of the event store (an endpoint's or an
 * insight's queries, a materialized table's read, the events and persons
 * lists) goes through api_query_select: at most QUERY_CONCURRENCY_PER_PROJECT
 * of one project's reads run at once; up to QUERY_QUEUE_PER_PROJECT more
 * wait, oldest first; past that the read fails at once with CM_EAGAIN
 * (api_query_refused answers 429 with Retry-After). The time limit counts
 * from the request's first byte, waiting included: a waiting read whose
 * time passes fails with CM_ETIMEDOUT and never runs, and a read that
 * starts gets only what is left (ClickHouse's max_execution_time, SQLite's
 * interrupt). Background work (the materializer) is not admitted here.
 */
#ifndef API_HTTP_ADMIT_H
#define API_HTTP_ADMIT_H

#include "http/http.h"

/* The limits of ctx->cfg; NULL never (allocation aborts). */
api_admit_t *api_admit_new(api_ctx_t *ctx);
/* Waiting reads fail with CM_EUNAVAIL now; the admission is freed once
 * the running ones have ended (their callbacks run as usual). */
void api_admit_close(api_admit_t *a);

/*
 * cm_evstore_select on call's project (call->project_id) once admitted.
 * q->timeout_ms is the budget counted from the request's first byte (0:
 * none). q is copied. cb runs exactly once, on the loop, never from inside
 * this call, with the store's status or CM_EAGAIN (the project's queue is
 * full), CM_ETIMEDOUT (the budget passed, maybe while waiting) or
 * CM_EUNAVAIL (the service is closing).
 */
void api_query_select(api_call_t *call, const cm_evstore_select_t *q, cm_evstore_query_cb cb,
                      void *ud);

/* QUERY_TIMEOUT: a request's budget for its reads of the event store. */
unsigned api_query_timeout_ms(const api_call_t *call);

/* status CM_EAGAIN answered (429, Retry-After, a JSON detail): true. */
bool api_query_refused(api_call_t *call, int status);

#endif
