/*
 * dates.h - calendar arithmetic, time zones, relative dates, and the flags
 * server's reading of date strings.
 *
 * Times are milliseconds since the epoch (JavaScript Date precision; finer
 * fractions are truncated, as Date does). A string without an explicit
 * offset is "naive": it is read in the project's time zone, or UTC when the
 * project has none (which is what posthog-node does on a UTC host).
 *
 * flg_date_parse() is the server's reading (used when posthog-node has no
 * answer): RFC 3339, "YYYY-MM-DD", naive "YYYY-MM-DD[T ]HH:MM[:SS[.f]]",
 * and a few neighbours ("YYYY/MM/DD", one-digit month/day, "+HHMM"). Like
 * V8, a day up to 31 rolls into the next month ("2023-02-29" is March 1st).
 * posthog-node's own reading, `new Date(string)`, is jsdate.h.
 */
#ifndef FLG_DATES_H
#define FLG_DATES_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"
#include "compat/jsdate.h" /* FLG_DATE_MAX_MS */

/*
 * A project time zone, supplied by the caller (evaluation does no I/O):
 * utc_offset returns local minus UTC, in seconds, at the UTC instant given.
 */
typedef struct flg_tz {
    int32_t (*utc_offset)(const struct flg_tz *tz, int64_t utc_seconds);
    const void *ud;
} flg_tz_t;

/* Wall clock <-> UTC; tz NULL means UTC. */
int64_t flg_local_to_utc_ms(int64_t local_ms, const flg_tz_t *tz);
int64_t flg_utc_to_local_ms(int64_t utc_ms, const flg_tz_t *tz);

/* new Date(number): whole milliseconds (toward zero), within the range. */
bool flg_js_date_from_number(double d, int64_t *ms);

/* Parses a date string; *naive says it had no offset (ms is then wall clock). */
bool flg_date_parse(cm_slice_t s, int64_t *ms, bool *naive);

/* "-7d", "12m", "1y": units h d w m y, number below 10000, leading '-' optional. */
bool flg_date_relative_parse(cm_slice_t s, uint32_t *n, char *unit);
/* now minus n units, on the project's wall clock (months clamp the day at every step). */
int64_t flg_date_relative_apply(int64_t now_ms, uint32_t n, char unit, const flg_tz_t *tz);

#endif
