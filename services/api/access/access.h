/*
 * access.h - what a personal API key may do: its scopes and the projects it
 * reaches. Pure (no I/O): the api's authentication and the publisher of the
 * fleet's key table (flags' /flags/definitions) apply the same rules.
 *
 * Scopes are stored as a JSON array of "*" or "<object>:read|write"; write
 * implies read. A key reaches a project of an organization its user belongs
 * to, narrowed by scoped_organizations (JSON array of organization ids) and
 * scoped_teams (JSON array of project ids) when they are set (NULL: no
 * narrowing).
 */
#ifndef API_ACCESS_H
#define API_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "cm/buf.h"

/* Do scopes grant object ("feature_flag") for reading or writing? */
bool api_access_allows(const char *scopes, const char *object, bool write);

/* Does a key with these limits reach project_id of organization org_id
 * (its user being a member of org_id)? */
bool api_access_reaches(const char *scoped_teams, const char *scoped_orgs, const char *project_id,
                        const char *org_id);

/* fn(item) for each item of list (a JSON array of strings or numbers, as
 * their text), until one returns true (then true). *empty (when not NULL):
 * the list is missing, unparsable or has no item. */
bool api_access_each(const char *list, bool (*fn)(cm_slice_t item, void *ud), void *ud,
                     bool *empty);

/* Does list (a JSON array of strings or numbers) hold want? */
bool api_access_list_has(const char *list, const char *want);

/* ---- narrower.c: a credential never makes a wider one (docs/api.md) ---- */

/* Is scope ("*", "<object>:read|write") within scopes? "*" only within
 * "*"; "x:read" within "x:read", "x:write" or "*". */
bool api_access_covers(const char *scopes, const char *scope);

/* The organization of one of the creator's user's projects (team id as
 * decimal text), or NULL when the user has no such live project. */
typedef const char *(*api_access_org_of_fn)(void *ud, const char *team);

enum { API_ACCESS_WITHIN, API_ACCESS_WIDER_TEAMS, API_ACCESS_WIDER_ORGS };
/*
 * Does a new key scoped to want_teams / want_orgs (JSON arrays; NULL: no
 * narrowing) reach no project its creator's scoping (have_*) does not?
 * An unscoped creator may make any scoping; one scoped to teams only keys
 * scoped to a non-empty subset of them; one scoped to organizations only
 * keys scoped to a non-empty subset of them or to teams of them (org_of).
 * Returns API_ACCESS_WITHIN, or which field is too wide with why (a
 * sentence for the 403's detail) written.
 */
int api_access_within(const char *have_teams, const char *have_orgs, const char *want_teams,
                      const char *want_orgs, api_access_org_of_fn org_of, void *ud, char *why,
                      size_t why_size);

#endif
