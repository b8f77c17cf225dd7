/*
 * narrower.c - what a credential may give a key it creates: never a scope
 * nor a project it does not have itself (see access.h, docs/api.md). Pure.
 *
 * Without this a key holding only user:write (or an OAuth grant of it)
 * made a "*" key with no scoping, and so every right of its user.
 */
#include <stdio.h>
#include <string.h>

#include "access/access.h"
#include "cm/err.h"
#include "cm/json.h"

bool api_access_covers(const char *scopes, const char *scope)
{
    if (strcmp(scope, "*") == 0)
        return api_access_list_has(scopes, "*");
    const char *colon = strchr(scope, ':');
    char object[96];
    if (colon == NULL || (size_t)(colon - scope) >= sizeof(object))
        return false;
    snprintf(object, sizeof(object), "%.*s", (int)(colon - scope), scope);
    return api_access_allows(scopes, object, strcmp(colon + 1, "read") != 0);
}

typedef struct {
    bool (*bad)(const char *item, void *ud);
    void *ud;
    char *item;
    size_t size;
} item_check_t;

static bool item_bad(cm_slice_t s, void *ud)
{
    item_check_t *c = ud;
    /* ids are short (uuids, integers): a longer item is nothing of ours */
    bool too_long = s.len >= c->size || s.len >= 80;
    snprintf(c->item, c->size, "%.*s", (int)(s.len >= c->size ? c->size - 1 : s.len), s.p);
    return too_long || c->bad(c->item, c->ud);
}

/* Each item of list (a JSON array) as text into item; stops at the first
 * for which bad() is true and returns true, leaving it in item. An empty
 * or unparsable list is *empty. */
static bool any_item(const char *list, bool (*bad)(const char *item, void *ud), void *ud,
                     char *item, size_t item_size, bool *empty)
{
    item_check_t c = {bad, ud, item, item_size};
    return api_access_each(list, item_bad, &c, empty);
}

static bool not_in(const char *item, void *list)
{
    return !api_access_list_has(list, item);
}

typedef struct {
    const char *orgs;
    api_access_org_of_fn org_of;
    void *ud;
} team_orgs_t;

static bool team_outside(const char *team, void *p)
{
    const team_orgs_t *t = p;
    const char *org = t->org_of ? t->org_of(t->ud, team) : NULL;
    return org == NULL || !api_access_list_has(t->orgs, org);
}

int api_access_within(const char *have_teams, const char *have_orgs, const char *want_teams,
                      const char *want_orgs, api_access_org_of_fn org_of, void *ud, char *why,
                      size_t why_size)
{
    char item[96];
    bool empty;
    if (have_teams) {
        if (any_item(want_teams, not_in, (void *)have_teams, item, sizeof(item), &empty)) {
            snprintf(why, why_size, "Project %s is outside this key's scoped_teams.", item);
            return API_ACCESS_WIDER_TEAMS;
        }
        if (empty) {
            snprintf(why, why_size,
                     "This key is scoped to projects: the new key needs scoped_teams, a "
                     "non-empty subset of them.");
            return API_ACCESS_WIDER_TEAMS;
        }
    }
    if (have_orgs == NULL)
        return API_ACCESS_WITHIN;
    if (want_orgs) {
        if (any_item(want_orgs, not_in, (void *)have_orgs, item, sizeof(item), &empty)) {
            snprintf(why, why_size, "Organization %s is outside this key's scoped_organizations.",
                     item);
            return API_ACCESS_WIDER_ORGS;
        }
        if (!empty)
            return API_ACCESS_WITHIN;
    }
    team_orgs_t t = {have_orgs, org_of, ud};
    if (any_item(want_teams, team_outside, &t, item, sizeof(item), &empty)) {
        snprintf(why, why_size, "Project %s is not in one of this key's scoped_organizations.",
                 item);
        return API_ACCESS_WIDER_TEAMS;
    }
    if (empty) {
        snprintf(why, why_size,
                 "This key is scoped to organizations: the new key needs scoped_organizations "
                 "(a non-empty subset of them) or scoped_teams of their projects.");
        return API_ACCESS_WIDER_ORGS;
    }
    return API_ACCESS_WITHIN;
}
