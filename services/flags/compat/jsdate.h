/*
 * jsdate.h - Date.parse exactly as V8 (node) implements it, because
 * posthog-node compares dates with `new Date(string)`.
 *
 * V8 first tries the ECMAScript date-time format and falls back to its
 * legacy parser, which reads a great deal: "Jan 15 2024", "1/2/2024 3:04
 * PM", "2024-01-15 10:00 GMT+0200", even "42" (the year 2042) and "10"
 * (October 1st, 2001). This is a re-implementation of that grammar from its
 * observable behaviour (tokens: numbers, words, signs, parentheses;
 * composers for day, time and zone), checked string for string against node.
 *
 * A result without an explicit zone is "naive" (V8 would use the host's
 * local time; we use the project's zone, UTC by default). ISO date-only
 * forms, which V8 reads as UTC, are reported naive too, so that a project
 * time zone applies to "2024-06-01" as it does on the flags server.
 */
#ifndef FLG_JSDATE_H
#define FLG_JSDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/buf.h"

/* JavaScript's Date range: +-8.64e15 ms. */
#define FLG_DATE_MAX_MS INT64_C(8640000000000000)

/* true and *ms (wall clock when *naive) if V8 would return a valid Date. */
bool flg_js_date_parse(cm_slice_t s, int64_t *ms, bool *naive);

#endif
