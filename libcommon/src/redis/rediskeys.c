/* rediskeys.c - see rediskeys.h. */
#include "cm/rediskeys.h"

#include <stddef.h>

const char *const cm_rediskeys_fixed[] = {
    CM_REDISKEY_PROJECT_TOKENS,
    CM_REDISKEY_PROJECT_SECRET_TOKENS,
    CM_REDISKEY_PROJECT_TIMEZONES,
    CM_REDISKEY_PERSONAL_KEYS,
    CM_REDISKEY_QUOTA_EVENTS,
    CM_REDISKEY_QUOTA_FLAGS,
    CM_REDISKEY_FLAG_DEFINITIONS,
    CM_REDISKEY_FLAGS_CHANGED,
    CM_REDISKEY_EVENTS_STREAM,
    CM_REDISKEY_EVENTS_HISTORICAL_STREAM,
    CM_REDISKEY_EVENTS_DEAD_LETTER,
    CM_REDISKEY_GROUP_VERSIONS,
    CM_REDISKEY_PERSON_ERASURES, /* api -> writer: erasure requests */
    NULL,
};

/* Plain appends: these run once per /flags request and group. */
void cm_rediskeys_person(cm_buf_t *key, cm_slice_t project_id, cm_slice_t distinct_id)
{
    cm_buf_reset(key);
    cm_buf_append_cstr(key, "persons:");
    cm_buf_append_slice(key, project_id);
    cm_buf_putc(key, ':');
    cm_buf_append_slice(key, distinct_id);
}

void cm_rediskeys_group(cm_buf_t *key, cm_slice_t project_id, cm_slice_t type, cm_slice_t group_key)
{
    cm_buf_reset(key);
    cm_buf_append_cstr(key, "groups:");
    cm_buf_append_slice(key, project_id);
    cm_buf_putc(key, ':');
    cm_buf_append_slice(key, type);
    cm_buf_putc(key, ':');
    cm_buf_append_slice(key, group_key);
}

void cm_rediskeys_endpoint_cache(cm_buf_t *key, cm_slice_t project_id, cm_slice_t hash)
{
    cm_buf_reset(key);
    cm_buf_append_cstr(key, "endpoint_cache:");
    cm_buf_append_slice(key, project_id);
    cm_buf_putc(key, ':');
    cm_buf_append_slice(key, hash);
}
