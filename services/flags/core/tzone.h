/*
 * tzone.h - a project's IANA time zone ("Europe/Berlin"), for date operators.
 *
 * The rules are libcommon's cm_tzone (ICU's calendar). A zone is opened
 * when the project table is read and used only on the loop thread: asking
 * for an offset moves the zone's calendar, so it is not shareable across
 * threads.
 */
#ifndef FLG_TZONE_H
#define FLG_TZONE_H

#include "cm/buf.h"
#include "core/dates.h"

typedef struct flg_tzone flg_tzone_t;

/* NULL when ICU does not know the name ("UTC" and "Etc/UTC" are known). */
flg_tzone_t *flg_tzone_open(cm_slice_t name);
void flg_tzone_free(flg_tzone_t *z);
/* The zone as evaluation takes it; lives as long as z. */
const flg_tz_t *flg_tzone_tz(const flg_tzone_t *z);
/* The name it was opened with (NUL-terminated). */
const char *flg_tzone_name(const flg_tzone_t *z);

#endif
