/*
 * info.c - `api admin bootstrap-info`: `api bootstrap`'s answer again, for
 * whoever lost it: the first organization, its first project's id and
 * public token (phc_, which capture takes) and the first user's email. The
 * password, the project's secret token and the personal API key are stored
 * as hashes only: they cannot be shown again. What remains is said instead
 * (the first key's mask, if it still exists), with the commands that make
 * new ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"
#include "store/store.h"

#define BOOTSTRAP_LABEL "bootstrap" /* store/seed.c's label of the first key */

static struct {
    char org_id[64], org_name[512], project_name[512], token[128], email[256];
    long long project_id;
    bool has_project;
} first;

static void write_json(cm_buf_t *out, const char *key_mask)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "organization_id");
    cm_json_str_cstr(&w, first.org_id);
    cm_json_key(&w, "organization_name");
    cm_json_str_cstr(&w, first.org_name);
    cm_json_key(&w, "project_id");
    if (first.has_project)
        cm_json_int(&w, first.project_id);
    else
        cm_json_null(&w);
    cm_json_key(&w, "project_api_token");
    if (first.has_project)
        cm_json_str_cstr(&w, first.token);
    else
        cm_json_null(&w);
    cm_json_key(&w, "email");
    cm_json_str_cstr(&w, first.email);
    cm_json_key(&w, "personal_api_key");
    cm_json_null(&w); /* only its hash is stored */
    cm_json_key(&w, "bootstrap_key_mask");
    if (key_mask)
        cm_json_str_cstr(&w, key_mask);
    else
        cm_json_null(&w);
    cm_json_end_object(&w);
}

static void write_text(cm_buf_t *out, const char *key_mask)
{
    cm_buf_appendf(out, "organization  %s (%s)\n", first.org_name, first.org_id);
    if (first.has_project)
        cm_buf_appendf(out, "project       %lld (%s), token %s\n", first.project_id,
                       first.project_name, first.token);
    else
        cm_buf_appendf(out, "project       none\n");
    cm_buf_appendf(out, "user          %s\n", first.email);
    cm_buf_appendf(out,
                   "The password, the project's secret token and the personal API key were shown "
                   "once; the store keeps only their hashes. %s%s%s\n"
                   "A new key:      api admin keys create %s\n"
                   "A new password: api admin password %s   (on stdin)",
                   key_mask ? "The first key (" : "The first key was revoked.",
                   key_mask ? key_mask : "", key_mask ? ") still works." : "", first.email,
                   first.email);
}

static void on_keys(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("bootstrap-info", res);
        return;
    }
    const char *mask = NULL;
    for (size_t i = 0; i < cm_db_nrows(res, 0) && mask == NULL; i++)
        if (strcmp(cm_db_value(res, 0, i, API_KEYROW_LABEL), BOOTSTRAP_LABEL) == 0)
            mask = cm_db_value(res, 0, i, API_KEYROW_MASK);
    cm_buf_t out = CM_BUF_INIT;
    if (admin_cmd.json)
        write_json(&out, mask);
    else
        write_text(&out, mask);
    admin_print(&out);
}

static void keys_of(const char *user_id)
{
    api_store_keys_list(admin_cmd.ctx->db, user_id, "1000", "0", on_keys, NULL);
}

/* api_store_summary's tables: organizations (id, name), projects (id,
 * name, api_token), users (email), oldest first. */
static void on_summary(int rc, const cm_db_res_t *res, void *ud)
{
    (void)ud;
    if (rc != 0) {
        admin_fail_db("bootstrap-info", res);
        return;
    }
    if (cm_db_nrows(res, 0) == 0 || cm_db_nrows(res, 2) == 0) {
        admin_fail("the store is empty: `api bootstrap` makes the first organization");
        return;
    }
    snprintf(first.org_id, sizeof(first.org_id), "%s", cm_db_value(res, 0, 0, 0));
    snprintf(first.org_name, sizeof(first.org_name), "%s", cm_db_value(res, 0, 0, 1));
    first.has_project = cm_db_nrows(res, 1) > 0;
    if (first.has_project) {
        first.project_id = atoll(cm_db_value(res, 1, 0, 0));
        snprintf(first.project_name, sizeof(first.project_name), "%s", cm_db_value(res, 1, 0, 1));
        snprintf(first.token, sizeof(first.token), "%s", cm_db_value(res, 1, 0, 2));
    }
    snprintf(first.email, sizeof(first.email), "%s", cm_db_value(res, 2, 0, 0));
    snprintf(admin_cmd.email, sizeof(admin_cmd.email), "%s", first.email);
    admin_with_user(keys_of);
}

void admin_bootstrap_info(void)
{
    api_store_summary(admin_cmd.ctx->db, on_summary, NULL);
}
