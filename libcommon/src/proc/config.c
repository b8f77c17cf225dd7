/*
 * config.c - load a service's settings from the environment via a table.
 *
 * Every row of the table is handled the same way: find the text (env or
 * default), parse it by type, check bounds, store it at target + offset.
 * The first bad value stops loading with "KEY: reason"; fields loaded so far
 * are freed, so a failed load leaves nothing to clean up.
 *
 * An empty value counts as unset: compose files and shell wrappers that
 * forward ${VAR} produce empty strings for variables nobody set, and those
 * must fall back to the default rather than fail as "not a number".
 */
#include "cm/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cm/alloc.h"
#include "cm/common.h"
#include "cm/err.h"

/* ---- value parsers ------------------------------------------------------- */

int cm_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    if (s == NULL)
        return CM_EINVAL;
    for (size_t i = 0; i < CM_ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return CM_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return CM_OK;
        }
    }
    return CM_EINVAL;
}

/* Leading unsigned decimal; no sign, no spaces. *end points past it. */
static int parse_digits(const char *s, unsigned long long *out, const char **end)
{
    if (!isdigit((unsigned char)*s))
        return CM_EINVAL;
    errno = 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno == ERANGE)
        return CM_EINVAL;
    *out = v;
    *end = e;
    return CM_OK;
}

typedef struct {
    const char *name;
    unsigned long long mult;
} suffix_t;

/* Multiplies v by the factor of suffix (case-insensitive), checking overflow. */
static int apply_suffix(unsigned long long v, const char *suffix, const suffix_t *table, size_t n,
                        unsigned long long *out)
{
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(suffix, table[i].name) != 0)
            continue;
        if (v > ULLONG_MAX / table[i].mult)
            return CM_EINVAL;
        *out = v * table[i].mult;
        return CM_OK;
    }
    return CM_EINVAL;
}

int cm_parse_size(const char *s, size_t *out)
{
    /* All binary: a "64m" buffer means 64 MiB to everyone who writes it. */
    static const suffix_t units[] = {
        {"", 1},
        {"b", 1},
        {"k", 1ull << 10},
        {"kb", 1ull << 10},
        {"kib", 1ull << 10},
        {"m", 1ull << 20},
        {"mb", 1ull << 20},
        {"mib", 1ull << 20},
        {"g", 1ull << 30},
        {"gb", 1ull << 30},
        {"gib", 1ull << 30},
    };
    unsigned long long v, r;
    const char *end;
    if (s == NULL || parse_digits(s, &v, &end) != CM_OK ||
        apply_suffix(v, end, units, CM_ARRAY_LEN(units), &r) != CM_OK || r > SIZE_MAX)
        return CM_EINVAL;
    *out = (size_t)r;
    return CM_OK;
}

int cm_parse_duration_ms(const char *s, long long *out)
{
    static const suffix_t units[] = {
        {"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000},
    };
    unsigned long long v, r;
    const char *end;
    if (s == NULL || parse_digits(s, &v, &end) != CM_OK ||
        apply_suffix(v, end, units, CM_ARRAY_LEN(units), &r) != CM_OK || r > LLONG_MAX)
        return CM_EINVAL;
    *out = (long long)r;
    return CM_OK;
}

static int parse_int(const char *s, long long *out)
{
    const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!isdigit((unsigned char)*digits))
        return CM_EINVAL; /* also rejects the spaces strtoll would skip */
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return CM_EINVAL;
    *out = v;
    return CM_OK;
}

/* ---- loading ------------------------------------------------------------- */

static void *field(void *target, const cm_cfg_key_t *k)
{
    return (char *)target + k->offset;
}

static const void *cfield(const void *target, const cm_cfg_key_t *k)
{
    return (const char *)target + k->offset;
}

static const char *type_reason(cm_cfg_type_t t)
{
    switch (t) {
    case CM_CFG_INT: return "must be an integer";
    case CM_CFG_BOOL: return "must be one of 1/0, true/false, yes/no, on/off";
    case CM_CFG_SIZE: return "must be a byte size like 512, 64k, 16MiB or 1g";
    case CM_CFG_DURATION:
        return "must be a duration like 250ms, 30s, 5m, 1h or 30d (bare number = ms)";
    default: return "has an unknown type";
    }
}

__attribute__((format(printf, 4, 5))) static int fail(const cm_cfg_key_t *k, char *err,
                                                      size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return CM_EINVAL;
    int n = snprintf(err, errlen, "%s: ", k->env);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return CM_EINVAL;
}

/* Parses text for one non-string key, checks bounds, stores it. */
static int load_scalar(const cm_cfg_key_t *k, const char *text, void *dst, char *err, size_t errlen)
{
    long long num = 0;
    size_t size = 0;
    bool flag = false, too_big = false;
    int rc = CM_EINVAL;

    switch (k->type) {
    case CM_CFG_BOOL: rc = cm_parse_bool(text, &flag); break;
    case CM_CFG_INT: rc = parse_int(text, &num); break;
    case CM_CFG_DURATION: rc = cm_parse_duration_ms(text, &num); break;
    case CM_CFG_SIZE:
        rc = cm_parse_size(text, &size);
        too_big = size > (size_t)LLONG_MAX;
        num = too_big ? LLONG_MAX : (long long)size;
        break;
    case CM_CFG_STR: break;
    }
    if (rc != CM_OK) {
        /* Never echo a secret, even a malformed one. */
        if (k->flags & CM_CFG_SECRET)
            return fail(k, err, errlen, "%s", type_reason(k->type));
        return fail(k, err, errlen, "%s (got \"%s\")", type_reason(k->type), text);
    }
    bool bounded = k->type != CM_CFG_BOOL && (k->min != 0 || k->max != 0);
    if (bounded && (too_big || num < k->min || num > k->max))
        return fail(k, err, errlen, "must be between %lld and %lld", k->min, k->max);

    switch (k->type) {
    case CM_CFG_BOOL: *(bool *)dst = flag; break;
    case CM_CFG_SIZE: *(size_t *)dst = size; break;
    default: *(long long *)dst = num; break;
    }
    return CM_OK;
}

int cm_config_load_with(const cm_cfg_key_t *keys, size_t nkeys, void *target,
                        const char *(*lookup)(const char *name, void *ud), void *ud, char *err,
                        size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    for (size_t i = 0; i < nkeys; i++) {
        const cm_cfg_key_t *k = &keys[i];
        const char *text = lookup(k->env, ud);
        if ((text == NULL || text[0] == '\0') && k->old_env)
            text = lookup(k->old_env, ud);
        if (text == NULL || text[0] == '\0')
            text = k->def;
        if (k->type == CM_CFG_STR) {
            *(char **)field(target, k) = text ? cm_xstrdup(text) : NULL;
            continue;
        }
        if (text == NULL)
            continue; /* no value and no default: the zeroed field stays */
        if (load_scalar(k, text, field(target, k), err, errlen) != CM_OK) {
            cm_config_free(keys, i, target);
            return CM_EINVAL;
        }
    }
    return CM_OK;
}

static const char *env_lookup(const char *name, void *ud)
{
    CM_UNUSED(ud);
    return getenv(name);
}

int cm_config_load(const cm_cfg_key_t *keys, size_t nkeys, void *target, char *err, size_t errlen)
{
    return cm_config_load_with(keys, nkeys, target, env_lookup, NULL, err, errlen);
}

void cm_config_free(const cm_cfg_key_t *keys, size_t nkeys, void *target)
{
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].type != CM_CFG_STR)
            continue;
        char **p = field(target, &keys[i]);
        free(*p);
        *p = NULL;
    }
}

/* ---- printing ------------------------------------------------------------ */

/* Largest unit that divides v exactly, so the text parses back to v. */
static void print_scaled(FILE *out, unsigned long long v, const suffix_t *units, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (v != 0 && v % units[i].mult == 0) {
            fprintf(out, "%llu%s", v / units[i].mult, units[i].name);
            return;
        }
    }
    fprintf(out, "%llu%s", v, units[0].name);
}

static void print_value(FILE *out, const cm_cfg_key_t *k, const void *target)
{
    static const suffix_t size_units[] = {
        {"", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}};
    static const suffix_t ms_units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    const void *src = cfield(target, k);

    switch (k->type) {
    case CM_CFG_STR: {
        const char *s = *(char *const *)src;
        if (s && *s && (k->flags & CM_CFG_SECRET))
            fputs("***", out);
        else if (s)
            fputs(s, out);
        break;
    }
    case CM_CFG_BOOL: fputs(*(const bool *)src ? "true" : "false", out); break;
    case CM_CFG_INT: fprintf(out, "%lld", *(const long long *)src); break;
    case CM_CFG_SIZE:
        print_scaled(out, *(const size_t *)src, size_units, CM_ARRAY_LEN(size_units));
        break;
    case CM_CFG_DURATION: {
        long long ms = *(const long long *)src;
        if (ms < 0)
            fprintf(out, "%lldms", ms);
        else
            print_scaled(out, (unsigned long long)ms, ms_units, CM_ARRAY_LEN(ms_units));
        break;
    }
    }
}

void cm_config_print(const cm_cfg_key_t *keys, size_t nkeys, const void *target, FILE *out)
{
    for (size_t i = 0; i < nkeys; i++) {
        const cm_cfg_key_t *k = &keys[i];
        bool secret = (k->flags & CM_CFG_SECRET) != 0;
        fprintf(out, "%s=", k->env);
        print_value(out, k, target);
        const char *def = k->def == NULL ? "unset" : secret && *k->def ? "***" : k->def;
        if (k->help && *k->help)
            fprintf(out, "  # %s (default: %s", k->help, def);
        else
            fprintf(out, "  # (default: %s", def);
        if (k->old_env)
            fprintf(out, "; formerly %s", k->old_env);
        fputs(")\n", out);
    }
}

size_t cm_config_split_list(char *copy, const char **out, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save))
        if (*tok)
            out[n++] = tok;
    return n;
}
