/* persons.c - PostHog's person rules on one batch's state (see persons.h, docs/persons.md). */
#include "persons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/json.h"

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 16;                                                          \
            (arr) = cm_xrealloc((arr), (cap) * sizeof(*(arr)));                                    \
        }                                                                                          \
    } while (0)

void wr_state_init(wr_state_t *st)
{
    memset(st, 0, sizeof(*st));
    st->pdis = cm_strset_new(64);
    st->groups = cm_strset_new(8);
    st->by_uuid = cm_strset_new(64);
}

void wr_state_free(wr_state_t *st)
{
    for (size_t i = 0; i < st->npersons; i++) {
        wr_person_t *p = st->persons[i];
        wr_props_free(&p->props);
        for (size_t j = 0; j < p->ndids; j++)
            free(p->dids[j]);
        free(p->dids);
        free(p);
    }
    for (size_t i = 0; i < st->npdis; i++) {
        free(st->pdi_list[i]->distinct_id);
        free(st->pdi_list[i]);
    }
    for (size_t i = 0; i < st->ngroups; i++) {
        wr_group_t *g = st->group_list[i];
        free(g->type);
        free(g->key);
        wr_props_free(&g->props);
        free(g);
    }
    free(st->persons);
    cm_arena_free(&st->arena); /* after the maps that keep their bytes there */
    free(st->pdi_list);
    free(st->group_list);
    cm_strset_free(st->pdis);
    cm_strset_free(st->groups);
    cm_strset_free(st->by_uuid);
    memset(st, 0, sizeof(*st));
}

static void pdi_key(cm_buf_t *k, long long project_id, const char *did)
{
    cm_buf_reset(k);
    cm_buf_appendf(k, "%lld:%s", project_id, did);
}

static wr_pdi_t *find_pdi(wr_state_t *st, long long project_id, const char *did)
{
    cm_buf_t k;
    cm_buf_init(&k);
    pdi_key(&k, project_id, did);
    wr_pdi_t *d = cm_strset_get(st->pdis, (cm_slice_t){k.p, k.len});
    cm_buf_free(&k);
    return d;
}

static wr_person_t *find_person(wr_state_t *st, const char *uuid)
{
    return cm_strset_get(st->by_uuid, cm_slice_from_cstr(uuid));
}

static void add_person(wr_state_t *st, wr_person_t *p)
{
    GROW(st->persons, st->npersons, st->cap);
    st->persons[st->npersons++] = p;
    cm_strset_put(st->by_uuid, cm_slice_from_cstr(p->uuid), p);
}

static void person_add_did(wr_person_t *p, const char *did)
{
    GROW(p->dids, p->ndids, p->cap);
    p->dids[p->ndids++] = cm_xstrdup(did);
}

static wr_pdi_t *add_pdi(wr_state_t *st, long long project_id, const char *did, wr_person_t *p,
                         long long version, bool is_new)
{
    wr_pdi_t *d = cm_xcalloc(1, sizeof(*d));
    d->distinct_id = cm_xstrdup(did);
    d->project_id = project_id;
    d->person = p;
    d->version = version;
    d->is_new = is_new;
    st->changes += is_new;
    cm_buf_t k;
    cm_buf_init(&k);
    pdi_key(&k, project_id, did);
    cm_strset_put(st->pdis, (cm_slice_t){k.p, k.len}, d);
    cm_buf_free(&k);
    GROW(st->pdi_list, st->npdis, st->pdi_cap);
    st->pdi_list[st->npdis++] = d;
    person_add_did(p, did);
    return d;
}

wr_person_t *wr_state_person(wr_state_t *st, long long project_id, const char *uuid,
                             cm_slice_t properties, cm_slice_t times, bool is_identified,
                             long long version, int64_t created_at_ms)
{
    wr_person_t *p = find_person(st, uuid);
    if (p)
        return p;
    p = cm_xcalloc(1, sizeof(*p));
    snprintf(p->uuid, sizeof(p->uuid), "%s", uuid);
    p->project_id = project_id;
    wr_props_init_in(&p->props, &st->arena);
    if (st->memo) {
        char key[24 + CM_UUID_STR_LEN + 1];
        int n = snprintf(key, sizeof(key), "%lld:%s", project_id, uuid);
        wr_props_memo_load(st->memo,
                           (cm_slice_t){key, n < 0 ? 0 : CM_MIN((size_t)n, sizeof(key) - 1)},
                           properties, times, &p->props);
    } else {
        wr_props_load(&p->props, properties);
        if (times.len)
            wr_props_load_times(&p->props, times);
    }
    p->is_identified = is_identified;
    p->version = version;
    p->created_at_ms = created_at_ms;
    add_person(st, p);
    return p;
}

bool wr_state_distinct_id(wr_state_t *st, long long project_id, const char *distinct_id,
                          const char *person_uuid, long long version)
{
    wr_person_t *p = find_person(st, person_uuid);
    if (p == NULL || find_pdi(st, project_id, distinct_id))
        return p != NULL;
    add_pdi(st, project_id, distinct_id, p, version, false);
    return true;
}

static void group_key(cm_buf_t *k, long long project_id, const char *type, const char *key)
{
    cm_buf_reset(k);
    cm_buf_appendf(k, "%lld:%s:%s", project_id, type, key);
}

static wr_group_t *add_group(wr_state_t *st, long long project_id, const char *type,
                             const char *key)
{
    wr_group_t *g = cm_xcalloc(1, sizeof(*g));
    wr_props_init_in(&g->props, &st->arena);
    g->project_id = project_id;
    g->type = cm_xstrdup(type);
    g->key = cm_xstrdup(key);
    cm_buf_t k;
    cm_buf_init(&k);
    group_key(&k, project_id, type, key);
    cm_strset_put(st->groups, (cm_slice_t){k.p, k.len}, g);
    cm_buf_free(&k);
    GROW(st->group_list, st->ngroups, st->group_cap);
    st->group_list[st->ngroups++] = g;
    return g;
}

void wr_state_group(wr_state_t *st, long long project_id, const char *type, const char *key,
                    cm_slice_t properties, cm_slice_t times, long long version,
                    int64_t created_at_ms)
{
    wr_group_t *g = add_group(st, project_id, type, key);
    wr_props_load(&g->props, properties);
    if (times.len)
        wr_props_load_times(&g->props, times);
    g->version = version;
    g->created_at_ms = created_at_ms;
}

/* ---- the rules --------------------------------------------------------------------- */

static void touch(wr_state_t *st, wr_person_t *p)
{
    st->changes++;
    if (!p->dirty && !p->is_new)
        p->version++; /* once per batch: the store sees one change */
    p->dirty = true;
}

static wr_person_t *create_person(wr_state_t *st, const wr_event_t *ev, const char *did)
{
    char name[64 + 256], uuid[CM_UUID_STR_LEN + 1];
    int n = snprintf(name, sizeof(name), "%lld:", ev->project_id);
    cm_buf_t b;
    cm_buf_init(&b);
    cm_buf_append(&b, name, (size_t)n);
    cm_buf_append_cstr(&b, did);
    cm_uuid_v5(WR_PERSON_UUID_NAMESPACE, b.p, b.len, uuid);
    cm_buf_free(&b);
    wr_person_t *p = cm_xcalloc(1, sizeof(*p));
    wr_props_init_in(&p->props, &st->arena);
    memcpy(p->uuid, uuid, sizeof(uuid));
    p->project_id = ev->project_id;
    p->created_at_ms = ev->timestamp_ms;
    p->is_new = true;
    p->dirty = true;
    char quoted[CM_UUID_STR_LEN + 3];
    snprintf(quoted, sizeof(quoted), "\"%s\"", ev->uuid);
    wr_props_set_once_at(&p->props, CM_SLICE_LIT("$creator_event_uuid"), cm_slice_from_cstr(quoted),
                         ev->timestamp_ms);
    add_person(st, p);
    add_pdi(st, ev->project_id, did, p, 0, true);
    return p;
}

/*
 * Properties that change on almost every event (the page, the screen, the
 * browser's version): as PostHog does, a new value of one the person
 * already has is kept in memory (the event's person_properties show it) but
 * does not by itself make the person be written; a person event ($identify,
 * $set, the merges) or any other change writes it with everything.
 */
static bool high_churn(cm_slice_t key)
{
    static const char *const keys[] = {"$current_url",
                                       "$pathname",
                                       "$referrer",
                                       "$referring_domain",
                                       "$screen_height",
                                       "$screen_width",
                                       "$viewport_height",
                                       "$viewport_width",
                                       "$browser",
                                       "$browser_version",
                                       "$device_type",
                                       "$raw_user_agent",
                                       "$os",
                                       "$os_name",
                                       "$os_version"};
    if (key.len > 7 && !memcmp(key.p, "$geoip_", 7))
        return true;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (cm_slice_eq_cstr(key, keys[i]))
            return true;
    return false;
}

static bool person_event(const wr_event_t *ev)
{
    return ev->kind != WR_KIND_PLAIN || !strcmp(ev->event, "$set") ||
           !strcmp(ev->event, "$identify");
}

/* $set_once, then $set, then $unset, as PostHog applies them; the event
 * that creates the person ignores $unset (there is nothing to remove). */
static void apply_updates(wr_state_t *st, wr_person_t *p, const wr_event_t *ev, bool created)
{
    bool quiet_churn = !created && !person_event(ev);
    bool changed = false;
    int64_t t = ev->timestamp_ms;
    for (size_t i = 0; i < ev->set_once.n; i++) {
        const wr_prop_t *x = &ev->set_once.v[i];
        if (x->val)
            changed |= wr_props_set_once_at(&p->props, (cm_slice_t){x->key, x->klen},
                                            (cm_slice_t){x->val, x->vlen}, t);
    }
    for (size_t i = 0; i < ev->set.n; i++) {
        const wr_prop_t *x = &ev->set.v[i];
        if (x->val == NULL)
            continue;
        cm_slice_t key = {x->key, x->klen};
        bool quiet = quiet_churn && high_churn(key) && wr_props_has(&p->props, key);
        if (wr_props_set_at(&p->props, key, (cm_slice_t){x->val, x->vlen}, t) && !quiet)
            changed = true;
    }
    if (!created)
        for (size_t i = 0; i < ev->unset.n; i++) {
            const wr_prop_t *x = &ev->unset.v[i];
            if (x->val)
                changed |= wr_props_unset_at(&p->props, (cm_slice_t){x->key, x->klen}, t);
        }
    if (changed)
        touch(st, p);
}

static void move_dids(wr_state_t *st, wr_person_t *from, wr_person_t *to)
{
    for (size_t i = 0; i < from->ndids; i++) {
        wr_pdi_t *d = find_pdi(st, from->project_id, from->dids[i]);
        if (d == NULL)
            continue;
        d->person = to;
        d->version++;
        d->moved = true;
        st->changes++;
        person_add_did(to, from->dids[i]);
    }
}

/* other's person into target's: target keeps its uuid and wins on conflicts. */
static void merge_people(wr_state_t *st, wr_person_t *target, wr_person_t *other)
{
    wr_props_t merged;
    wr_props_init_in(&merged, target->props.shared);
    wr_props_copy(&merged, &other->props);
    wr_props_copy(&merged, &target->props);
    wr_props_free(&target->props);
    target->props = merged;
    if (other->created_at_ms < target->created_at_ms)
        target->created_at_ms = other->created_at_ms;
    /* Higher than both: the Redis mirror and the event store keep the row
     * with the highest version, and the moved distinct ids had other's. */
    long long mine = target->version + (target->dirty || target->is_new ? 0 : 1);
    target->version = mine > other->version + 1 ? mine : other->version + 1;
    target->dirty = true;
    target->is_identified = true;
    move_dids(st, other, target);
    other->deleted = true;
    other->dirty = true;
    other->version += 100; /* as PostHog marks a deleted person for ClickHouse */
}

/* The person an event's merge leaves it with, or NULL to go on as a plain event. */
static wr_person_t *merge(wr_state_t *st, wr_event_t *ev)
{
    const char *did = ev->distinct_id, *other = ev->other_id;
    if (!strcmp(did, other))
        return NULL;
    if (wr_distinct_id_illegal(did) || wr_distinct_id_illegal(other)) {
        ev->warning = "cannot_merge_with_illegal_distinct_id";
        return NULL;
    }
    wr_pdi_t *a = find_pdi(st, ev->project_id, did), *b = find_pdi(st, ev->project_id, other);
    wr_person_t *target;
    if (a == NULL && b == NULL) {
        target = create_person(st, ev, did);
        add_pdi(st, ev->project_id, other, target, 0, true);
    } else if (b == NULL) {
        target = a->person;
        add_pdi(st, ev->project_id, other, target, 0, true);
    } else if (a == NULL) {
        target = b->person;
        add_pdi(st, ev->project_id, did, target, 0, true);
    } else if (a->person == b->person) {
        target = a->person;
    } else if (b->person->is_identified && ev->kind != WR_KIND_MERGE_DANGEROUSLY) {
        ev->warning = "cannot_merge_already_identified";
        target = a->person;
    } else {
        target = a->person;
        merge_people(st, target, b->person);
    }
    if (!target->is_identified) {
        target->is_identified = true;
        touch(st, target);
    }
    return target;
}

static void person_properties(wr_event_t *ev, const wr_person_t *p)
{
    cm_buf_t b;
    cm_buf_init(&b);
    if (p)
        wr_props_write(&p->props, &b);
    else
        cm_buf_append_cstr(&b, "{}");
    free(ev->person_properties);
    ev->person_properties = cm_xstrdup(cm_buf_cstr(&b));
    cm_buf_free(&b);
}

static void group_identify(wr_state_t *st, wr_event_t *ev)
{
    cm_buf_t k;
    cm_buf_init(&k);
    group_key(&k, ev->project_id, ev->group_type, ev->group_key);
    wr_group_t *g = cm_strset_get(st->groups, (cm_slice_t){k.p, k.len});
    cm_buf_free(&k);
    if (g == NULL) {
        g = add_group(st, ev->project_id, ev->group_type, ev->group_key);
        g->is_new = true;
        g->dirty = true;
        st->changes++;
        g->version = 1;
        g->created_at_ms = ev->timestamp_ms < ev->now_ms ? ev->timestamp_ms : ev->now_ms;
    }
    bool changed = false;
    for (size_t i = 0; i < ev->group_set.n; i++) {
        const wr_prop_t *x = &ev->group_set.v[i];
        if (x->val)
            changed |= wr_props_set_at(&g->props, (cm_slice_t){x->key, x->klen},
                                       (cm_slice_t){x->val, x->vlen}, ev->timestamp_ms);
    }
    if (changed)
        st->changes++;
    if (changed && !g->dirty) {
        g->version++;
        g->dirty = true;
    }
}

static void resend(wr_state_t *st, wr_event_t *ev, wr_pdi_t *d)
{
    if (d) {
        d->person->resend = true;
        for (size_t i = 0; i < d->person->ndids; i++) {
            wr_pdi_t *x = find_pdi(st, ev->project_id, d->person->dids[i]);
            if (x)
                x->resend = true;
        }
    }
    if (ev->kind == WR_KIND_GROUP_IDENTIFY) {
        cm_buf_t k;
        cm_buf_init(&k);
        group_key(&k, ev->project_id, ev->group_type, ev->group_key);
        wr_group_t *g = cm_strset_get(st->groups, (cm_slice_t){k.p, k.len});
        cm_buf_free(&k);
        if (g)
            g->resend = true;
    }
}

static void apply(wr_state_t *st, wr_event_t *ev, bool seen);

void wr_persons_apply(wr_state_t *st, wr_event_t *ev, bool seen)
{
    unsigned long before = st->changes;
    apply(st, ev, seen);
    ev->changed = st->changes != before;
}

static void apply(wr_state_t *st, wr_event_t *ev, bool seen)
{
    wr_pdi_t *d = find_pdi(st, ev->project_id, ev->distinct_id);
    if (seen)
        resend(st, ev, d);
    if (seen || !ev->process_person) {
        if (ev->kind == WR_KIND_GROUP_IDENTIFY && !seen)
            group_identify(st, ev);
        if (d) {
            snprintf(ev->person_id, sizeof(ev->person_id), "%s", d->person->uuid);
            person_properties(ev, seen && ev->process_person ? d->person : NULL);
            return;
        }
        char name[32];
        cm_buf_t b;
        cm_buf_init(&b);
        cm_buf_append(&b, name, (size_t)snprintf(name, sizeof(name), "%lld:", ev->project_id));
        cm_buf_append_cstr(&b, ev->distinct_id);
        cm_uuid_v5(WR_PERSON_UUID_NAMESPACE, b.p, b.len, ev->person_id);
        cm_buf_free(&b);
        person_properties(ev, NULL);
        return;
    }
    wr_person_t *p = NULL;
    size_t before = st->npersons;
    if (ev->kind == WR_KIND_IDENTIFY || ev->kind == WR_KIND_ALIAS ||
        ev->kind == WR_KIND_MERGE_DANGEROUSLY)
        p = merge(st, ev);
    if (p == NULL) {
        d = find_pdi(st, ev->project_id, ev->distinct_id);
        p = d ? d->person : create_person(st, ev, ev->distinct_id);
    }
    apply_updates(st, p, ev, st->npersons > before);
    snprintf(ev->person_id, sizeof(ev->person_id), "%s", p->uuid);
    person_properties(ev, p);
}
