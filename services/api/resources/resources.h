/*
 * resources.h - one file per REST resource; each handler parses, asks the
 * store, writes PostHog's JSON shape and answers (http/http.h).
 */
#ifndef API_RESOURCES_H
#define API_RESOURCES_H

#include "http/http.h"

/* organizations.c: GET /api/organizations/ */
void api_organizations_list(api_call_t *call);
void api_organizations_update(api_call_t *call); /* PATCH /api/organizations/{org_id}/ */

/* projects.c */
void api_projects_list(api_call_t *call);     /* GET /api/projects/ */
void api_projects_create(api_call_t *call);   /* POST /api/projects/ */
void api_projects_retrieve(api_call_t *call); /* GET /api/projects/{project_id}/ */
void api_projects_update(api_call_t *call);   /* PATCH /api/projects/{project_id}/ */
/* PATCH /api/projects/{project_id}/reset_token/, rotate_secret_token/,
 * delete_secret_token_backup/ (admins) */
void api_projects_reset_token(api_call_t *call);
void api_projects_rotate_secret(api_call_t *call);
void api_projects_drop_secret_backup(api_call_t *call);

/* users.c: /api/users/@me/ */
void api_users_me(api_call_t *call);        /* GET */
void api_users_me_update(api_call_t *call); /* PATCH first_name, email, password */

/* personal_api_keys.c */
void api_keys_list(api_call_t *call);   /* GET /api/personal_api_keys/ */
void api_keys_create(api_call_t *call); /* POST /api/personal_api_keys/ */
/* A personal key row's fields as JSON (inside an object the caller opens). */
void api_key_json_fields(cm_json_writer_t *w, const cm_db_res_t *res, size_t row,
                         const char *value);
void api_keys_retrieve(api_call_t *call); /* GET /api/personal_api_keys/{id}/ */
void api_keys_delete(api_call_t *call);   /* DELETE /api/personal_api_keys/{id}/ */

/* feature_flags.c: /api/projects/{project_id}/feature_flags/ */
void api_flags_list(api_call_t *call);     /* GET .../ */
void api_flags_create(api_call_t *call);   /* POST .../ */
void api_flags_retrieve(api_call_t *call); /* GET .../{id}/ */
void api_flags_update(api_call_t *call);   /* PATCH .../{id}/ */
void api_flags_delete(api_call_t *call);   /* DELETE .../{id}/: soft delete */

/* cohorts.c: /api/projects/{project_id}/cohorts/ */
void api_cohorts_list(api_call_t *call);
void api_cohorts_create(api_call_t *call);
void api_cohorts_retrieve(api_call_t *call);
void api_cohorts_update(api_call_t *call); /* PATCH */
void api_cohorts_delete(api_call_t *call); /* soft delete, refused while in use */

/* group_types.c: /api/projects/{project_id}/groups_types/ */
void api_group_types_list(api_call_t *call);
void api_group_types_create(api_call_t *call);

/* local_evaluation.c: GET /api/feature_flag/local_evaluation (own authentication) */
void api_local_evaluation(api_call_t *call);

/* remote_config.c: posthog-js's /array/{token}/config and config.js (public). */
void api_remote_config_json(api_call_t *call);
void api_remote_config_js(api_call_t *call);

/* events.c: what the writer stored (the event store, read-only). */
void api_events_list(api_call_t *call);
void api_persons_list(api_call_t *call);
/* person_erasure.c: DELETE .../persons/{id}/[?delete_events=true] */
void api_persons_delete(api_call_t *call);

/* insight_variables.c: /api/projects/{id}/insight_variables/ */
void api_variables_list(api_call_t *call);
void api_variables_create(api_call_t *call);
void api_variables_retrieve(api_call_t *call);
void api_variables_update(api_call_t *call); /* PATCH */
void api_variables_delete(api_call_t *call);

/* cimd_verification_tokens.c */
void api_vtokens_list(api_call_t *call);
void api_vtokens_create(api_call_t *call);
void api_vtokens_delete(api_call_t *call);

#endif
