/*
 * tokenize.re - HogQL's tokens, as re2c rules. The build runs Debian's
 * `re2c` on it into build/.../gen/tokenize.c; the token ids are lemon's
 * (grammar.h, generated from grammar.y).
 *
 * The text must be followed by a NUL (parse.c copies it into the arena
 * with one), which re2c uses as its end sentinel; a NUL inside the text is
 * an ordinary byte there and an unexpected character here.
 *
 * Tokens as HogQL's lexer has them: identifiers may start with $ and may
 * be quoted with backticks or double quotes; strings are single-quoted
 * with backslash escapes or a doubled quote; comments are --, // and #
 * to the end of the line, and C's block comments. Keywords are case
 * insensitive.
 */
#include <string.h>
#include <strings.h>

#include "query/query_int.h"
#include "query/grammar.h"

typedef struct {
    const char *word;
    int id;
} keyword_t;

static const keyword_t keywords[] = {
    {"all", QT_ALL},         {"and", QT_AND},           {"as", QT_AS},
    {"asc", QT_ASC},         {"between", QT_BETWEEN},   {"by", QT_BY},
    {"case", QT_CASE},       {"cast", QT_CAST},         {"cross", QT_CROSS},
    {"desc", QT_DESC},       {"distinct", QT_DISTINCT}, {"else", QT_ELSE},
    {"end", QT_END},         {"false", QT_FALSE},       {"first", QT_FIRST},
    {"from", QT_FROM},       {"full", QT_FULL},         {"group", QT_GROUP},
    {"having", QT_HAVING},   {"ilike", QT_ILIKE},       {"in", QT_IN},
    {"inner", QT_INNER},     {"interval", QT_INTERVAL}, {"is", QT_IS},
    {"join", QT_JOIN},       {"last", QT_LAST},         {"left", QT_LEFT},
    {"like", QT_LIKE},       {"limit", QT_LIMIT},       {"not", QT_NOT},
    {"null", QT_NULL},       {"nulls", QT_NULLS},       {"offset", QT_OFFSET},
    {"on", QT_ON},           {"or", QT_OR},             {"order", QT_ORDER},
    {"outer", QT_OUTER},     {"over", QT_OVER},         {"partition", QT_PARTITION},
    {"right", QT_RIGHT},     {"select", QT_SELECT},     {"then", QT_THEN},
    {"true", QT_TRUE},       {"union", QT_UNION},       {"using", QT_USING},
    {"when", QT_WHEN},       {"where", QT_WHERE},       {"with", QT_WITH},
};

static int word_id(const char *s, size_t n)
{
    if (n > 9)
        return QT_ID;
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        if (strlen(keywords[i].word) == n && strncasecmp(keywords[i].word, s, n) == 0)
            return keywords[i].id;
    return QT_ID;
}

static q_token_t token(q_parse_t *p, int id, const char *start, const char *end)
{
    q_token_t t = {id, {start, (size_t)(end - start)}, (size_t)(start - p->src)};
    p->pos = (size_t)(end - p->src);
    return t;
}

q_token_t q_next_token(q_parse_t *p)
{
    const unsigned char *cur = (const unsigned char *)p->src + p->pos;
    const unsigned char *lim = (const unsigned char *)p->src + p->len;
    const unsigned char *mar = cur;
    const unsigned char *start;

loop:
    start = cur;
#define TOK(id) return token(p, (id), (const char *)start, (const char *)cur)
    /*!re2c
        re2c:api = default;
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = cur;
        re2c:define:YYMARKER = mar;
        re2c:define:YYLIMIT = lim;
        re2c:yyfill:enable = 0;
        re2c:eof = 0;

        dec = [0-9]+;
        exp = [eE] [+-]? dec;
        ident = [a-zA-Z_$] [a-zA-Z0-9_$]*;

        $ { TOK(0); }
        [ \t\r\n\f\v]+ { goto loop; }
        ("--" | "//" | "#") [^\r\n]* { goto loop; }
        "/*" ([^*] | "*"+ [^*/])* "*"+ "/" { goto loop; }

        "'" ([^'\\] | "\\" [^] | "''")* "'" { TOK(QT_STRING); }
        "`" ([^`\\] | "\\" [^] | "``")* "`" { TOK(QT_QIDENT); }
        ["] ([^"\\] | "\\" [^] | ["]["])* ["] { TOK(QT_QIDENT); }

        dec | "0" [xX] [0-9a-fA-F]+ { TOK(QT_INTEGER); }
        dec "." [0-9]* exp? | "." dec exp? | dec exp { TOK(QT_FLOAT); }
        ident { TOK(word_id((const char *)start, (size_t)(cur - start))); }

        "=" "="? { TOK(QT_EQ); }
        "!=" | "<>" { TOK(QT_NE); }
        "<=" { TOK(QT_LE); }
        ">=" { TOK(QT_GE); }
        "<" { TOK(QT_LT); }
        ">" { TOK(QT_GT); }
        "||" { TOK(QT_CONCAT); }
        "+" { TOK(QT_PLUS); }
        "-" { TOK(QT_MINUS); }
        "*" { TOK(QT_STAR); }
        "/" { TOK(QT_SLASH); }
        "%" { TOK(QT_PERCENT); }
        "." { TOK(QT_DOT); }
        "," { TOK(QT_COMMA); }
        "(" { TOK(QT_LP); }
        ")" { TOK(QT_RP); }
        "[" { TOK(QT_LB); }
        "]" { TOK(QT_RB); }
        "{" { TOK(QT_LC); }
        "}" { TOK(QT_RC); }
        "?" { TOK(QT_QUESTION); }
        ":" { TOK(QT_COLON); }

        "/*" | "'" | "`" | ["] {
            q_token_t t = token(p, -1, (const char *)start, (const char *)cur);
            q_fail(p, "unterminated %s at offset %zu",
                   *start == '/' ? "comment" : *start == '\'' ? "string" : "quoted identifier",
                   t.offset);
            return t;
        }
        * {
            q_token_t t = token(p, -1, (const char *)start, (const char *)cur);
            if (*start >= 0x20 && *start < 0x7f)
                q_fail(p, "unexpected character '%c' at offset %zu", *start, t.offset);
            else
                q_fail(p, "unexpected byte 0x%02x at offset %zu", *start, t.offset);
            return t;
        }
    */
#undef TOK
}

/* The body of 'string', `ident` or "ident" with its escapes decoded: \n \t
 * \r \0 \b \f \v \\ and \<quote>; \xHH; any other \c is c; a doubled quote
 * is one quote. */
bool q_unquote(q_parse_t *p, cm_slice_t quoted, cm_slice_t *out)
{
    char q = quoted.p[0];
    size_t n = quoted.len - 2;
    const char *s = quoted.p + 1;
    char *d = cm_arena_alloc(p->arena, n + 1);
    size_t w = 0;

    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == q) { /* doubled: the tokenizer allows only pairs here */
            d[w++] = q;
            i++;
            continue;
        }
        if (c != '\\') {
            d[w++] = c;
            continue;
        }
        c = s[++i];
        switch (c) {
        case 'n': d[w++] = '\n'; break;
        case 't': d[w++] = '\t'; break;
        case 'r': d[w++] = '\r'; break;
        case '0': d[w++] = '\0'; break;
        case 'b': d[w++] = '\b'; break;
        case 'f': d[w++] = '\f'; break;
        case 'v': d[w++] = '\v'; break;
        case 'x': {
            int v = 0;
            for (int k = 0; k < 2; k++) {
                char h = i + 1 < n ? s[i + 1] : 0;
                int x = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
                if (x < 0) {
                    q_fail(p, "bad \\x escape in a string");
                    return false;
                }
                v = v * 16 + x;
                i++;
            }
            d[w++] = (char)v;
            break;
        }
        default: d[w++] = c; break;
        }
    }
    d[w] = '\0';
    *out = (cm_slice_t){d, w};
    return true;
}
