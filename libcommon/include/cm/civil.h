/*
 * civil.h - proleptic Gregorian calendar arithmetic on day numbers (days
 * since 1970-01-01), exact for any int64 year: the conversions timefmt.c,
 * the flags service's JavaScript dates and its relative dates all share.
 */
#ifndef CM_CIVIL_H
#define CM_CIVIL_H

#include <stdbool.h>
#include <stdint.h>

/* Floor division: rounds toward minus infinity (b > 0). */
int64_t cm_floor_div(int64_t a, int64_t b);
bool cm_is_leap_year(int64_t y);
int cm_days_in_month(int64_t y, int m); /* m 1..12 */
/* Day number of y-m-d (m 1..12, d 1..31; d past the month's end runs on). */
int64_t cm_days_from_civil(int64_t y, int m, int d);
void cm_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif
