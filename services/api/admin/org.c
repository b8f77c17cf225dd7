/*
 * org.c - `api admin org add-member ORG EMAIL ROLE`: gives an existing user
 * access to an existing organization's projects at PostHog's membership
 * levels (member 1, admin 8, owner 15), or changes the level of a member
 * already there. ORG is the organization's id or its name; a name two
 * organizations share is refused (give the id).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"
#include "store/store.h"

static char org_id[64], org_name[512];

static const char *role_of(const char *level)
{
    if (level == NULL)
        return NULL;
    if (strcmp(level, "15") == 0)
        return "owner";
    if (strcmp(level, "8") == 0)
        return "admin";
    return "member";
}

static void on_put(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("org add-member", res);
        return;
    }
    const char *before = cm_db_nrows(res, 0) ? role_of(cm_db_value(res, 0, 0, 0)) : NULL;
    cm_buf_t out = CM_BUF_INIT;
    if (admin_cmd.json) {
        cm_json_writer_t w;
        cm_json_writer_init(&w, &out);
        cm_json_begin_object(&w);
        cm_json_key(&w, "organization_id");
        cm_json_str_cstr(&w, org_id);
        cm_json_key(&w, "organization_name");
        cm_json_str_cstr(&w, org_name);
        cm_json_key(&w, "email");
        cm_json_str_cstr(&w, admin_cmd.email);
        cm_json_key(&w, "role");
        cm_json_str_cstr(&w, admin_cmd.role);
        cm_json_key(&w, "level");
        cm_json_int(&w, atoi(admin_cmd.level));
        cm_json_key(&w, "previous_role");
        if (before)
            cm_json_str_cstr(&w, before);
        else
            cm_json_null(&w);
        cm_json_end_object(&w);
    } else if (before) {
        cm_buf_appendf(&out, "%s was %s of %s (%s); now %s", admin_cmd.email, before, org_name,
                       org_id, admin_cmd.role);
    } else {
        cm_buf_appendf(&out, "%s is now %s of %s (%s)", admin_cmd.email, admin_cmd.role, org_name,
                       org_id);
    }
    admin_print(&out);
}

static void put_member(const char *user_id)
{
    api_store_member_put(admin_cmd.ctx->db, org_id, user_id, admin_cmd.level, on_put, NULL);
}

static void on_org(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("org add-member", res);
        return;
    }
    size_t n = cm_db_nrows(res, 0);
    if (n == 0) {
        admin_fail("no organization has the id or name %s (`api admin bootstrap-info` shows "
                   "the first)",
                   admin_cmd.target);
        return;
    }
    if (n > 1) {
        admin_fail("more than one organization is named %s (%s, %s...): give its id",
                   admin_cmd.target, cm_db_value(res, 0, 0, API_ORGFIND_ID),
                   cm_db_value(res, 0, 1, API_ORGFIND_ID));
        return;
    }
    snprintf(org_id, sizeof(org_id), "%s", cm_db_value(res, 0, 0, API_ORGFIND_ID));
    snprintf(org_name, sizeof(org_name), "%s", cm_db_value(res, 0, 0, API_ORGFIND_NAME));
    admin_with_user(put_member);
}

void admin_org_add_member(void)
{
    api_store_org_find(admin_cmd.ctx->db, admin_cmd.target, on_org, NULL);
}
