/* tzone.c - a project's zone for the evaluator, over libcommon's cm_tzone. */
#include "core/tzone.h"

#include <stdlib.h>

#include "cm/alloc.h"
#include "cm/tzone.h"

struct flg_tzone {
    flg_tz_t tz; /* first: the evaluator's callback gets &tz back */
    cm_tzone_t *zone;
};

static int32_t offset_at(const flg_tz_t *tz, int64_t utc_seconds)
{
    return cm_tzone_offset(((const flg_tzone_t *)tz)->zone, utc_seconds);
}

flg_tzone_t *flg_tzone_open(cm_slice_t name)
{
    cm_tzone_t *zone = cm_tzone_open(name);
    if (zone == NULL)
        return NULL;
    flg_tzone_t *z = cm_xcalloc(1, sizeof(*z));
    z->tz.utc_offset = offset_at;
    z->tz.ud = z;
    z->zone = zone;
    return z;
}

void flg_tzone_free(flg_tzone_t *z)
{
    if (!z)
        return;
    cm_tzone_free(z->zone);
    free(z);
}

const flg_tz_t *flg_tzone_tz(const flg_tzone_t *z)
{
    return &z->tz;
}

const char *flg_tzone_name(const flg_tzone_t *z)
{
    return cm_tzone_name(z->zone);
}
