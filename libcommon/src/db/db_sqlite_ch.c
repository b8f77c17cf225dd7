/*
 * db_sqlite_ch.c - ClickHouse functions SQLite lacks that need SQLite's
 * own values (not only doubles, as db_sqlite_fns.c's aggregates), added to
 * a connection by cm_db_conn_add_clickhouse_fns (cm/db.h). The event
 * store's connection hook adds them; the query compiler prints calls to
 * them so that SQLite answers as ClickHouse does (docs/endpoints.md,
 * "Functions").
 *
 * cm_argmax(x, y) / cm_argmin(x, y): x of the row with the largest
 * (smallest) y, skipping rows where either is NULL; a tie on y goes to the
 * largest (smallest) x, so that the answer does not depend on row order
 * (ClickHouse is given tuple(y, x) to compare). NULL over no rows.
 *
 * cm_finite(x): x, or NULL for an infinity (a math function's overflow:
 * ClickHouse's inf is printed as NULL too).
 *
 * cm_pad(s, n, pad, left): leftPad / rightPad: s cut or padded to n bytes,
 * the pad repeated (and cut) on the left or the right; an empty pad
 * leaves a short s as it is. cm_repeat(s, n): s n times. Both refuse a
 * result past CM_CH_MAX_TEXT rather than build it.
 *
 * cm_divisor(x): x, failing the query with ClickHouse's words ("Division
 * by zero") when x is a number equal to 0: ClickHouse's intDiv and modulo
 * fail there, where SQLite's / and % answer NULL.
 *
 * cm_base64_encode(s), cm_base64_decode(s, strict): RFC 4648's standard
 * alphabet with '=' padding (libcommon's codec/base64.c); text that is no
 * padded base64 fails the query when strict (base64Decode) and gives ''
 * otherwise (tryBase64Decode).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "cm/base64.h"
#include "cm/buf.h"
#include "cm/err.h"
#include "db_internal.h"
#include "db_sqlite_ch.h"

/* SQLite's order for the values a query compares: numbers before text,
 * numbers by value, text and blobs byte by byte (ClickHouse compares
 * strings as bytes too). */
int cm__sqlite_value_cmp(sqlite3_value *a, sqlite3_value *b)
{
    int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b);
    bool na = ta == SQLITE_INTEGER || ta == SQLITE_FLOAT;
    bool nb = tb == SQLITE_INTEGER || tb == SQLITE_FLOAT;
    if (na && nb) {
        if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) {
            sqlite3_int64 x = sqlite3_value_int64(a), y = sqlite3_value_int64(b);
            return (x > y) - (x < y);
        }
        double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
        return (x > y) - (x < y);
    }
    if (na != nb)
        return na ? -1 : 1;
    const void *pa = sqlite3_value_blob(a);
    int la = sqlite3_value_bytes(a);
    const void *pb = sqlite3_value_blob(b);
    int lb = sqlite3_value_bytes(b);
    int n = la < lb ? la : lb;
    int c = n > 0 ? memcmp(pa, pb, (size_t)n) : 0;
    if (c != 0)
        return c < 0 ? -1 : 1;
    return (la > lb) - (la < lb);
}

typedef struct {
    sqlite3_value *x, *y; /* the best row so far (copies), or NULL */
} arg_acc_t;

static void arg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    bool max = sqlite3_user_data(ctx) != NULL;
    arg_acc_t *a = sqlite3_aggregate_context(ctx, sizeof(*a));
    if (a == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
        return;
    if (a->x != NULL) {
        int c = cm__sqlite_value_cmp(argv[1], a->y);
        if (c == 0)
            c = cm__sqlite_value_cmp(argv[0], a->x);
        if (max ? c <= 0 : c >= 0)
            return;
    }
    sqlite3_value *x = sqlite3_value_dup(argv[0]), *y = sqlite3_value_dup(argv[1]);
    if (x == NULL || y == NULL) {
        sqlite3_value_free(x);
        sqlite3_value_free(y);
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_value_free(a->x);
    sqlite3_value_free(a->y);
    a->x = x;
    a->y = y;
}

static void arg_final(sqlite3_context *ctx)
{
    arg_acc_t *a = sqlite3_aggregate_context(ctx, 0);
    if (a == NULL || a->x == NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_value(ctx, a->x);
    sqlite3_value_free(a->x);
    sqlite3_value_free(a->y);
    a->x = a->y = NULL;
}

static void finite_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_FLOAT && !isfinite(sqlite3_value_double(argv[0])))
        sqlite3_result_null(ctx);
    else
        sqlite3_result_value(ctx, argv[0]);
}

#define CM_CH_MAX_TEXT (1 << 20)

static void pad_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    for (int i = 0; i < 4; i++)
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
            sqlite3_result_null(ctx);
            return;
        }
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    sqlite3_int64 sn = sqlite3_value_bytes(argv[0]);
    sqlite3_int64 n = sqlite3_value_int64(argv[1]);
    const char *pad = (const char *)sqlite3_value_text(argv[2]);
    sqlite3_int64 pn = sqlite3_value_bytes(argv[2]);
    bool left = sqlite3_value_int(argv[3]) != 0;
    if (s == NULL || pad == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (n < 0 || n > CM_CH_MAX_TEXT) {
        sqlite3_result_error(ctx, "leftPad/rightPad: the length must be 0 to 1048576", -1);
        return;
    }
    if (sn >= n || pn == 0) {
        sqlite3_result_text(ctx, s, (int)(sn < n ? sn : n), SQLITE_TRANSIENT);
        return;
    }
    char *out = sqlite3_malloc64((sqlite3_uint64)n + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_int64 fill = n - sn, at = left ? 0 : sn;
    for (sqlite3_int64 i = 0; i < fill; i++)
        out[at + i] = pad[i % pn];
    memcpy(out + (left ? fill : 0), s, (size_t)sn);
    sqlite3_result_text(ctx, out, (int)n, sqlite3_free);
}

static void repeat_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    sqlite3_int64 sn = sqlite3_value_bytes(argv[0]);
    sqlite3_int64 n = sqlite3_value_int64(argv[1]);
    if (s == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (n < 0 || (sn > 0 && n > CM_CH_MAX_TEXT / sn)) {
        sqlite3_result_error(ctx, "repeat: the count must be from 0 and the result at most 1 MiB",
                             -1);
        return;
    }
    char *out = sqlite3_malloc64((sqlite3_uint64)(sn * n) + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (sqlite3_int64 i = 0; i < n; i++)
        memcpy(out + i * sn, s, (size_t)sn);
    sqlite3_result_text(ctx, out, (int)(sn * n), sqlite3_free);
}

static void base64_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    const void *p = sqlite3_value_blob(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    if (n > CM_CH_MAX_TEXT) {
        sqlite3_result_error(ctx, "base64: the text is over 1 MiB", -1);
        return;
    }
    cm_buf_t out = CM_BUF_INIT;
    if (argc == 1) {
        cm_base64_encode(p, n, &out);
    } else if (n % 4 != 0 ||
               cm_base64_decode(p ? p : "", n, CM_B64_STD, CM_CH_MAX_TEXT, &out) != 0) {
        cm_buf_free(&out);
        if (sqlite3_value_int(argv[1]) != 0)
            sqlite3_result_error(ctx, "base64Decode: the text is not base64", -1);
        else
            sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
        return;
    }
    sqlite3_result_text(ctx, out.len ? out.p : "", (int)out.len, SQLITE_TRANSIENT);
    cm_buf_free(&out);
}

static void divisor_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int t = sqlite3_value_type(argv[0]);
    if ((t == SQLITE_INTEGER && sqlite3_value_int64(argv[0]) == 0) ||
        (t == SQLITE_FLOAT && sqlite3_value_double(argv[0]) == 0.0)) {
        sqlite3_result_error(ctx, "Division by zero", -1);
        return;
    }
    sqlite3_result_value(ctx, argv[0]);
}

/* cm_same_size(n, m): 1, failing the query with ClickHouse's words when the
 * zipped arrays of one ARRAY JOIN differ in length. */
static void same_size_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) != SQLITE_NULL && sqlite3_value_type(argv[1]) != SQLITE_NULL &&
        sqlite3_value_int64(argv[0]) != sqlite3_value_int64(argv[1])) {
        sqlite3_result_error(ctx, "Sizes of ARRAY-JOIN-ed arrays do not match", -1);
        return;
    }
    sqlite3_result_int(ctx, 1);
}

static int add_aggregate(sqlite3 *db, const char *name, int nargs, void *ud,
                         void (*step)(sqlite3_context *, int, sqlite3_value **),
                         void (*final)(sqlite3_context *))
{
    return sqlite3_create_function_v2(db, name, nargs,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, ud,
                                      NULL, step, final, NULL);
}

int cm_db_conn_add_clickhouse_fns(cm_db_conn_t *conn)
{
    sqlite3 *db = (sqlite3 *)conn;
    static int max_tag;
    int rc = add_aggregate(db, "cm_argmax", 2, &max_tag, arg_step, arg_final);
    if (rc == SQLITE_OK)
        rc = add_aggregate(db, "cm_argmin", 2, NULL, arg_step, arg_final);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_finite", 1,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        finite_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_pad", 4,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        pad_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_repeat", 2,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        repeat_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_divisor", 1,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        divisor_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_base64_encode", 1,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        base64_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_base64_decode", 2,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        base64_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_same_size", 2,
                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                        same_size_fn, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = cm__sqlite_add_url_fns(db);
    if (rc == SQLITE_OK)
        rc = cm__sqlite_add_re_fns(db);
    if (rc == SQLITE_OK)
        rc = cm__sqlite_add_text_fns(db);
    if (rc == SQLITE_OK)
        rc = cm__sqlite_add_city_hash(db);
    if (rc == SQLITE_OK)
        rc = cm__sqlite_add_week(db);
    return rc == SQLITE_OK ? 0 : CM_EUNAVAIL;
}
