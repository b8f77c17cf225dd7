/*
 * test_page.c - a HogQL run's page (endpoints/page.c): the bytes of the
 * members results, columns, types, hasMore, limit, offset as the run's
 * writer receives them inside its open answer, for a small and a big
 * answer, one row past the limit (hasMore), a SQL NULL, values read by
 * their column's type, and the cap on the JSON's size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cm/err.h"
#include "endpoints/endpoints_int.h"

/* Rows as a table of strings (NULL: SQL NULL). */
typedef struct {
    size_t ncols;
    const char *const *cells;
} rows_t;

static const char *cell(const void *p, size_t row, size_t col)
{
    const rows_t *r = p;
    return r->cells[row * r->ncols + col];
}

/* Generated rows: row i is ("v<i>", i). */
static const char *gen_cell(const void *p, size_t row, size_t col)
{
    static char text[2][32];
    (void)p;
    snprintf(text[col], sizeof(text[col]), col == 0 ? "v%zu" : "%zu", row);
    return text[col];
}

static api_query_column_t two_cols[] = {{"name", "String"}, {"n", "Int64"}};

/* The page into a fresh open object, then closed, as the run does. */
static int page_text(cm_buf_t *out, const api_query_sql_t *sql, const void *rows, size_t nrows,
                     size_t ncols, const char *(*cellf)(const void *, size_t, size_t),
                     size_t max_bytes)
{
    cm_json_writer_t w;
    cm_buf_reset(out);
    cm_json_writer_init(&w, out);
    cm_json_begin_object(&w);
    int rc = api_endpoints__page_write(&w, sql, rows, nrows, ncols, cellf, max_bytes);
    if (rc == 0) {
        cm_json_end_object(&w);
        assert_int_equal(cm_json_writer_finish(&w), 0);
    }
    return rc;
}

static void test_small_page(void **state)
{
    (void)state;
    const char *cells[] = {"a", "1", "b\"q", NULL};
    rows_t rows = {2, cells};
    api_query_sql_t sql = {.cols = two_cols, .ncols = 2, .limit = 100, .offset = 0};
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(page_text(&b, &sql, &rows, 2, 2, cell, 0), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"results\":[[\"a\",1],[\"b\\\"q\",null]],"
                                         "\"columns\":[\"name\",\"n\"],"
                                         "\"types\":[[\"name\",\"String\"],[\"n\",\"Int64\"]],"
                                         "\"hasMore\":false,\"limit\":100,\"offset\":0}");
    cm_buf_free(&b);
}

/* The store returns one row past the limit: not shown, hasMore. */
static void test_has_more(void **state)
{
    (void)state;
    const char *cells[] = {"a", "1", "b", "2", "c", "3"};
    rows_t rows = {2, cells};
    api_query_sql_t sql = {.cols = two_cols, .ncols = 2, .limit = 2, .offset = 4};
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(page_text(&b, &sql, &rows, 3, 2, cell, 0), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"results\":[[\"a\",1],[\"b\",2]],"
                                         "\"columns\":[\"name\",\"n\"],"
                                         "\"types\":[[\"name\",\"String\"],[\"n\",\"Int64\"]],"
                                         "\"hasMore\":true,\"limit\":2,\"offset\":4}");
    /* exactly the limit: no more */
    assert_int_equal(page_text(&b, &sql, &rows, 2, 2, cell, 0), 0);
    assert_non_null(strstr(cm_buf_cstr(&b), "\"hasMore\":false"));
    cm_buf_free(&b);
}

/* Values by their column's type: a float, NaN and a ClickHouse zero date. */
static void test_types(void **state)
{
    (void)state;
    api_query_column_t cols[] = {
        {"f", "Float64"}, {"g", "Nullable(Float64)"}, {"d", "DateTime"}, {"i", "Int64"}};
    const char *cells[] = {"1.5", "nan", "0000-00-00 00:00:00", "2.0"};
    rows_t rows = {4, cells};
    api_query_sql_t sql = {.cols = cols, .ncols = 4, .limit = 10};
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(page_text(&b, &sql, &rows, 1, 4, cell, 0), 0);
    assert_non_null(
        strstr(cm_buf_cstr(&b), "\"results\":[[1.5,null,\"1970-01-01T00:00:00Z\",2]],"));
    /* fewer columns in the rows than the query names: only those written */
    assert_int_equal(page_text(&b, &sql, &rows, 1, 2, cell, 0), 0);
    assert_non_null(strstr(cm_buf_cstr(&b), "\"results\":[[1.5,null]],"));
    cm_buf_free(&b);
}

/* A big answer: every row, in order, and the exact length. */
static void test_big_page(void **state)
{
    (void)state;
    size_t n = 50000;
    api_query_sql_t sql = {.cols = two_cols, .ncols = 2, .limit = (int64_t)n};
    cm_buf_t b = CM_BUF_INIT, want = CM_BUF_INIT;
    assert_int_equal(page_text(&b, &sql, NULL, n, 2, gen_cell, 0), 0);
    cm_buf_append_cstr(&want, "{\"results\":[");
    for (size_t i = 0; i < n; i++)
        cm_buf_appendf(&want, "%s[\"v%zu\",%zu]", i ? "," : "", i, i);
    cm_buf_appendf(&want,
                   "],\"columns\":[\"name\",\"n\"],"
                   "\"types\":[[\"name\",\"String\"],[\"n\",\"Int64\"]],"
                   "\"hasMore\":false,\"limit\":%zu,\"offset\":0}",
                   n);
    assert_int_equal(b.len, want.len);
    assert_memory_equal(b.p, want.p, b.len);
    cm_buf_free(&b);
    cm_buf_free(&want);
}

/* Past max_bytes: CM_ETOOBIG; under it, the same rows pass. */
static void test_cap(void **state)
{
    (void)state;
    size_t n = 1000;
    api_query_sql_t sql = {.cols = two_cols, .ncols = 2, .limit = (int64_t)n};
    cm_buf_t b = CM_BUF_INIT;
    assert_int_equal(page_text(&b, &sql, NULL, n, 2, gen_cell, 4096), CM_ETOOBIG);
    assert_int_equal(page_text(&b, &sql, NULL, n, 2, gen_cell, 1 << 20), 0);
    cm_buf_free(&b);
}

/* The page continues the writer it is given: members after the run's. */
static void test_into_open_object(void **state)
{
    (void)state;
    const char *cells[] = {"a", "1"};
    rows_t rows = {2, cells};
    api_query_sql_t sql = {.cols = two_cols, .ncols = 2, .limit = 1};
    cm_buf_t b = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &b);
    cm_json_begin_object(&w);
    cm_json_key(&w, "first");
    cm_json_int(&w, 0);
    assert_int_equal(api_endpoints__page_write(&w, &sql, &rows, 1, 2, cell, 0), 0);
    cm_json_key(&w, "last");
    cm_json_boolean(&w, true);
    cm_json_end_object(&w);
    assert_int_equal(cm_json_writer_finish(&w), 0);
    assert_string_equal(cm_buf_cstr(&b), "{\"first\":0,\"results\":[[\"a\",1]],"
                                         "\"columns\":[\"name\",\"n\"],"
                                         "\"types\":[[\"name\",\"String\"],[\"n\",\"Int64\"]],"
                                         "\"hasMore\":false,\"limit\":1,\"offset\":0,"
                                         "\"last\":true}");
    cm_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_page), cmocka_unit_test(test_has_more),
        cmocka_unit_test(test_types),      cmocka_unit_test(test_big_page),
        cmocka_unit_test(test_cap),        cmocka_unit_test(test_into_open_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
