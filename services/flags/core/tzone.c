/* tzone.c - project time zones through ICU's calendar (see tzone.h). */
#include "core/tzone.h"

#include <stdlib.h>
#include <string.h>
#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "cm/alloc.h"

#define NAME_MAX_LEN 64 /* the longest IANA names are about 30 characters */

struct flg_tzone {
    flg_tz_t tz; /* first: the evaluator's callback gets &tz back */
    UCalendar *cal;
    char name[NAME_MAX_LEN + 1];
};

static int32_t offset_at(const flg_tz_t *tz, int64_t utc_seconds)
{
    const flg_tzone_t *z = (const flg_tzone_t *)tz;
    UErrorCode st = U_ZERO_ERROR;
    /* Setting the time is what a lookup costs; the calendar is ours alone
     * (one loop thread), so moving it behind a const pointer is safe. */
    ucal_setMillis(z->cal, (UDate)utc_seconds * 1000.0, &st);
    int32_t ms = ucal_get(z->cal, UCAL_ZONE_OFFSET, &st);
    ms += ucal_get(z->cal, UCAL_DST_OFFSET, &st);
    return U_SUCCESS(st) ? ms / 1000 : 0;
}

flg_tzone_t *flg_tzone_open(cm_slice_t name)
{
    if (name.len == 0 || name.len > NAME_MAX_LEN)
        return NULL;
    UChar id[NAME_MAX_LEN + 1];
    for (size_t i = 0; i < name.len; i++) {
        unsigned char c = (unsigned char)name.p[i];
        if (c < 0x21 || c > 0x7e) /* IANA names are printable ASCII */
            return NULL;
        id[i] = c;
    }
    id[name.len] = 0;
    /* ucal_open falls back to GMT for a name it does not know; asking for
     * the canonical ID first tells unknown names apart. */
    UChar canon[NAME_MAX_LEN + 1];
    UBool system = 0;
    UErrorCode st = U_ZERO_ERROR;
    ucal_getCanonicalTimeZoneID(id, (int32_t)name.len, canon, NAME_MAX_LEN, &system, &st);
    if (U_FAILURE(st) || !system)
        return NULL;
    UCalendar *cal = ucal_open(id, (int32_t)name.len, "en_US_POSIX", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st) || cal == NULL)
        return NULL;
    flg_tzone_t *z = cm_xcalloc(1, sizeof(*z));
    z->tz.utc_offset = offset_at;
    z->tz.ud = z;
    z->cal = cal;
    memcpy(z->name, name.p, name.len);
    return z;
}

void flg_tzone_free(flg_tzone_t *z)
{
    if (!z)
        return;
    ucal_close(z->cal);
    free(z);
}

const flg_tz_t *flg_tzone_tz(const flg_tzone_t *z)
{
    return &z->tz;
}

const char *flg_tzone_name(const flg_tzone_t *z)
{
    return z->name;
}
