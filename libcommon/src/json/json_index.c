/*
 * json_index.c - a hash index over one object's members (see json.h).
 *
 * Open addressing, linear probing, a power-of-two table at most half full.
 * A slot holds the key node and the value node; keys are hashed decoded
 * (a key written with escapes hashes like its plain spelling) and compared
 * with cm_json_str_eq, so a lookup costs one hash of the key asked for and,
 * nearly always, one comparison. Nothing of the keys is copied.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/json.h"
#include "cm/hashfn.h"

typedef struct {
    uint32_t key; /* node index + 1; 0: empty */
    uint32_t val;
} slot_t;

struct cm_json_index {
    const cm_json_doc_t *doc;
    uint32_t mask;
    slot_t *slots;
};

cm_json_index_t *cm_json_index_new(cm_json_t obj)
{
    if (cm_json_type(obj) != CM_JSON_OBJECT)
        return NULL;
    uint32_t size = 8;
    while (size < 2 * (uint64_t)cm_json_len(obj))
        size *= 2;
    cm_json_index_t *ix = cm_xmalloc(sizeof(*ix));
    ix->doc = obj.doc;
    ix->mask = size - 1;
    ix->slots = cm_xcalloc(size, sizeof(slot_t));
    cm_buf_t scratch = CM_BUF_INIT;
    cm_json_iter_t it = cm_json_iter(obj);
    cm_json_t k, v;
    while (cm_json_next(&it, &k, &v)) {
        cm_slice_t name;
        if (!cm_json_str_has_escapes(k))
            name = cm_json_str_inner(k);
        else if (cm_json_as_str(k, &scratch, &name) != 0)
            continue; /* undecodable: cm_json_get_s could not match it either */
        uint32_t i = cm_fnv1a_32(name) & ix->mask;
        for (;; i = (i + 1) & ix->mask) {
            slot_t *sl = &ix->slots[i];
            if (sl->key == 0) {
                *sl = (slot_t){k.i + 1, v.i};
                break;
            }
            if (cm_json_str_eq((cm_json_t){obj.doc, sl->key - 1}, name)) {
                sl->val = v.i; /* a later duplicate wins */
                break;
            }
        }
    }
    cm_buf_free(&scratch);
    return ix;
}

cm_json_t cm_json_index_get(const cm_json_index_t *ix, cm_slice_t key)
{
    if (ix == NULL)
        return CM_JSON_NONE_VALUE;
    for (uint32_t i = cm_fnv1a_32(key) & ix->mask;; i = (i + 1) & ix->mask) {
        const slot_t *sl = &ix->slots[i];
        if (sl->key == 0)
            return CM_JSON_NONE_VALUE;
        if (cm_json_str_eq((cm_json_t){ix->doc, sl->key - 1}, key))
            return (cm_json_t){ix->doc, sl->val};
    }
}

void cm_json_index_free(cm_json_index_t *ix)
{
    if (ix == NULL)
        return;
    free(ix->slots);
    free(ix);
}
