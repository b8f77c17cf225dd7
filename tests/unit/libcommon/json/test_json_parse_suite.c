/*
 * test_json_parse_suite.c - runs directories of JSONTestSuite-style files through
 * the parser: y_*.json must be accepted, n_*.json rejected, and i_*.json
 * (implementation-defined) are reported either way; nothing may crash.
 *
 * Two directories are run, from the repository root:
 *   tests/data/json/      the project's own corpus (always required);
 *   the shared JSONTestSuite test_parsing directory, taken from
 *   $CM_JSONTESTSUITE_DIR or ../shared/data/JSONTestSuite/test_parsing;
 *   skipped with a notice when absent.
 * Every accepted document is also written back through the writer and
 * re-parsed, and the two tapes must describe the same values.
 *
 * Files are read into buffers of exactly their size, so a parser read past
 * the end shows up under AddressSanitizer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/alloc.h"
#include "cm/json.h"

#define OWN_DIR    "tests/data/json"
#define SHARED_DIR "../shared/data/JSONTestSuite/test_parsing"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cm_buf_t b = CM_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        cm_buf_append(&b, chunk, n);
    fclose(f);
    /* An exact-size copy: no slack after the last byte. */
    char *p = cm_xmalloc(b.len ? b.len : 1);
    if (b.len)
        memcpy(p, b.p, b.len);
    *len = b.len;
    cm_buf_free(&b);
    return p;
}

/* Same values: types, shapes, decoded strings, number text, booleans. */
static bool same_values(const cm_json_doc_t *a, const cm_json_doc_t *b)
{
    if (a->n != b->n)
        return false;
    cm_buf_t sa = CM_BUF_INIT, sb = CM_BUF_INIT;
    bool ok = true;
    for (uint32_t i = 0; i < a->n && ok; i++) {
        cm_json_t va = {a, i}, vb = {b, i};
        cm_json_type_t t = cm_json_type(va);
        ok = t == cm_json_type(vb) && a->nodes[i].next == b->nodes[i].next &&
             cm_json_len(va) == cm_json_len(vb);
        if (!ok)
            break;
        if (t == CM_JSON_STRING) {
            cm_buf_reset(&sa);
            cm_buf_reset(&sb);
            cm_json_str_append(va, &sa);
            cm_json_str_append(vb, &sb);
            ok = cm_slice_eq(cm_buf_slice(&sa), cm_buf_slice(&sb));
        } else if (t == CM_JSON_NUMBER || t == CM_JSON_BOOL) {
            ok = cm_slice_eq(cm_json_raw(va), cm_json_raw(vb));
        }
    }
    cm_buf_free(&sa);
    cm_buf_free(&sb);
    return ok;
}

/* Writes doc out and parses it again; true if the values survive. */
static bool round_trips(const cm_json_doc_t *doc)
{
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &out);
    cm_json_value(&w, cm_json_root(doc));
    bool ok = cm_json_writer_finish(&w) == 0;
    if (ok) {
        cm_json_doc_t *again = NULL;
        ok = cm_json_parse(out.p, out.len, NULL, &again, NULL) == 0 && same_values(doc, again);
        cm_json_doc_free(again);
    }
    cm_buf_free(&out);
    return ok;
}

static int only_json(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 7 && d->d_name[1] == '_' && strchr("yni", d->d_name[0]) &&
           strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Runs every file in dir; returns how many broke their y_/n_ promise. */
static int run_dir(const char *dir, int *files)
{
    struct dirent **ents;
    int count = scandir(dir, &ents, only_json, alphasort);
    int bad = 0;
    if (count < 0)
        return -1;
    for (int k = 0; k < count; k++) {
        const char *name = ents[k]->d_name;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        size_t len = 0;
        char *data = read_file(path, &len);
        if (!data) {
            printf("FAIL cannot read %s\n", path);
            bad++;
            free(ents[k]);
            continue;
        }
        cm_json_doc_t *doc = NULL;
        cm_json_error_t err = {0};
        int rc = cm_json_parse(data, len, NULL, &doc, &err);
        if (name[0] == 'y' && rc != 0) {
            printf("FAIL %s rejected: %s at byte %zu\n", name, err.msg, err.offset);
            bad++;
        } else if (name[0] == 'n' && rc == 0) {
            printf("FAIL %s accepted\n", name);
            bad++;
        } else if (name[0] == 'i') {
            if (rc == 0)
                printf("  i  %-50s accepted\n", name);
            else
                printf("  i  %-50s rejected (%s)\n", name, err.msg);
        }
        if (rc == 0 && !round_trips(doc)) {
            printf("FAIL %s does not survive write + re-parse\n", name);
            bad++;
        }
        cm_json_doc_free(doc);
        free(data);
        free(ents[k]);
    }
    free(ents);
    *files = count;
    return bad;
}

static void test_own_corpus(void **state)
{
    (void)state;
    int files = 0;
    int bad = run_dir(OWN_DIR, &files);
    if (bad < 0)
        fail_msg("cannot open %s (run from the repository root)", OWN_DIR);
    printf("json suite: %s: %d files, %d failures\n", OWN_DIR, files, bad);
    assert_true(files >= 40);
    assert_int_equal(bad, 0);
}

static void test_shared_suite(void **state)
{
    (void)state;
    const char *dir = getenv("CM_JSONTESTSUITE_DIR");
    if (!dir || !*dir)
        dir = SHARED_DIR;
    int files = 0;
    int bad = run_dir(dir, &files);
    if (bad < 0) {
        printf("json suite: NOTICE: %s not found; JSONTestSuite skipped\n", dir);
        skip();
    }
    printf("json suite: %s: %d files, %d failures\n", dir, files, bad);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_corpus),
        cmocka_unit_test(test_shared_suite),
    };
    return cmocka_run_group_tests_name("json_suite", tests, NULL, NULL);
}
