/*
 * materializable.c - whether an endpoint version's query can be
 * materialized (PostHog's can_materialize, notes section 1), for the
 * endpoint's "materialization" block. The rule for variables is the query
 * compiler's (query/materialize.c). Building and refreshing the tables is
 * not here yet (docs/endpoints.md, Materialization).
 */
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "insights/insights.h"
#include "query/query.h"
#include "endpoints/endpoints_int.h"

static const char SUPPORTED[] = "FunnelsQuery, HogQLQuery, LifecycleQuery, PathsQuery, "
                                "RetentionQuery, StickinessQuery, TrendsQuery";

bool api_endpoints__can_materialize(const char *query_json, cm_buf_t *reason)
{
    cm_json_doc_t *doc = NULL;
    bool ok = false;
    if (query_json == NULL ||
        cm_json_parse(query_json, strlen(query_json), NULL, &doc, NULL) != 0) {
        cm_buf_append_cstr(reason, "Query is empty or invalid.");
        return false;
    }
    cm_json_t q = cm_json_root(doc), kind = cm_json_get(q, "kind");
    if (api_insight_kind(q)) {
        ok = true; /* several breakdowns too (PostHog's current rule): each a required variable */
    } else if (cm_json_str_eq(kind, CM_SLICE_LIT("HogQLQuery"))) {
        cm_buf_t scratch = CM_BUF_INIT, why = CM_BUF_INIT;
        cm_slice_t text;
        api_query_t *hq = NULL;
        api_query_mat_t m;
        if (cm_json_as_str(cm_json_get(q, "query"), &scratch, &text) != 0 || text.len == 0 ||
            api_query_parse(text.p, text.len, &hq, &why) != 0) {
            cm_buf_append_cstr(reason, "Query is empty or invalid.");
        } else if (api_query_materialize(hq, &m, &why) != 0) {
            cm_buf_appendf(reason, "Variables not supported: %.*s", (int)why.len, why.p);
        } else {
            api_query_mat_free(&m);
            ok = true;
        }
        api_query_free(hq);
        cm_buf_free(&scratch);
        cm_buf_free(&why);
    } else {
        cm_slice_t k = cm_json_str_inner(kind);
        cm_buf_appendf(reason, "Query type '%.*s' cannot be materialized. Supported types: %s",
                       (int)(k.len > 40 ? 40 : k.len), k.p ? k.p : "", SUPPORTED);
    }
    cm_json_doc_free(doc);
    return ok;
}
