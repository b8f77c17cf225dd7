/*
 * fuzz_json.c - libFuzzer target for the JSON parser, accessors and writer.
 *
 * For every input:
 *   - the lossy quoter must turn the raw bytes into a JSON string that is
 *     valid UTF-8 and parses, and that decodes back to exactly the input
 *     whenever the input was valid UTF-8;
 *   - if the parser accepts the input, writing the document back out must
 *     succeed, the output must parse, and both tapes must describe the same
 *     values; writing the second document must give identical bytes;
 *   - every accessor is called on every node, and a few cross-checks hold
 *     (an int64 that fits in a double's mantissa equals the double; looking
 *     a key up finds a member with an equal key).
 * Any broken property aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/json.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_json: check failed: %s (line %d)\n", #cond, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

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
        if (ok && t == CM_JSON_STRING) {
            cm_buf_reset(&sa);
            cm_buf_reset(&sb);
            cm_json_str_append(va, &sa);
            cm_json_str_append(vb, &sb);
            ok = cm_slice_eq(cm_buf_slice(&sa), cm_buf_slice(&sb));
        } else if (ok && (t == CM_JSON_NUMBER || t == CM_JSON_BOOL)) {
            ok = cm_slice_eq(cm_json_raw(va), cm_json_raw(vb));
        }
    }
    cm_buf_free(&sa);
    cm_buf_free(&sb);
    return ok;
}

/* Calls the typed accessors on one node and checks they agree. */
static void poke(cm_json_t v, cm_buf_t *scratch)
{
    int64_t i64;
    uint64_t u64;
    double d;
    bool b;
    cm_slice_t s;
    switch (cm_json_type(v)) {
    case CM_JSON_NUMBER: {
        int ri = cm_json_as_int64(v, &i64);
        int ru = cm_json_as_uint64(v, &u64);
        int rd = cm_json_as_double(v, &d);
        if (ri == 0 && ru == 0)
            CHECK((uint64_t)i64 == u64 || i64 < 0);
        if (ri == 0 && i64 > -(1LL << 53) && i64 < (1LL << 53))
            CHECK(rd == 0 && d == (double)i64);
        break;
    }
    case CM_JSON_STRING:
        cm_buf_reset(scratch);
        CHECK(cm_json_as_str(v, scratch, &s) == 0);
        CHECK(cm_json_utf8_valid(s.p, s.len));
        CHECK(cm_json_str_eq(v, s));
        break;
    case CM_JSON_BOOL:
        CHECK(cm_json_as_bool(v, &b) == 0);
        CHECK(cm_json_raw(v).len == (b ? 4u : 5u));
        break;
    case CM_JSON_OBJECT: {
        cm_json_iter_t it = cm_json_iter(v);
        cm_json_t k, val;
        while (cm_json_next(&it, &k, &val)) {
            cm_buf_t key = CM_BUF_INIT;
            cm_json_str_append(k, &key);
            cm_json_t found = cm_json_get_s(v, cm_buf_slice(&key));
            CHECK(cm_json_exists(found) && found.i >= val.i);
            CHECK(cm_json_str_eq((cm_json_t){v.doc, found.i - 1}, cm_buf_slice(&key)));
            cm_buf_free(&key);
        }
        break;
    }
    case CM_JSON_ARRAY:
        if (cm_json_len(v))
            CHECK(cm_json_exists(cm_json_at(v, cm_json_len(v) - 1)));
        CHECK(!cm_json_exists(cm_json_at(v, cm_json_len(v))));
        break;
    default: break;
    }
}

static void check_lossy(const uint8_t *data, size_t size)
{
    cm_buf_t q = CM_BUF_INIT, dec = CM_BUF_INIT;
    cm_json_quote_lossy(&q, (cm_slice_t){(const char *)data, size});
    CHECK(cm_json_utf8_valid(q.p, q.len));
    cm_json_doc_t *doc = NULL;
    CHECK(cm_json_parse(q.p, q.len, NULL, &doc, NULL) == 0);
    CHECK(cm_json_type(cm_json_root(doc)) == CM_JSON_STRING);
    cm_json_str_append(cm_json_root(doc), &dec);
    if (cm_json_utf8_valid((const char *)data, size))
        CHECK(dec.len == size && (size == 0 || memcmp(dec.p, data, size) == 0));
    cm_json_doc_free(doc);
    cm_buf_free(&q);
    cm_buf_free(&dec);
}

static void write_doc(const cm_json_doc_t *doc, cm_buf_t *out)
{
    cm_json_writer_t w;
    cm_json_writer_init(&w, out);
    cm_json_value(&w, cm_json_root(doc));
    CHECK(cm_json_writer_finish(&w) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_lossy(data, size);

    cm_json_doc_t *doc = NULL;
    cm_json_error_t err;
    if (cm_json_parse((const char *)data, size, NULL, &doc, &err) != 0) {
        CHECK(doc == NULL && err.msg != NULL && err.offset <= size);
        return 0;
    }
    CHECK(cm_json_utf8_valid((const char *)data, size));
    cm_buf_t scratch = CM_BUF_INIT;
    for (uint32_t i = 0; i < doc->n; i++)
        poke((cm_json_t){doc, i}, &scratch);

    cm_buf_t out1 = CM_BUF_INIT, out2 = CM_BUF_INIT;
    write_doc(doc, &out1);
    cm_json_doc_t *again = NULL;
    CHECK(cm_json_parse(out1.p, out1.len, NULL, &again, &err) == 0);
    CHECK(same_values(doc, again));
    write_doc(again, &out2);
    CHECK(cm_slice_eq(cm_buf_slice(&out1), cm_buf_slice(&out2)));

    /* Compacting the raw text keeps the same values, and re-serialised it
     * gives what the original gives. */
    cm_buf_t compact = CM_BUF_INIT, out3 = CM_BUF_INIT;
    cm_json_writer_t w;
    cm_json_writer_init(&w, &compact);
    cm_json_raw_value_compact(&w, cm_json_raw(cm_json_root(doc)));
    CHECK(cm_json_writer_finish(&w) == 0);
    CHECK(compact.len <= size);
    cm_json_doc_t *small = NULL;
    CHECK(cm_json_parse(compact.p, compact.len, NULL, &small, &err) == 0);
    CHECK(same_values(doc, small));
    write_doc(small, &out3);
    CHECK(cm_slice_eq(cm_buf_slice(&out1), cm_buf_slice(&out3)));
    cm_json_doc_free(small);
    cm_buf_free(&compact);
    cm_buf_free(&out3);

    cm_json_doc_free(again);
    cm_json_doc_free(doc);
    cm_buf_free(&out1);
    cm_buf_free(&out2);
    cm_buf_free(&scratch);
    return 0;
}
