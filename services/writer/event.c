/*
 * event.c - a queue message into a writer event (see event.h). The rules
 * for $set, $set_once, $unset, the automatic person properties and the
 * merge events follow PostHog's ingestion; docs/persons.md lists them.
 */
#include "event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/json.h"
#include "cm/timefmt.h"

/* Event properties copied to the person: the latest value under $set, the
 * first one under $set_once as $initial_<name without $>. */
static const char *const to_person[] = {
    "$app_build", "$app_name", "$app_namespace", "$app_version", "$browser", "$browser_version",
    "$device_type", "$current_url", "$pathname", "$os", "$os_name", "$os_version",
    "$referring_domain", "$referrer", "$screen_height", "$screen_width", "$viewport_height",
    "$viewport_width", "$raw_user_agent",
    /* campaign parameters */
    "utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_name", "utm_term", "gclid",
    "gad_source", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "twclid", "li_fat_id",
    "mc_cid", "igshid", "ttclid", "rdt_cid", "irclid", "_kx", "epik", "qclid", "sccid"};

static char *dup_text(cm_slice_t s)
{
    /* NUL cannot travel in a C string or a SQL text parameter: U+FFFD, as
     * capture does for distinct ids. */
    size_t nuls = 0;
    for (size_t i = 0; i < s.len; i++)
        nuls += s.p[i] == '\0';
    char *d = cm_xmalloc(s.len + 2 * nuls + 1), *o = d;
    for (size_t i = 0; i < s.len; i++) {
        if (s.p[i] == '\0') {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
        } else
            *o++ = s.p[i];
    }
    *o = '\0';
    return d;
}

/* A string member decoded, or NULL when absent or not a string. */
static char *str_member(cm_json_t obj, const char *key, cm_buf_t *scratch)
{
    cm_slice_t s;
    cm_buf_reset(scratch);
    if (cm_json_as_str(cm_json_get(obj, key), scratch, &s) != 0)
        return NULL;
    return dup_text(s);
}

/* JavaScript's String(x) for an id: strings as they are, anything else as
 * its JSON text. */
static char *as_id(cm_slice_t raw, cm_buf_t *scratch)
{
    cm_json_doc_t *doc;
    cm_slice_t s = raw;
    char *out;
    if (cm_json_parse(raw.p, raw.len, NULL, &doc, NULL) != 0)
        return dup_text(raw);
    cm_buf_reset(scratch);
    if (cm_json_as_str(cm_json_root(doc), scratch, &s) != 0)
        s = raw;
    out = dup_text(s);
    cm_json_doc_free(doc);
    return out;
}

/* JavaScript truthiness of a raw JSON value. */
static bool truthy(cm_slice_t raw)
{
    if (raw.p == NULL)
        return false;
    if ((raw.len == 4 && !memcmp(raw.p, "null", 4)) || (raw.len == 5 && !memcmp(raw.p, "false", 5)))
        return false;
    if (raw.len == 2 && !memcmp(raw.p, "\"\"", 2))
        return false;
    if (raw.len >= 1 && (raw.p[0] == '-' || (raw.p[0] >= '0' && raw.p[0] <= '9')))
        return strtod(raw.p, NULL) != 0; /* raw is followed by JSON text, never a digit */
    return true;
}

static bool dead(wr_event_t *ev, const char *reason)
{
    ev->fate = WR_EVENT_DEAD;
    ev->reason = reason;
    return false;
}

static bool time_member(cm_json_t obj, const char *key, int64_t *ms, cm_buf_t *scratch)
{
    cm_slice_t s;
    int64_t us;
    cm_buf_reset(scratch);
    if (cm_json_as_str(cm_json_get(obj, key), scratch, &s) != 0 ||
        cm_iso8601_parse(s.p, s.len, &us) != 0)
        return false;
    *ms = us / 1000;
    return true;
}

/* The top-level fields of a CapturedEvent (proto/captured_event.schema.json). */
static bool envelope(wr_event_t *ev, cm_json_t root, cm_buf_t *scratch)
{
    cm_slice_t s;
    if (cm_json_type(root) != CM_JSON_OBJECT)
        return dead(ev, "not_an_object");
    cm_buf_reset(scratch);
    if (cm_json_as_str(cm_json_get(root, "uuid"), scratch, &s) != 0 || !cm_uuid_valid(s.p, s.len))
        return dead(ev, "invalid_uuid");
    for (size_t i = 0; i < CM_UUID_STR_LEN; i++)
        ev->uuid[i] = (char)(s.p[i] >= 'A' && s.p[i] <= 'F' ? s.p[i] | 0x20 : s.p[i]);
    ev->uuid[CM_UUID_STR_LEN] = '\0';
    ev->distinct_id = str_member(root, "distinct_id", scratch);
    if (ev->distinct_id == NULL || ev->distinct_id[0] == '\0')
        return dead(ev, "invalid_distinct_id");
    ev->token = str_member(root, "token", scratch);
    if (ev->token == NULL || ev->token[0] == '\0' || strlen(ev->token) > 64)
        return dead(ev, "invalid_token");
    ev->event = str_member(root, "event", scratch);
    if (ev->event == NULL || ev->event[0] == '\0')
        return dead(ev, "invalid_event");
    if (cm_json_type(cm_json_get(root, "ip")) != CM_JSON_STRING)
        return dead(ev, "invalid_ip");
    if (!time_member(root, "timestamp", &ev->timestamp_ms, scratch))
        return dead(ev, "invalid_timestamp");
    if (!time_member(root, "now", &ev->now_ms, scratch))
        return dead(ev, "invalid_now");
    return true;
}

/* obj's members into p: borrowed when the document's text is in the
 * batch's arena (it outlives the maps), else copied. */
static void merge(wr_props_t *p, cm_json_t obj, bool borrow)
{
    if (borrow)
        wr_props_merge_borrowed(p, obj);
    else
        wr_props_merge_json(p, obj);
}

/* properties.$set then the top-level $set over it (PostHog: top level wins). */
static void person_updates(wr_event_t *ev, cm_json_t data, cm_json_t props, bool borrow)
{
    merge(&ev->set, cm_json_get(props, "$set"), borrow);
    merge(&ev->set, cm_json_get(data, "$set"), borrow);
    merge(&ev->set_once, cm_json_get(props, "$set_once"), borrow);
    merge(&ev->set_once, cm_json_get(data, "$set_once"), borrow);
    cm_json_t unset = cm_json_get(props, "$unset");
    cm_json_iter_t it = cm_json_iter(unset);
    cm_json_t k, v;
    cm_buf_t scratch;
    cm_buf_init(&scratch);
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t key;
        cm_buf_reset(&scratch);
        cm_json_t name = cm_json_type(unset) == CM_JSON_OBJECT ? k : v;
        if (cm_json_as_str(name, &scratch, &key) == 0)
            wr_props_set(&ev->unset, key, CM_SLICE_LIT("null"));
    }
    cm_buf_free(&scratch);
}

static void auto_person_properties(wr_event_t *ev)
{
    cm_slice_t is_server = wr_props_get(&ev->props, CM_SLICE_LIT("$is_server"));
    bool server = is_server.len == 4 && !memcmp(is_server.p, "true", 4);
    char initial[64] = "$initial_";
    for (size_t i = 0; i < sizeof(to_person) / sizeof(to_person[0]); i++) {
        const char *name = to_person[i];
        cm_slice_t key = cm_slice_from_cstr(name);
        cm_slice_t value = wr_props_get(&ev->props, key);
        if (value.p == NULL)
            continue;
        if (server && (!strcmp(name, "$os") || !strcmp(name, "$os_version")))
            continue;
        bool null = value.len == 4 && !memcmp(value.p, "null", 4);
        if (!strcmp(name, "$os_name")) { /* an alias of $os: only its first value is kept */
            if (!null)
                wr_props_set_once(&ev->set_once, CM_SLICE_LIT("$initial_os"), value);
            continue;
        }
        if (!wr_props_has(&ev->set, key))
            wr_props_set(&ev->set, key, value);
        if (null)
            continue;
        /* "$initial_" + the name without its "$" (the names are short) */
        cm_slice_t bare = name[0] == '$' ? (cm_slice_t){key.p + 1, key.len - 1} : key;
        memcpy(initial + 9, bare.p, bare.len);
        wr_props_set_once(&ev->set_once, (cm_slice_t){initial, 9 + bare.len}, value);
    }
}

static void strip_person_updates(wr_event_t *ev)
{
    wr_props_unset(&ev->props, CM_SLICE_LIT("$set"));
    wr_props_unset(&ev->props, CM_SLICE_LIT("$set_once"));
    wr_props_unset(&ev->props, CM_SLICE_LIT("$unset"));
    wr_props_free(&ev->set);
    wr_props_free(&ev->set_once);
    wr_props_free(&ev->unset);
}

static void put_object(wr_props_t *into, const char *key, const wr_props_t *obj)
{
    cm_buf_t b;
    cm_buf_init(&b);
    wr_props_write(obj, &b);
    wr_props_set(into, cm_slice_from_cstr(key), (cm_slice_t){b.p, b.len});
    cm_buf_free(&b);
}

/* Which person operation the event asks for. */
static void classify(wr_event_t *ev, cm_buf_t *scratch)
{
    const char *name = ev->event;
    if (!strcmp(name, "$identify")) {
        cm_slice_t anon = wr_props_get(&ev->props, CM_SLICE_LIT("$anon_distinct_id"));
        if (anon.p) {
            ev->kind = WR_KIND_IDENTIFY;
            ev->other_id = as_id(anon, scratch);
        }
    } else if (!strcmp(name, "$create_alias") || !strcmp(name, "$merge_dangerously")) {
        cm_slice_t alias = wr_props_get(&ev->props, CM_SLICE_LIT("alias"));
        if (truthy(alias)) {
            ev->kind = name[1] == 'c' ? WR_KIND_ALIAS : WR_KIND_MERGE_DANGEROUSLY;
            ev->other_id = as_id(alias, scratch);
        }
    } else if (!strcmp(name, "$groupidentify")) {
        cm_slice_t type = wr_props_get(&ev->props, CM_SLICE_LIT("$group_type"));
        cm_slice_t key = wr_props_get(&ev->props, CM_SLICE_LIT("$group_key"));
        if (truthy(type) && truthy(key)) {
            ev->kind = WR_KIND_GROUP_IDENTIFY;
            ev->group_type = as_id(type, scratch);
            ev->group_key = as_id(key, scratch);
            cm_slice_t set = wr_props_get(&ev->props, CM_SLICE_LIT("$group_set"));
            if (set.p)
                wr_props_load(&ev->group_set, set);
        }
    }
}

void wr_event_parse(wr_event_t *ev, const char *value, size_t len, size_t max_bytes)
{
    wr_event_parse_in(ev, NULL, value, len, max_bytes);
}

void wr_event_parse_in(wr_event_t *ev, cm_arena_t *arena, const char *value, size_t len,
                       size_t max_bytes)
{
    memset(ev, 0, sizeof(*ev));
    ev->process_person = true;
    if (arena) {
        wr_props_init_in(&ev->props, arena);
        wr_props_init_in(&ev->set, arena);
        wr_props_init_in(&ev->set_once, arena);
        wr_props_init_in(&ev->unset, arena);
        wr_props_init_in(&ev->group_set, arena);
    }
    if (len > max_bytes) {
        dead(ev, "too_large");
        return;
    }
    cm_json_doc_t *doc = NULL, *data_doc = NULL;
    cm_buf_t scratch, data_text;
    cm_buf_init(&scratch);
    cm_buf_init(&data_text);
    if (cm_json_parse(value, len, NULL, &doc, NULL) != 0) {
        dead(ev, "invalid_json");
        goto done;
    }
    cm_json_t root = cm_json_root(doc);
    if (!envelope(ev, root, &scratch))
        goto done;
    /* data is a JSON document inside a JSON string (the wire contract):
     * decoded once; with an arena, into it, so the maps borrow its bytes. */
    cm_slice_t data_src = CM_SLICE_NULL;
    cm_json_t data_str = cm_json_get(root, "data");
    if (arena && cm_json_type(data_str) == CM_JSON_STRING && !cm_json_str_has_escapes(data_str))
        data_src = cm_arena_dup(arena, cm_json_str_inner(data_str));
    else if (cm_json_str_append(data_str, &data_text) == 0)
        data_src = arena ? cm_arena_dup(arena, (cm_slice_t){data_text.p, data_text.len})
                         : (cm_slice_t){data_text.p, data_text.len};
    if (data_src.p == NULL || cm_json_parse(data_src.p, data_src.len, NULL, &data_doc, NULL) != 0 ||
        cm_json_type(cm_json_root(data_doc)) != CM_JSON_OBJECT) {
        dead(ev, "invalid_data");
        goto done;
    }
    cm_json_t data = cm_json_root(data_doc);
    cm_json_t props = cm_json_get(data, "properties");
    if (cm_json_exists(props) && cm_json_type(props) != CM_JSON_OBJECT) {
        dead(ev, "invalid_properties");
        goto done;
    }
    merge(&ev->props, props, arena != NULL);
    person_updates(ev, data, props, arena != NULL);

    cm_slice_t pp = wr_props_get(&ev->props, CM_SLICE_LIT("$process_person_profile"));
    if (pp.len == 5 && !memcmp(pp.p, "false", 5))
        ev->process_person = false;
    else if (pp.len == 4 && !memcmp(pp.p, "true", 4))
        wr_props_unset(&ev->props, CM_SLICE_LIT("$process_person_profile"));

    classify(ev, &scratch);
    if (ev->kind == WR_KIND_GROUP_IDENTIFY) {
        strip_person_updates(ev);
        ev->process_person = false; /* groups only: no person is made or changed */
    } else if (!ev->process_person) {
        strip_person_updates(ev);
        if (ev->kind != WR_KIND_PLAIN) {
            ev->fate = WR_EVENT_DROP;
            ev->reason = "invalid_event_when_process_person_profile_is_false";
            goto done;
        }
    } else {
        if (strcmp(ev->event, "$snapshot") != 0 && strcmp(ev->event, "$performance_event") != 0)
            auto_person_properties(ev);
        if (ev->set.live || wr_props_has(&ev->props, CM_SLICE_LIT("$set")))
            put_object(&ev->props, "$set", &ev->set);
        if (ev->set_once.live || wr_props_has(&ev->props, CM_SLICE_LIT("$set_once")))
            put_object(&ev->props, "$set_once", &ev->set_once);
    }
    if (!wr_props_has(&ev->props,
                      CM_SLICE_LIT("$ip"))) /* the client's address, as capture saw it */
        wr_props_set(&ev->props, CM_SLICE_LIT("$ip"), cm_json_raw(cm_json_get(root, "ip")));
    cm_slice_t sid = wr_props_get(&ev->props, CM_SLICE_LIT("$session_id"));
    ev->session_id = sid.p && sid.p[0] == '"' ? as_id(sid, &scratch) : cm_xstrdup("");
    if (cm_uuid_valid(ev->session_id, strlen(ev->session_id)))
        for (char *c = ev->session_id; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'F' ? *c | 0x20 : *c);
done:
    cm_json_doc_free(data_doc);
    cm_json_doc_free(doc);
    cm_buf_free(&scratch);
    cm_buf_free(&data_text);
}

void wr_event_free(wr_event_t *ev)
{
    free(ev->token);
    free(ev->distinct_id);
    free(ev->event);
    free(ev->session_id);
    free(ev->other_id);
    free(ev->group_type);
    free(ev->group_key);
    free(ev->person_properties);
    wr_props_free(&ev->props);
    wr_props_free(&ev->set);
    wr_props_free(&ev->set_once);
    wr_props_free(&ev->unset);
    wr_props_free(&ev->group_set);
    memset(ev, 0, sizeof(*ev));
}

void wr_event_properties_json(const wr_event_t *ev, cm_buf_t *out)
{
    wr_props_write(&ev->props, out);
}

/* Ids PostHog never merges through: placeholders clients send by mistake. */
bool wr_distinct_id_illegal(const char *id)
{
    static const char *const any_case[] = {
        "anonymous",         "guest", "distinctid", "distinct_id", "id",
        "not_authenticated", "email", "undefined",  "true",        "false"};
    static const char *const exact[] = {"[object Object]", "NaN", "None", "none", "null", "0",
                                        "undefined"};
    const char *p = id;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p == '\0')
        return true;
    size_t n = strlen(id);
    for (int quoted = 0; quoted < 2; quoted++) {
        const char *s = id;
        size_t len = n;
        if (quoted) {
            if (n < 2 ||
                !((id[0] == '\'' && id[n - 1] == '\'') || (id[0] == '"' && id[n - 1] == '"')))
                break;
            s = id + 1;
            len = n - 2;
        }
        for (size_t i = 0; i < sizeof(any_case) / sizeof(any_case[0]); i++)
            if (strlen(any_case[i]) == len && !strncasecmp(s, any_case[i], len))
                return true;
        for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
            if (strlen(exact[i]) == len && !strncmp(s, exact[i], len))
                return true;
    }
    return false;
}
