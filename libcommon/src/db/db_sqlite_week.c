/*
 * db_sqlite_week.c - cm_to_week(date, mode) for SQLite connections:
 * ClickHouse's toWeek for modes 0 to 7, which are MySQL's WEEK() modes
 * (ClickHouse's documentation and code follow MySQL's): the mode's bits say
 * whether weeks start on Monday (1), whether the week number runs 1..53
 * with the first days of January counted in the last year's last week (2),
 * and whether week 1 is the first week with a Monday or Sunday in the year
 * rather than the first with four or more days in it (4, flipped for the
 * Sunday modes). date is 'YYYY-MM-DD'; NULL for NULL or another text, or a
 * mode past 7 (the compiler refuses ClickHouse's 8 and 9 on SQLite).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "db_sqlite_ch.h"

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_of(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 366 : 365;
}

/* The day's place in its week: 0 for the week's first day. */
static int weekday_of(int64_t days, bool sunday_first)
{
    int64_t w = (days + (sunday_first ? 4 : 3)) % 7; /* 1970-01-01 was a Thursday */
    return (int)(w < 0 ? w + 7 : w);
}

static int week_of(int64_t y, int m, int d, int mode)
{
    int flags = mode & 7;
    if (!(flags & 1))
        flags ^= 4;
    bool monday_first = flags & 1, week_year = flags & 2, first_weekday = flags & 4;
    int64_t daynr = days_of(y, m, d), first = days_of(y, 1, 1);
    int weekday = weekday_of(first, !monday_first);
    if (m == 1 && d <= 7 - weekday) { /* in the year's first (part) week */
        if (!week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)))
            return 0;
        week_year = true;
        y--;
        int n = days_in_year(y);
        first -= n;
        weekday = (weekday + 53 * 7 - n) % 7;
    }
    int64_t days;
    if ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4))
        days = daynr - (first + (7 - weekday));
    else
        days = daynr - (first - weekday);
    if (week_year && days >= 52 * 7) { /* perhaps the next year's first week */
        weekday = (weekday + days_in_year(y)) % 7;
        if ((!first_weekday && weekday < 4) || (first_weekday && weekday == 0))
            return 1;
    }
    return (int)(days / 7 + 1);
}

static void to_week(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    int64_t mode = sqlite3_value_int64(argv[1]);
    char *end;
    if (t == NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL || mode < 0 || mode > 7)
        goto null;
    long y = strtol(t, &end, 10);
    if (end == t || *end != '-')
        goto null;
    long m = strtol(end + 1, &end, 10);
    if (*end != '-' || m < 1 || m > 12)
        goto null;
    long d = strtol(end + 1, &end, 10);
    if (*end != '\0' || d < 1 || d > 31 || y < 0 || y > 9999)
        goto null;
    sqlite3_result_int(ctx, week_of(y, (int)m, (int)d, (int)mode));
    return;
null:
    sqlite3_result_null(ctx);
}

int cm__sqlite_add_week(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, "cm_to_week", 2,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                      to_week, NULL, NULL, NULL);
}
