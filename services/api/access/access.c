/* access.c - scopes and project reach of personal API keys (see access.h). */
#include "access/access.h"

#include <stdio.h>
#include <string.h>

#include "cm/err.h"
#include "cm/json.h"

bool api_access_each(const char *list, bool (*fn)(cm_slice_t item, void *ud), void *ud, bool *empty)
{
    cm_json_doc_t *doc = NULL;
    bool found = false;
    if (empty)
        *empty = true;
    if (list == NULL || cm_json_parse(list, strlen(list), NULL, &doc, NULL) != CM_OK)
        return false;
    cm_json_iter_t it = cm_json_iter(cm_json_root(doc));
    cm_json_t v;
    while (!found && cm_json_next(&it, NULL, &v)) {
        cm_slice_t s = cm_json_str_inner(v);
        if (s.p == NULL)
            s = cm_json_raw(v); /* project ids may be numbers */
        if (empty)
            *empty = false;
        found = fn(s, ud);
    }
    cm_json_doc_free(doc);
    return found;
}

static bool is_wanted(cm_slice_t item, void *ud)
{
    for (const char *const *w = ud; *w; w++)
        if (cm_slice_eq_cstr(item, *w))
            return true;
    return false;
}

/* Does text (a JSON array of strings or numbers) hold one of wants
 * (NULL-terminated)? One parse however many are asked. */
static bool json_list_has_any(const char *text, const char *const *wants)
{
    return api_access_each(text, is_wanted, (void *)wants, NULL);
}

bool api_access_list_has(const char *list, const char *want)
{
    return json_list_has_any(list, (const char *const[]){want, NULL});
}

bool api_access_allows(const char *scopes, const char *object, bool write)
{
    char can_write[96], can_read[96];
    snprintf(can_write, sizeof(can_write), "%s:write", object);
    snprintf(can_read, sizeof(can_read), "%s:read", object);
    return json_list_has_any(scopes,
                             (const char *const[]){"*", can_write, write ? NULL : can_read, NULL});
}

bool api_access_reaches(const char *scoped_teams, const char *scoped_orgs, const char *project_id,
                        const char *org_id)
{
    if (project_id == NULL || org_id == NULL)
        return false;
    if (scoped_teams && !api_access_list_has(scoped_teams, project_id))
        return false;
    return scoped_orgs == NULL || api_access_list_has(scoped_orgs, org_id);
}
