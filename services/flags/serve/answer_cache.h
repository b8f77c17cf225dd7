/*
 * answer_cache.h - rendered /flags answers reused for identical requests.
 *
 * An answer's flags part (from '{' through the last flag, the object left
 * open) is a pure function of the project's definitions, the request body,
 * the stored person and groups, the GeoIP properties and the runtime the
 * headers imply, as long as nothing in the definitions reads the clock
 * (date conditions) and the evaluation had no errors. route_flags.c builds
 * a key of exactly those inputs; the envelope after them (requestId,
 * evaluatedAt, config) is written afresh for every request.
 *
 * Bounded by bytes (FLAGS_ANSWER_CACHE): when an answer would not fit, the
 * whole table is emptied, so memory never passes the bound and a working
 * set that fits stays warm. Loop thread only.
 */
#ifndef FLG_ANSWER_CACHE_H
#define FLG_ANSWER_CACHE_H

#include <stddef.h>

#include "cm/buf.h"
#include "cm/metrics.h"

typedef struct flg_answer_cache flg_answer_cache_t;

/* NULL when max_bytes is 0 (the cache is off; every call accepts NULL). */
flg_answer_cache_t *flg_answer_cache_new(size_t max_bytes, cm_metrics_t *metrics);
void flg_answer_cache_free(flg_answer_cache_t *c);

/* The answer stored under key, or a slice with p == NULL. Valid until the
 * next put. */
cm_slice_t flg_answer_cache_get(flg_answer_cache_t *c, cm_slice_t key);
/* Stores a copy of answer under key (replacing an equal key's). */
void flg_answer_cache_put(flg_answer_cache_t *c, cm_slice_t key, cm_slice_t answer);

/* Appends one length-prefixed field to a key, so no two different field
 * lists make the same key. */
void flg_answer_key_add(cm_buf_t *key, cm_slice_t field);

#endif
