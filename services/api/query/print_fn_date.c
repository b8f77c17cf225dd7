/*
 * print_fn_date.c - date and time functions for SQLite and ClickHouse:
 * ClickHouse's own names there, strftime/julianday arithmetic on SQLite,
 * both in UTC (docs/endpoints.md, "One answer on both stores").
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
static void lite_relative(q_printer_t *pr, int unit, const q_expr_t *x)
{
    static const char *const secs[] = {"1", "60", "3600"};
    if (unit <= 2) {
        P("(CAST(strftime('%s', ");
        q_pdatetime(pr, x);
        PF(") AS INTEGER) / %s)", secs[unit]);
    } else if (unit == 3) {
        P("CAST(julianday(date(");
        q_pdatetime(pr, x);
        P(")) AS INTEGER)");
    } else if (unit == 4) { /* weeks from Monday */
        P("(CAST(julianday(date(");
        q_pdatetime(pr, x);
        P(", '-6 days', 'weekday 1')) AS INTEGER) / 7)");
    } else {
        const char *per = unit == 5 ? "12" : unit == 6 ? "4" : "1";
        P("(CAST(strftime('%Y', ");
        q_pdatetime(pr, x);
        PF(") AS INTEGER) * %s", per);
        if (unit != 7) {
            P(" + (CAST(strftime('%m', ");
            q_pdatetime(pr, x);
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
    if (pr->ch) {
        PF("dateDiff('%s', ", units[u]);
        q_pdatetime(pr, ARG(1));
        P(", ");
        q_pdatetime(pr, ARG(2));
        P(")");
        return;
    }
    P("(");
    lite_relative(pr, u, ARG(2));
    P(" - ");
    lite_relative(pr, u, ARG(1));
    P(")");
}

static void date_add(q_printer_t *pr, const q_expr_t *e, bool sub)
{
    static const char *const lite[] = {"seconds", "minutes", "hours",  "days",
                                       "days",    "months",  "months", "years"};
    static const int mult[] = {1, 1, 1, 1, 7, 1, 3, 1};
    int u = unit_of(pr, ARG(0));
    if (u < 0)
        return;
    if (ARG(1)->type != Q_T_INT) {
        q_pfail(pr, "%s takes a whole number of units", sub ? "dateSub" : "dateAdd");
        return;
    }
    if (pr->ch) {
        P("(");
        q_pdatetime(pr, ARG(2));
        PF(" %s toInterval%c%s(", sub ? "-" : "+", units[u][0] - 32, units[u] + 1);
        q_pexpr(pr, ARG(1));
        P("))");
        return;
    }
    P("datetime(");
    q_pdatetime(pr, ARG(2));
    PF(", (%s", sub ? "-" : "");
    q_pexpr(pr, ARG(1));
    PF(" * %d) || ' %s')", mult[u], lite[u]);
}

/* toStartOf*, toYear...: SQLite's strftime; ClickHouse's own. */
static void date_part(q_printer_t *pr, const q_expr_t *e, int id)
{
    const q_expr_t *x = ARG(0);
    if (pr->ch) {
        switch (id) {
        case Q_FN_START_OF_WEEK: {
            int64_t mode = e->args.n > 1 && ARG(1)->kind == QE_INT ? ARG(1)->ival : 0;
            if (e->args.n > 1 && ARG(1)->kind != QE_INT) {
                q_pfail(pr, "toStartOfWeek's mode must be 0 (Sunday) or 1 (Monday)");
                return;
            }
            if (mode & 1) {
                P("toMonday(");
                q_pdatetime(pr, x);
                P(")");
            } else { /* 18.16 has no toStartOfWeek */
                P("(toDate(");
                q_pdatetime(pr, x);
                P(") - (toDayOfWeek(");
                q_pdatetime(pr, x);
                P(") % 7))");
            }
            return;
        }
        case Q_FN_START_OF_DAY:
            P("toStartOfDay(");
            q_pdatetime(pr, x);
            P(")");
            return;
        default: break;
        }
        static const char *const names[] = {
            [Q_FN_START_OF_MINUTE] = "toStartOfMinute",
            [Q_FN_START_OF_HOUR] = "toStartOfHour",
            [Q_FN_START_OF_MONTH] = "toStartOfMonth",
            [Q_FN_START_OF_YEAR] = "toStartOfYear",
            [Q_FN_TO_YEAR] = "toYear",
            [Q_FN_TO_MONTH] = "toMonth",
            [Q_FN_TO_DAY_OF_MONTH] = "toDayOfMonth",
            [Q_FN_TO_DAY_OF_WEEK] = "toDayOfWeek",
            [Q_FN_TO_HOUR] = "toHour",
            [Q_FN_TO_MINUTE] = "toMinute",
            [Q_FN_TO_UNIX] = "toUnixTimestamp",
        };
        P(names[id]);
        P("(");
        q_pdatetime(pr, x);
        P(")");
        return;
    }
    const char *pre = NULL, *post = ")";
    switch (id) {
    case Q_FN_START_OF_MINUTE: pre = "strftime('%Y-%m-%d %H:%M:00', "; break;
    case Q_FN_START_OF_HOUR: pre = "strftime('%Y-%m-%d %H:00:00', "; break;
    case Q_FN_START_OF_DAY:
        pre = "datetime(";
        post = ", 'start of day')";
        break;
    case Q_FN_START_OF_WEEK: {
        bool monday = e->args.n > 1 && ARG(1)->kind == QE_INT && (ARG(1)->ival & 1);
        if (e->args.n > 1 && ARG(1)->kind != QE_INT) {
            q_pfail(pr, "toStartOfWeek's mode must be 0 (Sunday) or 1 (Monday)");
            return;
        }
        pre = "date(";
        post = monday ? ", '-6 days', 'weekday 1')" : ", '-6 days', 'weekday 0')";
        break;
    }
    case Q_FN_START_OF_MONTH:
        pre = "date(";
        post = ", 'start of month')";
        break;
    case Q_FN_START_OF_YEAR:
        pre = "date(";
        post = ", 'start of year')";
        break;
    case Q_FN_TO_YEAR:
        pre = "CAST(strftime('%Y', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_MONTH:
        pre = "CAST(strftime('%m', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_DAY_OF_MONTH:
        pre = "CAST(strftime('%d', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_DAY_OF_WEEK: /* ClickHouse: Monday 1 ... Sunday 7 */
        pre = "((CAST(strftime('%w', ";
        post = ") AS INTEGER) + 6) % 7 + 1)";
        break;
    case Q_FN_TO_HOUR:
        pre = "CAST(strftime('%H', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_MINUTE:
        pre = "CAST(strftime('%M', ";
        post = ") AS INTEGER)";
        break;
    case Q_FN_TO_UNIX:
        pre = "CAST(strftime('%s', ";
        post = ") AS INTEGER)";
        break;
    }
    P(pre);
    q_pdatetime(pr, x);
    P(post);
}

/* The call if it is one of this file's functions (print_fn.c dispatches). */
bool q_pcall_date(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    switch (id) {
    case Q_FN_TO_DATE:
        if (pr->ch) {
            P("toDate(");
            q_pdatetime(pr, ARG(0));
            P(")");
        } else {
            P("date(");
            q_pdatetime(pr, ARG(0));
            P(")");
        }
        return true;
    case Q_FN_TO_DATETIME:
    case Q_FN_FROM_UNIX:
        if (e->args.n > 1) {
            q_pfail(pr, "toDateTime takes one argument here (times are UTC)");
            return true;
        }
        q_pdatetime(pr, ARG(0));
        return true;
    case Q_FN_START_OF_MINUTE:
    case Q_FN_START_OF_HOUR:
    case Q_FN_START_OF_DAY:
    case Q_FN_START_OF_WEEK:
    case Q_FN_START_OF_MONTH:
    case Q_FN_START_OF_YEAR:
    case Q_FN_TO_YEAR:
    case Q_FN_TO_MONTH:
    case Q_FN_TO_DAY_OF_MONTH:
    case Q_FN_TO_DAY_OF_WEEK:
    case Q_FN_TO_HOUR:
    case Q_FN_TO_MINUTE:
    case Q_FN_TO_UNIX: date_part(pr, e, id); return true;
    case Q_FN_TO_TIMEZONE: {
        cm_slice_t tz;
        if (!q_pconst_string(pr, ARG(1), "The time zone", &tz))
            return true;
        if (!pr->ch && !cm_slice_eq_cstr(tz, "UTC")) {
            q_pfail(pr, "toTimeZone to a zone other than UTC needs the ClickHouse store");
            return true;
        }
        if (!pr->ch) {
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
    case Q_FN_DATE_DIFF: date_diff(pr, e); return true;
    case Q_FN_DATE_ADD:
    case Q_FN_DATE_SUB: date_add(pr, e, id == Q_FN_DATE_SUB); return true;
    case Q_FN_NOW: P(pr->ch ? "toTimeZone(now(), 'UTC')" : "datetime('now')"); return true;
    case Q_FN_TODAY: P(pr->ch ? "toDate(toTimeZone(now(), 'UTC'))" : "date('now')"); return true;
    default: return false;
    }
}
