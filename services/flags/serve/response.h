/*
 * response.h - the evaluation results as the /flags response body.
 *
 * Both writers add members to a JSON object the caller has opened (the
 * caller adds requestId, evaluatedAt, quotaLimited, config, ...):
 *   v=2:    "errorsWhileComputingFlags", "flags": {key: {key, enabled,
 *           variant, reason{code, condition_index, description},
 *           metadata{id, version, description, payload, has_experiment}}}
 *   legacy: "errorsWhileComputingFlags", "featureFlags": {key: true|false|
 *           "variant"}, "featureFlagPayloads": {key: payload} (only flags
 *           that have one)
 * Flags that failed or were not asked for are left out. A payload is the
 * JSON-encoded string PostHog stores; a payload stored as another JSON type
 * is encoded to a string on the way out.
 */
#ifndef FLG_RESPONSE_H
#define FLG_RESPONSE_H

#include "cm/json.h"
#include "core/eval.h"

/*
 * The constant parts of every v2 entry of one snapshot, rendered once when
 * the snapshot is published (the writer puts thousands of these out a
 * second): per flag
 *   head  "<key>":{"key":"<key>","enabled":
 *   meta  ,"metadata":{"id":N,"version":N,"description":null,"payload":
 *   tail  ,"has_experiment":B}}
 * and each stored payload as the writer prints it. It belongs to whoever
 * owns the snapshot (serve/store.c keeps it beside it in flg_project_t) and
 * must not outlive it: payloads are found by where they sit in its document.
 */
typedef struct flg_v2_cache flg_v2_cache_t;

flg_v2_cache_t *flg_v2_cache_new(const flg_snapshot_t *s);
void flg_v2_cache_free(flg_v2_cache_t *c); /* NULL is fine */

/* cache: built from e->snap, or NULL to render every entry afresh (the same
 * bytes, more slowly). */
void flg_write_v2(cm_json_writer_t *w, const flg_eval_t *e, const flg_v2_cache_t *cache);
/* One payload as both writers print it: the stored JSON string, or any
 * other stored value encoded as a string. */
void flg_write_payload(cm_json_writer_t *w, cm_json_t payload);
void flg_write_legacy(cm_json_writer_t *w, const flg_eval_t *e);

#endif
