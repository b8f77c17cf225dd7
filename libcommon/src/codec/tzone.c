/* tzone.c - IANA time zones through ICU's calendar (see tzone.h). */
#include "cm/tzone.h"

#include <stdlib.h>
#include <string.h>
#include <unicode/ucal.h>

#include "cm/alloc.h"

#define NAME_MAX_LEN 64 /* the longest IANA names are about 30 characters */

struct cm_tzone {
    UCalendar *cal;
    char name[NAME_MAX_LEN + 1];
};

cm_tzone_t *cm_tzone_open(cm_slice_t name)
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
    cm_tzone_t *z = cm_xcalloc(1, sizeof(*z));
    z->cal = cal;
    memcpy(z->name, name.p, name.len);
    return z;
}

void cm_tzone_free(cm_tzone_t *z)
{
    if (!z)
        return;
    ucal_close(z->cal);
    free(z);
}

const char *cm_tzone_name(const cm_tzone_t *z)
{
    return z ? z->name : "UTC";
}

int32_t cm_tzone_offset(const cm_tzone_t *z, int64_t utc_seconds)
{
    if (!z)
        return 0;
    UErrorCode st = U_ZERO_ERROR;
    /* Setting the time is what a lookup costs; the calendar is this
     * thread's alone, so moving it behind a const pointer is safe. */
    ucal_setMillis(z->cal, (UDate)utc_seconds * 1000.0, &st);
    int32_t ms = ucal_get(z->cal, UCAL_ZONE_OFFSET, &st);
    ms += ucal_get(z->cal, UCAL_DST_OFFSET, &st);
    return U_SUCCESS(st) ? ms / 1000 : 0;
}

int64_t cm_tzone_to_utc(const cm_tzone_t *z, int64_t local_seconds)
{
    /* Guess with the offset at "local read as UTC", then correct once. */
    int64_t off1 = cm_tzone_offset(z, local_seconds);
    int64_t utc = local_seconds - off1;
    int64_t off2 = cm_tzone_offset(z, utc);
    return off2 == off1 ? utc : local_seconds - off2;
}
