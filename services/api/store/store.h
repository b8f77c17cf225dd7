/*
 * store.h - every SQL statement of the api, behind functions named for what
 * they read or change. Nothing outside store/ writes SQL.
 *
 * Each call submits one cm_db job and returns; done(status, res, ud) runs on
 * the loop as cm_db_run's does. Reads document their columns with an enum
 * (the index into cm_db_value); changes that the flags fleet must see also
 * queue their project in the outbox, in the same transaction, so that
 * publish/ can rewrite Redis after the commit (and after a Redis outage).
 */
#ifndef API_STORE_H
#define API_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/db.h"
#include "cm/event_store.h"

extern const cm_db_migration_t api_store_migrations[];
extern const size_t api_store_nmigrations;

/* Is id in column 0 of one of res's tables (a context read's id list)? */
bool api_store_has_id(const cm_db_res_t *res, size_t table, long long id);

/* Unix milliseconds now, as text for a parameter. */
void api_store_now(char out[24]);

/* ---- personal API keys ---------------------------------------------------- */

enum {
    API_KEY_ID,
    API_KEY_USER,
    API_KEY_SCOPES,
    API_KEY_SCOPED_ORGS,
    API_KEY_SCOPED_TEAMS,
    API_KEY_HASH,
    API_KEY_LAST_USED,
    API_KEY_PROJECT_ORG, /* organization of the asked project when the user belongs to it */
};
/* The key whose hash is key_hash; project_id may be NULL. The answer may
 * be up to cache_ms old on PostgreSQL (cm_db's read cache; 0: read now); on
 * SQLite it is kept only while nothing was committed since (until_changed). */
void api_store_key_lookup(cm_db_t *db, const char *key_hash, const char *project_id,
                          unsigned cache_ms, cm_db_done_cb done, void *ud);
/* last_used_at = now (callers throttle it). */
void api_store_key_touch(cm_db_t *db, const char *key_id, cm_db_done_cb done, void *ud);

enum {
    API_KEYROW_ID,
    API_KEYROW_LABEL,
    API_KEYROW_MASK,
    API_KEYROW_SCOPES,
    API_KEYROW_SCOPED_ORGS,
    API_KEYROW_SCOPED_TEAMS,
    API_KEYROW_CREATED,
    API_KEYROW_LAST_USED,
    API_KEYROW_TOTAL,
};
void api_store_keys_list(cm_db_t *db, const char *user_id, const char *limit, const char *offset,
                         cm_db_done_cb done, void *ud);
void api_store_key_get(cm_db_t *db, const char *user_id, const char *key_id, cm_db_done_cb done,
                       void *ud);
/* scoped_* may be NULL (no limit). */
void api_store_key_create(cm_db_t *db, const char *id, const char *user_id, const char *label,
                          const char *hash, const char *mask, const char *scopes,
                          const char *scoped_orgs, const char *scoped_teams, cm_db_done_cb done,
                          void *ud);
/* Table 0 changes: 1 when it existed. */
void api_store_key_delete(cm_db_t *db, const char *user_id, const char *key_id, cm_db_done_cb done,
                          void *ud);

/* `api admin keys revoke`: the keys whose id is LIKE id_pattern (a prefix
 * and '%') or whose hash is hash (either may be NULL), at most two (two:
 * ambiguous). */
enum { API_KEYFIND_ID, API_KEYFIND_USER, API_KEYFIND_EMAIL, API_KEYFIND_LABEL, API_KEYFIND_MASK };
void api_store_key_find(cm_db_t *db, const char *id_pattern, const char *hash, cm_db_done_cb done,
                        void *ud);

/* The live projects of the user's organizations, for judging the scoping a
 * key asks for (resources/personal_api_keys.c). */
enum { API_USER_PROJECT_ID, API_USER_PROJECT_ORG };
void api_store_user_projects(cm_db_t *db, const char *user_id, cm_db_done_cb done, void *ud);

/* ---- users ------------------------------------------------------------------ */

enum {
    API_USER_ID,
    API_USER_UUID,
    API_USER_EMAIL,
    API_USER_FIRST_NAME,
    API_USER_CREATED,
    API_USER_PASSWORD_HASH, /* argon2id, encoded: never in a response */
};
/* Table 0: the user; table 1: their organizations (id, name, level). */
void api_store_user_get(cm_db_t *db, const char *user_id, cm_db_done_cb done, void *ud);
/* Sets the fields that are not NULL; the same tables as api_store_user_get.
 * An email another user has: CM_ECONFLICT. */
void api_store_user_update(cm_db_t *db, const char *user_id, const char *first_name,
                           const char *email, const char *password_hash, cm_db_done_cb done,
                           void *ud);

/* ---- memberships (members.c; `api admin org add-member`) -------------------- */

/* The organizations whose id or name is id_or_name (id, name), at most two. */
enum { API_ORGFIND_ID, API_ORGFIND_NAME };
void api_store_org_find(cm_db_t *db, const char *id_or_name, cm_db_done_cb done, void *ud);
/* Makes user_id a member of org_id at level (1 member, 8 admin, 15 owner),
 * or sets the level of a member already there; the key table is queued (a
 * key reaches its user's organizations' projects). Table 0: the level
 * before (no row when not a member). */
void api_store_member_put(cm_db_t *db, const char *org_id, const char *user_id, const char *level,
                          cm_db_done_cb done, void *ud);

/* ---- organizations and projects -------------------------------------------- */

enum {
    API_ORG_ID,
    API_ORG_NAME,
    API_ORG_CREATED,
    API_ORG_QUOTA_UNTIL,
    API_ORG_LEVEL,
    API_ORG_TOTAL,
};
void api_store_orgs_list(cm_db_t *db, const char *user_id, const char *limit, const char *offset,
                         cm_db_done_cb done, void *ud);
/* The organization's flags quota (unix seconds; NULL lifts it), only when
 * user_id is an admin (level >= 8) of it; every project of it is queued for
 * publishing. Table 0: the row (API_ORG_* columns), empty when refused. */
void api_store_org_set_quota(cm_db_t *db, const char *org_id, const char *user_id,
                             const char *until, cm_db_done_cb done, void *ud);

enum {
    API_PROJECT_ID,
    API_PROJECT_UUID,
    API_PROJECT_ORG,
    API_PROJECT_NAME,
    API_PROJECT_TOKEN,
    API_PROJECT_SECRET_MASK,
    API_PROJECT_TIMEZONE,
    API_PROJECT_CREATED,
    API_PROJECT_SECRET_BACKUP_MASK,
    API_PROJECT_WEEK_START, /* 0 Sunday, 1 Monday, NULL: Sunday */
    API_PROJECT_TOTAL,
};
void api_store_projects_list(cm_db_t *db, const char *user_id, const char *limit,
                             const char *offset, cm_db_done_cb done, void *ud);
void api_store_project_get(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud);
/* The live project with this public token: id, secret_token_hash,
 * secret_token_backup_hash. */
void api_store_project_by_token(cm_db_t *db, const char *token, cm_db_done_cb done, void *ud);
/* What posthog-js's remote config needs of the project with this public
 * token: (id, number of active flags). */
void api_store_remote_config(cm_db_t *db, const char *token, cm_db_done_cb done, void *ud);
/* Inserts the project into org_id (NULL: the user's oldest organization),
 * only if user_id belongs to it, and queues it for publishing. Table 0 is
 * the new row (API_PROJECT_* columns), empty when the user is no member. */
void api_store_project_create(cm_db_t *db, const char *user_id, const char *org_id,
                              const char *name, const char *token, const char *secret_hash,
                              const char *secret_mask, const char *timezone, const char *week_start,
                              cm_db_done_cb done, void *ud);

/* Sets name and time zone where not NULL (members may: PostHog's project
 * settings); queues the project (the time zone is the fleet's). Table 0 the
 * row. */
void api_store_project_update(cm_db_t *db, const char *project_id, const char *name,
                              const char *timezone, const char *week_start, cm_db_done_cb done,
                              void *ud);
/* Token rotation, by admins (level 8+) of the project's organization only;
 * table 0 is the new row (API_PROJECT_*), empty when refused. Each queues
 * the project with what the fleet must forget: the old public token; the
 * backup secret that the rotation or the drop retires. */
void api_store_project_reset_token(cm_db_t *db, const char *project_id, const char *user_id,
                                   const char *token, cm_db_done_cb done, void *ud);
/* The current secret becomes the backup (it keeps working); hash/mask new. */
void api_store_project_rotate_secret(cm_db_t *db, const char *project_id, const char *user_id,
                                     const char *hash, const char *mask, cm_db_done_cb done,
                                     void *ud);
void api_store_project_drop_secret_backup(cm_db_t *db, const char *project_id, const char *user_id,
                                          cm_db_done_cb done, void *ud);

/* ---- feature flags ---------------------------------------------------------------- */

enum {
    API_FLAG_ID,
    API_FLAG_KEY,
    API_FLAG_NAME,
    API_FLAG_FILTERS,
    API_FLAG_ACTIVE,
    API_FLAG_DELETED,
    API_FLAG_EEC,
    API_FLAG_RUNTIME,
    API_FLAG_CONTEXTS,
    API_FLAG_BUCKETING,
    API_FLAG_VERSION,
    API_FLAG_CREATED_BY,
    API_FLAG_CREATED,
    API_FLAG_UPDATED,
    API_FLAG_TOTAL,
};
/* A flag's fields as text ("1"/"0" for booleans; bucketing may be NULL). */
typedef struct {
    const char *project_id, *user_id;
    const char *key, *name, *filters, *active, *eec, *runtime, *contexts, *bucketing, *deleted;
} api_store_flag_t;

/* The project's flags_version (one row, one column; no row: no project):
 * bumped by api_store_flag_create and api_store_flag_update. */
void api_store_flags_version(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud);
/* Live flags, newest first (API_FLAG_* columns). */
void api_store_flags_list(cm_db_t *db, const char *project_id, const char *limit,
                          const char *offset, cm_db_done_cb done, void *ud);
void api_store_flag_get(cm_db_t *db, const char *project_id, const char *flag_id,
                        cm_db_done_cb done, void *ud);
/* What a write checks against, read together: table 0 the flag flag_id
 * (none for NULL), table 1 the project's live cohort ids, table 2 its live
 * flags (id, key, filters). */
void api_store_flag_context(cm_db_t *db, const char *project_id, const char *flag_id,
                            cm_db_done_cb done, void *ud);
/* Table 0: the new row; the project is queued for publishing. A live flag
 * with the same key: CM_ECONFLICT. */
void api_store_flag_create(cm_db_t *db, const api_store_flag_t *f, cm_db_done_cb done, void *ud);
/* Writes every field and bumps the version, only while the stored version is
 * still `version`: table 0 is the new row, or empty when it changed meanwhile. */
void api_store_flag_update(cm_db_t *db, const api_store_flag_t *f, const char *flag_id,
                           const char *version, cm_db_done_cb done, void *ud);

/* ---- cohorts ------------------------------------------------------------------------ */

enum {
    API_COHORT_ID,
    API_COHORT_NAME,
    API_COHORT_DESCRIPTION,
    API_COHORT_FILTERS, /* the property group, JSON */
    API_COHORT_DELETED,
    API_COHORT_VERSION,
    API_COHORT_CREATED,
    API_COHORT_UPDATED,
    API_COHORT_TOTAL,
};
void api_store_cohorts_list(cm_db_t *db, const char *project_id, const char *limit,
                            const char *offset, cm_db_done_cb done, void *ud);
/* Table 0 the cohort cohort_id (none for NULL), table 1 the project's live
 * cohorts (id, filters), table 2 its live flags (id, key, filters). */
void api_store_cohort_context(cm_db_t *db, const char *project_id, const char *cohort_id,
                              cm_db_done_cb done, void *ud);
/* Table 0: the new row; the project is queued for publishing. */
void api_store_cohort_create(cm_db_t *db, const char *project_id, const char *name,
                             const char *description, const char *filters, cm_db_done_cb done,
                             void *ud);
/* Every field, while the version is still `version` (else table 0 is empty). */
void api_store_cohort_update(cm_db_t *db, const char *project_id, const char *cohort_id,
                             const char *version, const char *name, const char *description,
                             const char *filters, const char *deleted, cm_db_done_cb done,
                             void *ud);

/* ---- group types ------------------------------------------------------------------ */

enum { API_GROUP_TYPE_INDEX, API_GROUP_TYPE_NAME, API_GROUP_TYPE_TOTAL };
void api_store_group_types_list(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud);
/* Gives group_type the lowest free index (0-4) and queues the project for
 * publishing. Table 0: the new row, empty when all five are taken; a name
 * already mapped: CM_ECONFLICT. */
void api_store_group_type_create(cm_db_t *db, const char *project_id, const char *group_type,
                                 cm_db_done_cb done, void *ud);

/* ---- bootstrap ---------------------------------------------------------------- */

/* Everything bootstrap makes, in one transaction. */
typedef struct {
    const char *org_id, *org_name;
    const char *user_uuid, *email, *password_hash;
    const char *project_uuid, *project_name, *token, *secret_hash, *secret_mask;
    const char *key_id, *key_hash, *key_mask;
} api_store_seed_t;
void api_store_seed(cm_db_t *db, const api_store_seed_t *s, cm_db_done_cb done, void *ud);
/* Table 0: organizations (id, name); table 1: projects (id, name, api_token);
 * table 2: users (email). */
void api_store_summary(cm_db_t *db, cm_db_done_cb done, void *ud);

/* ---- the outbox (publish/) ------------------------------------------------------ */

/* Queues the personal API key table (outbox project 0); $1 is now. */
#define API_STORE_QUEUE_KEYS    "INSERT INTO outbox (project_id, created_at) VALUES (0, $1)"
#define API_OUTBOX_KEYS_PROJECT "0"

enum { API_OUTBOX_ID, API_OUTBOX_PROJECT, API_OUTBOX_RETIRED_TOKEN, API_OUTBOX_RETIRED_SECRET };
/* The oldest queued entries, at most limit. */
void api_store_outbox_head(cm_db_t *db, const char *limit, cm_db_done_cb done, void *ud);
/* Removes every entry up to and including id. */
void api_store_outbox_ack(cm_db_t *db, const char *id, cm_db_done_cb done, void *ud);
/* Queues every project and the key table (start-up: republish everything). */
void api_store_outbox_all(cm_db_t *db, cm_db_done_cb done, void *ud);
/* One row: the number of entries and the oldest one's created_at (ms; NULL when none). */
enum { API_OUTBOX_DEPTH_N, API_OUTBOX_DEPTH_OLDEST };
void api_store_outbox_depth(cm_db_t *db, cm_db_done_cb done, void *ud);

/* What the fleet needs of one project: table 0 the project (id, api_token,
 * secret_token_hash, timezone, deleted, quota_until of its organization). */
enum {
    API_FLEET_ID,
    API_FLEET_TOKEN,
    API_FLEET_SECRET_HASH,
    API_FLEET_TIMEZONE,
    API_FLEET_DELETED,
    API_FLEET_QUOTA_UNTIL,
    API_FLEET_SECRET_BACKUP_HASH,
};
void api_store_fleet_project(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud);

/* What the fleet needs of personal API keys: one row per key and live
 * project of its user's organizations, ordered by key (api_access_* decides). */
enum {
    API_FLEETKEY_HASH,
    API_FLEETKEY_SCOPES,
    API_FLEETKEY_SCOPED_ORGS,
    API_FLEETKEY_SCOPED_TEAMS,
    API_FLEETKEY_PROJECT,
    API_FLEETKEY_ORG,
};
void api_store_fleet_keys(cm_db_t *db, cm_db_done_cb done, void *ud);

/* ---- the event store (events.c): reads of what the writer stored ---------- */

typedef struct {
    const char *project_id;
    const char *event;           /* NULL: any */
    const char *distinct_id;     /* NULL: any */
    int64_t before_ms, after_ms; /* 0: no bound */
    const char *before_id;       /* with before_ms: events at exactly that time come
                                    after this uuid (pages on without losing ties) */
    long long limit;
} api_events_query_t;
enum {
    API_EVENT_UUID,
    API_EVENT_NAME,
    API_EVENT_DISTINCT_ID,
    API_EVENT_PROPERTIES,
    API_EVENT_TIME_MS,
    API_EVENT_PERSON_ID,
};
/* These three append the SELECT to out, in es's dialect; the caller runs
 * it (through the api's admission of event-store reads). Newest first. */
void api_store_events_list_sql(cm_evstore_t *es, const api_events_query_t *q, cm_buf_t *out);

enum { API_PERSON_ID, API_PERSON_PROPERTIES, API_PERSON_CREATED, API_PERSON_IDENTIFIED };
/* Live persons, newest first; distinct_id (or NULL) narrows to its person. */
void api_store_persons_list_sql(cm_evstore_t *es, const char *project_id, const char *distinct_id,
                                long long limit, long long offset, cm_buf_t *out);
enum { API_PDI_PERSON, API_PDI_DISTINCT_ID };
void api_store_person_distinct_ids_sql(cm_evstore_t *es, const char *project_id,
                                       const char *const *person_ids, size_t n, cm_buf_t *out);

/* person_erasure.c: a person and its distinct ids before an erasure. */
enum { API_ERASE_KIND, API_ERASE_KEY, API_ERASE_VERSION, API_ERASE_CREATED };
void api_store_person_erasure_sql(cm_evstore_t *es, const char *project_id, const char *person_id,
                                  cm_buf_t *out);

/* ---- endpoints and query variables (endpoints.c) -------------------------------------- */

enum {
    API_VAR_ID,
    API_VAR_NAME,
    API_VAR_CODE_NAME,
    API_VAR_TYPE,
    API_VAR_DEFAULT, /* JSON or NULL */
    API_VAR_OPTIONS, /* JSON array or NULL */
    API_VAR_CREATED,
    API_VAR_UPDATED,
    API_VAR_TOTAL,
};
void api_store_variables_list(cm_db_t *db, const char *project_id, const char *limit,
                              const char *offset, cm_db_done_cb done, void *ud);
void api_store_variable_get(cm_db_t *db, const char *project_id, const char *id, cm_db_done_cb done,
                            void *ud);
void api_store_variable_create(cm_db_t *db, const char *project_id, const char *id,
                               const char *name, const char *code_name, const char *type,
                               const char *default_value, const char *options, cm_db_done_cb done,
                               void *ud);
void api_store_variable_update(cm_db_t *db, const char *project_id, const char *id,
                               const char *name, const char *code_name, const char *type,
                               const char *default_value, const char *options, cm_db_done_cb done,
                               void *ud);
void api_store_variable_delete(cm_db_t *db, const char *project_id, const char *id,
                               cm_db_done_cb done, void *ud);

enum {
    API_ENDPOINT_ID,
    API_ENDPOINT_NAME,
    API_ENDPOINT_ACTIVE,
    API_ENDPOINT_CURRENT_VERSION,
    API_ENDPOINT_DERIVED_FROM,
    API_ENDPOINT_CREATED_BY,
    API_ENDPOINT_CREATED,
    API_ENDPOINT_UPDATED,
    API_ENDPOINT_VERSION, /* the version read (current unless asked) */
    API_ENDPOINT_QUERY,   /* its query node, JSON */
    API_ENDPOINT_DESCRIPTION,
    API_ENDPOINT_CACHE_AGE, /* NULL: the default */
    API_ENDPOINT_MATERIALIZED,
    API_ENDPOINT_VERSION_ACTIVE,
    API_ENDPOINT_VERSION_CREATED,
    API_ENDPOINT_VERSION_ID,
    API_ENDPOINT_SYNC_FREQUENCY,
    API_ENDPOINT_MAT_STATUS, /* NULL until the first refresh, then Running Completed Failed */
    API_ENDPOINT_MAT_ERROR,
    API_ENDPOINT_MAT_AT, /* the last completed refresh, ms */
    API_ENDPOINT_MAT_TABLE,
    API_ENDPOINT_MAT_INFO,
    API_ENDPOINT_VERSIONS_COUNT,
};
/* is_active: "0", "1" or NULL (all). */
void api_store_endpoints_list(cm_db_t *db, const char *project_id, const char *is_active,
                              cm_db_done_cb done, void *ud);
/* version NULL: the current one. */
void api_store_endpoint_get(cm_db_t *db, const char *project_id, const char *name,
                            const char *version, cm_db_done_cb done, void *ud);

/* For a run, in one statement: the endpoint at version (NULL: current) and
 * its project's time zone, once per variable of the project, with its id
 * and type in the columns after (NULL when the project has none). The answer may be
 * up to cache_ms old on PostgreSQL (cm_db's read cache; 0: read now); on SQLite
 * it is kept only while nothing was committed since (until_changed). */
enum {
    API_ENDPOINT_RUN_TIMEZONE = API_ENDPOINT_VERSIONS_COUNT + 1, /* the project's */
    API_ENDPOINT_RUN_WEEK_START, /* the project's: 1 Monday, else Sunday */
    API_ENDPOINT_RUN_VAR_ID,
    API_ENDPOINT_RUN_VAR_TYPE,
};
void api_store_endpoint_run_get(cm_db_t *db, const char *project_id, const char *name,
                                const char *version, unsigned cache_ms, cm_db_done_cb done,
                                void *ud);

/* A create or an update; NULL fields are left as they are (or defaulted). */
typedef struct {
    const char *project_id, *name, *user_id;
    const char *id;         /* create: the new endpoint's uuid; update: the stored one */
    const char *version_id; /* the new version's uuid (create, or a query change) */
    const char *query;      /* the query node; update: only when it changed */
    const char *is_active;  /* "0"/"1" */
    const char *derived_from_insight;
    const char *description, *cache_age_seconds;
    bool set_description, set_cache_age;  /* update: present in the body (null clears) */
    const char *version, *version_active; /* update ?version=N: that version's activity */
    /* the current version's materialization ("0", "1"; NULL: as it was, or
     * as the previous version's when the query changed) and refresh period */
    const char *is_materialized, *sync_frequency;
} api_endpoint_write_t;
/* Table 2: the endpoint as API_ENDPOINT_*; a taken name fails with CM_ECONFLICT. */
void api_store_endpoint_create(cm_db_t *db, const api_endpoint_write_t *w, cm_db_done_cb done,
                               void *ud);
/* The last table: the endpoint read back (at w->version, else the current one). */
void api_store_endpoint_update(cm_db_t *db, const api_endpoint_write_t *w, cm_db_done_cb done,
                               void *ud);
/* Table 1: the deleted id, no row if there was none. */
void api_store_endpoint_delete(cm_db_t *db, const char *project_id, const char *name,
                               cm_db_done_cb done, void *ud);
enum {
    API_EVERSION_ID,
    API_EVERSION_VERSION,
    API_EVERSION_QUERY,
    API_EVERSION_ACTIVE,
    API_EVERSION_CREATED,
    API_EVERSION_CREATED_BY,
    API_EVERSION_DESCRIPTION,
    API_EVERSION_CACHE_AGE,
    API_EVERSION_MATERIALIZED,
};
/* Newest first. */
void api_store_endpoint_versions(cm_db_t *db, const char *project_id, const char *name,
                                 cm_db_done_cb done, void *ud);
void api_store_endpoint_executed(cm_db_t *db, const char *endpoint_id, cm_db_done_cb done,
                                 void *ud);

/* materializations.c: the materializer's side of endpoint versions. The
 * versions to look at, least recently refreshed first: the materialized
 * ones of active endpoints, and any that still has a table (one no longer
 * materialized has its table dropped). */
enum {
    API_MAT_VERSION_ID,
    API_MAT_PROJECT_ID,
    API_MAT_QUERY,
    API_MAT_SYNC_FREQUENCY,
    API_MAT_STATUS,
    API_MAT_AT,
    API_MAT_STARTED,
    API_MAT_TABLE,
    API_MAT_MATERIALIZED,
    API_MAT_TIMEZONE,   /* the project's */
    API_MAT_WEEK_START, /* the project's: 1 Monday, else Sunday */
};
void api_store_mat_work(cm_db_t *db, cm_db_done_cb done, void *ud);
/* Sets the version Running; changed 1 when this process won it. */
void api_store_mat_claim(cm_db_t *db, const char *version_id, cm_db_done_cb done, void *ud);
/* Completed (with the new table and its info, now as mat_at) or Failed
 * (with error; table and info NULL: as they were). */
void api_store_mat_finish(cm_db_t *db, const char *version_id, const char *status,
                          const char *error, const char *table, const char *info,
                          cm_db_done_cb done, void *ud);
/* An erasure in the project (resources/person_erasure.c): every
 * materialized version of it is due at once (its table may hold the
 * erased person's events). */
void api_store_mat_stale_project(cm_db_t *db, const char *project_id, cm_db_done_cb done, void *ud);
/* The table is gone (a version no longer materialized). */
void api_store_mat_dropped(cm_db_t *db, const char *version_id, const char *table,
                           cm_db_done_cb done, void *ud);

/* ---- OAuth (oauth_apps.c, oauth_tokens.c; docs/oauth.md) ---------------- */

/* A client known by its metadata document, and its verification in the
 * region asked. */
enum {
    API_APP_ID,
    API_APP_CLIENT_ID,
    API_APP_NAME,
    API_APP_LOGO,
    API_APP_REDIRECTS, /* JSON array */
    API_APP_CEILING,   /* JSON array or NULL */
    API_APP_ORG,       /* linked organization or NULL */
    API_APP_FETCHED,
    API_APP_FRESH_UNTIL,
    API_APP_VERIFIED, /* 1, 0 or NULL (never set) */
};
void api_store_oauth_app_get(cm_db_t *db, const char *client_id, const char *region,
                             cm_db_done_cb done, void *ud);
typedef struct {
    const char *id, *client_id, *client_name, *logo_uri, *redirects, *scope_ceiling;
    const char *organization_id, *fresh_until;
} api_store_oauth_app_t;
/* Inserts or refreshes (by client_id; the id of a new row is a->id). */
void api_store_oauth_app_put(cm_db_t *db, const api_store_oauth_app_t *a, cm_db_done_cb done,
                             void *ud);
void api_store_oauth_verify(cm_db_t *db, const char *client_id, const char *region, bool verified,
                            cm_db_done_cb done, void *ud);

/* CIMD verification tokens (phvt_), an organization's admins' to manage. */
enum { API_VT_ID, API_VT_ORG, API_VT_MASK, API_VT_URL, API_VT_CREATED, API_VT_HASH };
void api_store_vtoken_lookup(cm_db_t *db, const char *hash, cm_db_done_cb done, void *ud);
void api_store_vtokens_list(cm_db_t *db, const char *org_id, const char *user_id,
                            cm_db_done_cb done, void *ud);
/* No row back when user_id is not an admin of org_id. */
void api_store_vtoken_create(cm_db_t *db, const char *org_id, const char *user_id, const char *id,
                             const char *hash, const char *mask, const char *cimd_url,
                             cm_db_done_cb done, void *ud);
void api_store_vtoken_delete(cm_db_t *db, const char *org_id, const char *user_id, const char *id,
                             cm_db_done_cb done, void *ud);

/* Browser sessions of the sign-in and consent pages. get: table 0 the
 * session (user id, csrf, email, first name); table 1 the user's
 * organizations and projects (org id, org name, project id or NULL, name). */
enum { API_SESSION_USER, API_SESSION_CSRF, API_SESSION_EMAIL, API_SESSION_NAME };
void api_store_session_create(cm_db_t *db, const char *id_hash, const char *user_id,
                              const char *csrf, const char *expires_at, cm_db_done_cb done,
                              void *ud);
void api_store_session_get(cm_db_t *db, const char *id_hash, cm_db_done_cb done, void *ud);
/* id, password_hash */
void api_store_user_by_email(cm_db_t *db, const char *email, cm_db_done_cb done, void *ud);

/* What one authorization grants: the code, then every token of its family. */
typedef struct {
    const char *client_id, *user_id, *scopes, *resource, *scoped_orgs, *scoped_teams, *family;
} api_store_oauth_grant_t;
typedef struct {
    const char *access_id, *access_hash, *access_expires;
    const char *refresh_id, *refresh_hash, *refresh_expires;
} api_store_oauth_pair_t;

void api_store_oauth_code_create(cm_db_t *db, const api_store_oauth_grant_t *g,
                                 const char *code_hash, const char *redirect_uri,
                                 const char *challenge, const char *expires_at, cm_db_done_cb done,
                                 void *ud);
/* Marks the code used and reads it (table 1): used 1 is the first use. */
enum {
    API_CODE_CLIENT,
    API_CODE_USER,
    API_CODE_REDIRECT,
    API_CODE_CHALLENGE,
    API_CODE_SCOPES,
    API_CODE_RESOURCE,
    API_CODE_ORGS,
    API_CODE_TEAMS,
    API_CODE_FAMILY,
    API_CODE_EXPIRES,
    API_CODE_USED,
};
void api_store_oauth_code_take(cm_db_t *db, const char *code_hash, cm_db_done_cb done, void *ud);
void api_store_oauth_tokens_issue(cm_db_t *db, const api_store_oauth_grant_t *g,
                                  const api_store_oauth_pair_t *t, cm_db_done_cb done, void *ud);
enum {
    API_TOKEN_ID,
    API_TOKEN_KIND, /* access or refresh */
    API_TOKEN_FAMILY,
    API_TOKEN_CLIENT,
    API_TOKEN_USER,
    API_TOKEN_SCOPES,
    API_TOKEN_RESOURCE,
    API_TOKEN_ORGS,
    API_TOKEN_TEAMS,
    API_TOKEN_EXPIRES,
    API_TOKEN_ROTATED,
    API_TOKEN_REVOKED,
    API_TOKEN_HASH,
};
void api_store_oauth_token_get(cm_db_t *db, const char *hash, cm_db_done_cb done, void *ud);
/* Statement 0 changed 1 row: rotated, the new pair written; 0: the old
 * token was no longer live (a reuse, or expired, or revoked). */
void api_store_oauth_refresh_rotate(cm_db_t *db, const char *old_hash,
                                    const api_store_oauth_grant_t *g,
                                    const api_store_oauth_pair_t *t, cm_db_done_cb done, void *ud);
void api_store_oauth_family_revoke(cm_db_t *db, const char *family, cm_db_done_cb done, void *ud);
void api_store_oauth_token_revoke(cm_db_t *db, const char *hash, const char *client_id,
                                  cm_db_done_cb done, void *ud);
void api_store_oauth_token_revoke_leaked(cm_db_t *db, const char *hash, cm_db_done_cb done,
                                         void *ud);
/* API_KEY_* columns, then these. */
enum {
    API_ACCESS_RESOURCE = API_KEY_PROJECT_ORG + 1,
    API_ACCESS_EXPIRES,
    API_ACCESS_REVOKED,
    API_ACCESS_CLIENT,
};
void api_store_oauth_access_lookup(cm_db_t *db, const char *hash, const char *project_id,
                                   unsigned cache_ms, cm_db_done_cb done, void *ud);

/* ---- secrets found in public (leaks.c) ---- */

enum { API_LEAK_NONE, API_LEAK_OAUTH, API_LEAK_PERSONAL_KEY, API_LEAK_PROJECT_SECRET };
typedef struct {
    int kind;
    const char *hash;     /* SHA-256 hex of the secret */
    const char *new_hash; /* a key or secret's replacement (never shown to anyone) */
} api_store_leak_t;
/* One job: per leak, its first statement's changes say whether it was ours
 * (a project secret has a second statement: the outbox). The caller knows
 * the layout: OAuth and personal keys one statement, project secrets two,
 * API_LEAK_NONE one that changes nothing; the key table's republication last. */
void api_store_leaks_revoke(cm_db_t *db, const api_store_leak_t *leaks, size_t n,
                            cm_db_done_cb done, void *ud);

#endif
