/*
 * timefmt.h - wall-clock time and ISO-8601 / RFC 3339 text.
 *
 * Times are int64 microseconds since the Unix epoch, UTC.
 */
#ifndef CM_TIMEFMT_H
#define CM_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define CM_ISO8601_MAX 40

int64_t cm_now_us(void);   /* CLOCK_REALTIME */
uint64_t cm_mono_ms(void); /* CLOCK_MONOTONIC, for durations */

/*
 * Parses "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.frac]]" with 'T', 't' or ' '
 * as separator, and an optional zone "Z", "z", "+HH", "+HHMM", "+HH:MM"
 * (no zone = UTC). Fractions of any length (extra digits beyond micro-
 * seconds are truncated). Calendar checked (leap years, day of month);
 * second 60 is rejected. Returns 0 or CM_EINVAL.
 */
int cm_iso8601_parse(const char *s, size_t len, int64_t *out_us);

/*
 * Formats as "YYYY-MM-DDTHH:MM:SS[.f]Z" with frac_digits (0, 3 or 6) digits.
 * Returns the length written (out needs CM_ISO8601_MAX bytes). Times outside
 * years 0000..9999 are clamped to that range (here and in cm_http_date).
 */
size_t cm_iso8601_format(int64_t us, int frac_digits, char out[CM_ISO8601_MAX]);

/* RFC 7231 IMF-fixdate for the HTTP Date header: "Sun, 06 Nov 1994 08:49:37 GMT". */
size_t cm_http_date(int64_t us, char out[32]);

#endif
