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
#include "query/query_int.h"
#include "query/grammar.h"

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
        /* keywords, case-insensitively ('...' in re2c); a longer word is
           an identifier (the longest match wins, then the first rule) */
        'all' { TOK(QT_ALL); }
        'and' { TOK(QT_AND); }
        'array' { TOK(QT_ARRAY); }
        'as' { TOK(QT_AS); }
        'asc' { TOK(QT_ASC); }
        'between' { TOK(QT_BETWEEN); }
        'by' { TOK(QT_BY); }
        'case' { TOK(QT_CASE); }
        'cast' { TOK(QT_CAST); }
        'cross' { TOK(QT_CROSS); }
        'desc' { TOK(QT_DESC); }
        'distinct' { TOK(QT_DISTINCT); }
        'else' { TOK(QT_ELSE); }
        'end' { TOK(QT_END); }
        'false' { TOK(QT_FALSE); }
        'first' { TOK(QT_FIRST); }
        'from' { TOK(QT_FROM); }
        'full' { TOK(QT_FULL); }
        'group' { TOK(QT_GROUP); }
        'having' { TOK(QT_HAVING); }
        'ilike' { TOK(QT_ILIKE); }
        'in' { TOK(QT_IN); }
        'inner' { TOK(QT_INNER); }
        'interval' { TOK(QT_INTERVAL); }
        'is' { TOK(QT_IS); }
        'join' { TOK(QT_JOIN); }
        'last' { TOK(QT_LAST); }
        'left' { TOK(QT_LEFT); }
        'like' { TOK(QT_LIKE); }
        'limit' { TOK(QT_LIMIT); }
        'not' { TOK(QT_NOT); }
        'null' { TOK(QT_NULL); }
        'nulls' { TOK(QT_NULLS); }
        'offset' { TOK(QT_OFFSET); }
        'on' { TOK(QT_ON); }
        'or' { TOK(QT_OR); }
        'order' { TOK(QT_ORDER); }
        'outer' { TOK(QT_OUTER); }
        'over' { TOK(QT_OVER); }
        'partition' { TOK(QT_PARTITION); }
        'right' { TOK(QT_RIGHT); }
        'select' { TOK(QT_SELECT); }
        'then' { TOK(QT_THEN); }
        'true' { TOK(QT_TRUE); }
        'union' { TOK(QT_UNION); }
        'using' { TOK(QT_USING); }
        'when' { TOK(QT_WHEN); }
        'where' { TOK(QT_WHERE); }
        'prewhere' { TOK(QT_PREWHERE); }
        'with' { TOK(QT_WITH); }
        /* part S: set operations, window frames, WITH TIES, IN COHORT, trim(LEADING ...) */
        'both' { TOK(QT_BOTH); }
        'cohort' { TOK(QT_COHORT); }
        'current' { TOK(QT_CURRENT); }
        'except' { TOK(QT_EXCEPT); }
        'following' { TOK(QT_FOLLOWING); }
        'intersect' { TOK(QT_INTERSECT); }
        'leading' { TOK(QT_LEADING); }
        'preceding' { TOK(QT_PRECEDING); }
        'range' { TOK(QT_RANGE); }
        'row' { TOK(QT_ROW); }
        'rows' { TOK(QT_ROWS); }
        'ties' { TOK(QT_TIES); }
        'trailing' { TOK(QT_TRAILING); }
        'unbounded' { TOK(QT_UNBOUNDED); }
        'window' { TOK(QT_WINDOW); }
        ident { TOK(QT_ID); }

        "??" { TOK(QT_NULLISH); }
        "?." { TOK(QT_NULLDOT); }
        "=~" | "~" { TOK(QT_REGEX); }
        "=~*" | "~*" { TOK(QT_IREGEX); }
        "!~" { TOK(QT_NREGEX); }
        "!~*" { TOK(QT_NIREGEX); }
        "=" "="? { TOK(QT_EQ); }
        "!=" | "<>" { TOK(QT_NE); }
        "<=" { TOK(QT_LE); }
        ">=" { TOK(QT_GE); }
        "<" { TOK(QT_LT); }
        ">" { TOK(QT_GT); }
        "||" { TOK(QT_CONCAT); }
        "+" { TOK(QT_PLUS); }
        "->" { TOK(QT_ARROW); }
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
 * \r \0 \a \b \f \v \\ and \<quote>; \xHH; any other \c stays \c (as PostHog
 * and ClickHouse read it: a regular expression's \d); a doubled quote is
 * one quote. */
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
        case 'a': d[w++] = '\a'; break;
        case '\\':
        case '\'':
        case '"':
        case '`': d[w++] = c; break;
        /* any other escape keeps its backslash, as PostHog and ClickHouse
         * read it: '\d+' is a regular expression's \d+ (part F) */
        default:
            d[w++] = '\\';
            d[w++] = c;
            break;
        }
    }
    d[w] = '\0';
    *out = (cm_slice_t){d, w};
    return true;
}
