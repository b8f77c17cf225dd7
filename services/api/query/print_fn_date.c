/*
 * print_fn_date.c - date and time functions for SQLite and ClickHouse:
 * ClickHouse's own names there, strftime/julianday arithmetic on SQLite.
 * A DateTime is shown and bucketed in its zone (the project's unless a
 * function names one: print_tz.c): ClickHouse carries the zone in the
 * value, SQLite computes on the zone's wall clock (cm_tz_local) and turns
 * a wall-clock answer back into an instant (cm_tz_utc). docs/endpoints.md,
 * "One answer on both stores" and "Time zones".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

/* ---- dates ---------------------------------------------------------------------------------- */

static const char *const units[] = {"second", "minute", "hour",    "day",
                                    "week",   "month",  "quarter", "year"};

static int unit_of(q_printer_t *pr, const q_expr_t *e)
{
    cm_slice_t u;
    if (!q_pconst_string(pr, e, "The unit", &u))
        return -1;
    for (int i = 0; i < 8; i++)
        if (cm_slice_eq_cstr(u, units[i]))
            return i;
    q_pfail(pr, "Unknown unit '%.*s': second, minute, hour, day, week, month, quarter or year",
            (int)(u.len > 20 ? 20 : u.len), u.p);
    return -1;
}

/* SQLite: the number of unit boundaries since the epoch (ClickHouse's toRelative*Num). */
static void lite_relative(q_printer_t *pr, int unit, const q_expr_t *x, cm_slice_t zone)
{
    static const char *const secs[] = {"1", "60", "3600"};
    if (unit <= 2) {
        P("(CAST(strftime('%s', ");
        q_plocal_in(pr, x, zone);
        PF(") AS INTEGER) / %s)", secs[unit]);
    } else if (unit == 3) {
        P("CAST(julianday(date(");
        q_plocal_in(pr, x, zone);
        P(")) AS INTEGER)");
    } else if (unit == 4) { /* weeks from Monday */
        P("(CAST(julianday(date(");
        q_plocal_in(pr, x, zone);
        P(", '-6 days', 'weekday 1')) AS INTEGER) / 7)");
    } else {
        const char *per = unit == 5 ? "12" : unit == 6 ? "4" : "1";
        P("(CAST(strftime('%Y', ");
        q_plocal_in(pr, x, zone);
        PF(") AS INTEGER) * %s", per);
        if (unit != 7) {
            P(" + (CAST(strftime('%m', ");
            q_plocal_in(pr, x, zone);
            P(unit == 5 ? ") AS INTEGER) - 1))" : ") AS INTEGER) - 1) / 3)");
        } else {
            P(")");
        }
    }
}

static void date_diff(q_printer_t *pr, const q_expr_t *e)
{
    int u = unit_of(pr, ARG(0));
    if (u < 0)
        return;
    /* ClickHouse counts each value's boundaries in its own zone, or in the one named */
    cm_slice_t zone = CM_SLICE_NULL;
    if (e->args.n > 3 && !q_zone_arg(pr, ARG(3), &zone))
        return;
    if (pr->ch) {
        PF("dateDiff('%s', ", units[u]);
        q_pdatetime(pr, ARG(1));
        P(", ");
        q_pdatetime(pr, ARG(2));
        if (zone.p != NULL) {
            P(", ");
            q_pstring(pr, zone);
        }
        P(")");
        return;
    }
    P("(");
    lite_relative(pr, u, ARG(2), zone.p ? zone : q_zone_of(pr, ARG(2)));
    P(" - ");
    lite_relative(pr, u, ARG(1), zone.p ? zone : q_zone_of(pr, ARG(1)));
    P(")");
}

/* The zone a call computes in: the one it names (argument i), else its value's. */
bool q_pdate_call_zone(q_printer_t *pr, const q_expr_t *e, size_t i, cm_slice_t *zone)
{
    if (e->args.n > i)
        return q_zone_arg(pr, ARG(i), zone);
    *zone = q_zone_of(pr, ARG(0));
    return true;
}

/* ClickHouse: name(x[, 'zone']) */
static void ch_part(q_printer_t *pr, const char *name, const q_expr_t *e, size_t zi,
                    cm_slice_t zone)
{
    P(name);
    P("(");
    q_pdatetime(pr, ARG(0));
    if (e->args.n > zi) {
        P(", ");
        q_pstring(pr, zone);
    }
    P(")");
}

/* The week's first day for toStartOfWeek: mode's low bit, else the project's. */
static int week_mode(q_printer_t *pr, const q_expr_t *e, size_t i)
{
    if (e->args.n <= i)
        return pr->o->week_start & 1;
    if (ARG(i)->kind != QE_INT) {
        q_pfail(pr, "toStartOfWeek's mode must be 0 (Sunday) or 1 (Monday)");
        return -1;
    }
    return (int)(ARG(i)->ival & 1);
}

/* toStartOfWeek(x[, mode[, zone]]) */
static void start_of_week(q_printer_t *pr, const q_expr_t *e)
{
    int monday = week_mode(pr, e, 1);
    cm_slice_t zone;
    if (monday < 0 || !q_pdate_call_zone(pr, e, 2, &zone))
        return;
    if (!pr->ch) {
        P("date(");
        q_plocal_in(pr, ARG(0), zone);
        P(monday ? ", '-6 days', 'weekday 1')" : ", '-6 days', 'weekday 0')");
        return;
    }
    if (monday) {
        ch_part(pr, "toMonday", e, 2, zone);
        return;
    }
    /* 18.16 has no toStartOfWeek */
    ch_part(pr, "(toDate", e, 2, zone);
    P(" - (");
    ch_part(pr, "toDayOfWeek", e, 2, zone);
    P(" % 7))");
}

/* A Date or number of a DateTime's wall clock: SQLite's strftime. */
static const struct {
    int id;
    const char *ch, *pre, *post;
} parts[] = {
    {Q_FN_TO_DATE, "toDate", "date(", ")"},
    {Q_FN_START_OF_MONTH, "toStartOfMonth", "date(", ", 'start of month')"},
    {Q_FN_START_OF_YEAR, "toStartOfYear", "date(", ", 'start of year')"},
    {Q_FN_START_OF_QUARTER, "toStartOfQuarter", "date(",
     ", 'start of month', '-' || ((CAST(strftime('%m', $x) AS INTEGER) - 1) % 3) || ' months')"},
    {Q_FN_TO_YEAR, "toYear", "CAST(strftime('%Y', ", ") AS INTEGER)"},
    {Q_FN_TO_QUARTER, "toQuarter", "((CAST(strftime('%m', ", ") AS INTEGER) + 2) / 3)"},
    {Q_FN_TO_MONTH, "toMonth", "CAST(strftime('%m', ", ") AS INTEGER)"},
    {Q_FN_TO_DAY_OF_MONTH, "toDayOfMonth", "CAST(strftime('%d', ", ") AS INTEGER)"},
    {Q_FN_TO_DAY_OF_YEAR, "toDayOfYear", "CAST(strftime('%j', ", ") AS INTEGER)"},
    {Q_FN_TO_HOUR, "toHour", "CAST(strftime('%H', ", ") AS INTEGER)"},
    {Q_FN_TO_MINUTE, "toMinute", "CAST(strftime('%M', ", ") AS INTEGER)"},
    {Q_FN_TO_SECOND, "toSecond", "CAST(strftime('%S', ", ") AS INTEGER)"},
    {Q_FN_TO_YYYYMM, "toYYYYMM", "CAST(strftime('%Y%m', ", ") AS INTEGER)"},
    {Q_FN_TO_YYYYMMDD, "toYYYYMMDD", "CAST(strftime('%Y%m%d', ", ") AS INTEGER)"},
    /* ISO 8601: the week (from Monday) and year of the week's Thursday */
    {Q_FN_TO_ISO_WEEK, "toISOWeek", "((CAST(strftime('%j', date(",
     ", '-3 days', 'weekday 4')) AS INTEGER) - 1) / 7 + 1)"},
    {Q_FN_TO_ISO_YEAR, "toISOYear", "CAST(strftime('%Y', date(",
     ", '-3 days', 'weekday 4')) AS INTEGER)"},
};

/* pre, x, post, where post's $x stands for x again */
void q_pdate_lite_part(q_printer_t *pr, const char *pre, const char *post, const q_expr_t *x,
                       cm_slice_t zone)
{
    P(pre);
    q_plocal_in(pr, x, zone);
    for (const char *p = post; *p;) {
        const char *d = strstr(p, "$x");
        if (d == NULL) {
            P(p);
            break;
        }
        cm_buf_append(pr->out, p, (size_t)(d - p));
        q_plocal_in(pr, x, zone);
        p = d + 2;
    }
}

static bool date_part(q_printer_t *pr, const q_expr_t *e, int id)
{
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        if (parts[i].id != id)
            continue;
        cm_slice_t zone;
        if (!q_pdate_call_zone(pr, e, 1, &zone))
            return true;
        if (pr->ch)
            ch_part(pr, parts[i].ch, e, 1, zone);
        else
            q_pdate_lite_part(pr, parts[i].pre, parts[i].post, ARG(0), zone);
        return true;
    }
    return false;
}

/* toDayOfWeek(x[, mode[, zone]]): mode 0 Monday 1..Sunday 7, 1 Monday 0..6,
 * 2 Sunday 0..6, 3 Sunday 1..7 (ClickHouse's modes; 18.16 knows only 0). */
static void day_of_week(q_printer_t *pr, const q_expr_t *e)
{
    int64_t mode = 0;
    if (e->args.n > 1) {
        if (ARG(1)->kind != QE_INT || ARG(1)->ival < 0 || ARG(1)->ival > 3) {
            q_pfail(pr, "toDayOfWeek's mode must be 0, 1, 2 or 3");
            return;
        }
        mode = ARG(1)->ival;
    }
    cm_slice_t zone;
    if (!q_pdate_call_zone(pr, e, 2, &zone))
        return;
    static const char *const shift[] = {"", " - 1", "", " + 1"};
    if (mode != 0)
        P("(");
    if (pr->ch) {
        if (mode >= 2) /* Sunday first: Monday 1 .. Sunday 7 made Sunday 0 .. Saturday 6 */
            P("(");
        ch_part(pr, "toDayOfWeek", e, 2, zone);
        if (mode >= 2)
            P(" % 7)");
    } else {
        P(mode >= 2 ? "CAST(strftime('%w', " : "((CAST(strftime('%w', ");
        q_plocal_in(pr, ARG(0), zone);
        P(mode >= 2 ? ") AS INTEGER)" : ") AS INTEGER) + 6) % 7 + 1)");
    }
    if (mode != 0) {
        P(shift[mode]);
        P(")");
    }
}

/* toWeek(x[, mode[, zone]]): ClickHouse 21+ (18.16 has none); SQLite's
 * cm_to_week (libcommon's db_sqlite_week.c) does MySQL's modes 0 to 7, which
 * ClickHouse follows; its own 8 and 9 are refused there. */
static void to_week(q_printer_t *pr, const q_expr_t *e)
{
    int64_t mode = 0;
    if (e->args.n > 1) {
        if (ARG(1)->kind != QE_INT || ARG(1)->ival < 0 || ARG(1)->ival > 9) {
            q_pfail(pr, "toWeek's mode must be a constant from 0 to 9");
            return;
        }
        mode = ARG(1)->ival;
    }
    cm_slice_t zone;
    if (!q_pdate_call_zone(pr, e, 2, &zone))
        return;
    if (pr->ch && !q_ch_modern(pr)) {
        q_pfail(pr, "toWeek needs ClickHouse 21+ (this store runs 18.16)");
        return;
    }
    if (!pr->ch && mode > 7) {
        q_pfail(pr, "toWeek's modes 8 and 9 are not supported on the SQLite store (modes 0 to 7 "
                    "are)");
        return;
    }
    if (pr->ch) {
        P("toWeek(");
        q_pdatetime(pr, ARG(0));
        PF(", %d", (int)mode);
        if (e->args.n > 2) {
            P(", ");
            q_pstring(pr, zone);
        }
        P(")");
        return;
    }
    P("cm_to_week(date(");
    q_plocal_in(pr, ARG(0), zone);
    PF("), %d)", (int)mode);
}

/* A DateTime on the wall clock's minute, hour, day or n minutes. */
static void start_of_time(q_printer_t *pr, const q_expr_t *e, int id)
{
    cm_slice_t zone;
    if (!q_pdate_call_zone(pr, e, 1, &zone))
        return;
    int mins = id == Q_FN_START_OF_FIVE_MINUTES      ? 5
               : id == Q_FN_START_OF_TEN_MINUTES     ? 10
               : id == Q_FN_START_OF_FIFTEEN_MINUTES ? 15
                                                     : 0;
    if (pr->ch) {
        const char *name = id == Q_FN_START_OF_MINUTE ? "toStartOfMinute"
                           : id == Q_FN_START_OF_HOUR ? "toStartOfHour"
                                                      : "toStartOfDay";
        if (mins == 0) {
            ch_part(pr, name, e, 1, zone);
            return;
        }
        /* the wall clock's minutes (18.16 has no toStartOfTenMinutes) */
        P("(");
        ch_part(pr, "toStartOfMinute", e, 1, zone);
        PF(" - toMinute(");
        q_pdatetime(pr, ARG(0));
        if (e->args.n > 1) {
            P(", ");
            q_pstring(pr, zone);
        }
        PF(") %% %d * 60)", mins);
        return;
    }
    q_putc_open(pr, zone);
    if (mins) {
        P("datetime((CAST(strftime('%s', ");
        q_plocal_in(pr, ARG(0), zone);
        PF(") AS INTEGER) / %d) * %d, 'unixepoch')", mins * 60, mins * 60);
    } else if (id == Q_FN_START_OF_DAY) {
        P("datetime(");
        q_plocal_in(pr, ARG(0), zone);
        P(", 'start of day')");
    } else {
        P(id == Q_FN_START_OF_MINUTE ? "strftime('%Y-%m-%d %H:%M:00', "
                                     : "strftime('%Y-%m-%d %H:00:00', ");
        q_plocal_in(pr, ARG(0), zone);
        P(")");
    }
    q_putc_close(pr, zone);
}

/* ---- arithmetic ------------------------------------------------------------------------------ */

/* The unit and count of an interval: INTERVAL n unit, or toIntervalUnit(n). */
static bool interval_of(const q_expr_t *iv, int *unit, const q_expr_t **n)
{
    if (iv->kind == QE_INTERVAL) {
        *unit = (int)iv->unit;
        *n = iv->args.v[0];
        return true;
    }
    if (iv->kind == QE_CALL && iv->ival >= Q_FN_INTERVAL_SECOND && iv->ival <= Q_FN_INTERVAL_YEAR &&
        iv->args.n == 1) {
        *unit = (int)(iv->ival - Q_FN_INTERVAL_SECOND);
        *n = iv->args.v[0];
        return true;
    }
    return false;
}

bool q_is_interval(const q_expr_t *e)
{
    int u;
    const q_expr_t *n;
    return interval_of(e, &u, &n);
}

/* x plus (or minus) n units. Days and longer move the wall clock in x's
 * zone (ClickHouse's calendar arithmetic); months and longer end on the
 * last day of a shorter month, as ClickHouse clamps (SQLite's cm_add_months). */
static void add_units(q_printer_t *pr, const q_expr_t *x, int unit, const q_expr_t *n, bool minus,
                      bool syntax)
{
    static const char *const ch_fn[] = {"Seconds", "Minutes", "Hours",    "Days",
                                        "Weeks",   "Months",  "Quarters", "Years"};
    static const char *const ch_unit[] = {"SECOND", "MINUTE", "HOUR",    "DAY",
                                          "WEEK",   "MONTH",  "QUARTER", "YEAR"};
    static const char *const lite_unit[] = {"seconds", "minutes", "hours", "days", "days"};
    static const int secs[] = {1, 60, 3600};
    if (n->type != Q_T_INT && n->type != Q_T_BOOL && n->kind != QE_PLACEHOLDER) {
        q_pfail(pr, "A date moves by a whole number of units");
        return;
    }
    bool date = x->type == Q_T_DATE;
    if (pr->ch && syntax && n->kind == QE_INT) { /* as written: x + INTERVAL n UNIT */
        P("(");
        q_pexpr(pr, x);
        PF(" %s INTERVAL %" PRId64 " %s)", minus ? "-" : "+", n->ival, ch_unit[unit]);
        return;
    }
    bool zoned = !date && unit >= 3 && !q_zone_is_utc(q_zone_of(pr, x));
    if (!pr->ch && n->kind == QE_INT && unit <= 4 && !zoned) { /* a modifier of SQLite's */
        P(date ? "date(" : "datetime(");
        q_pexpr(pr, x);
        PF(", '%s%" PRId64 " %s')", minus ? "-" : "+", n->ival * (unit == 4 ? 7 : 1),
           lite_unit[unit]);
        return;
    }
    if (pr->ch) { /* 18.16 has no addQuarters: three months */
        PF("%s%s(", minus ? "subtract" : "add", ch_fn[unit == 6 ? 5 : unit]);
        if (date)
            q_pexpr(pr, x);
        else
            q_pdatetime(pr, x);
        P(", ");
        if (unit == 6)
            P("3 * ");
        q_pexpr(pr, n);
        P(")");
        return;
    }
    const char *sign = minus ? "-" : "";
    if (unit <= 2) { /* an instant's seconds: no zone */
        P("datetime(");
        q_pdatetime(pr, x);
        PF(", (%s", sign);
        q_pexpr(pr, n);
        PF(" * %d) || ' seconds')", secs[unit]);
        return;
    }
    cm_slice_t zone = date ? cm_slice_from_cstr("UTC") : q_zone_of(pr, x);
    if (!date)
        q_putc_open(pr, zone);
    if (unit <= 4) {
        P(date ? "date(" : "datetime(");
        if (date)
            q_pexpr(pr, x);
        else
            q_plocal_in(pr, x, zone);
        PF(", (%s", sign);
        q_pexpr(pr, n);
        PF(" * %d) || ' days')", unit == 4 ? 7 : 1);
    } else {
        P("cm_add_months(");
        if (date)
            q_pexpr(pr, x);
        else
            q_plocal_in(pr, x, zone);
        PF(", %s", sign);
        P("(");
        q_pexpr(pr, n);
        PF(") * %d)", unit == 5 ? 1 : unit == 6 ? 3 : 12);
    }
    if (!date)
        q_putc_close(pr, zone);
}

/* a +/- INTERVAL n unit, a +/- toIntervalUnit(n) (print.c's operators) */
void q_pinterval_math(q_printer_t *pr, const q_expr_t *e)
{
    int unit;
    const q_expr_t *n;
    if (!interval_of(e->args.v[1], &unit, &n)) {
        q_pfail(pr, "internal: not an interval");
        return;
    }
    add_units(pr, e->args.v[0], unit, n, e->op == QB_MINUS, true);
}

static void date_add(q_printer_t *pr, const q_expr_t *e, bool sub)
{
    /* dateAdd(date, INTERVAL n unit), PostHog's two-argument form */
    if (e->args.n == 2) {
        int unit;
        const q_expr_t *n;
        if (!interval_of(ARG(1), &unit, &n)) {
            q_pfail(pr, "%s(date, interval) takes an INTERVAL second", sub ? "dateSub" : "dateAdd");
            return;
        }
        add_units(pr, ARG(0), unit, n, sub, false);
        return;
    }
    int u = unit_of(pr, ARG(0));
    if (u < 0)
        return;
    if (ARG(1)->type != Q_T_INT) {
        q_pfail(pr, "%s takes a whole number of units", sub ? "dateSub" : "dateAdd");
        return;
    }
    add_units(pr, ARG(2), u, ARG(1), sub, false);
}

/* dateTrunc(unit, x[, zone]): x's start of that unit in x's zone (or the
 * one named): a DateTime up to days, a Date from weeks on (PostHog's types);
 * always a DateTime for toStartOfInterval (datetime). */
static void date_trunc(q_printer_t *pr, const q_expr_t *e, bool datetime)
{
    int u = unit_of(pr, ARG(0));
    cm_slice_t zone;
    if (u < 0)
        return;
    if (e->args.n > 2) {
        if (!q_zone_arg(pr, ARG(2), &zone))
            return;
    } else {
        zone = q_zone_of(pr, ARG(1));
    }
    bool date = u >= 4, as_dt = date && datetime;
    static const char *const ch[] = {
        NULL,       "toStartOfMinute", "toStartOfHour",    "toStartOfDay",
        "toMonday", "toStartOfMonth",  "toStartOfQuarter", "toStartOfYear"};
    if (pr->ch) {
        if (u == 0) {
            q_pdatetime(pr, ARG(1));
            return;
        }
        if (as_dt)
            P("toDateTime(");
        PF("%s(", ch[u]);
        q_pdatetime(pr, ARG(1));
        if (e->args.n > 2) {
            P(", ");
            q_pstring(pr, zone);
        }
        P(")");
        if (as_dt) {
            P(", ");
            q_pstring(pr, zone);
            P(")");
        }
        return;
    }
    static const char *const lite[] = {
        "datetime(",
        "strftime('%Y-%m-%d %H:%M:00', ",
        "strftime('%Y-%m-%d %H:00:00', ",
        "datetime(",
        "date(",
        "date(",
        "date(",
        "date(",
    };
    static const char *const post[] = {
        ")",
        ")",
        ")",
        ", 'start of day')",
        ", '-6 days', 'weekday 1')",
        ", 'start of month')",
        ", 'start of month', '-' || ((CAST(strftime('%m', $x) AS INTEGER) - 1) % 3) || ' months')",
        ", 'start of year')",
    };
    if (date && !as_dt) {
        q_pdate_lite_part(pr, lite[u], post[u], ARG(1), zone);
        return;
    }
    q_putc_open(pr, zone);
    if (as_dt)
        P("datetime(");
    q_pdate_lite_part(pr, lite[u], post[u], ARG(1), zone);
    if (as_dt)
        P(")");
    q_putc_close(pr, zone);
}

/* toStartOfInterval(x, INTERVAL 1 unit[, zone]): the toStartOf* of that unit;
 * several units align as ClickHouse 21+ does, which neither 18.16 nor SQLite
 * can follow here. */
static void start_of_interval(q_printer_t *pr, const q_expr_t *e)
{
    int unit;
    const q_expr_t *n;
    if (!interval_of(ARG(1), &unit, &n) || n->kind != QE_INT || n->ival < 1) {
        q_pfail(pr, "toStartOfInterval takes a date and an INTERVAL of a positive whole number");
        return;
    }
    if (n->ival != 1 || unit == 0) {
        if (!pr->ch || !q_ch_modern(pr)) {
            q_pfail(pr, "toStartOfInterval over %s needs ClickHouse 21 or later%s",
                    unit == 0 ? "seconds" : "more than one unit",
                    pr->ch ? " (this store runs 18.16)"
                           : ", and is not supported on the SQLite store");
            return;
        }
        P("toStartOfInterval(");
        q_pdatetime(pr, ARG(0));
        PF(", INTERVAL %" PRId64 " %s", n->ival, units[unit]);
        if (e->args.n > 2) {
            cm_slice_t zone;
            if (!q_zone_arg(pr, ARG(2), &zone))
                return;
            P(", ");
            q_pstring(pr, zone);
        }
        P(")");
        return;
    }
    /* one unit: dateTrunc's answer, with the week from Monday as toStartOfInterval's */
    q_expr_t unit_arg = {
        .kind = QE_STRING, .type = Q_T_STRING, .text = cm_slice_from_cstr(units[unit])};
    q_expr_t *args[3] = {&unit_arg, ARG(0), e->args.n > 2 ? ARG(2) : NULL};
    q_expr_t t = *e;
    t.args.v = args;
    t.args.n = e->args.n > 2 ? 3 : 2;
    date_trunc(pr, &t, true);
}

/* The call if it is one of this file's functions (print_fn.c dispatches). */
bool q_pcall_date(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    if (id >= Q_FN_ADD_SECONDS && id <= Q_FN_ADD_YEARS) {
        add_units(pr, ARG(0), id - Q_FN_ADD_SECONDS, ARG(1), false, false);
        return true;
    }
    if (id >= Q_FN_SUB_SECONDS && id <= Q_FN_SUB_YEARS) {
        add_units(pr, ARG(0), id - Q_FN_SUB_SECONDS, ARG(1), true, false);
        return true;
    }
    if (id >= Q_FN_INTERVAL_SECOND && id <= Q_FN_INTERVAL_YEAR) {
        q_pfail(pr, "An interval can only be added to or subtracted from a date");
        return true;
    }
    if (date_part(pr, e, id))
        return true;
    switch (id) {
    case Q_FN_START_OF_WEEK: start_of_week(pr, e); return true;
    case Q_FN_TO_DAY_OF_WEEK: day_of_week(pr, e); return true;
    case Q_FN_TO_WEEK: to_week(pr, e); return true;
    case Q_FN_START_OF_MINUTE:
    case Q_FN_START_OF_HOUR:
    case Q_FN_START_OF_DAY:
    case Q_FN_START_OF_FIVE_MINUTES:
    case Q_FN_START_OF_TEN_MINUTES:
    case Q_FN_START_OF_FIFTEEN_MINUTES: start_of_time(pr, e, id); return true;
    case Q_FN_START_OF_INTERVAL: start_of_interval(pr, e); return true;
    case Q_FN_DATE_TRUNC: date_trunc(pr, e, false); return true;
    case Q_FN_TO_TIMEZONE: {
        cm_slice_t tz;
        if (!q_zone_arg(pr, ARG(1), &tz))
            return true;
        if (!pr->ch) { /* an instant: its zone is the printer's to follow (print_tz.c) */
            q_pdatetime(pr, ARG(0));
            return true;
        }
        P("toTimeZone(");
        q_pdatetime(pr, ARG(0));
        P(", ");
        q_pstring(pr, tz);
        P(")");
        return true;
    }
    case Q_FN_ASSUME_NOT_NULL:
        if (pr->ch)
            q_psame(pr, "assumeNotNull", e);
        else
            q_pexpr(pr, ARG(0));
        return true;
    case Q_FN_DATE_DIFF: date_diff(pr, e); return true;
    case Q_FN_DATE_ADD:
    case Q_FN_DATE_SUB: date_add(pr, e, id == Q_FN_DATE_SUB); return true;
    default: return q_pcall_date_conv(pr, e);
    }
}
