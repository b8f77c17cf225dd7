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

/* Do scopes grant object ("feature_flag") for reading or writing? */
bool api_access_allows(const char *scopes, const char *object, bool write);

/* Does a key with these limits reach project_id of organization org_id
 * (its user being a member of org_id)? */
bool api_access_reaches(const char *scoped_teams, const char *scoped_orgs, const char *project_id,
                        const char *org_id);

#endif
