/*
 * publish.h - what the flags fleet reads, rewritten in Redis from the store.
 *
 * Every change that the fleet must see queues its project in the store's
 * outbox inside the change's own transaction. The publisher drains the
 * outbox oldest first: for each project it reads the project, its flags,
 * group types and cohorts, rewrites that project's entries of
 * proto/redis-keys.md in one MULTI/EXEC, then PUBLISHes flags:changed, and
 * only after Redis answered removes the entries from the outbox. With Redis
 * down nothing is lost: changes commit, the outbox keeps them, and the
 * publisher retries every PUBLISH_RETRY until Redis is back, in order.
 */
#ifndef API_PUBLISH_H
#define API_PUBLISH_H

#include <stdbool.h>

#include "api.h"

api_publisher_t *api_publisher_new(api_ctx_t *ctx);
/* Something was queued: drain soon (cheap when already draining). */
void api_publisher_kick(api_publisher_t *p);
/* Queues every project and drains (start-up: the fleet may have missed
 * anything while the api was away). */
void api_publisher_republish_all(api_publisher_t *p);
/* True when the last drain reached an empty outbox. */
bool api_publisher_idle(const api_publisher_t *p);
void api_publisher_close(api_publisher_t *p, void (*done)(void *ud), void *ud);

#endif
