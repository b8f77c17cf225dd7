/*
 * db_sqlite_text.c - ClickHouse's text functions SQLite lacks, for the
 * query compiler (docs/endpoints.md "Functions"):
 *
 * cm_lower_utf8(s), cm_upper_utf8(s): ClickHouse 18.16's lowerUTF8 /
 * upperUTF8, code point by code point: ICU's simple case mapping (u_tolower
 * / u_toupper, codec/ucase.c), kept as it is where the mapped code point's UTF-8 takes
 * another number of bytes ('ı' stays, 'Σ' becomes 'σ'), and 18.16's own
 * tables where they differ from ICU's: the code points it leaves alone
 * (newer scripts, titlecase digraphs, ...) and a few Greek lower-case
 * forms it upper-cases to another lower-case form. Read from its server
 * for every code point of the Basic Multilingual Plane and the cased
 * blocks past it (tests/integration/hogql/corpus_t28rest.mjs compares
 * them all); past the BMP only Deseret and Warang Citi are mapped, as there. Bytes that are
 * no UTF-8 are copied.
 *
 * cm_encode_url(s): ClickHouse's encodeURLComponent: every byte but the
 * letters, digits and - _ . ~ written as %XX in capitals.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cm/ucase.h"
#include "db_sqlite_ch.h"

/* The code point at s (n bytes left) and its length, or -1 for bytes that
 * are no UTF-8 sequence (an overlong form, a surrogate, past U+10FFFF). */
static int32_t decode(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    *len = 1;
    if (k == 0 || k > n)
        return -1;
    uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1F : k == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    *len = k;
    return (int32_t)cp;
}

static size_t utf8_len(uint32_t cp)
{
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

static void encode(uint32_t cp, unsigned char *out)
{
    size_t k = utf8_len(cp);
    if (k == 1) {
        out[0] = (unsigned char)cp;
        return;
    }
    static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (size_t i = k - 1; i > 0; i--, cp >>= 6)
        out[i] = (unsigned char)(0x80 | (cp & 0x3F));
    out[0] = (unsigned char)(lead[k] | cp);
}

/* Code points ClickHouse 18.16 maps to themselves where ICU maps them. */
static const struct {
    uint32_t lo, hi;
} kept[] = {
    {0xB5, 0xB5},     {0x1C5, 0x1C5},   {0x1C8, 0x1C8},   {0x1CB, 0x1CB},   {0x1F2, 0x1F2},
    {0x345, 0x345},   {0x10D0, 0x10FA}, {0x10FD, 0x10FF}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
    {0x1C88, 0x1C88}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D8E, 0x1D8E}, {0x1F88, 0x1F8F},
    {0x1F98, 0x1F9F}, {0x1FA8, 0x1FAF}, {0x1FBC, 0x1FBC}, {0x1FCC, 0x1FCC}, {0x1FFC, 0x1FFC},
    {0x2132, 0x2132}, {0x214E, 0x214E}, {0x2160, 0x217F}, {0x2183, 0x2184}, {0x24B6, 0x24E9},
    {0x2C00, 0x2CF3}, {0x2D00, 0x2D25}, {0x2D27, 0x2D27}, {0x2D2D, 0x2D2D}, {0xA794, 0xA794},
    {0xA7B3, 0xA7F6}, {0xAB53, 0xAB53}, {0xAB70, 0xABBF},
};

/* 18.16's upper case of a few lower-case letters with two upper-case
 * sources: the other lower-case form ('ς' gives 'σ', 'μ' gives 'µ'). */
static const uint32_t upper_odd[][2] = {
    {0x3B9, 0x345}, {0x3BC, 0xB5},  {0x3C2, 0x3C3},   {0x3D0, 0x3B2},
    {0x3D1, 0x3B8}, {0x3D5, 0x3C6}, {0x3D6, 0x3C0},   {0x3F0, 0x3BA},
    {0x3F1, 0x3C1}, {0x3F5, 0x3B5}, {0x1E9B, 0x1E61},
};

/* cp's case as ClickHouse 18.16 maps it, or cp. */
static uint32_t map_case(uint32_t cp, bool upper)
{
    if (cp > 0xFFFF && !(cp >= 0x10400 && cp <= 0x1044F) && !(cp >= 0x118A0 && cp <= 0x118DF))
        return cp; /* past the BMP: Deseret and Warang Citi only */
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        if (cp >= kept[i].lo && cp <= kept[i].hi)
            return cp;
    if (upper)
        for (size_t i = 0; i < sizeof(upper_odd) / sizeof(upper_odd[0]); i++)
            if (upper_odd[i][0] == cp)
                return upper_odd[i][1];
    return cm_ucase_simple(cp, upper);
}

static void change_case(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    bool upper = sqlite3_user_data(ctx) != NULL;
    const unsigned char *s = sqlite3_value_text(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    unsigned char *out = sqlite3_malloc64(n + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (size_t i = 0; i < n;) { /* the answer is as long as s: only same-length mappings */
        size_t len;
        int32_t cp = decode(s + i, n - i, &len);
        uint32_t to = cp < 0 ? 0 : cp < 0x80 ? (uint32_t)cp : map_case((uint32_t)cp, upper);
        if (cp >= 0x80 && utf8_len(to) == len)
            encode(to, out + i);
        else if (cp >= 0 && cp < 0x80) /* ASCII: its own letters */
            out[i] = (unsigned char)(upper ? (cp >= 'a' && cp <= 'z' ? cp - 32 : cp)
                                           : (cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
        else
            memcpy(out + i, s + i, len);
        i += len;
    }
    out[n] = '\0';
    sqlite3_result_text(ctx, (const char *)out, (int)n, sqlite3_free);
}

static void encode_url(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    const unsigned char *s = sqlite3_value_text(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    unsigned char *out = sqlite3_malloc64(3 * (sqlite3_uint64)n + 1);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            out[k++] = (unsigned char)c;
        } else {
            out[k++] = '%';
            out[k++] = (unsigned char)hex[c >> 4];
            out[k++] = (unsigned char)hex[c & 15];
        }
    }
    out[k] = '\0';
    sqlite3_result_text(ctx, (const char *)out, (int)k, sqlite3_free);
}

int cm__sqlite_add_text_fns(sqlite3 *db)
{
    static int upper_tag;
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_function_v2(db, "cm_lower_utf8", 1, flags, NULL, change_case, NULL,
                                        NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_upper_utf8", 1, flags, &upper_tag, change_case,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(db, "cm_encode_url", 1, flags, NULL, encode_url, NULL, NULL,
                                        NULL);
    return rc;
}
