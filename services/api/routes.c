/*
 * routes.c - every route of the api in one table: method, path, the scope
 * object a personal API key needs (read for GET, write otherwise), handler.
 * /api/projects/{project_id}/... routes are also served under
 * /api/environments/{project_id}/... (http/call.c).
 */
#include "api.h"
#include "cm/common.h"
#include "http/http.h"
#include "oauth/oauth.h"
#include "endpoints/endpoints.h"
#include "resources/resources.h"

#define GET    CM_HTTP_GET
#define POST   CM_HTTP_POST
#define DELETE CM_HTTP_DELETE
#define PATCH  CM_HTTP_PATCH

#define FLAGS   "/api/projects/{project_id}/feature_flags/"
#define COHORTS "/api/projects/{project_id}/cohorts/"
#define VARS    "/api/projects/{project_id}/insight_variables/"
#define ENDPTS  "/api/projects/{project_id}/endpoints/"
#define PUT     CM_HTTP_PUT
#define VTOKENS "/api/organizations/{org_id}/cimd_verification_tokens/"

static const api_route_t routes[] = {
    {GET, "/api/organizations/", "organization", api_organizations_list},
    {PATCH, "/api/organizations/{org_id}/", "organization", api_organizations_update},
    {GET, "/api/projects/", "project", api_projects_list},
    {POST, "/api/projects/", "project", api_projects_create},
    {GET, "/api/projects/{project_id}/", "project", api_projects_retrieve},
    {PATCH, "/api/projects/{project_id}/", "project", api_projects_update},
    {PATCH, "/api/projects/{project_id}/reset_token/", "project", api_projects_reset_token},
    {PATCH, "/api/projects/{project_id}/rotate_secret_token/", "project",
     api_projects_rotate_secret},
    {PATCH, "/api/projects/{project_id}/delete_secret_token_backup/", "project",
     api_projects_drop_secret_backup},
    {GET, "/api/users/@me/", "user", api_users_me},
    {PATCH, "/api/users/@me/", "user", api_users_me_update},
    {GET, "/api/personal_api_keys/", "user", api_keys_list},
    {POST, "/api/personal_api_keys/", "user", api_keys_create},
    {GET, "/api/personal_api_keys/{id}/", "user", api_keys_retrieve},
    {DELETE, "/api/personal_api_keys/{id}/", "user", api_keys_delete},
    {GET, FLAGS, "feature_flag", api_flags_list},
    {POST, FLAGS, "feature_flag", api_flags_create},
    {GET, FLAGS "{id}/", "feature_flag", api_flags_retrieve},
    {PATCH, FLAGS "{id}/", "feature_flag", api_flags_update},
    {DELETE, FLAGS "{id}/", "feature_flag", api_flags_delete},
    {GET, COHORTS, "cohort", api_cohorts_list},
    {POST, COHORTS, "cohort", api_cohorts_create},
    {GET, COHORTS "{id}/", "cohort", api_cohorts_retrieve},
    {PATCH, COHORTS "{id}/", "cohort", api_cohorts_update},
    {DELETE, COHORTS "{id}/", "cohort", api_cohorts_delete},
    {GET, "/api/projects/{project_id}/groups_types/", "group", api_group_types_list},
    {POST, "/api/projects/{project_id}/groups_types/", "group", api_group_types_create},
    {GET, VARS, "insight_variable", api_variables_list},
    {POST, VARS, "insight_variable", api_variables_create},
    {GET, VARS "{id}/", "insight_variable", api_variables_retrieve},
    {PATCH | PUT, VARS "{id}/", "insight_variable", api_variables_update},
    {DELETE, VARS "{id}/", "insight_variable", api_variables_delete},
    {GET, ENDPTS, "endpoint", api_endpoints_list},
    {POST, ENDPTS, "endpoint", api_endpoints_create},
    {GET, ENDPTS "{name}/", "endpoint", api_endpoints_retrieve},
    {PATCH | PUT, ENDPTS "{name}/", "endpoint", api_endpoints_update},
    {DELETE, ENDPTS "{name}/", "endpoint", api_endpoints_delete},
    {GET, ENDPTS "{name}/versions/", "endpoint", api_endpoints_versions},
    {GET, ENDPTS "{name}/versions/{version}/", "endpoint", api_endpoints_versions},
    {GET | POST, ENDPTS "{name}/run", "endpoint", api_endpoints_run, false, true},
    {GET | POST, ENDPTS "{name}/run/", "endpoint", api_endpoints_run, false, true},
    {GET, ENDPTS "{name}/openapi.json", "endpoint", api_endpoints_openapi},
    {GET, ENDPTS "{name}/materialization_status", "endpoint", api_endpoints_materialization_status},
    {GET, ENDPTS "{name}/materialization_status/", "endpoint",
     api_endpoints_materialization_status},
    {GET, ENDPTS "{name}/openapi.json/", "endpoint", api_endpoints_openapi},
    {GET, "/api/projects/{project_id}/events/", "query", api_events_list},
    {GET, "/api/projects/{project_id}/persons/", "person", api_persons_list},
    {DELETE, "/api/projects/{project_id}/persons/{id}/", "person", api_persons_delete},
    {GET, "/array/{token}/config", NULL, api_remote_config_json, true},
    {GET, "/array/{token}/config.js", NULL, api_remote_config_js, true},
    {GET, "/api/feature_flag/local_evaluation", "feature_flag", api_local_evaluation, true},
    {GET, VTOKENS, "organization", api_vtokens_list},
    {POST, VTOKENS, "organization", api_vtokens_create},
    {DELETE, VTOKENS "{id}/", "organization", api_vtokens_delete},
    /* OAuth (docs/oauth.md): each route takes its own credentials */
    {GET, "/.well-known/oauth-authorization-server", NULL, api_oauth_as_metadata, true},
    {GET, "/.well-known/oauth-protected-resource", NULL, api_oauth_resource_metadata, true},
    {GET | POST, "/oauth/authorize", NULL, api_oauth_authorize, true},
    {GET | POST, "/oauth/authorize/", NULL, api_oauth_authorize, true},
    {POST, "/oauth/token", NULL, api_oauth_token, true},
    {POST, "/oauth/token/", NULL, api_oauth_token, true},
    {POST, "/oauth/revoke", NULL, api_oauth_revoke, true},
    {POST, "/oauth/revoke/", NULL, api_oauth_revoke, true},
    {POST, "/oauth/introspect", NULL, api_oauth_introspect, true},
    {POST, "/oauth/introspect/", NULL, api_oauth_introspect, true},
    {POST, "/api/alerts/github", NULL, api_oauth_github_alert, true},
    {POST, "/api/alerts/github/", NULL, api_oauth_github_alert, true},
};

void api_routes(api_ctx_t *ctx)
{
    for (size_t i = 0; i < CM_ARRAY_LEN(routes); i++)
        api_http_route(ctx, &routes[i]);
}
