/*
 * definitions.c - a project's definitions envelope, as the flags service
 * serves it from /flags/definitions (docs/flags.md).
 *
 * Flags are stored as PostHog stores them: a flag dependency filter
 * ("type": "flag") holds the id of the flag it depends on. The envelope
 * carries what the SDKs evaluate instead: the key of that flag, and
 * "dependency_chain", the keys in the order they must be evaluated, ending
 * with the dependency itself; [] when it is missing or in a cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"
#include "flagdefs/flagdefs.h"
#include "publish/publish_int.h"

/* Table 1 of api_store_fleet_project: id, key, name, filters, active, eec,
 * version, runtime, contexts, bucketing. */
enum {
    F_ID,
    F_KEY,
    F_NAME,
    F_FILTERS,
    F_ACTIVE,
    F_EEC,
    F_VERSION,
    F_RUNTIME,
    F_CONTEXTS,
    F_BUCKETING
};

static void write_chain(cm_json_writer_t *w, api_flagdefs_graph_t *g, long long id)
{
    const char *chain[256];
    size_t len = api_flagdefs_graph_chain(g, id, chain, 256);
    cm_json_begin_array(w);
    for (size_t i = 0; i < len; i++)
        cm_json_str_cstr(w, chain[i]);
    cm_json_end_array(w);
}

/* A member's name, unescaped (cm_json_key_s would escape an escape again). */
static void copy_key(cm_json_writer_t *w, cm_json_t k, cm_slice_t *name)
{
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s;
    if (cm_json_as_str(k, &scratch, &s) != 0)
        s = cm_json_str_inner(k);
    cm_json_key_s(w, s);
    *name = cm_json_str_inner(k);
    cm_buf_free(&scratch);
}

static void copy_property(cm_json_writer_t *w, cm_json_t p, api_flagdefs_graph_t *g)
{
    if (!cm_json_str_eq(cm_json_get(p, "type"), cm_slice_from_cstr("flag"))) {
        cm_json_value(w, p);
        return;
    }
    long long id = 0;
    int64_t n;
    cm_json_t key = cm_json_get(p, "key");
    if (cm_json_as_int64(key, &n) == 0)
        id = n;
    else if (cm_json_str_inner(key).p)
        id = atoll(cm_json_str_inner(key).p); /* digits, checked when stored */
    const char *target = api_flagdefs_graph_key(g, id);
    cm_json_iter_t it = cm_json_iter(p);
    cm_json_t k, v;
    cm_json_begin_object(w);
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t name = cm_json_str_inner(k);
        if (cm_slice_eq_cstr(name, "key") || cm_slice_eq_cstr(name, "dependency_chain"))
            continue;
        copy_key(w, k, &name);
        cm_json_value(w, v);
    }
    cm_json_key(w, "key");
    if (target)
        cm_json_str_cstr(w, target);
    else
        cm_json_value(w, key);
    cm_json_key(w, "dependency_chain");
    write_chain(w, g, id);
    cm_json_end_object(w);
}

static void copy_condition(cm_json_writer_t *w, cm_json_t c, api_flagdefs_graph_t *g)
{
    if (cm_json_type(c) != CM_JSON_OBJECT) {
        cm_json_value(w, c);
        return;
    }
    cm_json_iter_t it = cm_json_iter(c);
    cm_json_t k, v;
    cm_json_begin_object(w);
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t name;
        copy_key(w, k, &name);
        if (cm_slice_eq_cstr(name, "properties") && cm_json_type(v) == CM_JSON_ARRAY) {
            cm_json_iter_t pit = cm_json_iter(v);
            cm_json_t p;
            cm_json_begin_array(w);
            while (cm_json_next(&pit, NULL, &p))
                copy_property(w, p, g);
            cm_json_end_array(w);
        } else {
            cm_json_value(w, v);
        }
    }
    cm_json_end_object(w);
}

static void copy_conditions(cm_json_writer_t *w, cm_json_t list, api_flagdefs_graph_t *g)
{
    cm_json_iter_t it = cm_json_iter(list);
    cm_json_t c;
    cm_json_begin_array(w);
    while (cm_json_next(&it, NULL, &c))
        copy_condition(w, c, g);
    cm_json_end_array(w);
}

static void copy_filters(cm_json_writer_t *w, const char *text, api_flagdefs_graph_t *g)
{
    cm_json_doc_t *doc = NULL;
    if (text == NULL || cm_json_parse(text, strlen(text), NULL, &doc, NULL) != 0 ||
        cm_json_type(cm_json_root(doc)) != CM_JSON_OBJECT) {
        cm_json_raw_value(w, cm_slice_from_cstr(text ? text : "{}"));
        cm_json_doc_free(doc);
        return;
    }
    cm_json_iter_t it = cm_json_iter(cm_json_root(doc));
    cm_json_t k, v;
    cm_json_begin_object(w);
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t name;
        copy_key(w, k, &name);
        bool conditions = cm_slice_eq_cstr(name, "groups") ||
                          cm_slice_eq_cstr(name, "super_groups") ||
                          cm_slice_eq_cstr(name, "holdout_groups");
        if (conditions && cm_json_type(v) == CM_JSON_ARRAY)
            copy_conditions(w, v, g);
        else
            cm_json_value(w, v);
    }
    cm_json_end_object(w);
    cm_json_doc_free(doc);
}

static void write_flag(cm_json_writer_t *w, const cm_db_res_t *res, size_t i, long long team,
                       api_flagdefs_graph_t *g)
{
#define V(col) cm_db_value(res, 1, i, col)
    cm_json_begin_object(w);
    cm_json_key(w, "id");
    cm_json_int(w, atoll(V(F_ID)));
    cm_json_key(w, "team_id");
    cm_json_int(w, team);
    cm_json_key(w, "key");
    cm_json_str_cstr(w, V(F_KEY));
    cm_json_key(w, "name");
    cm_json_str_cstr(w, V(F_NAME));
    cm_json_key(w, "filters");
    copy_filters(w, V(F_FILTERS), g);
    cm_json_key(w, "deleted");
    cm_json_boolean(w, false);
    cm_json_key(w, "active");
    cm_json_boolean(w, atoi(V(F_ACTIVE)) != 0);
    cm_json_key(w, "ensure_experience_continuity");
    cm_json_boolean(w, atoi(V(F_EEC)) != 0);
    cm_json_key(w, "has_encrypted_payloads");
    cm_json_boolean(w, false);
    cm_json_key(w, "version");
    cm_json_int(w, atoll(V(F_VERSION)));
    cm_json_key(w, "evaluation_runtime");
    cm_json_str_cstr(w, V(F_RUNTIME));
    cm_json_key(w, "evaluation_contexts");
    cm_json_raw_value(w, cm_slice_from_cstr(V(F_CONTEXTS)));
    cm_json_key(w, "bucketing_identifier");
    if (V(F_BUCKETING))
        cm_json_str_cstr(w, V(F_BUCKETING));
    else
        cm_json_null(w);
    cm_json_end_object(w);
#undef V
}

void api_publish__envelope(cm_buf_t *out, const cm_db_res_t *res, const char *project_id)
{
    size_t nflags = cm_db_nrows(res, 1);
    api_flagdefs_graph_t *g = api_flagdefs_graph_new(nflags);
    for (size_t i = 0; i < nflags; i++) {
        api_flagdefs_refs_t refs;
        api_flagdefs_refs_of(cm_db_value(res, 1, i, F_FILTERS), &refs);
        api_flagdefs_graph_add(g, atoll(cm_db_value(res, 1, i, F_ID)),
                               cm_db_value(res, 1, i, F_KEY), refs.flags, refs.nflags);
    }
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    cm_json_key(&w, "flags");
    cm_json_begin_array(&w);
    for (size_t i = 0; i < nflags; i++)
        write_flag(&w, res, i, atoll(project_id), g);
    cm_json_end_array(&w);
    cm_json_key(&w, "group_type_mapping");
    cm_json_begin_object(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 2); i++) {
        cm_json_key(&w, cm_db_value(res, 2, i, 0));
        cm_json_str_cstr(&w, cm_db_value(res, 2, i, 1));
    }
    cm_json_end_object(&w);
    cm_json_key(&w, "cohorts");
    cm_json_begin_object(&w);
    for (size_t i = 0; i < cm_db_nrows(res, 3); i++) {
        cm_json_key(&w, cm_db_value(res, 3, i, 0));
        cm_json_raw_value(&w, cm_slice_from_cstr(cm_db_value(res, 3, i, 1)));
    }
    cm_json_end_object(&w);
    cm_json_end_object(&w);
    api_flagdefs_graph_free(g);
}
