/*
 * scopes.c - the scope names personal API keys (and later OAuth) accept.
 *
 * A scope is "<object>:read" or "<object>:write", or "*". The objects are
 * PostHog's APIScopeObject list as the notes give it (oauth.md 4.5), less
 * the internal ones no user may grant.
 */
#include <string.h>

#include "cm/common.h"
#include "http/http.h"

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
