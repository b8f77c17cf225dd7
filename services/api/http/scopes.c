/*
 * scopes.c - the scope names personal API keys (and later OAuth) accept.
 *
 * A scope is "<object>:read" or "<object>:write", or "*". The objects are
 * PostHog's APIScopeObject list as the notes give it (oauth.md 4.5), less
 * the internal ones no user may grant.
 */
#include <stdio.h>
#include <string.h>

#include "cm/common.h"
#include "cm/json.h"
#include "http/http.h"

/* Usable in personal API keys, never offered to OAuth apps (as PostHog's). */
static const char *const hidden[] = {"wizard_session", "query_performance", "batch_import_support"};
/* Offered, but only an admin may grant them: never through a client document. */
static const char *const privileged[] = {"llm_gateway"};
/* Granted to any OAuth app whatever its ceiling says. */
static const char *const always[] = {"openid", "profile", "email", "introspection"};

static const char *const objects[] = {
    "action",
    "access_control",
    "account",
    "activity_log",
    "alert",
    "annotation",
    "approvals",
    "batch_export",
    "batch_import",
    "batch_import_support",
    "billing",
    "business_knowledge",
    "canvas",
    "cohort",
    "comment",
    "conversation",
    "customer_analytics",
    "customer_task",
    "customer_journey",
    "customer_profile_config",
    "data_catalog",
    "data_catalog_approval",
    "dashboard",
    "event_filter",
    "dashboard_template",
    "dataset",
    "early_access_feature",
    "endpoint",
    "engineering_analytics",
    "error_tracking",
    "evaluation",
    "element",
    "event_definition",
    "experiment",
    "experiment_holdout",
    "experiment_saved_metric",
    "export",
    "external_data_schema",
    "external_data_source",
    "feature_flag",
    "file_system",
    "file_system_shortcut",
    "group",
    "health_issue",
    "heatmap",
    "hog_flow",
    "hog_function",
    "ingestion_warning",
    "insight",
    "insight_variable",
    "integration",
    "legal_document",
    "link",
    "live_debugger",
    "llm_analytics",
    "ai_observability_clusters",
    "llm_gateway",
    "llm_playground",
    "llm_prompt",
    "llm_provider_key",
    "llm_skill",
    "logs",
    "loop",
    "marketing_analytics",
    "mcp_analytics",
    "metrics",
    "notebook",
    "organization",
    "organization_integration",
    "organization_member",
    "person",
    "plugin",
    "product_enablement",
    "product_tour",
    "project",
    "property_definition",
    "query",
    "query_performance",
    "replay_scanner",
    "review_hog",
    "revenue_analytics",
    "session_recording",
    "session_recording_playlist",
    "sharing_configuration",
    "signal_scout",
    "stamphog",
    "streamlit_app",
    "subscription",
    "survey",
    "tagger",
    "ticket",
    "task",
    "toolbar",
    "tracing",
    "field_note",
    "uploaded_media",
    "usage_metric",
    "user",
    "user_interview",
    "vision_action",
    "vision_alert",
    "visual_review",
    "warehouse_objects",
    "warehouse_table",
    "warehouse_view",
    "web_analytics",
    "webhook",
    "wizard_session",
};

bool api_scope_valid(cm_slice_t scope)
{
    if (cm_slice_eq_cstr(scope, "*"))
        return true;
    const char *colon = memchr(scope.p, ':', scope.len);
    if (colon == NULL)
        return false;
    cm_slice_t level = {colon + 1, (size_t)(scope.p + scope.len - colon - 1)};
    if (!cm_slice_eq_cstr(level, "read") && !cm_slice_eq_cstr(level, "write"))
        return false;
    cm_slice_t object = {scope.p, (size_t)(colon - scope.p)};
    for (size_t i = 0; i < CM_ARRAY_LEN(objects); i++)
        if (cm_slice_eq_cstr(object, objects[i]))
            return true;
    return false;
}

static bool in(cm_slice_t object, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cm_slice_eq_cstr(object, list[i]))
            return true;
    return false;
}

static cm_slice_t object_of(cm_slice_t scope)
{
    const char *colon = memchr(scope.p, ':', scope.len);
    return colon ? (cm_slice_t){scope.p, (size_t)(colon - scope.p)} : scope;
}

int api_scope_oauth(cm_slice_t scope)
{
    if (in(scope, always, CM_ARRAY_LEN(always)))
        return API_SCOPE_ALWAYS;
    if (cm_slice_eq_cstr(scope, "*") || !api_scope_valid(scope) ||
        in(object_of(scope), hidden, CM_ARRAY_LEN(hidden)))
        return API_SCOPE_UNKNOWN;
    if (in(object_of(scope), privileged, CM_ARRAY_LEN(privileged)))
        return API_SCOPE_PRIVILEGED;
    return API_SCOPE_GRANTABLE;
}

void api_scopes_oauth_write(cm_json_writer_t *w)
{
    cm_json_begin_array(w);
    char s[64];
    for (size_t i = 0; i < CM_ARRAY_LEN(objects); i++) {
        if (in(cm_slice_from_cstr(objects[i]), hidden, CM_ARRAY_LEN(hidden)))
            continue;
        snprintf(s, sizeof(s), "%s:read", objects[i]);
        cm_json_str_cstr(w, s);
        snprintf(s, sizeof(s), "%s:write", objects[i]);
        cm_json_str_cstr(w, s);
    }
    for (size_t i = 0; i < CM_ARRAY_LEN(always); i++)
        cm_json_str_cstr(w, always[i]);
    cm_json_end_array(w);
}
