/*
 * organizations.c - /api/organizations/: the key's user's organizations, and
 * the feature flag quota an admin sets on one (PATCH
 * {"feature_flags_quota_limited_until": unix seconds | null}): while it
 * holds, every project of the organization answers /flags with
 * quotaLimited ["feature_flags"] and no flags.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cm/err.h"
#include "cm/uuid.h"
#include "publish/publish.h"
#include "resources/resources.h"
#include "store/store.h"

static void write_org(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res, size_t i)
{
    (void)call;
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_str_cstr(w, cm_db_value(res, 0, i, API_ORG_ID));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, cm_db_value(res, 0, i, API_ORG_NAME));
    cm_json_key(w, "created_at");
    api_json_time(w, cm_db_value(res, 0, i, API_ORG_CREATED));
    cm_json_key(w, "membership_level");
    cm_json_int(w, atoll(cm_db_value(res, 0, i, API_ORG_LEVEL)));
    cm_json_key(w, "feature_flags_quota_limited_until");
    const char *until = cm_db_value(res, 0, i, API_ORG_QUOTA_UNTIL);
    if (until)
        cm_json_int(w, atoll(until));
    else
        cm_json_null(w);
    cm_json_end_object(w);
}

static void on_orgs(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_rows(ud, status, res, API_ORG_TOTAL, write_org);
}

void api_organizations_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_orgs_list(call->ctx->db, call->user_id, call->limit_text, call->offset_text,
                            on_orgs, call);
}

static void on_updated(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    if (cm_db_nrows(res, 0) != 1) { /* not an admin of it, or no such organization */
        api_respond_not_found(call);
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    api_respond_row(call, 0, res, 200, write_org);
}

void api_organizations_update(api_call_t *call)
{
    cm_slice_t id = cm_http_req_param(call->req, "org_id");
    if (!cm_uuid_valid(id.p, id.len)) {
        api_respond_not_found(call);
        return;
    }
    if (api_call_body(call) != 0)
        return;
    cm_json_t v = cm_json_get(cm_json_root(call->body), "feature_flags_quota_limited_until");
    int64_t until = 0;
    if (!cm_json_exists(v)) {
        api_respond_invalid(call, NULL,
                            "Nothing to change: feature_flags_quota_limited_until is "
                            "the field organizations take here.");
        return;
    }
    if (!cm_json_is_null(v) &&
        (cm_json_as_int64(v, &until) != CM_OK || until < 0 || until > (1LL << 40))) {
        api_respond_invalid(call, "feature_flags_quota_limited_until",
                            "Expected unix seconds, or null to lift the limit.");
        return;
    }
    char org[CM_UUID_STR_LEN + 1], text[24];
    snprintf(org, sizeof(org), "%.*s", (int)id.len, id.p);
    snprintf(text, sizeof(text), "%lld", (long long)until);
    api_store_org_set_quota(call->ctx->db, org, call->user_id, cm_json_is_null(v) ? NULL : text,
                            on_updated, call);
}
