/*
 * print_tz.c - the time zone of DateTime values (docs/endpoints.md, "Time
 * zones"). HogQL shows and buckets a DateTime in the project's zone, as
 * PostHog prints toTimeZone(column, <project zone>) around every stored
 * DateTime; toTimeZone(x, tz), toDateTime(x, tz), now(tz) and the
 * toStartOf*(x, tz) give a value another zone. The printers follow each
 * value's zone: ClickHouse carries it in the value's type (the stored
 * columns printed through toTimeZone), SQLite keeps every DateTime as UTC
 * text and reads the zone's wall clock where a function depends on it
 * (cm_tz_local / cm_tz_utc, libcommon's evstore_tz.c). Output columns are
 * printed as UTC instants on both, their zone in the column's type, and the
 * runner writes them with the zone's offset.
 */
#include <string.h>

#include "cm/tzone.h"
#include "query/print_int.h"

#define P(s) cm_buf_append(pr->out, (s), strlen(s))

bool q_zone_is_utc(cm_slice_t z)
{
    return z.len == 0 || cm_slice_eq_cstr(z, "UTC") || cm_slice_eq_cstr(z, "Etc/UTC");
}

cm_slice_t q_project_zone(const q_printer_t *pr)
{
    const char *z = pr->o->timezone;
    return z != NULL && *z ? cm_slice_from_cstr(z) : cm_slice_from_cstr("UTC");
}

/* A zone named in the query: a string constant ICU knows. */
bool q_zone_arg(q_printer_t *pr, const q_expr_t *e, cm_slice_t *out)
{
    if (!q_pconst_string(pr, e, "The time zone", out))
        return false;
    bool ok = out->len > 0 && out->len < 64;
    for (size_t i = 0; ok && i < out->len; i++) {
        char c = out->p[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '/' || c == '_' || c == '-' || c == '+';
    }
    cm_tzone_t *z = ok ? cm_tzone_open(*out) : NULL;
    if (z == NULL) {
        q_pfail(pr, "Unknown time zone '%.*s'", (int)(out->len > 64 ? 64 : out->len), out->p);
        return false;
    }
    cm_tzone_free(z);
    return true;
}

/* The zone a function's optional zone argument names (checked at print). */
static cm_slice_t zone_arg_of(const q_expr_t *e, size_t i)
{
    if (e->args.n > i && e->args.v[i]->kind == QE_STRING)
        return e->args.v[i]->text;
    return CM_SLICE_NULL;
}

/* The output expression of column k of a subquery, when it is one. */
static const q_expr_t *sub_column(const q_select_t *s, size_t k)
{
    while (s->nparts > 0)
        s = s->parts[0];
    for (size_t i = 0; i < s->ncols; i++)
        if (s->cols[i].expr->kind == QE_STAR)
            return NULL; /* the columns do not line up with cols */
    return k < s->ncols ? s->cols[k].expr : NULL;
}

cm_slice_t q_zone_of(const q_printer_t *pr, const q_expr_t *e)
{
    if (e == NULL)
        return q_project_zone(pr);
    switch (e->kind) {
    case QE_FIELD:
        if (e->fkind == QF_ALIAS)
            return q_zone_of(pr, e->alias_of);
        if (e->fkind == QF_COLUMN && e->column == NULL && e->source && e->source->sub) {
            const q_expr_t *c = sub_column(e->source->sub, (size_t)e->ival);
            if (c != NULL)
                return q_zone_of(pr, c);
        }
        return q_project_zone(pr);
    case QE_BINARY:
        if (e->args.n > 0 && e->args.v[0]->type == Q_T_DATETIME)
            return q_zone_of(pr, e->args.v[0]);
        if (e->args.n > 1 && e->args.v[1]->type == Q_T_DATETIME)
            return q_zone_of(pr, e->args.v[1]);
        return q_project_zone(pr);
    case QE_CALL: {
        cm_slice_t z = q_fn_zone_arg(e);
        if (z.p != NULL)
            return z;
        /* a DateTime made from a DateTime argument keeps its zone */
        for (size_t i = 0; i < e->args.n; i++)
            if (e->args.v[i]->type == Q_T_DATETIME)
                return q_zone_of(pr, e->args.v[i]);
        return q_project_zone(pr);
    }
    default: return q_project_zone(pr);
    }
}

/* The zone argument a call names (toTimeZone's second, toDateTime's, ...), or NULL. */
cm_slice_t q_fn_zone_arg(const q_expr_t *e)
{
    switch ((int)e->ival) {
    case Q_FN_TO_TIMEZONE: return zone_arg_of(e, 1);
    case Q_FN_NOW: return zone_arg_of(e, 0);
    case Q_FN_TO_DATETIME:
    case Q_FN_START_OF_MINUTE:
    case Q_FN_START_OF_HOUR:
    case Q_FN_START_OF_DAY:
    case Q_FN_PARSE_DATETIME:
    case Q_FN_PARSE_DATETIME_OR_NULL:
    case Q_FN_PARSE_DATETIME_OR_ZERO:
    case Q_FN_START_OF_FIVE_MINUTES:
    case Q_FN_START_OF_TEN_MINUTES:
    case Q_FN_START_OF_FIFTEEN_MINUTES: return zone_arg_of(e, 1);
    default: return CM_SLICE_NULL;
    }
}

/* SQLite: x's wall-clock time in zone, as text. */
void q_plocal_in(q_printer_t *pr, const q_expr_t *x, cm_slice_t zone)
{
    if (q_zone_is_utc(zone)) {
        q_pdatetime(pr, x);
        return;
    }
    P("cm_tz_local(");
    q_pdatetime(pr, x);
    P(", ");
    q_pstring(pr, zone);
    P(")");
}

void q_plocal(q_printer_t *pr, const q_expr_t *x)
{
    q_plocal_in(pr, x, q_zone_of(pr, x));
}

/* SQLite: around a wall-clock time in zone, its UTC instant. */
void q_putc_open(q_printer_t *pr, cm_slice_t zone)
{
    if (!q_zone_is_utc(zone))
        P("cm_tz_utc(");
}

void q_putc_close(q_printer_t *pr, cm_slice_t zone)
{
    if (q_zone_is_utc(zone))
        return;
    P(", ");
    q_pstring(pr, zone);
    P(")");
}
