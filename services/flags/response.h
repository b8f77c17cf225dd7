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
#include "eval.h"

void flg_write_v2(cm_json_writer_t *w, const flg_eval_t *e);
/* One payload as both writers print it: the stored JSON string, or any
 * other stored value encoded as a string. defs.c renders them once at load. */
void flg_write_payload(cm_json_writer_t *w, cm_json_t payload);
void flg_write_legacy(cm_json_writer_t *w, const flg_eval_t *e);

#endif
