/* variables.c - see variables.h. */
#include "query/variables.h"

#include <stdio.h>
#include <string.h>

static const char *const names[] = {"String", "Number", "Boolean", "List", "Date"};

int api_variable_type(const char *name)
{
    for (int i = 0; i < 5; i++)
        if (name != NULL && strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *api_variable_schema_type(int type)
{
    switch (type) {
    case API_VAR_NUMBER: return "number";
    case API_VAR_BOOLEAN: return "boolean";
    case API_VAR_LIST: return "array";
    default: return "string";
    }
}

static bool is_date(cm_slice_t s)
{
    /* YYYY-MM-DD, then maybe a time: what both stores read as a date */
    if (s.len < 10)
        return false;
    for (int i = 0; i < 10; i++) {
        bool dash = i == 4 || i == 7;
        if (dash ? s.p[i] != '-' : (s.p[i] < '0' || s.p[i] > '9'))
            return false;
    }
    return s.len == 10 || s.p[10] == ' ' || s.p[10] == 'T';
}

bool api_variable_fits(int type, cm_json_t v, char *why, size_t size)
{
    cm_json_type_t t = cm_json_type(v);
    if (t == CM_JSON_NULL)
        return true;
    switch (type) {
    case API_VAR_STRING:
        if (t == CM_JSON_STRING)
            return true;
        snprintf(why, size, "Expected a string.");
        return false;
    case API_VAR_NUMBER:
        if (t == CM_JSON_NUMBER)
            return true;
        snprintf(why, size, "Expected a number.");
        return false;
    case API_VAR_BOOLEAN:
        if (t == CM_JSON_BOOL)
            return true;
        snprintf(why, size, "Expected a boolean.");
        return false;
    case API_VAR_LIST:
        if (t == CM_JSON_STRING || t == CM_JSON_NUMBER)
            return true;
        if (t == CM_JSON_ARRAY) {
            cm_json_iter_t it = cm_json_iter(v);
            cm_json_t item;
            while (cm_json_next(&it, NULL, &item))
                if (cm_json_type(item) != CM_JSON_STRING && cm_json_type(item) != CM_JSON_NUMBER) {
                    snprintf(why, size, "Expected a list of strings or numbers.");
                    return false;
                }
            return true;
        }
        snprintf(why, size, "Expected a list of strings or numbers.");
        return false;
    case API_VAR_DATE: {
        cm_slice_t s = cm_json_str_inner(v);
        if (t == CM_JSON_STRING && is_date(s))
            return true;
        snprintf(why, size, "Expected a date (YYYY-MM-DD).");
        return false;
    }
    }
    snprintf(why, size, "Unknown variable type.");
    return false;
}

static void scalar(cm_json_t v, cm_arena_t *arena, api_query_value_t *out)
{
    double d;
    int64_t i;
    bool b;
    cm_buf_t scratch = CM_BUF_INIT;
    cm_slice_t s;
    memset(out, 0, sizeof(*out));
    switch (cm_json_type(v)) {
    case CM_JSON_STRING:
        out->kind = API_QV_STRING;
        if (cm_json_as_str(v, &scratch, &s) == 0) {
            s = cm_arena_dup(arena, s);
            out->s = s.p;
            out->len = s.len;
        }
        break;
    case CM_JSON_NUMBER:
        if (cm_json_as_int64(v, &i) == 0) {
            out->kind = API_QV_INT;
            out->i = i;
        } else if (cm_json_as_double(v, &d) == 0) {
            out->kind = API_QV_FLOAT;
            out->f = d;
        }
        break;
    case CM_JSON_BOOL:
        out->kind = API_QV_BOOL;
        out->i = cm_json_as_bool(v, &b) == 0 && b;
        break;
    default: out->kind = API_QV_NULL; break;
    }
    cm_buf_free(&scratch);
}

void api_variable_value(cm_json_t v, cm_arena_t *arena, api_query_value_t *out)
{
    if (cm_json_type(v) != CM_JSON_ARRAY) {
        scalar(v, arena, out);
        return;
    }
    size_t n = cm_json_len(v);
    api_query_value_t *items = cm_arena_alloc(arena, (n ? n : 1) * sizeof(*items));
    cm_json_iter_t it = cm_json_iter(v);
    cm_json_t item;
    size_t k = 0;
    while (k < n && cm_json_next(&it, NULL, &item))
        scalar(item, arena, &items[k++]);
    *out = (api_query_value_t){.kind = API_QV_LIST, .items = items, .nitems = k};
}
