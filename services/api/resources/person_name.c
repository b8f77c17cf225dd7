/*
 * person_name.c - the persons list's `name` (person_name.h says the rule).
 * The properties are parsed once per person of a page (at most the page's
 * limit, each bounded by the store's property size), on the loop like the
 * rest of the page's writing.
 */
#include <string.h>

#include "cm/json.h"
#include "resources/person_name.h"

/* PostHog's PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES, in its order. */
static const char *const DISPLAY_PROPERTIES[] = {"email",    "Email",    "name",    "Name",
                                                 "username", "Username", "UserName"};

bool api_person_id_looks_anonymous(const char *id)
{
    int groups = 0;
    size_t run = 0;
    for (const char *p = id;; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) {
            run++;
            continue;
        }
        if (run == 0)
            return false; /* an empty group, or anything else */
        groups++;
        run = 0;
        if (*p == '\0')
            return groups == 5;
        if (*p != '-' || groups == 5)
            return false;
    }
}

/* Python's truth of a JSON value, as PostHog's `if properties.get(key)`. */
static bool truthy(cm_json_t v)
{
    double d;
    bool b;
    switch (cm_json_type(v)) {
    case CM_JSON_STRING: return cm_json_str_inner(v).len > 0;
    case CM_JSON_NUMBER: return cm_json_as_double(v, &d) != 0 || d != 0;
    case CM_JSON_BOOL: return cm_json_as_bool(v, &b) == 0 && b;
    case CM_JSON_ARRAY:
    case CM_JSON_OBJECT: return cm_json_len(v) > 0;
    default: return false;
    }
}

void api_person_name_write(cm_json_writer_t *w, const char *properties, const char *const *ids,
                           size_t nids, const char *person_id)
{
    cm_json_doc_t *doc = NULL;
    if (properties && cm_json_parse(properties, strlen(properties), NULL, &doc, NULL) == 0) {
        cm_json_t root = cm_json_root(doc);
        for (size_t i = 0; i < sizeof(DISPLAY_PROPERTIES) / sizeof(DISPLAY_PROPERTIES[0]); i++) {
            cm_json_t v = cm_json_get(root, DISPLAY_PROPERTIES[i]);
            if (truthy(v)) {
                cm_json_raw_value_compact(w, cm_json_raw(v));
                cm_json_doc_free(doc);
                return;
            }
        }
    }
    cm_json_doc_free(doc);
    for (size_t i = 0; i < nids; i++)
        if (!api_person_id_looks_anonymous(ids[i])) {
            cm_json_str_cstr(w, ids[i]);
            return;
        }
    cm_json_str_cstr(w, nids ? ids[0] : person_id);
}
