/*
 * group_types.c - /api/projects/{id}/groups_types/: the mapping from group
 * type index (0-4) to name that group-based flags aggregate by. PostHog
 * makes an entry the first time ingestion sees a group type; the writer
 * will do the same, and until then (and for operators) POST {"group_type":
 * "company"} takes the lowest free index. PostHog's list is a plain array.
 */
#include <stdio.h>
#include <stdlib.h>

#include "publish/publish.h"
#include "resources/resources.h"
#include "store/store.h"

static void write_group_type(cm_json_writer_t *w, api_call_t *call, const cm_db_res_t *res,
                             size_t row)
{
    cm_json_begin_object(w);
    cm_json_key(w, "group_type_index");
    cm_json_int(w, atoll(cm_db_value(res, 0, row, API_GROUP_TYPE_INDEX)));
    cm_json_key(w, "group_type");
    cm_json_str_cstr(w, cm_db_value(res, 0, row, API_GROUP_TYPE_NAME));
    cm_json_key(w, "project_id");
    cm_json_int(w, atoll(call->project_id));
    cm_json_end_object(w);
}

static void on_list(int status, const cm_db_res_t *res, void *ud)
{
    api_respond_array((api_call_t *)ud, status, res, write_group_type);
}

void api_group_types_list(api_call_t *call)
{
    api_store_group_types_list(call->ctx->db, call->project_id, on_list, call);
}

static void on_created(int status, const cm_db_res_t *res, void *ud)
{
    api_call_t *call = ud;
    if (status != 0) {
        api_respond_db_error(call, status, res, "group_type", "This group type is already mapped.");
        return;
    }
    if (cm_db_nrows(res, 0) != 1) {
        api_respond_invalid(call, "group_type", "A project has five group types at most.");
        return;
    }
    api_publisher_kick(call->ctx->publisher);
    api_respond_row(call, 0, res, 201, write_group_type);
}

void api_group_types_create(api_call_t *call)
{
    if (api_call_body(call) != 0)
        return;
    char *name;
    int rc = api_body_string(call, "group_type", 1, 400, NULL, NULL, &name);
    if (rc > 0)
        api_respond_invalid(call, "group_type",
                            "A group type name of 1 to 400 characters is required.");
    if (rc != 0)
        return;
    call->state = name;
    call->state_free = free;
    api_store_group_type_create(call->ctx->db, call->project_id, name, on_created, call);
}
