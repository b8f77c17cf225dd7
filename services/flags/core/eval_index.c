/*
 * eval_index.c - the lookups one evaluation makes into the request, made
 * cheap once per evaluation (eval_int.h).
 *
 * A client chooses the size of everything it sends: 50,000 person
 * properties, a 50,000-entry flag_keys_to_evaluate, as many group types or
 * static cohorts as it likes. Each of these is read once per flag (or per
 * filter), so with 10,000 flags a scan per read held the loop for seconds.
 * Objects with EV_INDEX_MIN members or more get a hash index (cm_json_index:
 * the same answers as cm_json_get_s, the last duplicate winning); lists of
 * as many entries become string sets. Small ones are scanned, which is
 * faster than building anything.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/json.h"
#include "cm/strset.h"
#include "core/eval_int.h"

static cm_json_index_t *index_if_large(cm_json_t obj)
{
    return cm_json_type(obj) == CM_JSON_OBJECT && cm_json_len(obj) >= EV_INDEX_MIN
               ? cm_json_index_new(obj)
               : NULL;
}

/* The strings of a long list as a set (numbers too, in decimal, into nums
 * when given); a short list stays a list to scan. */
static void make_set(ev_set_t *s, cm_json_t list, ev_set_t *nums)
{
    s->list = list;
    if (nums != NULL)
        nums->list = list;
    if (cm_json_type(list) != CM_JSON_ARRAY || cm_json_len(list) < EV_INDEX_MIN)
        return;
    s->set = cm_strset_new(cm_json_len(list));
    if (nums != NULL)
        nums->set = cm_strset_new(16);
    cm_buf_t scratch = CM_BUF_INIT;
    cm_json_iter_t it = cm_json_iter(list);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t str;
        int64_t n;
        if (cm_json_type(v) == CM_JSON_STRING && cm_json_as_str(v, &scratch, &str) == 0) {
            cm_strset_add(s->set, str);
        } else if (nums != NULL && cm_json_as_int64(v, &n) == 0) {
            char text[24];
            int len = snprintf(text, sizeof(text), "%lld", (long long)n);
            cm_strset_add(nums->set, (cm_slice_t){text, (size_t)len});
        }
    }
    cm_buf_free(&scratch);
}

void ev_make_indexes(ev_t *ev)
{
    const flg_context_t *ctx = ev->ctx;
    ev->person_ix[0] = index_if_large(ctx->person_properties);
    ev->person_ix[1] = index_if_large(ctx->geoip_properties);
    ev->person_ix[2] = index_if_large(ctx->stored_person_properties);
    if (ctx->nstored_groups > 0) {
        ev->stored_group_ix = cm_xcalloc(ctx->nstored_groups, sizeof(*ev->stored_group_ix));
        for (uint32_t i = 0; i < ctx->nstored_groups; i++)
            ev->stored_group_ix[i] = index_if_large(ctx->stored_groups[i].properties);
    }
    ev->group_props_ix = index_if_large(ctx->group_properties);
    ev->groups_ix = index_if_large(ctx->groups);
    ev->overrides_ix = index_if_large(ctx->hash_key_overrides);
    /* One index per large group object: the one each group type resolves
     * to (the last of its duplicates, as the lookup finds it). */
    cm_json_iter_t it = cm_json_iter(ctx->group_properties);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v) && ev->ngroup_ix < EV_MAX_GROUP_IX) {
        cm_json_t last = ev_lookup(ctx->group_properties, ev->group_props_ix, cm_json_str_inner(k));
        if (last.i != v.i || cm_json_type(v) != CM_JSON_OBJECT || cm_json_len(v) < EV_INDEX_MIN)
            continue;
        ev->group_ix[ev->ngroup_ix] = cm_json_index_new(v);
        ev->group_obj[ev->ngroup_ix++] = v.i;
    }
    make_set(&ev->keys_set, ctx->flag_keys, NULL);
    make_set(&ev->contexts_set, ctx->evaluation_contexts, NULL);
    make_set(&ev->cohort_strs, ctx->static_cohorts, &ev->cohort_nums);
}

void ev_free_indexes(ev_t *ev)
{
    for (size_t i = 0; i < CM_ARRAY_LEN(ev->person_ix); i++)
        cm_json_index_free(ev->person_ix[i]);
    for (uint32_t i = 0; ev->stored_group_ix && i < ev->ctx->nstored_groups; i++)
        cm_json_index_free(ev->stored_group_ix[i]);
    free(ev->stored_group_ix);
    cm_json_index_free(ev->group_props_ix);
    cm_json_index_free(ev->groups_ix);
    cm_json_index_free(ev->overrides_ix);
    for (uint32_t i = 0; i < ev->ngroup_ix; i++)
        cm_json_index_free(ev->group_ix[i]);
    cm_strset_free(ev->keys_set.set);
    cm_strset_free(ev->contexts_set.set);
    cm_strset_free(ev->cohort_strs.set);
    cm_strset_free(ev->cohort_nums.set);
}

bool ev_set_has(const ev_set_t *s, cm_slice_t key)
{
    if (s->set != NULL)
        return cm_strset_has(s->set, key);
    cm_json_iter_t it = cm_json_iter(s->list);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v))
        if (cm_json_str_eq(v, key))
            return true;
    return false;
}

bool ev_static_member(const ev_t *ev, const flg_filter_t *f)
{
    if (ev->cohort_strs.set == NULL) { /* short: scan, string or number */
        cm_json_iter_t it = cm_json_iter(ev->cohort_strs.list);
        cm_json_t k, id;
        while (cm_json_next(&it, &k, &id)) {
            int64_t n;
            if (f->cohort_id_numeric && cm_json_as_int64(id, &n) == 0 && n == f->cohort_num)
                return true;
            if (cm_json_str_eq(id, f->cohort_id))
                return true;
        }
        return false;
    }
    if (f->cohort_id_numeric) {
        char text[24];
        int len = snprintf(text, sizeof(text), "%lld", (long long)f->cohort_num);
        if (cm_strset_has(ev->cohort_nums.set, (cm_slice_t){text, (size_t)len}))
            return true;
    }
    return cm_strset_has(ev->cohort_strs.set, f->cohort_id);
}
