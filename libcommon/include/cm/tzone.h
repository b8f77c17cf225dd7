/*
 * tzone.h - an IANA time zone ("Europe/Berlin") by ICU's rules: the offset
 * from UTC at an instant, and wall clock to UTC. The flags service's date
 * operators and the api's insights (buckets on the project's days) share it.
 *
 * ICU's calendar knows every zone's history and its future daylight-saving
 * rules; we do not read tzdata ourselves. A zone is not shareable across
 * threads: asking for an offset moves its calendar. Open one per thread (the
 * loop's), keep it as long as the project's setting stands.
 */
#ifndef CM_TZONE_H
#define CM_TZONE_H

#include <stdint.h>

#include "cm/buf.h"

typedef struct cm_tzone cm_tzone_t;

/* NULL when ICU does not know the name ("UTC" and "Etc/UTC" are known). */
cm_tzone_t *cm_tzone_open(cm_slice_t name);
void cm_tzone_free(cm_tzone_t *z); /* NULL is fine */
/* The name it was opened with. */
const char *cm_tzone_name(const cm_tzone_t *z);
/* Local minus UTC, in seconds, at the UTC instant; z NULL is UTC. */
int32_t cm_tzone_offset(const cm_tzone_t *z, int64_t utc_seconds);
/* The UTC instant of a wall-clock time (seconds, as if local were UTC): the
 * first guess (the offset at local read as UTC) corrected once, so a time
 * in a spring-forward gap moves on by the gap. */
int64_t cm_tzone_to_utc(const cm_tzone_t *z, int64_t local_seconds);

#endif
