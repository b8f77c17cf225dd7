/* organizations.c - /api/organizations/: the organizations of the key's user. */
#include <stdio.h>
#include <stdlib.h>

#include "resources/resources.h"
#include "store/store.h"

static void on_orgs(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, NULL, NULL);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    size_t n = cm_db_nrows(res, 0);
    api_page_begin(&w, call, cm_db_value(res, 0, 0, API_ORG_TOTAL));
    for (size_t i = 0; i < n; i++) {
        cm_json_begin_object(&w);
        cm_json_key(&w, "id");
        cm_json_str_cstr(&w, cm_db_value(res, 0, i, API_ORG_ID));
        cm_json_key(&w, "name");
        cm_json_str_cstr(&w, cm_db_value(res, 0, i, API_ORG_NAME));
        cm_json_key(&w, "created_at");
        api_json_time(&w, cm_db_value(res, 0, i, API_ORG_CREATED));
        cm_json_key(&w, "membership_level");
        cm_json_int(&w, atoll(cm_db_value(res, 0, i, API_ORG_LEVEL)));
        cm_json_key(&w, "feature_flags_quota_limited_until");
        const char *until = cm_db_value(res, 0, i, API_ORG_QUOTA_UNTIL);
        if (until)
            cm_json_int(&w, atoll(until));
        else
            cm_json_null(&w);
        cm_json_end_object(&w);
    }
    api_page_end(&w);
    api_respond_json(call, 200, &out);
}

void api_organizations_list(api_call_t *call)
{
    if (api_call_page(call) == 0)
        api_store_orgs_list(call->ctx->db, call->user_id, call->limit_text, call->offset_text,
                            on_orgs, call);
}
