/*
 * civil.c - calendar arithmetic (see civil.h). Shifting the year to start
 * in March puts the leap day last, so the day of the year is a closed
 * formula of the month; eras of 400 years repeat exactly.
 */
#include "cm/civil.h"

int64_t cm_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

bool cm_is_leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int cm_days_in_month(int64_t y, int m)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && cm_is_leap_year(y) ? 29 : mdays[m - 1];
}

int64_t cm_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = cm_floor_div(y, 400);
    int64_t yoe = y - era * 400;                                  /* 0..399 */
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1; /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* 0..146096 */
    return era * 146097 + doe - 719468;
}

void cm_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = cm_floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}
