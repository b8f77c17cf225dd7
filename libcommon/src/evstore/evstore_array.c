/*
 * evstore_array.c - an array value of an answer written as a JSON array
 * (cm_evstore_write_value, for a column typed Array(T)). The stores give
 * text of two shapes: SQLite's is JSON (["a",1,null]); ClickHouse's is its
 * own literal syntax (['a',1,NULL], tuples in parentheses), strings in
 * single quotes with backslash escapes, which the api's printer doubles
 * before the TabSeparated reading undoes one level (docs/endpoints.md).
 * Each element is written by T as a scalar value is, so both stores'
 * arrays answer alike; text that does not parse is answered as a string
 * rather than guessed at.
 */
#include <stdlib.h>
#include <string.h>

#include "cm/buf.h"
#include "evstore_internal.h"

#define MAX_NESTING 32

typedef struct {
    const char *p;
    cm_buf_t tok; /* the current scalar's text */
    bool bad;
} rd_t;

static void skip_space(rd_t *r)
{
    while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r')
        r->p++;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static unsigned read_u4(rd_t *r)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(r->p[i]);
        if (h < 0) {
            r->bad = true;
            return 0;
        }
        v = v * 16 + (unsigned)h;
    }
    r->p += 4;
    return v;
}

static void put_utf8(cm_buf_t *b, unsigned c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xc0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xe0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    cm_buf_append(b, u, n);
}

/* A quoted string at *p decoded into out: "..." with JSON's escapes, '...'
 * with ClickHouse's (a backslash takes the next character, \n \t ... as C).
 * *p moves past it; false when it does not end. */
bool cm_evstore__unquote(const char **pp, cm_buf_t *out)
{
    rd_t r = {.p = *pp};
    const char *p = *pp;
    char q = *p++;
    out->len = 0;
    for (;;) {
        char c = *p;
        if (c == '\0')
            return false;
        p++;
        if (c == q)
            break;
        if (c != '\\') {
            cm_buf_putc(out, c);
            continue;
        }
        char e = *p;
        if (e == '\0')
            return false;
        p++;
        switch (e) {
        case 'n': cm_buf_putc(out, '\n'); break;
        case 't': cm_buf_putc(out, '\t'); break;
        case 'r': cm_buf_putc(out, '\r'); break;
        case 'b': cm_buf_putc(out, '\b'); break;
        case 'f': cm_buf_putc(out, '\f'); break;
        case 'u': {
            r.p = p;
            unsigned c1 = read_u4(&r);
            if (c1 >= 0xd800 && c1 < 0xdc00 && r.p[0] == '\\' && r.p[1] == 'u') {
                r.p += 2;
                unsigned c2 = read_u4(&r);
                if (c2 < 0xdc00 || c2 > 0xdfff)
                    return false;
                c1 = 0x10000 + ((c1 - 0xd800) << 10) + (c2 - 0xdc00);
            }
            if (r.bad)
                return false;
            p = r.p;
            put_utf8(out, c1);
            break;
        }
        default: cm_buf_putc(out, e); break;
        }
    }
    *pp = p;
    return true;
}

static void read_string(rd_t *r)
{
    if (!cm_evstore__unquote(&r->p, &r->tok))
        r->bad = true;
}

/* An unquoted scalar (a number, null, true, false) into r->tok. */
static void read_bare(rd_t *r)
{
    r->tok.len = 0;
    while (*r->p != '\0' && *r->p != ',' && *r->p != ']' && *r->p != ')' && *r->p != ' ')
        cm_buf_putc(&r->tok, *r->p++);
    if (r->tok.len == 0)
        r->bad = true;
}

/* The element type inside "Array(T)" (or "Array(Nullable(T))"), copied. */
static void elem_type(const char *type, char *out, size_t cap)
{
    const char *in = strchr(type, '(');
    size_t n = in ? strlen(in + 1) : 0;
    if (n == 0 || n >= cap) {
        out[0] = '\0';
        return;
    }
    memcpy(out, in + 1, n - 1); /* without the closing parenthesis */
    out[n - 1] = '\0';
}

static void write_items(rd_t *r, cm_json_writer_t *w, const char *type, int depth);

static void write_item(rd_t *r, cm_json_writer_t *w, const char *type, int depth)
{
    skip_space(r);
    char c = *r->p;
    if (c == '[' || c == '(') {
        if (depth >= MAX_NESTING) {
            r->bad = true;
            return;
        }
        char inner[128];
        elem_type(type, inner, sizeof(inner));
        r->p++;
        cm_json_begin_array(w);
        write_items(r, w, c == '[' ? inner : "", depth + 1);
        cm_json_end_array(w);
        if (*r->p != (c == '[' ? ']' : ')'))
            r->bad = true;
        else
            r->p++;
        return;
    }
    if (strncmp(type, "Array", 5) == 0) { /* a scalar where an array belongs */
        r->bad = true;
        return;
    }
    if (c == '"' || c == '\'') {
        read_string(r);
        cm_evstore_write_value(w, *type ? type : "String", cm_buf_cstr(&r->tok));
        return;
    }
    read_bare(r);
    const char *t = cm_buf_cstr(&r->tok);
    if (strcmp(t, "null") == 0 || strcmp(t, "NULL") == 0)
        cm_json_null(w);
    else if (strcmp(t, "true") == 0 || strcmp(t, "false") == 0)
        cm_json_int(w, t[0] == 't');
    else if (strpbrk(t, ".eEin") != NULL && strncmp(type, "Float", 5) != 0 &&
             strncmp(type, "Nullable(Float", 14) != 0 && *type != '\0')
        cm_evstore_write_value(w, type, t);
    else
        cm_evstore_write_value(w, *type ? type : (strpbrk(t, ".eE") ? "Float64" : "Int64"), t);
}

static void write_items(rd_t *r, cm_json_writer_t *w, const char *type, int depth)
{
    skip_space(r);
    if (*r->p == ']' || *r->p == ')')
        return;
    for (;;) {
        write_item(r, w, type, depth);
        if (r->bad)
            return;
        skip_space(r);
        if (*r->p != ',')
            return;
        r->p++;
    }
}

void cm_evstore__write_array(cm_json_writer_t *w, const char *type, const char *v)
{
    /* written aside first: a value that does not parse is answered as its text */
    cm_buf_t out = CM_BUF_INIT;
    cm_json_writer_t aside;
    cm_json_writer_init(&aside, &out);
    rd_t r = {.p = v, .tok = CM_BUF_INIT};
    if (v[0] == '[' || v[0] == '(')
        write_item(&r, &aside, type, 0);
    else
        r.bad = true;
    skip_space(&r);
    if (!r.bad && *r.p == '\0')
        cm_json_raw_value(w, cm_buf_slice(&out));
    else
        cm_json_str_cstr(w, v);
    cm_buf_free(&r.tok);
    cm_buf_free(&out);
}
