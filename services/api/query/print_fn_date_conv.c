/*
 * print_fn_date_conv.c - the date functions that make a DateTime or text
 * from another value (print_fn_date.c claims the rest and passes these on):
 * toDateTime(x, zone), parseDateTimeBestEffort*, toUnixTimestamp,
 * formatDateTime, now, today, yesterday. A text is read as its zone's wall
 * clock, as ClickHouse does; SQLite reads only the shapes both read alike
 * (docs/endpoints.md, "Time zones").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "query/print_int.h"

#define P(s)    cm_buf_append(pr->out, (s), strlen(s))
#define PF(...) cm_buf_appendf(pr->out, __VA_ARGS__)
#define ARG(i)  (e->args.v[(i)])

/* ---- values and conversions ------------------------------------------------------------------ */

/* What SQLite's datetime() and ClickHouse's parser read alike: no digit
 * at all (neither reads a date), or "YYYY-MM-DD", then [ T]hh:mm[:ss[.fff]]
 * and Z or [+-]hh:mm. */
static bool iso_like(cm_slice_t s)
{
    static const char *const shapes[] = {"dddd-dd-dd", "dddd-dd-dd?dd:dd", "dddd-dd-dd?dd:dd:dd"};
    size_t n = s.len;
    bool digit = false;
    for (size_t i = 0; i < n && !digit; i++)
        digit = s.p[i] >= '0' && s.p[i] <= '9';
    if (!digit)
        return true;
    if (n > 10 && s.p[n - 1] == 'Z')
        n--;
    else if (n > 16 && (s.p[n - 6] == '+' || s.p[n - 6] == '-') && s.p[n - 3] == ':')
        n -= 6;
    if (n > 20 && s.p[19] == '.') {
        for (size_t i = 20; i < n; i++)
            if (s.p[i] < '0' || s.p[i] > '9')
                return false;
        n = 19;
    }
    for (size_t k = 0; k < 3; k++) {
        const char *f = shapes[k];
        if (strlen(f) != n)
            continue;
        bool ok = true;
        for (size_t i = 0; ok && i < n; i++) {
            char c = s.p[i];
            ok = f[i] == 'd'   ? c >= '0' && c <= '9'
                 : f[i] == '?' ? c == ' ' || c == 'T'
                               : c == f[i];
        }
        if (ok)
            return true;
    }
    return false;
}

/* toDateTime(x, zone), parseDateTimeBestEffort[OrNull|OrZero](s[, zone]):
 * a text read as the zone's wall clock (unless it names its offset), a
 * number as seconds; the value then lives in that zone. */
static void to_datetime(q_printer_t *pr, const q_expr_t *e, int id)
{
    cm_slice_t zone = q_project_zone(pr);
    if (e->args.n > 1 && !q_zone_arg(pr, ARG(1), &zone))
        return;
    const q_expr_t *x = ARG(0);
    bool parse = id != Q_FN_TO_DATETIME && id != Q_FN_FROM_UNIX;
    if (parse && x->type != Q_T_STRING && x->type != Q_T_ANY && x->type != Q_T_NULL) {
        q_pfail(pr, "parseDateTimeBestEffort takes a string");
        return;
    }
    if (pr->ch) {
        if (x->type == Q_T_DATETIME && !parse) {
            P("toTimeZone(");
            q_pexpr(pr, x);
        } else if (x->type == Q_T_STRING || parse) {
            P(id == Q_FN_PARSE_DATETIME_OR_ZERO ? "parseDateTimeBestEffortOrZero("
              : id == Q_FN_PARSE_DATETIME       ? "parseDateTimeBestEffort("
                                                : "parseDateTimeBestEffortOrNull(");
            q_pexpr(pr, x);
        } else {
            P("toDateTime(");
            q_pexpr(pr, x);
        }
        P(", ");
        q_pstring(pr, zone);
        P(")");
        return;
    }
    if (x->type == Q_T_DATETIME || x->type == Q_T_INT || x->type == Q_T_FLOAT) {
        q_pdatetime(pr, x); /* an instant already */
        return;
    }
    /* SQLite: datetime() reads what parseDateTimeBestEffort does for ISO-like
     * text; a constant of another shape would read otherwise: refused */
    if (parse && x->kind == QE_STRING && !iso_like(x->text)) {
        q_pfail(pr,
                "parseDateTimeBestEffort of '%.*s' is not supported on the SQLite store "
                "(ISO 8601 text only: YYYY-MM-DD[ hh:mm[:ss]])",
                (int)(x->text.len > 40 ? 40 : x->text.len), x->text.p);
        return;
    }
    if (id == Q_FN_PARSE_DATETIME_OR_ZERO)
        P("coalesce(");
    bool wall = !q_zone_is_utc(zone);
    if (wall)
        P("cm_tz_utc(");
    P("datetime(");
    q_pexpr(pr, x);
    P(")");
    if (wall) {
        P(", ");
        q_pstring(pr, zone);
        P(", ");
        q_pexpr(pr, x);
        P(")");
    }
    if (id == Q_FN_PARSE_DATETIME_OR_ZERO)
        P(", '1970-01-01 00:00:00')");
}

/* formatDateTime(x, format[, zone]): the specifiers both stores print alike. */
static void format_datetime(q_printer_t *pr, const q_expr_t *e)
{
    cm_slice_t f, zone;
    if (!q_pconst_string(pr, ARG(1), "formatDateTime's format", &f) ||
        !q_pdate_call_zone(pr, e, 2, &zone))
        return;
    /* The minute: %M on 18.16 and 21.8 to 23.x (23.4 on read it as the
     * month's name, so the store turns that off there: cm/evstore_sql.h);
     * %i on 24 (formatDateTime knows %i from 23.2; before, it fails the
     * query: ClickHouse issue 46184) */
    static const char ok[] = "YmdHSFTyejuwIpRD%i";
    cm_buf_t ch = CM_BUF_INIT, lite = CM_BUF_INIT;
    bool bad = false;
    for (size_t i = 0; i < f.len && !bad; i++) {
        char c = f.p[i];
        if (c != '%') {
            cm_buf_putc(&ch, c);
            cm_buf_putc(&lite, c);
            continue;
        }
        char k = i + 1 < f.len ? f.p[++i] : '\0';
        if (k == '\0' || strchr(ok, k) == NULL) {
            q_pfail(pr,
                    "formatDateTime: '%%%c' is not supported here (use %%Y %%m %%d %%H %%i %%S "
                    "%%F %%T %%y %%e %%j %%u %%w %%I %%p %%R %%D %%%%)",
                    k ? k : ' ');
            bad = true;
            break;
        }
        cm_buf_putc(&ch, '%');
        cm_buf_putc(&ch, k == 'i' && !q_ch_24(pr) ? 'M' : k);
        cm_buf_putc(&lite, '%');
        cm_buf_putc(&lite, k);
    }
    if (!bad && pr->ch) {
        P("formatDateTime(");
        q_pdatetime(pr, ARG(0));
        P(", ");
        q_pstring(pr, cm_buf_slice(&ch));
        /* 18.16 formats in the server's zone, not the value's: named always */
        if (e->args.n > 2 || !q_zone_is_utc(zone)) {
            P(", ");
            q_pstring(pr, zone);
        }
        P(")");
    } else if (!bad) {
        /* SQLite 3.40's strftime lacks most: each specifier as its own piece */
        P("(''");
        cm_slice_t l = cm_buf_slice(&lite);
        for (size_t i = 0; i < l.len; i++) {
            P(" || ");
            if (l.p[i] != '%') {
                size_t j = i;
                while (j < l.len && l.p[j] != '%')
                    j++;
                q_pstring(pr, (cm_slice_t){l.p + i, j - i});
                i = j - 1;
                continue;
            }
            static const struct {
                char k;
                const char *pre, *post;
            } sp[] = {
                {'Y', "strftime('%Y', ", ")"},
                {'m', "strftime('%m', ", ")"},
                {'d', "strftime('%d', ", ")"},
                {'H', "strftime('%H', ", ")"},
                {'i', "strftime('%M', ", ")"},
                {'S', "strftime('%S', ", ")"},
                {'F', "strftime('%Y-%m-%d', ", ")"},
                {'T', "strftime('%H:%M:%S', ", ")"},
                {'R', "strftime('%H:%M', ", ")"},
                {'y', "substr(strftime('%Y', ", "), 3, 2)"},
                {'D', "strftime('%m/%d/', ", ") || substr(strftime('%Y', $x), 3, 2)"},
                {'e', "substr(' ' || CAST(strftime('%d', ", ") AS INTEGER), -2, 2)"},
                {'j', "strftime('%j', ", ")"},
                {'u', "CAST((CAST(strftime('%w', ", ") AS INTEGER) + 6) % 7 + 1 AS TEXT)"},
                {'w', "strftime('%w', ", ")"},
                {'I', "substr('0' || ((CAST(strftime('%H', ",
                 ") AS INTEGER) + 11) % 12 + 1), -2, 2)"},
                {'p', "(CASE WHEN CAST(strftime('%H', ",
                 ") AS INTEGER) < 12 THEN 'AM' ELSE 'PM' END)"},
            };
            char k = l.p[++i];
            if (k == '%') {
                P("'%'");
                continue;
            }
            for (size_t s = 0; s < sizeof(sp) / sizeof(sp[0]); s++)
                if (sp[s].k == k)
                    q_pdate_lite_part(pr, sp[s].pre, sp[s].post, ARG(0), zone);
        }
        P(")");
    }
    cm_buf_free(&ch);
    cm_buf_free(&lite);
}

/* now([zone]), today(), yesterday(): the project's day unless a zone is named */
static void now_fn(q_printer_t *pr, const q_expr_t *e, int id)
{
    cm_slice_t zone = q_project_zone(pr);
    if (e->args.n > 0 && !q_zone_arg(pr, ARG(0), &zone))
        return;
    if (pr->ch) {
        if (id != Q_FN_NOW)
            P(id == Q_FN_YESTERDAY ? "(toDate(" : "toDate(");
        P("toTimeZone(now(), ");
        q_pstring(pr, zone);
        P(")");
        if (id != Q_FN_NOW)
            P(id == Q_FN_YESTERDAY ? ") - 1)" : ")");
        return;
    }
    if (id == Q_FN_NOW) {
        P("datetime('now')");
        return;
    }
    P("date(");
    if (q_zone_is_utc(zone)) {
        P("'now'");
    } else {
        P("cm_tz_local(datetime('now'), ");
        q_pstring(pr, zone);
        P(")");
    }
    P(id == Q_FN_YESTERDAY ? ", '-1 days')" : ")");
}

/* The conversions of print_fn_date.c's calls, or false. */
bool q_pcall_date_conv(q_printer_t *pr, const q_expr_t *e)
{
    int id = (int)e->ival;
    switch (id) {
    case Q_FN_TO_UNIX:
        /* an instant's seconds; a text is read in the zone named, if any */
        P(pr->ch ? "toUnixTimestamp(" : "CAST(strftime('%s', ");
        if (e->args.n > 1)
            to_datetime(pr, e, Q_FN_TO_DATETIME);
        else
            q_pdatetime(pr, ARG(0));
        P(pr->ch ? ")" : ") AS INTEGER)");
        return true;
    case Q_FN_TO_DATETIME:
    case Q_FN_FROM_UNIX:
        if (e->args.n == 1) {
            q_pdatetime(pr, ARG(0));
            return true;
        }
        to_datetime(pr, e, id);
        return true;
    case Q_FN_PARSE_DATETIME:
    case Q_FN_PARSE_DATETIME_OR_NULL:
    case Q_FN_PARSE_DATETIME_OR_ZERO: to_datetime(pr, e, id); return true;
    case Q_FN_FORMAT_DATETIME: format_datetime(pr, e); return true;
    case Q_FN_NOW:
    case Q_FN_TODAY:
    case Q_FN_YESTERDAY: now_fn(pr, e, id); return true;
    default: return false;
    }
}
